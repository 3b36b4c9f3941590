/**
 * `/users/{id}/factors`: a user's second factors (docs/second-factors.md) — list them, rename one, remove one,
 * remove them all (a user who lost the authenticator and the recovery codes), import a TOTP secret
 * exported from another server. Each calls the use case the CLI calls (src/manage/user-factors.ts),
 * which holds the rules (an administrator's factors are changed by administrators only) and emits
 * the audit event. No answer ever carries a secret, a code or a hash: an imported secret goes in
 * and never comes back (the request log never has bodies: src/observability/logger.ts).
 */
import { factorRecord } from '../../../manage/user-factors.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { pathUser, uuidSchema } from './identity-shared.ts';

export const factorSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'kind', 'name', 'created_at', 'last_used_at'],
  properties: {
    id: { type: 'string' },
    kind: { type: 'string', enum: ['totp', 'recovery_codes', 'passkey', 'email_otp'] },
    name: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    last_used_at: { type: ['string', 'null'], format: 'date-time', description: 'When a code of it was last accepted; null: never.' },
    codes_left: { type: 'integer', description: 'Recovery codes only: how many are still unused.' },
    backup_eligible: { type: 'boolean', description: 'Passkeys only: whether the passkey may be synced to other devices (the WebAuthn BE flag); its sign-ins then say amr `swk`, otherwise `hwk`.' },
    email: { type: 'string', description: 'E-mail codes (`email_otp`) only: the address their codes are sent to, fixed when they were added.' },
  },
};

const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: uuidSchema } };

export const factorRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/users/:id/factors',
    operationId: 'listUserFactors',
    summary: "List a user's second factors, oldest first",
    description: 'TOTP authenticators and the set of recovery codes, with how many codes are left. Never a secret, a code or a hash.',
    tag: 'Second factors',
    access: 'read',
    params: idParams,
    responses: { 200: { description: "The user's factors (not paged: a user has a handful).", schema: { type: 'object', required: ['items'], properties: { items: { type: 'array', items: factorSchema } } } } },
    async handle(call) {
      const user = await pathUser(call);
      return { body: { items: (await call.deps.admin.users.factors(user.id)).map(factorRecord) } };
    },
  },
  {
    method: 'DELETE',
    path: '/users/:id/factors/:factor_id',
    operationId: 'removeUserFactor',
    summary: "Remove one of a user's second factors",
    description: "404 when the user has no such factor. An administrator's factors are changed by administrators only (403).",
    tag: 'Second factors',
    access: 'write',
    params: { type: 'object', required: ['id', 'factor_id'], properties: { id: uuidSchema, factor_id: { type: 'string', maxLength: 64 } } },
    responses: { 204: { description: 'The factor is removed.' } },
    async handle(call) {
      const user = await pathUser(call);
      await call.deps.admin.users.removeFactor(call.acting, user.id, call.params.factor_id ?? '');
      return { status: 204 };
    },
  },
  {
    method: 'PATCH',
    path: '/users/:id/factors/:factor_id',
    operationId: 'renameUserFactor',
    summary: "Rename one of a user's second factors",
    description: `\`name\`: 1 to 64 characters once trimmed, no control characters (the same rule as the CLI, the console and the account security page). 404 when the user has no such factor. An administrator's factors are changed by administrators only (403).`,
    tag: 'Second factors',
    access: 'write',
    params: { type: 'object', required: ['id', 'factor_id'], properties: { id: uuidSchema, factor_id: { type: 'string', maxLength: 64 } } },
    body: { type: 'object', required: ['name'], additionalProperties: false, properties: { name: { type: 'string', maxLength: 255 } } },
    responses: { 200: { description: 'The factor as renamed.', schema: factorSchema } },
    async handle(call) {
      const user = await pathUser(call);
      const body = call.body as { name: string };
      const factor = await call.deps.admin.users.renameFactor(call.acting, user.id, call.params.factor_id ?? '', body.name);
      return { body: factorRecord(factor) };
    },
  },
  {
    method: 'POST',
    path: '/users/:id/factors/reset',
    operationId: 'resetUserFactors',
    summary: "Remove every second factor of a user",
    description: 'For a user who lost both the authenticator and the recovery codes: they sign in with the password alone until they enrol again. Verify who is asking first.',
    tag: 'Second factors',
    access: 'write',
    params: idParams,
    body: { type: 'object', additionalProperties: false, properties: {} },
    bodyOptional: true,
    responses: { 200: { description: 'How many factors were removed.', schema: { type: 'object', required: ['removed'], properties: { removed: { type: 'integer' } } } } },
    async handle(call) {
      const user = await pathUser(call);
      return { body: { removed: await call.deps.admin.users.resetFactors(call.acting, user.id) } };
    },
  },
  {
    method: 'POST',
    path: '/users/:id/factors/totp',
    operationId: 'importUserTotp',
    summary: 'Import a TOTP secret exported from another server',
    description:
      'For users migrating with their authenticator apps: `secret` is the base32 secret (RFC 4648; at least 16 characters, spaces and padding allowed); digits 6–8, period 10–120 seconds, algorithm SHA1, SHA256 or SHA512 (defaults 6, 30, SHA1). Nothing checks a code at import. The secret is never returned, logged or audited.',
    tag: 'Second factors',
    access: 'write',
    params: idParams,
    body: {
      type: 'object',
      required: ['secret'],
      additionalProperties: false,
      properties: {
        secret: { type: 'string', minLength: 1, maxLength: 1024, writeOnly: true, description: 'Base32, as the other server exported it.' },
        name: { type: 'string', maxLength: 255 },
        digits: { type: 'integer' },
        period: { type: 'integer' },
        algorithm: { type: 'string', maxLength: 16 },
      },
    },
    responses: { 201: { description: 'The new factor (without its secret).', schema: factorSchema } },
    async handle(call) {
      const user = await pathUser(call);
      const body = call.body as { secret: string; name?: string; digits?: number; period?: number; algorithm?: string };
      const factor = await call.deps.admin.users.importTotp(call.acting, user.id, { secret: body.secret, name: body.name, digits: body.digits, period: body.period, algorithm: body.algorithm });
      return { status: 201, body: factorRecord(factor) };
    },
  },
];
