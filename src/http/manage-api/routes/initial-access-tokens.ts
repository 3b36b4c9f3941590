/**
 * Initial access tokens of RFC 7591 dynamic client registration (docs/authorization.md, "Dynamic client
 * registration"; docs/management-api.md): list, mint (the value answered once, only its hash
 * kept) and revoke, as `gatehouse registration-token …` does (src/manage/registration-tokens.ts). A token
 * is `{ id, description?, expires_at, uses_left, created_at, created_by }`; never its value again.
 */
import { initialAccessTokenView, InvalidTokenSettings, MAX_INITIAL_ACCESS_TOKEN_TTL, MAX_INITIAL_ACCESS_TOKEN_USES } from '../../../oauth/dynamic-registration.ts';
import { InitialAccessTokenNotFound } from '../../../manage/registration-tokens.ts';
import { invalidField, notFound } from '../errors.ts';
import { listQuerySchema, pageSchema, stringKeyPage, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';

const TAG = 'Initial access tokens';

const tokenSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'expires_at', 'uses_left', 'created_at', 'created_by'],
  properties: {
    id: { type: 'string' },
    description: { type: 'string' },
    expires_at: { type: 'string', format: 'date-time' },
    uses_left: { type: 'integer', minimum: 0 },
    created_at: { type: 'string', format: 'date-time' },
    created_by: { type: 'string', description: 'The administrator\'s user id (or the client_id of a client_credentials token); `cli:<account>` from the CLI.' },
  },
};

const createSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['expires_in'],
  properties: {
    expires_in: { type: 'integer', minimum: 1, maximum: MAX_INITIAL_ACCESS_TOKEN_TTL, description: 'Seconds until it expires (at most one year).' },
    uses: { type: 'integer', minimum: 1, maximum: MAX_INITIAL_ACCESS_TOKEN_USES, default: 1, description: 'How many clients it may register.' },
    description: { type: 'string', maxLength: 200, description: 'What it is for.' },
  },
};

const idParam: JsonSchema = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 100 } } };

export const initialAccessTokenRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/initial-access-tokens',
    operationId: 'listInitialAccessTokens',
    summary: 'List initial access tokens for dynamic client registration, by id (never their values)',
    tag: TAG,
    access: 'read',
    querystring: listQuerySchema(undefined),
    responses: { 200: { description: 'A page of initial access tokens.', schema: pageSchema(tokenSchema) } },
    async handle({ deps, query }) {
      const page = stringKeyPage(query);
      const rows = await deps.admin.registrationTokens.page({ after: page.after, limit: page.fetch });
      return { body: toPage(rows, page.limit, (t) => t.id, initialAccessTokenView) };
    },
  },
  {
    method: 'POST',
    path: '/initial-access-tokens',
    operationId: 'createInitialAccessToken',
    summary: 'Mint an initial access token (RFC 7591 §3); its value is answered once as `token`',
    tag: TAG,
    access: 'write',
    body: createSchema,
    responses: { 201: { description: 'The token, with its value (shown once).', schema: { ...tokenSchema, required: [...(tokenSchema.required as string[]), 'token'], properties: { ...(tokenSchema.properties as object), token: { type: 'string' } } } } },
    async handle({ deps, body, acting }) {
      const input = body as { expires_in: number; uses?: number; description?: string };
      try {
        const { token, value } = await deps.admin.registrationTokens.create(acting, { expiresIn: input.expires_in, uses: input.uses ?? 1, description: input.description });
        return { status: 201, body: { ...initialAccessTokenView(token), token: value } };
      } catch (error) {
        if (error instanceof InvalidTokenSettings) throw invalidField(error.field, error.message.slice(error.field.length + 2));
        throw error;
      }
    },
  },
  {
    method: 'DELETE',
    path: '/initial-access-tokens/:id',
    operationId: 'revokeInitialAccessToken',
    summary: 'Revoke an initial access token (clients it registered stay)',
    tag: TAG,
    access: 'write',
    params: idParam,
    responses: { 204: { description: 'Revoked.' } },
    async handle({ deps, params, acting }) {
      try {
        await deps.admin.registrationTokens.revoke(acting, params.id!);
      } catch (error) {
        if (error instanceof InitialAccessTokenNotFound) throw notFound(error.message);
        throw error;
      }
      return { status: 204 };
    },
  },
];
