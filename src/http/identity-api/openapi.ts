/**
 * The identity API's OpenAPI 3.1 document, generated from the route table that plugin.ts
 * registers (the same schemas Fastify validates with), so it lists exactly the routes served.
 * Served at `/{identity_rest}/openapi.json`.
 */
import type { Config } from '../../config.ts';
import type { ApiRoute } from './route.ts';
import { declaredParameters, errorAnswers, openApiPath, openApiSchema } from '../openapi.ts';
import { errorResponse, type JsonSchema } from './schemas.ts';

export interface RouteScope {
  /** The first path segment, e.g. `customerid-rest`. */
  prefix: string;
  routes: ApiRoute[];
}

function parameters(route: ApiRoute): unknown[] {
  const out = declaredParameters(route);
  const query = route.querystring as { additionalProperties?: JsonSchema } | undefined;
  if (query?.additionalProperties) {
    // OpenAPI 3.1 §4.8.12.4: a form-style, exploded object parameter is a set of free-form query parameters.
    const writes = route.method === 'POST' || route.method === 'PUT';
    out.push({
      name: writes ? 'attributes' : 'filters',
      in: 'query',
      required: false,
      style: 'form',
      explode: true,
      description: writes
        ? 'Attributes to set, one query parameter each (repeat a name for several values), e.g. `technicalName=acme&vatnumber=12345`. The parameters username and password are always the API credentials.'
        : 'Filters: any attribute name as a query parameter, e.g. `technicalName=acme` or `email=ada@`.',
      schema: { type: 'object', additionalProperties: openApiSchema(query.additionalProperties) },
    });
  }
  return out;
}

const xmlContent = (description: string) => ({ 'application/xml': { schema: { type: 'string', description } } });

/** CustomerID's error codes as the answers' names; a body of another media type is `Invalid arguments` too. */
const ERROR_ANSWERS = {
  badRequest: 'InvalidArguments',
  unauthenticated: 'AuthenticationFailed',
  forbidden: 'Unauthorized',
  notFound: 'EntityNotFound',
  conflict: 'Conflict',
  tooLarge: 'SizeLimitExceeded',
  unsupportedMediaType: 'InvalidArguments',
  serverError: 'InternalServerError',
};

function operation(route: ApiRoute, operationId: string): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  for (const [status, doc] of Object.entries(route.responses)) {
    responses[status] = { description: doc.description, content: { 'application/json': { schema: openApiSchema(doc.schema) }, ...xmlContent('The same in CustomerID XML.') } };
  }
  return {
    operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    parameters: parameters(route),
    ...(route.body
      ? {
          requestBody: {
            required: false,
            content: {
              'application/json': { schema: openApiSchema(route.body) },
              ...xmlContent('An entity document: <User> or <Organization> holding <Attribute name="…"><Value>…</Value></Attribute>. No DTD.'),
            },
          },
        }
      : {}),
    responses: { ...responses, ...errorAnswers(route, ERROR_ANSWERS) },
  };
}

function errorAnswer(description: string): Record<string, unknown> {
  return { description, content: { 'application/json': { schema: errorResponse }, ...xmlContent('<error><code>…</code><message>…</message></error>') } };
}

export function openApiDocument(config: Config, scopes: RouteScope[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const operationIds = new Set<string>();
  for (const { prefix, routes } of scopes) {
    for (const route of routes) {
      let operationId = route.operationId;
      if (operationIds.has(operationId)) operationId = `${operationId}_${prefix.replace(/[^A-Za-z0-9]/g, '_')}`;
      operationIds.add(operationId);
      const path = openApiPath(`/${prefix}/services`, route.path);
      (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, operationId);
    }
  }
  paths[`/${config.identityRestPrefix}/openapi.json`] = {
    get: {
      operationId: 'openApiDocument',
      summary: 'This document',
      tags: ['Documentation'],
      security: [],
      responses: { 200: { description: 'The OpenAPI 3.1 document of the identity API.', content: { 'application/json': { schema: { type: 'object' } } } } },
    },
  };
  return {
    openapi: '3.1.0',
    info: {
      title: 'gatehouse identity API',
      version: '2.1',
      description:
        'Users, organizations and group membership, compatible with Ubisecure CustomerID REST API 2.0/2.1 and the legacy 1.2 reads. JSON by default; CustomerID XML with `Accept: application/xml`. Errors: `{"error":{"code","message"}}` or `<error><code/><message/></error>`; the HTTP status is authoritative. See docs/identity-api.md.',
    },
    servers: [{ url: new URL(config.issuer).origin }],
    security: [{ bearer: [] }, { basic: [] }, { apiUsername: [], apiPassword: [] }],
    tags: [{ name: 'Users' }, { name: 'Organizations' }, { name: 'Group membership' }, { name: 'Legacy (schema 1.2)' }, { name: 'Documentation' }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: "An access token whose scope holds the API client_id (GATEHOUSE_API_CLIENT_ID), issued to an active client whose aud metadata lists it. For a user's token, the API client's authorization policy decides who may call (its access rules; by default the policy `identity-api`, which admits the members of GATEHOUSE_API_GROUP until an administrator changes it); a refused user gets 403. A client's own token (client_credentials) acts as that client." },
        basic: { type: 'http', scheme: 'basic', description: 'The API account (GATEHOUSE_API_USERNAME / GATEHOUSE_API_PASSWORD).' },
        apiUsername: { type: 'apiKey', in: 'query', name: 'username', description: 'The API account as URL parameters (query string only, never a form body).' },
        apiPassword: { type: 'apiKey', in: 'query', name: 'password' },
      },
      responses: {
        InvalidArguments: errorAnswer('Invalid arguments: a malformed id, parameter or body.'),
        AuthenticationFailed: errorAnswer('Authentication failed; WWW-Authenticate carries Bearer and Basic challenges.'),
        Unauthorized: errorAnswer('Unauthorized: a token of a non-member, or one not issued for the API (error="insufficient_scope"); or a change of an administrator group or of one of its members by a caller who is not a management administrator.'),
        EntityNotFound: errorAnswer('Entity not found.'),
        Conflict: errorAnswer('Already exists, (deleting) the organization still has sub-organizations or users, or the change would leave the administrators group without an enabled member.'),
        SizeLimitExceeded: errorAnswer('Size limit exceeded: a body over 64 KiB.'),
        InternalServerError: errorAnswer('Internal server error.'),
      },
    },
  };
}
