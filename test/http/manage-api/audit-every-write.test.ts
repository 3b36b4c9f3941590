/**
 * Issue 14's rule "every write leaves an audit event naming the administrator", proved for EVERY
 * write route of the registry (MANAGE_ROUTES), mechanically: the table below has one entry per
 * write route, keyed by operationId, and a completeness test fails when a write route has none
 * (so a route added later must come with its entry). Each entry sets up what its route needs,
 * calls the route (its method and path are taken from the registry, not restated) with the
 * administrator's token and checks both the events as emitted and the rows the store kept
 * (GET /audit-events): the expected events, each naming the administrator and the console client,
 * and nothing else. One entry is also run with a client_credentials token, named by its client.
 *
 * The clock is a ManualClock stepped one second before each call, so `since=` picks out exactly
 * that call's stored events.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MANAGE_ROUTES } from '../../../src/http/manage-api/routes/index.ts';
import type { ManageRoute } from '../../../src/http/manage-api/route.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { hashSecret } from '../../../src/lib/hash.ts';
import { CONSOLE_CLIENT_ID } from '../../../src/manage/management-clients.ts';
import type { AuditEvent } from '../../../src/observability/audit.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { addClient, addUser } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import { unique } from '../../helpers/store.ts';

const START = Date.UTC(2026, 10, 24, 9, 0, 0);
const HOUR = 3_600_000;
/** A base32 TOTP secret as another server exports one. */
const TOTP_SECRET = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';

type EventName = AuditEvent['event'];

/** What an entry's setup gives the request: the path's parameters and the body. */
interface Call {
  params?: Record<string, string>;
  body?: unknown;
}

interface Context {
  server: RunningServer;
  /** A change made through the API as the administrator, for setup; fails unless 2xx. */
  api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>>;
}

interface Entry {
  /** Creates what the route needs (through the store or the API) and names it. */
  setup(ctx: Context): Promise<Call>;
  /** The audit events the call must emit (in any order), and no other. */
  events: EventName[];
}

/** One entry per write route, keyed by operationId. */
const WRITES: Record<string, Entry> = {
  registerClient: { events: ['client.created'], setup: async () => ({ body: { client_name: 'audited', redirect_uris: ['https://rp.example/cb'] } }) },
  importClient: { events: ['client.created'], setup: async () => ({ body: { client_id: unique('imported-'), client_name: 'imported', redirect_uris: ['https://rp.example/cb'] } }) },
  replaceClientMetadata: { events: ['client.updated'], setup: async ({ server }) => ({ params: { id: await aClient(server) }, body: { client_name: 'replaced', redirect_uris: ['https://rp.example/cb'] } }) },
  updateClient: { events: ['client.updated'], setup: async ({ server }) => ({ params: { id: await aClient(server) }, body: { client_name: 'renamed' } }) },
  deleteClient: { events: ['client.deleted'], setup: async ({ server }) => ({ params: { id: await aClient(server) } }) },
  activateClient: { events: ['client.status_changed'], setup: async ({ server }) => ({ params: { id: await aClient(server, false) } }) },
  deactivateClient: { events: ['client.status_changed'], setup: async ({ server }) => ({ params: { id: await aClient(server) } }) },
  rotateClientSecret: { events: ['client.secret_rotated'], setup: async ({ server }) => ({ params: { id: await aClient(server) } }) },

  createPolicy: { events: ['policy.created'], setup: async () => ({ body: { name: unique('policy-'), access: { groups: ['Staff'] } } }) },
  replacePolicy: { events: ['policy.updated'], setup: async (ctx) => ({ params: { name: await aPolicy(ctx) }, body: { access: { groups: ['Other'] } } }) },
  deletePolicy: { events: ['policy.deleted'], setup: async (ctx) => ({ params: { name: await aPolicy(ctx) } }) },

  rotateKey: { events: ['key.rotated'], setup: async () => ({ body: { alg: 'RS256' } }) },

  createUser: { events: ['user.created'], setup: async () => ({ body: { username: unique('new-user-') } }) },
  updateUser: { events: ['user.updated'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store)).id }, body: { given_name: 'Grace' } }) },
  deleteUser: { events: ['user.deleted'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store)).id } }) },
  setUserPassword: { events: ['user.password_changed'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store)).id }, body: { password: 'correct horse battery staple' } }) },
  sendUserPasswordReset: { events: ['password_reset.sent'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store, { email: 'reset@example.com' })).id } }) },
  sendUserEmailVerification: { events: ['email_verification.sent'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store, { email: 'verify@example.com' })).id } }) },
  enableUser: { events: ['user.status_changed'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store, { status: 'disabled' })).id } }) },
  disableUser: { events: ['user.status_changed'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store)).id } }) },
  approveRegistration: { events: ['registration.approved'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store, { status: 'pending', email: 'approve@example.com' })).id } }) },
  rejectRegistration: { events: ['registration.rejected'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store, { status: 'pending', email: 'reject@example.com' })).id } }) },

  endUserSession: {
    events: ['session.ended'],
    async setup({ server }) {
      const user = await addUser(server.gatehouse.store);
      const now = server.gatehouse.deps.clock.now();
      const sessionIndex = `_${randomBytes(20).toString('hex')}`;
      await server.gatehouse.store.sessions.insert({ idHash: hashSecret(randomBytes(32).toString('base64url')), sessionIndex, userId: user.id, authTime: now, amr: ['pwd'], acr: undefined, createdAt: now, expiresAt: now + HOUR, maxExpiresAt: now + 8 * HOUR });
      return { params: { id: user.id, sid: sessionIndex } };
    },
  },
  withdrawUserConsent: {
    events: ['consent.withdrawn'],
    async setup({ server }) {
      const { store } = server.gatehouse;
      const user = await addUser(store);
      const clientId = await aClient(server);
      const now = server.gatehouse.deps.clock.now();
      await store.consents.put({ userId: user.id, clientId, scope: ['openid'], grantedAt: now, updatedAt: now });
      return { params: { id: user.id, client_id: clientId } };
    },
  },

  removeUserFactor: {
    events: ['factor.removed'],
    async setup(ctx) {
      const user = await addUser(ctx.server.gatehouse.store);
      return { params: { id: user.id, factor_id: String((await ctx.api('POST', `/users/${user.id}/factors/totp`, { secret: TOTP_SECRET })).id) } };
    },
  },
  renameUserFactor: {
    events: ['factor.renamed'],
    async setup(ctx) {
      const user = await addUser(ctx.server.gatehouse.store);
      return { params: { id: user.id, factor_id: String((await ctx.api('POST', `/users/${user.id}/factors/totp`, { secret: TOTP_SECRET })).id) }, body: { name: 'Renamed' } };
    },
  },
  resetUserFactors: {
    events: ['factor.reset'],
    async setup(ctx) {
      const user = await addUser(ctx.server.gatehouse.store);
      await ctx.api('POST', `/users/${user.id}/factors/totp`, { secret: TOTP_SECRET });
      return { params: { id: user.id } };
    },
  },
  importUserTotp: { events: ['factor.enrolled'], setup: async ({ server }) => ({ params: { id: (await addUser(server.gatehouse.store)).id }, body: { secret: TOTP_SECRET, name: 'Migrated' } }) },

  createGroup: { events: ['group.created'], setup: async () => ({ body: { name: unique('group-') } }) },
  deleteGroup: { events: ['group.deleted'], setup: async (ctx) => ({ params: { name: await aGroup(ctx) } }) },
  addGroupMember: { events: ['user.group_added'], setup: async (ctx) => ({ params: { name: await aGroup(ctx), user_id: (await addUser(ctx.server.gatehouse.store)).id } }) },
  removeGroupMember: {
    events: ['user.group_removed'],
    async setup(ctx) {
      const name = await aGroup(ctx);
      const user = await addUser(ctx.server.gatehouse.store);
      await ctx.api('PUT', `/groups/${name}/members/${user.id}`);
      return { params: { name, user_id: user.id } };
    },
  },

  createOrganization: { events: ['organization.created'], setup: async () => ({ body: { technical_name: unique('org-'), name: 'Audited Oy' } }) },
  updateOrganization: { events: ['organization.updated'], setup: async (ctx) => ({ params: { id: await anOrganization(ctx) }, body: { name: 'Renamed Oy' } }) },
  deleteOrganization: { events: ['organization.deleted'], setup: async (ctx) => ({ params: { id: await anOrganization(ctx) } }) },

  createInitialAccessToken: { events: ['initial_access_token.created'], setup: async () => ({ body: { expires_in: 3600, description: 'audited' } }) },
  revokeInitialAccessToken: { events: ['initial_access_token.revoked'], setup: async (ctx) => ({ params: { id: String((await ctx.api('POST', '/initial-access-tokens', { expires_in: 3600 })).id) } }) },

  redeliverOutboxMessage: {
    events: ['outbox.redelivered'],
    async setup({ server }) {
      // A dead message, as a sender leaves one after its attempts.
      const outbox = server.gatehouse.store.outbox;
      const now = server.gatehouse.deps.clock.now();
      const id = unique('');
      const messageId = `${id.padEnd(8, '0').slice(0, 8)}-0000-4000-8000-000000000000`;
      await outbox.enqueue({ id: messageId, channel: 'mail', kind: 'mail.test', destination: 'a@example.com', payload: {}, dedupeKey: id, createdAt: now, nextAttemptAt: now });
      await outbox.claim({ owner: 'audit', now, leaseMs: HOUR, limit: 1, channels: ['mail'], id: messageId });
      await outbox.markFailed(messageId, 'audit', { now, error: 'SMTP 550', retryAt: undefined });
      return { params: { id: messageId } };
    },
  },

  createInvitation: { events: ['invitation.created'], setup: async () => ({ body: { email: `${unique('invitee-')}@example.com` } }) },
  resendInvitation: { events: ['invitation.resent'], setup: async (ctx) => ({ params: { id: await anInvitation(ctx) } }) },
  revokeInvitation: { events: ['invitation.revoked'], setup: async (ctx) => ({ params: { id: await anInvitation(ctx) } }) },

  createWebhook: { events: ['webhook.created'], setup: async () => ({ body: { url: 'https://hooks.example.com/in', events: ['user.created'] } }) },
  updateWebhook: { events: ['webhook.updated'], setup: async (ctx) => ({ params: { id: await aWebhook(ctx) }, body: { enabled: false } }) },
  deleteWebhook: { events: ['webhook.deleted'], setup: async (ctx) => ({ params: { id: await aWebhook(ctx) } }) },
  rotateWebhookSecret: { events: ['webhook.secret_rotated'], setup: async (ctx) => ({ params: { id: await aWebhook(ctx) } }) },
  redeliverWebhook: {
    events: ['outbox.redelivered'],
    async setup(ctx) {
      // A delivered webhook of the endpoint, as the sender leaves one.
      const endpointId = await aWebhook(ctx);
      const outbox = ctx.server.gatehouse.store.outbox;
      const now = ctx.server.gatehouse.deps.clock.now();
      const id = unique('');
      const messageId = `${id.padEnd(8, '0').slice(0, 8)}-0000-4000-8000-000000000001`;
      await outbox.enqueue({ id: messageId, channel: 'webhook', kind: 'webhook.user.created', destination: 'https://hooks.example.com/in', payload: {}, dedupeKey: id, createdAt: now, nextAttemptAt: now, endpointId });
      await outbox.claim({ owner: 'audit', now, leaseMs: HOUR, limit: 1, channels: ['webhook'], id: messageId });
      await outbox.markDelivered(messageId, 'audit', now, 204);
      return { params: { id: endpointId, message_id: messageId } };
    },
  },
};

async function aWebhook(ctx: Context): Promise<string> {
  return String(((await ctx.api('POST', '/webhooks', { url: 'https://hooks.example.com/in', events: ['user.created'] })).endpoint as { id: string }).id);
}

async function anInvitation(ctx: Context): Promise<string> {
  return String(((await ctx.api('POST', '/invitations', { email: `${unique('invitee-')}@example.com` })).invitation as { id: string }).id);
}

async function aClient(server: RunningServer, active = true): Promise<string> {
  return (await addClient(server.gatehouse.store, { active })).client.clientId;
}
async function aPolicy(ctx: Context): Promise<string> {
  return String((await ctx.api('POST', '/policies', { name: unique('policy-'), access: { groups: ['Staff'] } })).name);
}
async function aGroup(ctx: Context): Promise<string> {
  return String((await ctx.api('POST', '/groups', { name: unique('group-') })).name);
}
async function anOrganization(ctx: Context): Promise<string> {
  return String((await ctx.api('POST', '/organizations', { technical_name: unique('org-') })).id);
}

const writeRoutes = (routes: readonly ManageRoute[]) => routes.filter((r) => r.access === 'write');

/** The operationIds of the write routes without an entry, and the entries naming no write route. */
function tableGaps(routes: readonly ManageRoute[], table: Record<string, unknown>): { missing: string[]; extra: string[] } {
  const ids = new Set(writeRoutes(routes).map((r) => r.operationId));
  return { missing: [...ids].filter((id) => !(id in table)).sort(), extra: Object.keys(table).filter((id) => !ids.has(id)).sort() };
}

/** The route's path with its parameters filled in (each one must be given). */
function pathOf(route: ManageRoute, params: Record<string, string> = {}): string {
  return route.path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = params[name];
    assert.ok(value !== undefined, `${route.operationId}: the setup gives no :${name}`);
    return encodeURIComponent(value);
  });
}

for (const db of DATABASES) {
  describe(`management API: every write leaves an audit event naming who made it (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    const clock = new ManualClock(START);
    let ctx: Context;

    before(async () => {
      // Mail on (a relay that is never reached: no sender runs), so that sending a reset link is a write that succeeds.
      server = await startServer(db, { audit, clock, env: { GATEHOUSE_SMTP_URL: 'smtp://127.0.0.1:9', GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      tokens = await manageTokens(server);
      ctx = {
        server,
        async api(method, path, body) {
          const answer = await manageCall(server, method, path, { token: tokens.admin, body });
          assert.ok(answer.status >= 200 && answer.status < 300, `setup ${method} ${path}: ${answer.status} ${answer.text}`);
          return answer.json;
        },
      };
    });
    after(async () => server.close());

    test('the table has exactly one entry per write route of the registry', () => {
      assert.ok(writeRoutes(MANAGE_ROUTES).length > 0);
      assert.deepEqual(tableGaps(MANAGE_ROUTES, WRITES), { missing: [], extra: [] });
    });

    /**
     * Calls `operationId` with `token` after its setup, with the clock one step on; answers the
     * events emitted by the call and those the store kept from then on (flushed, newest first).
     */
    async function run(operationId: string, token: string) {
      const route = MANAGE_ROUTES.find((r) => r.operationId === operationId);
      assert.ok(route, `${operationId} is in the registry`);
      const { params, body } = await WRITES[operationId]!.setup(ctx);
      clock.advance(1000);
      const since = new Date(clock.now()).toISOString();
      audit.clear();
      const answer = await manageCall(server, route.method, pathOf(route, params), { token, body });
      assert.ok(answer.status >= 200 && answer.status < 300, `${route.method} ${route.path}: ${answer.status} ${answer.text}`);
      assert.ok(answer.status in route.responses, `${route.method} ${route.path}: ${answer.status} is a documented answer`);
      const emitted = audit.all() as (AuditEvent & { actor?: unknown })[];
      await server.gatehouse.auditStore!.flush();
      const listed = await manageCall(server, 'GET', `/audit-events?since=${encodeURIComponent(since)}&limit=200`, { token: tokens.admin });
      assert.equal(listed.status, 200, listed.text);
      return { emitted, stored: listed.json.items ?? [] };
    }

    const sorted = (names: unknown[]) => names.map(String).sort();

    for (const [operationId, entry] of Object.entries(WRITES)) {
      test(`${operationId}: emits ${entry.events.join(', ')} naming the administrator, and the store keeps it`, async () => {
        const { emitted, stored } = await run(operationId, tokens.admin);
        const actor = { via: 'manage-api', caller: tokens.adminUser.id, clientId: CONSOLE_CLIENT_ID };
        assert.deepEqual(sorted(emitted.map((e) => e.event)), sorted(entry.events), 'the events emitted');
        for (const event of emitted) assert.deepEqual(event.actor, actor, `${event.event}: the actor`);
        assert.deepEqual(sorted(stored.map((e) => e.event)), sorted(entry.events), 'the events stored');
        for (const item of stored) assert.deepEqual(item.actor, { via: 'manage-api', caller: tokens.adminUser.id, username: tokens.adminUser.username, client_id: CONSOLE_CLIENT_ID }, `${String(item.event)}: the stored actor`);
      });
    }

    test('a client_credentials token: the events name the client and no caller', async () => {
      const clientId = tokens.automationClient.clientId;
      for (const operationId of ['createGroup', 'rotateClientSecret']) {
        const { emitted, stored } = await run(operationId, tokens.automation);
        assert.deepEqual(sorted(emitted.map((e) => e.event)), sorted(WRITES[operationId]!.events));
        for (const event of emitted) assert.deepEqual(event.actor, { via: 'manage-api', clientId }, `${operationId} ${event.event}: the actor`);
        assert.deepEqual(sorted(stored.map((e) => e.event)), sorted(WRITES[operationId]!.events));
        for (const item of stored) assert.deepEqual(item.actor, { via: 'manage-api', client_id: clientId }, `${operationId} ${String(item.event)}: the stored actor`);
      }
    });

    test('the completeness check would catch a write route without an entry, and an entry without a route', () => {
      const fake: ManageRoute = { method: 'POST', path: '/nothing', operationId: 'doNothing', summary: 'x', tag: 'x', access: 'write', responses: { 204: { description: 'x' } }, handle: async () => ({ status: 204 }) };
      assert.ok(tableGaps([...MANAGE_ROUTES, fake], WRITES).missing.includes('doNothing'));
      assert.ok(tableGaps(MANAGE_ROUTES, { ...WRITES, gone: {} }).extra.includes('gone'));
      assert.deepEqual(tableGaps([{ ...fake, access: 'read' }], {}), { missing: [], extra: [] }, 'a read route needs no entry');
    });
  });
}
