/**
 * What the management API's OpenAPI 3.1 document says beyond its routes (../openapi.ts generates it
 * from MANAGE_ROUTES, the table the plugin registers): each route's role, RFC 9457 problem
 * details for every error, and the bearer token. Served without authentication at
 * `/manage/api/v1/openapi.json`.
 */
import type { Config } from '../../config.ts';
import { MANAGE_API_PATH, manageApiResourceUri } from '../../manage/management-clients.ts';
import { openApiDocument as document, openApiPath } from '../openapi.ts';
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

/** The document of the routes served below MANAGE_API_PATH. */
export function openApiDocument(config: Config, routes: readonly ManageRoute[]): Record<string, unknown> {
  return document(
    {
      info: {
        title: 'gatehouse management API',
        version: '1',
        description:
          "Manage gatehouse's clients, users, groups, organizations, policies, signing keys and more over JSON. Authenticate with a bearer access token for the audience `gatehouse-manage-api` (RFC 8707 `resource` = this API's URL); members of GATEHOUSE_ADMIN_GROUP may change everything, members of GATEHOUSE_ADMIN_READONLY_GROUP may read. Errors are RFC 9457 problem details. Lists are keyset-paged: `limit` and `cursor`, answered with `next_cursor`. See docs/management-api.md.",
      },
      document: { path: openApiPath(MANAGE_API_PATH, '/openapi.json'), operationId: 'getOpenApiDocument', description: 'The OpenAPI 3.1 document of the management API.' },
      description: (route) => `${route.description ? `${route.description}\n\n` : ''}Role: ${route.access === 'read' ? 'administrator or reader' : 'administrator'}.`,
      security: [{ bearer: [] }],
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: `An access token issued by this gatehouse whose audiences include \`gatehouse-manage-api\` (ask with \`resource=${manageApiResourceUri(config)}\`), issued to an active client whose \`aud\` lists it. In the Authorization header only.`,
        },
      },
      schemas: { Problem: problemSchema },
      // Problem details by status (RFC 9457), named after the status's reason phrase.
      errorAnswers: {
        badRequest: 'BadRequest',
        unauthenticated: 'Unauthorized',
        forbidden: 'Forbidden',
        notFound: 'NotFound',
        conflict: 'Conflict',
        tooLarge: 'ContentTooLarge',
        unsupportedMediaType: 'UnsupportedMediaType',
      },
      errorDescriptions: {
        BadRequest: 'The request is malformed; `errors[].field` names each field at fault.',
        Unauthorized: 'No token, or one this API does not accept: WWW-Authenticate carries the Bearer challenge (RFC 6750 §3).',
        Forbidden: "The token's user is not an administrator (or only a reader, for a change).",
        NotFound: 'No such resource.',
        Conflict: 'The change conflicts with what is stored (a duplicate name, a policy in use, a protected client).',
        ContentTooLarge: 'The body is larger than 256 KiB.',
        UnsupportedMediaType: 'The body is not JSON.',
      },
      errorContent: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
    },
    new URL(config.issuer).origin,
    [{ base: MANAGE_API_PATH, name: 'manage', routes }],
  );
}
