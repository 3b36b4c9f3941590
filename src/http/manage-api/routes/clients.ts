/**
 * Clients (docs/management-api.md, "Clients"): the client use cases of the application layer
 * (src/manage/clients.ts), as `gatehouse client …` runs them; they emit the audit events. A client
 * is its metadata view (clientView) with `updated_at`; a generated secret is answered once, never again.
 *
 * The API's own client and the console's cannot be deleted or deactivated (409): the use cases
 * refuse it whoever acts, the CLI's operator included (docs/decisions.md MA5, MA5a).
 */
import type { Client } from '../../../domain/client.ts';
import { ConflictError } from '../../../domain/errors.ts';
import { clientView } from '../../../oauth/client-view.ts';
import { badRequest, conflict } from '../errors.ts';
import { listQuerySchema, pageSchema, stringKeyPage, toPage } from '../pagination.ts';
import type { JsonSchema, ManageCall, ManageRoute } from '../route.ts';

const TAG = 'Clients';

/** The client on the wire: its metadata document, with its state and times. */
export function clientJson(client: Client): Record<string, unknown> {
  return { ...clientView(client), updated_at: new Date(client.updatedAt).toISOString() };
}

const uriList = (nullable: boolean): JsonSchema => ({ type: nullable ? ['array', 'null'] : 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 2048 } });
const stringList = (nullable: boolean): JsonSchema => ({ type: nullable ? ['array', 'null'] : 'array', maxItems: 100, items: { type: 'string', minLength: 1, maxLength: 255 } });

/**
 * The metadata members whose JSON types the schema checks (so a wrong type names its field, down
 * to `redirect_uris[0]`); every other rule, and every other member, is the use case's
 * (parseClientMetadata), which names the field it refuses. In a PATCH, null removes a member.
 */
function metadataSchema(patch: boolean): JsonSchema {
  const t = (type: string) => (patch ? [type, 'null'] : type);
  return {
    type: 'object',
    maxProperties: 100,
    properties: {
      client_name: { type: t('string'), maxLength: 255 },
      redirect_uris: uriList(patch),
      post_logout_redirect_uris: uriList(patch),
      grant_types: stringList(patch),
      response_types: stringList(patch),
      aud: stringList(patch),
      resource_uris: uriList(patch),
      resource_scopes: stringList(patch),
      allowed_cors_origins: uriList(patch),
      token_endpoint_auth_method: { type: t('string'), maxLength: 64 },
      code_challenge_method: { type: t('string'), maxLength: 16 },
      scope: { type: t('string'), maxLength: 2048 },
      refresh_tokens: { type: t('boolean') },
      rotate_refresh_tokens: { type: t('boolean') },
      access_token_ttl: { type: t('integer') },
      resource_server: { type: t('boolean') },
      active: { type: t('boolean') },
      authorization_policy: { type: t('string'), maxLength: 255 },
      jwks_uri: { type: t('string'), maxLength: 2048 },
      logo_uri: { type: t('string'), maxLength: 2048 },
      // Levels of authentication (docs/authorization.md): used when a request names no acr and sends no max_age.
      default_acr_values: stringList(patch),
      default_max_age: { type: t('integer'), minimum: 0 },
      // Back-Channel Logout 1.0 §2.2 (docs/logout.md).
      backchannel_logout_uri: { type: t('string'), maxLength: 2048 },
      backchannel_logout_session_required: { type: t('boolean') },
      frontchannel_logout_uri: { type: t('string'), maxLength: 2048 },
      frontchannel_logout_session_required: { type: t('boolean') },
    },
  };
}

const clientIdParam: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 255, description: 'The client_id.' } } };
const clientSchema: JsonSchema = { type: 'object', required: ['client_id', 'client_name', 'active', 'created_at', 'updated_at'], properties: { client_id: { type: 'string' }, client_name: { type: 'string' }, active: { type: 'boolean' }, created_at: { type: 'string' }, updated_at: { type: 'string' } }, additionalProperties: true };
const withSecret: JsonSchema = { ...clientSchema, properties: { ...(clientSchema.properties as object), client_secret: { type: 'string', description: 'The generated secret: shown this once, never again.' } } };

const logoutDeliverySchema: JsonSchema = {
  type: 'object',
  required: ['client_id', 'last_delivery'],
  properties: {
    client_id: { type: 'string' },
    last_delivery: {
      type: ['object', 'null'],
      required: ['status', 'attempted_at', 'jti'],
      properties: { status: { type: 'string', enum: ['delivered', 'failed'] }, attempted_at: { type: 'string' }, jti: { type: 'string' }, error: { type: 'string' } },
    },
  },
};

function clientId(call: ManageCall): string {
  return call.params.id!;
}

/** The secret, when one was generated, right after the client_id. */
function withSecretFirst(client: Client, clientSecret: string | undefined): Record<string, unknown> {
  const { client_id, ...rest } = clientJson(client);
  return { client_id, ...(clientSecret === undefined ? {} : { client_secret: clientSecret }), ...rest };
}

export const clientRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/clients',
    operationId: 'listClients',
    summary: 'List clients by client_id',
    tag: TAG,
    access: 'read',
    querystring: listQuerySchema('client_id or client_name'),
    responses: { 200: { description: 'A page of clients.', schema: pageSchema(clientSchema) } },
    async handle({ deps, query }) {
      const page = stringKeyPage(query);
      const rows = await deps.admin.clients.page({ after: page.after, limit: page.fetch, q: page.q });
      return { body: toPage(rows, page.limit, (c) => c.clientId, clientJson) };
    },
  },
  {
    method: 'POST',
    path: '/clients',
    operationId: 'registerClient',
    summary: 'Register a client',
    description: 'The body is a client metadata document (as `gatehouse client create --file`); gatehouse generates the client_id and, for a confidential client, the client_secret, answered once.',
    tag: TAG,
    access: 'write',
    body: metadataSchema(false),
    responses: { 201: { description: 'The client, with its client_secret (once).', schema: withSecret } },
    async handle({ deps, body, acting }) {
      const { client, clientSecret } = await deps.admin.clients.create(acting, body);
      return { status: 201, body: withSecretFirst(client, clientSecret) };
    },
  },
  {
    method: 'POST',
    path: '/clients/import',
    operationId: 'importClient',
    summary: 'Register a client from an exported document, keeping its client_id',
    description: 'The body is a document from `GET /clients/{id}/metadata` (possibly of another gatehouse). Its `client_id`, when given, is kept; one already registered is 409. A new secret is generated for a confidential client.',
    tag: TAG,
    access: 'write',
    body: { ...metadataSchema(false), properties: { ...(metadataSchema(false).properties as object), client_id: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' } } },
    responses: { 201: { description: 'The client, with its client_secret (once).', schema: withSecret } },
    async handle({ deps, body, acting }) {
      const { client_id: wanted, ...document } = body as Record<string, unknown>;
      let registered;
      try {
        registered = await deps.admin.clients.create(acting, document, wanted === undefined ? {} : { clientId: wanted as string });
      } catch (error) {
        if (error instanceof ConflictError && wanted !== undefined && !/resource URI/.test(error.message)) throw conflict(`a client with the client_id ${JSON.stringify(wanted)} is already registered`, 'client_id');
        throw error;
      }
      const { client, clientSecret } = registered;
      return { status: 201, body: withSecretFirst(client, clientSecret) };
    },
  },
  {
    method: 'GET',
    path: '/clients/:id',
    operationId: 'getClient',
    summary: 'A client',
    tag: TAG,
    access: 'read',
    params: clientIdParam,
    responses: { 200: { description: 'The client.', schema: clientSchema } },
    async handle(call) {
      return { body: clientJson(await call.deps.admin.clients.get(clientId(call))) };
    },
  },
  {
    method: 'GET',
    path: '/clients/:id/logout-delivery',
    operationId: 'getClientLogoutDelivery',
    summary: "The outcome of the last back-channel logout token sent to a client",
    description:
      'The last attempt at POSTing a logout token to the client’s `backchannel_logout_uri` (docs/logout.md, "Delivery"): `delivered` (a 2xx) or `failed` (another status, a timeout, an address refused), when, the token’s `jti`, and the error. `last_delivery` is null when none was sent yet. Every message is listed in `GET /outbox`.',
    tag: TAG,
    access: 'read',
    params: clientIdParam,
    responses: { 200: { description: 'The client’s last delivery.', schema: logoutDeliverySchema } },
    async handle(call) {
      const id = clientId(call);
      const last = await call.deps.admin.clients.lastLogoutDelivery(id);
      const lastDelivery = last === undefined ? null : { status: last.status, attempted_at: new Date(last.attemptedAt).toISOString(), jti: last.messageId, ...(last.error === undefined ? {} : { error: last.error }) };
      return { body: { client_id: id, last_delivery: lastDelivery } };
    },
  },
  {
    method: 'GET',
    path: '/clients/:id/metadata',
    operationId: 'exportClient',
    summary: "Export a client's registrable metadata document",
    description: 'The document `POST /clients/import` takes: the metadata with the client_id, without times or secret.',
    tag: TAG,
    access: 'read',
    params: clientIdParam,
    responses: { 200: { description: 'The metadata document.', schema: { type: 'object', required: ['client_id', 'client_name'], additionalProperties: true } } },
    async handle(call) {
      return { body: await call.deps.admin.clients.export(clientId(call)) };
    },
  },
  {
    method: 'PUT',
    path: '/clients/:id/metadata',
    operationId: 'replaceClientMetadata',
    summary: "Replace a client's metadata document",
    description: 'The whole document, as `GET /clients/{id}/metadata` exports it: it becomes the registration, so a member left out is removed (RFC 7592 §2.2 semantics), decided against the client as read in the same unit of work. `client_id` may be sent and must then be the client\'s. A client that starts needing a secret gets one, answered once.',
    tag: TAG,
    access: 'write',
    params: clientIdParam,
    body: { ...metadataSchema(false), properties: { ...(metadataSchema(false).properties as object), client_id: { type: 'string' } } },
    responses: { 200: { description: 'The client as replaced (with client_secret when one was generated).', schema: withSecret } },
    async handle(call) {
      const id = clientId(call);
      const { client_id: named, ...document } = call.body as Record<string, unknown>;
      if (named !== undefined && named !== id) throw badRequest(`client_id: must be ${JSON.stringify(id)}, the client being replaced; a client_id cannot change.`, [{ field: 'client_id', message: 'cannot change' }]);
      const { client, clientSecret } = await call.deps.admin.clients.replace(call.acting, id, document);
      return { body: withSecretFirst(client, clientSecret) };
    },
  },
  {
    method: 'PATCH',
    path: '/clients/:id',
    operationId: 'updateClient',
    summary: 'Change a client',
    description: 'A partial metadata document: the members given replace the registered ones, null removes one (JSON merge patch, RFC 7396, one level deep). A client that starts needing a secret gets one, answered once.',
    tag: TAG,
    access: 'write',
    params: clientIdParam,
    body: metadataSchema(true),
    responses: { 200: { description: 'The client as changed (with client_secret when one was generated).', schema: withSecret } },
    async handle(call) {
      const { client, clientSecret } = await call.deps.admin.clients.update(call.acting, clientId(call), call.body as Record<string, unknown>);
      return { body: withSecretFirst(client, clientSecret) };
    },
  },
  {
    method: 'DELETE',
    path: '/clients/:id',
    operationId: 'deleteClient',
    summary: 'Delete a client for good',
    tag: TAG,
    access: 'write',
    params: clientIdParam,
    responses: { 204: { description: 'Deleted.' } },
    async handle(call) {
      await call.deps.admin.clients.delete(call.acting, clientId(call));
      return { status: 204 };
    },
  },
  ...([
    ['activate', true],
    ['deactivate', false],
  ] as const).map(
    ([name, active]): ManageRoute => ({
      method: 'POST',
      path: `/clients/:id/${name}`,
      operationId: `${name}Client`,
      summary: active ? 'Let the client use gatehouse again' : 'Refuse the client everywhere until activated',
      tag: TAG,
      access: 'write',
      params: clientIdParam,
      responses: { 200: { description: 'The client.', schema: clientSchema } },
      async handle(call) {
        const client = await call.deps.admin.clients.setActive(call.acting, clientId(call), active);
        return { body: clientJson(client) };
      },
    }),
  ),
  {
    method: 'POST',
    path: '/clients/:id/secret',
    operationId: 'rotateClientSecret',
    summary: "Generate a new client_secret; the old one stops working at once",
    tag: TAG,
    access: 'write',
    params: clientIdParam,
    responses: { 200: { description: 'The client_id and the new secret (shown once).', schema: { type: 'object', required: ['client_id', 'client_secret'], properties: { client_id: { type: 'string' }, client_secret: { type: 'string' } } } } },
    async handle(call) {
      const { client, clientSecret } = await call.deps.admin.clients.rotateSecret(call.acting, clientId(call));
      return { body: { client_id: client.clientId, client_secret: clientSecret } };
    },
  },
];
