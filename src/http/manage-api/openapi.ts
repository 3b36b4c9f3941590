/**
 * The management API's OpenAPI 3.1 document, generated from the route table the plugin registers
 * (MANAGE_ROUTES, the same schemas Ajv validates with), so it lists exactly the routes served.
 * Served without authentication at `/manage/api/v1/openapi.json`.
 */
import type { Config } from '../../config.ts';
import { MANAGE_API_PATH, manageApiResourceUri } from '../../manage/management-clients.ts';
import { declaredParameters, errorAnswers, openApiPath, openApiSchema } from '../openapi.ts';
import type { JsonSchema, ManageRoute } from './route.ts';

/** The problem details document (RFC 9457 §3), as every error answer carries it. */
export const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail'],
  properties: {
    type: { type: 'string', description: '`about:blank`: the status and title say what happened (RFC 9457 §4.2.1).' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What was wrong, for a person to read.' },
    errors: {
      type: 'array',
      description: 'The fields at fault, by their JSON path in the request (`redirect_uris[0]`, `limit`).',
      items: { type: 'object', required: ['field', 'message'], properties: { field: { type: 'string' }, message: { type: 'string' } } },
    },
  },
};

/** `/clients/:id` → `/manage/api/v1/clients/{id}` */
const apiPath = (path: string): string => openApiPath(MANAGE_API_PATH, path);

/** Problem details by status (RFC 9457), named after the status's reason phrase. */
const ERROR_ANSWERS = {
  badRequest: 'BadRequest',
  unauthenticated: 'Unauthorized',
  forbidden: 'Forbidden',
  notFound: 'NotFound',
  conflict: 'Conflict',
  tooLarge: 'ContentTooLarge',
  unsupportedMediaType: 'UnsupportedMediaType',
};

function operation(route: ManageRoute): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    responses[status] = { description: doc.description, ...(doc.schema ? { content: { 'application/json': { schema: openApiSchema(doc.schema) } } } : {}) };
  }
  return {
    operationId: route.operationId,
    summary: route.summary,
    description: `${route.description ? `${route.description}\n\n` : ''}Role: ${route.access === 'read' ? 'administrator or reader' : 'administrator'}.`,
    tags: [route.tag],
    parameters: declaredParameters(route),
    ...(route.body ? { requestBody: { required: route.bodyOptional !== true, content: { 'application/json': { schema: openApiSchema(route.body) } } } } : {}),
    responses: { ...responses, ...errorAnswers(route, ERROR_ANSWERS) },
  };
}

function problemAnswer(description: string): Record<string, unknown> {
  return { description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } };
}

export function openApiDocument(config: Config, routes: readonly ManageRoute[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) (paths[apiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation(route);
  paths[apiPath('/openapi.json')] = {
    get: {
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: ['Documentation'],
      security: [],
      responses: { 200: { description: 'The OpenAPI 3.1 document of the management API.', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  };
  const tags = [...new Set(routes.map((r) => r.tag)), 'Documentation'].map((name) => ({ name }));
  return {
    openapi: '3.1.0',
    info: {
      title: 'gatehouse management API',
      version: '1',
      description:
        "Manage gatehouse's clients, users, groups, organizations, policies, signing keys and more over JSON. Authenticate with a bearer access token for the audience `gatehouse-manage-api` (RFC 8707 `resource` = this API's URL); members of GATEHOUSE_ADMIN_GROUP may change everything, members of GATEHOUSE_ADMIN_READONLY_GROUP may read. Errors are RFC 9457 problem details. Lists are keyset-paged: `limit` and `cursor`, answered with `next_cursor`. See docs/management-api.md.",
    },
    servers: [{ url: new URL(config.issuer).origin }],
    security: [{ bearer: [] }],
    tags,
    paths,
    components: {
      schemas: { Problem: problemSchema },
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `An access token issued by this gatehouse whose audiences include \`gatehouse-manage-api\` (ask with \`resource=${manageApiResourceUri(config)}\`), issued to an active client whose \`aud\` lists it. In the Authorization header only.`,
        },
      },
      responses: {
        BadRequest: problemAnswer('The request is malformed; `errors[].field` names each field at fault.'),
        Unauthorized: problemAnswer('No token, or one this API does not accept: WWW-Authenticate carries the Bearer challenge (RFC 6750 §3).'),
        Forbidden: problemAnswer("The token's user is not an administrator (or only a reader, for a change)."),
        NotFound: problemAnswer('No such resource.'),
        Conflict: problemAnswer('The change conflicts with what is stored (a duplicate name, a policy in use, a protected client).'),
        ContentTooLarge: problemAnswer('The body is larger than 256 KiB.'),
        UnsupportedMediaType: problemAnswer('The body is not JSON.'),
      },
    },
  };
}
