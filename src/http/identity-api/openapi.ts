/**
 * What the identity API's OpenAPI 3.1 document says beyond its routes (../openapi.ts generates it
 * from the route table plugin.ts registers): CustomerID XML beside JSON, the free-form attribute
 * parameters, CustomerID's error codes and the three ways to authenticate. Served at
 * `/{identity_rest}/openapi.json`.
 */
import type { Config } from '../../config.ts';
import { declaredParameters, openApiDocument as document, openApiSchema, type DocumentedScope } from '../openapi.ts';
import type { ApiRoute } from './route.ts';
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

export function openApiDocument(config: Config, scopes: RouteScope[]): Record<string, unknown> {
  const documented: DocumentedScope<ApiRoute>[] = scopes.map(({ prefix, routes }) => ({ base: `/${prefix}/services`, name: prefix, routes }));
  return document(
    {
      info: {
        title: 'gatehouse identity API',
        version: '2.1',
        description:
          'Users, organizations and group membership, compatible with Ubisecure CustomerID REST API 2.0/2.1 and the legacy 1.2 reads. JSON by default; CustomerID XML with `Accept: application/xml`. Errors: `{"error":{"code","message"}}` or `<error><code/><message/></error>`; the HTTP status is authoritative. See docs/identity-api.md.',
      },
      document: { path: `/${config.identityRestPrefix}/openapi.json`, operationId: 'openApiDocument', description: 'The OpenAPI 3.1 document of the identity API.' },
      parameters,
      // CustomerID reads a create or update from the query string as well: the body may be left out.
      bodyRequired: () => false,
      otherMedia: {
        request: xmlContent('An entity document: <User> or <Organization> holding <Attribute name="…"><Value>…</Value></Attribute>. No DTD.'),
        response: xmlContent('The same in CustomerID XML.'),
      },
      tags: ['Users', 'Organizations', 'Group membership', 'Invitations', 'Legacy (schema 1.2)'],
      security: [{ bearer: [] }, { basic: [] }, { apiUsername: [], apiPassword: [] }],
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: "An access token whose scope holds the API client_id (GATEHOUSE_API_CLIENT_ID), issued to an active client whose aud metadata lists it. For a user's token, the API client's authorization policy decides who may call (its access rules; by default the policy `identity-api`, which admits the members of GATEHOUSE_API_GROUP until an administrator changes it); a refused user gets 403. A client's own token (client_credentials) acts as that client." },
        basic: { type: 'http', scheme: 'basic', description: 'The API account (GATEHOUSE_API_USERNAME / GATEHOUSE_API_PASSWORD).' },
        apiUsername: { type: 'apiKey', in: 'query', name: 'username', description: 'The API account as URL parameters (query string only, never a form body).' },
        apiPassword: { type: 'apiKey', in: 'query', name: 'password' },
      },
      // CustomerID's error codes as the answers' names; a body of another media type is `Invalid arguments` too.
      errorAnswers: {
        badRequest: 'InvalidArguments',
        unauthenticated: 'AuthenticationFailed',
        forbidden: 'Unauthorized',
        notFound: 'EntityNotFound',
        conflict: 'Conflict',
        tooLarge: 'SizeLimitExceeded',
        unsupportedMediaType: 'InvalidArguments',
        serverError: 'InternalServerError',
      },
      errorDescriptions: {
        InvalidArguments: 'Invalid arguments: a malformed id, parameter or body.',
        AuthenticationFailed: 'Authentication failed; WWW-Authenticate carries Bearer and Basic challenges.',
        Unauthorized: 'Unauthorized: a token of a non-member, or one not issued for the API (error="insufficient_scope"); or a change of an administrator group or of one of its members by a caller who is not a management administrator.',
        EntityNotFound: 'Entity not found.',
        Conflict: 'Already exists, (deleting) the organization still has sub-organizations or users, or the change would leave the administrators group without an enabled member.',
        SizeLimitExceeded: 'Size limit exceeded: a body over 64 KiB.',
        InternalServerError: 'Internal server error.',
      },
      errorContent: { 'application/json': { schema: errorResponse }, ...xmlContent('<error><code>…</code><message>…</message></error>') },
    },
    new URL(config.issuer).origin,
    documented,
  );
}
