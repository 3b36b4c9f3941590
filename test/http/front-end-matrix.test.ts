/**
 * The cross-front-end matrix (issue 23 item 6; docs/architecture.md): each administrative rule,
 * attempted the same way through each front end — the CLI (bin/gatehouse.js against the server's
 * store), the identity API, the management API and the console — for real, on every database.
 * Each cell asserts the outcome class (refused or done) in that front end's own wire form (CLI exit
 * status 2 and one stderr line; an identity-API error; a management-API problem; a console alert or
 * form error), and the state after. A front end without the operation is an explicit `n/a` with
 * the reason, so the table is also the map of what each front end can do.
 *
 * One server per database; every cell makes its own fixtures (users, organizations, sessions).
 */
import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID } from '../../src/manage/management-clients.ts';
import { addClient, basic, pkcePair, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { runGatehouse, storeLineOf } from '../helpers/cli.ts';
import { consoleSignIn } from '../helpers/console-signin.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formFields, loginThroughForm, submit } from '../helpers/fixtures.ts';
import { enrolTotp, giveRecoveryCodes } from '../helpers/factors.ts';
import { ensureManagementSetup, issueManageToken, manageCall } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { accessToken, API_PASSWORD, API_USERNAME, call as identityCall } from './identity-api/helpers.ts';

const PASSWORD = 'matrix password 1';
/** Mail on, to a relay that is never reached (no sender runs in the matrix): inviting only queues. */
const NEVER_SENT_MAIL = { GATEHOUSE_SMTP_URL: 'smtp://127.0.0.1:9', GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0' };
const API_GROUP = 'Identity API Users';
const HOUR = 3_600_000;
const LAST_ADMIN = /would leave the administrators group "Administrators" without an enabled member; make someone else an administrator first/;
const CYCLE = /an organization cannot be moved under itself or one of its sub-organizations$/;

type FrontEnd = 'cli' | 'identity API' | 'management API' | 'console';
const FRONT_ENDS: FrontEnd[] = ['cli', 'identity API', 'management API', 'console'];

/** What a cell expects: the outcome class, or no such operation in that front end (with why). */
type Expected = 'refused' | 'done' | { na: string };

interface Rule {
  name: string;
  /** The row: the expected outcome in each front end. */
  row: Record<FrontEnd, Expected>;
  /** Makes the fixtures, attempts through `via`, asserts the wire form of `expected` and the state after. */
  attempt(ctx: Ctx, via: FrontEnd, expected: 'refused' | 'done'): Promise<void>;
}

interface Ctx {
  server: RunningServer & { apiClientId: string };
  cliEnv: Record<string, string>;
}

/**
 * The protected management clients' row: one rule whoever acts, the operator's shell included
 * (docs/decisions.md MA5a): `gatehouse admin bootstrap` re-creates them, and nothing needs them gone or off.
 */
const PROTECTED_CLIENTS: Rule['row'] = {
  cli: 'refused',
  'identity API': { na: 'the identity API manages users and organizations, never clients' },
  'management API': 'refused',
  console: 'refused',
};

/**
 * Deactivating or deleting a protected client, the same attempt through each front end: `cli
 * client <action> ID`, `POST /clients/ID/deactivate` or `DELETE /clients/ID`, the console's form.
 * Whatever the outcome, the client is put back through the store: a broken rule must not break the
 * next cells.
 */
function protectedClientRule(action: 'deactivate' | 'delete', clientId: string, which: string): Rule {
  const change = action === 'delete' ? 'deleting' : 'deactivating';
  return {
    name: `protected clients: ${change} ${which}`,
    row: PROTECTED_CLIENTS,
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      try {
        await expectOutcome(ctx, via, expected, {
          cli: ['client', action, clientId],
          manage: action === 'delete' ? { method: 'DELETE', path: `/clients/${clientId}`, actor: admin, status: 204 } : { method: 'POST', path: `/clients/${clientId}/deactivate`, actor: admin },
          console: { path: `/manage/clients/${clientId}/${action}`, actor: admin },
          refusal: new RegExp(`^${clientId} is ${which}: ${change} it would lock every administrator out\\.$`),
          manageStatus: 409,
        });
        const after = await store.clients.get(clientId);
        assert.deepEqual([after !== undefined, after?.active], expected === 'refused' ? [true, true] : action === 'delete' ? [false, undefined] : [true, false]);
      } finally {
        const client = await store.clients.get(clientId);
        if (client?.active === false) assert.ok(await store.clients.update({ ...client, active: true }), `${clientId} activated again`);
        await ensureManagementSetup(ctx.server);
      }
    },
  };
}

/**
 * Renaming a user's second factor: one name rule in every front end (decisions SA101), a name it
 * refuses refused alike, naming the rule, and nothing renamed; a good one done alike.
 */
function factorRenameRule(name: string, outcome: 'refused' | 'done'): Rule {
  return {
    name: `renaming a second factor ${outcome === 'refused' ? 'to a name of 65 characters' : 'to a good name'}: ${outcome} alike`,
    row: {
      cli: outcome,
      'identity API': { na: "CustomerID's REST API, which the identity API reproduces, has no resource for second factors (docs/identity-api.md)" },
      'management API': outcome,
      console: outcome,
    },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD });
      await enrolTotp(store, user.id);
      const [factor] = await store.factors.list(user.id);
      await expectOutcome(ctx, via, expected, {
        cli: ['user', 'rename-factor', user.username, factor!.id, name],
        manage: { method: 'PATCH', path: `/users/${user.id}/factors/${factor!.id}`, actor: admin, body: { name } },
        console: { path: `/manage/users/${user.id}/factors/${factor!.id}/rename`, actor: admin, form: { name }, inForm: 'name' },
        refusal: /^the name must be 1 to 64 characters, without control characters$/,
        manageStatus: 400,
      });
      assert.deepEqual((await store.factors.list(user.id)).map((f) => f.name), [expected === 'refused' ? 'phone' : name]);
    },
  };
}

/**
 * An administrator sends a password reset link instead of setting a password (issue 25 item 2,
 * docs/password-reset.md, "Administrators"): the same refusal everywhere for a user without an
 * e-mail address, nothing queued; done alike otherwise — one live link for the user and one
 * message to their address in the outbox, whichever front end asked.
 */
function sendResetRule(outcome: 'refused' | 'done'): Rule {
  return {
    name: `sending a password reset link ${outcome === 'refused' ? 'to a user without an e-mail address' : 'to a user with one'}: ${outcome} alike`,
    row: {
      cli: outcome,
      'identity API': { na: "CustomerID's REST API, which the identity API reproduces, sets passwords but sends no reset links (docs/identity-api.md)" },
      'management API': outcome,
      console: outcome,
    },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const email = expected === 'done' ? `${randomUUID()}@example.com` : undefined;
      const user = await createTestUser(store, { password: PASSWORD, ...(email ? { email } : {}) });
      const resetMessages = async () => (await store.outbox.page({ limit: 1000 })).filter((m) => m.kind === 'mail.password_reset');
      const before = (await resetMessages()).length;
      await expectOutcome(ctx, via, expected, {
        cli: ['user', 'send-reset', user.username],
        manage: { method: 'POST', path: `/users/${user.id}/password-reset`, actor: admin, status: 202 },
        console: { path: `/manage/users/${user.id}/password-reset`, actor: admin, from: `/manage/users/${user.id}` },
        refusal: new RegExp(`^${user.username} has no e-mail address to send a reset link to$`),
        manageStatus: 400,
      });
      const after = await resetMessages();
      assert.deepEqual([after.length - before, after.filter((m) => m.destination === email).length], expected === 'done' ? [1, 1] : [0, 0]);
    },
  };
}

/**
 * The password policy (docs/security.md, "Password policy"; NIST SP 800-63B-4 §3.1.1.2): one rule
 * set in every front end that sets a password. The server and the CLI run with
 * GATEHOUSE_PASSWORD_MIN_LENGTH=12, so a password of 11 characters (which the default 8 would
 * let through) shows that every front end reads the setting. A refusal changes nothing: the
 * stored hash is the one before.
 */
function passwordPolicyRule(what: string, password: (user: User) => string, refusal: RegExp | undefined): Rule {
  const outcome = refusal === undefined ? 'done' : 'refused';
  return {
    name: `password policy: setting ${what}: ${outcome} alike`,
    row: { cli: outcome, 'identity API': outcome, 'management API': outcome, console: outcome },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD, email: `${randomUUID()}@example.com` });
      const before = (await store.users.getCredentials(user.username))?.passwordHash;
      const chosen = password(user);
      await expectOutcome(ctx, via, expected, {
        cli: ['user', 'set-password', user.username, '--password', chosen],
        identity: { method: 'PUT', path: `/2.0/users/${user.id}`, body: { attributes: { password: [chosen] } } },
        manage: { method: 'PUT', path: `/users/${user.id}/password`, actor: admin, body: { password: chosen }, status: 204 },
        console: { path: `/manage/users/${user.id}/password`, actor: admin, form: { password: chosen }, inForm: 'password' },
        ...(refusal ? { refusal } : {}),
        identityStatus: 400,
        manageStatus: 400,
      });
      const after = (await store.users.getCredentials(user.username))?.passwordHash;
      assert.equal(after === before, expected === 'refused', 'the stored password changed only when it was accepted');
    },
  };
}

/**
 * Revoking an invitation (docs/invitations.md): a pending one is revoked alike everywhere; one
 * already revoked is refused alike, naming its status. The invitation is put straight into the
 * store (the matrix server has no mail, and revoking needs none).
 */
function invitationRevokeRule(outcome: 'refused' | 'done'): Rule {
  return {
    name: `invitations: revoking ${outcome === 'done' ? 'a pending invitation' : 'one already revoked'}: ${outcome} alike`,
    row: { cli: outcome, 'identity API': outcome, 'management API': outcome, console: outcome },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const now = ctx.server.gatehouse.deps.clock.now();
      const id = randomUUID();
      const email = `invitee-${id}@example.com`;
      await store.invitations.insert({ id, tokenHash: hashSecret(randomUUID()), email, givenName: undefined, familyName: undefined, organizationId: undefined, invitedBy: 'matrix', locale: 'en', status: outcome === 'done' ? 'pending' : 'revoked', createdAt: now, expiresAt: now + HOUR, endedAt: outcome === 'done' ? undefined : now, userId: undefined });
      await expectOutcome(ctx, via, expected, {
        cli: ['invitation', 'revoke', id],
        identity: { method: 'DELETE', path: `/2.0/invitations/${id}` },
        manage: { method: 'DELETE', path: `/invitations/${id}`, actor: admin },
        console: { path: `/manage/invitations/${id}/revoke`, actor: admin },
        refusal: new RegExp(`^the invitation to ${email.replace(/[.]/g, '\\.')} is revoked: only a pending invitation can be revoked$`),
        identityStatus: 409,
        manageStatus: 409,
      });
      assert.equal((await store.invitations.get(id))?.status, 'revoked');
    },
  };
}

/**
 * Inviting (docs/invitations.md): an address with an account is refused alike, at the address;
 * a new address is invited alike, one pending invitation after. The matrix server's mail goes to
 * a relay that is never reached (no sender runs): inviting only queues.
 */
function invitationCreateRule(outcome: 'refused' | 'done'): Rule {
  return {
    name: `invitations: inviting ${outcome === 'done' ? 'a new address' : 'the address of an account'}: ${outcome} alike`,
    row: { cli: outcome, 'identity API': outcome, 'management API': outcome, console: outcome },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const email = `invitee-${randomUUID()}@example.com`;
      const existing = outcome === 'refused' ? await createTestUser(store, { password: PASSWORD, email }) : undefined;
      await expectOutcome(ctx, via, expected, {
        cli: ['invitation', 'create', email],
        identity: { method: 'POST', path: `/2.0/invitations/?email=${encodeURIComponent(email)}`, status: 201 },
        manage: { method: 'POST', path: '/invitations', actor: admin, body: { email }, status: 201 },
        console: { path: '/manage/invitations/new', actor: admin, form: { email, given_name: '', family_name: '', locale: 'en' }, inForm: 'email' },
        ...(existing ? { refusal: new RegExp(`^an account with the e-mail address ${email.replace(/[.]/g, '\\.')} exists already \\(${existing.username}\\): send it a password reset link instead$`) } : {}),
        identityStatus: 409,
        manageStatus: 409,
      });
      const pending = (await store.invitations.page({ now: Date.now() + HOUR, limit: 1000 })).filter((i) => i.email === email).map((i) => i.status);
      assert.deepEqual(pending, expected === 'refused' ? [] : ['pending']);
    },
  };
}

/**
 * Changing a verified user's e-mail address (docs/email-verification.md, AM51): without the
 * administrator's explicit mark the new address is unverified, with it verified — alike in every
 * front end: `user update --email [--email-verified]`, the identity API's `email` [and
 * `emailVerified=true`], the management API's `email` [and `email_verified: true`], the console's
 * edit form [with its box ticked]. The mark is its own audit event.
 */
function emailChangeRule(mark: boolean): Rule {
  return {
    name: `changing an e-mail address ${mark ? 'with the explicit mark: verified' : 'without a mark: unverified'}, alike`,
    row: { cli: 'done', 'identity API': 'done', 'management API': 'done', console: 'done' },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD, email: 'before@example.com', emailVerified: true });
      const email = `after-${randomUUID().slice(0, 8)}@example.com`;
      await expectOutcome(ctx, via, expected, {
        cli: ['user', 'update', user.username, '--email', email, ...(mark ? ['--email-verified'] : [])],
        identity: { method: 'PUT', path: `/2.0/users/${user.id}`, authorization: await identityBearer(ctx, admin), body: { attributes: { email: [email], ...(mark ? { emailVerified: ['true'] } : {}) } } },
        manage: { method: 'PATCH', path: `/users/${user.id}`, actor: admin, body: { email, ...(mark ? { email_verified: true } : {}) } },
        console: { path: `/manage/users/${user.id}/edit`, actor: admin, form: { username: user.username, email, ...(mark ? { email_verified: 'true' } : {}) } },
      });
      const after = await store.users.getProfile(user.id);
      assert.deepEqual([after?.email, after?.emailVerified], [email, mark]);
    },
  };
}

/** The matrix. Every rule is refused or done alike in every front end that has the operation. */
const RULES: Rule[] = [
  passwordPolicyRule('a password of 11 characters under a minimum of 12', () => 'sea otter 7', /^password must be at least 12 characters$/),
  passwordPolicyRule('a common password, in other case', () => 'QWERTY123456', /^password is one of the most commonly used passwords: choose another$/),
  passwordPolicyRule("the user's own username", (user) => user.username, /^password must not be the username or the e-mail address$/),
  passwordPolicyRule("the user's own e-mail address", (user) => user.email!.toUpperCase(), /^password must not be the username or the e-mail address$/),
  passwordPolicyRule('a long, uncommon password', () => 'violet hedgehogs juggle 9', undefined),
  invitationCreateRule('done'),
  invitationCreateRule('refused'),
  invitationRevokeRule('done'),
  invitationRevokeRule('refused'),
  lastAdministrator(
    'disabling the only enabled member of GATEHOUSE_ADMIN_GROUP',
    async (ctx, admin) => ({
      cli: ['user', 'disable', admin.username],
      identity: { method: 'PUT', path: `/2.0/users/${admin.id}`, authorization: await identityBearer(ctx, admin), body: { attributes: { status: ['disabled'] } } },
      manage: { method: 'POST', path: `/users/${admin.id}/disable`, actor: admin },
      console: { path: `/manage/users/${admin.id}/disable`, actor: admin },
    }),
    async (ctx, admin) => (await ctx.server.gatehouse.store.users.get(admin.id))?.status === 'enabled',
  ),
  lastAdministrator(
    'deleting the only enabled member of GATEHOUSE_ADMIN_GROUP',
    async (ctx, admin) => ({
      cli: ['user', 'delete', admin.username],
      identity: { method: 'DELETE', path: `/2.0/users/${admin.id}`, authorization: await identityBearer(ctx, admin) },
      manage: { method: 'DELETE', path: `/users/${admin.id}`, actor: admin, status: 204 },
      console: { path: `/manage/users/${admin.id}/delete`, actor: admin },
    }),
    async (ctx, admin) => (await ctx.server.gatehouse.store.users.get(admin.id)) !== undefined,
  ),
  lastAdministrator(
    'removing the only enabled member from GATEHOUSE_ADMIN_GROUP',
    async (ctx, admin) => {
      const name = ctx.server.config.manageAdminGroup;
      const group = encodeURIComponent(name);
      return {
        cli: ['group', 'remove-member', name, admin.username],
        identity: { method: 'DELETE', path: `/2.0/users/${admin.id}/groups/${group}`, authorization: await identityBearer(ctx, admin) },
        manage: { method: 'DELETE', path: `/groups/${group}/members/${admin.id}`, actor: admin, status: 204 },
        console: { path: `/manage/groups/${group}/members/${admin.id}/remove`, actor: admin, from: `/manage/groups/${group}` },
      };
    },
    async (ctx, admin) => ctx.server.gatehouse.store.groups.isMember(admin.id, ctx.server.config.manageAdminGroup),
  ),
  emailChangeRule(false),
  emailChangeRule(true),
  protectedClientRule('deactivate', CONSOLE_CLIENT_ID, "the web console's client"),
  protectedClientRule('delete', MANAGE_API_CLIENT_ID, "the management API's own client"),
  {
    name: "ending a session revokes its tokens: the ended session's refresh token is inactive, another session's is not",
    row: {
      cli: { na: 'the CLI has no sessions command (docs/cli.md); it ends sessions only as part of disable, set-password and delete' },
      'identity API': { na: 'the identity API has no sessions resource (docs/identity-api.md)' },
      'management API': 'done',
      console: 'done',
    },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const user = await createTestUser(ctx.server.gatehouse.store, { password: PASSWORD });
      const { client, secret } = await addClient(ctx.server.gatehouse.store);
      const ended = await aSessionWithRefreshToken(ctx, user, client.clientId);
      const other = await aSessionWithRefreshToken(ctx, user, client.clientId);
      await expectOutcome(ctx, via, expected, {
        manage: { method: 'DELETE', path: `/users/${user.id}/sessions/${ended.sessionIndex}`, actor: admin, status: 204 },
        console: { path: `/manage/users/${user.id}/sessions/${ended.sessionIndex}/end`, actor: admin, from: `/manage/users/${user.id}` },
      });
      const auth = { authorization: basic(client.clientId, secret) };
      assert.equal((await introspect(ctx, ended.refreshToken, auth)).active, false, "the ended session's refresh token");
      assert.equal((await introspect(ctx, other.refreshToken, auth)).active, true, "the other session's refresh token");
    },
  },
  {
    name: "resetting a user's second factors: every factor goes, and the password alone signs them in again",
    row: {
      cli: 'done',
      'identity API': { na: "CustomerID's REST API, which the identity API reproduces, has no resource for second factors (docs/identity-api.md)" },
      'management API': 'done',
      console: 'done',
    },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const store = ctx.server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD });
      const { client } = await addClient(store);
      await enrolTotp(store, user.id);
      await giveRecoveryCodes(store, user.id);
      const { challenge } = pkcePair();
      const query = { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'matrix', code_challenge: challenge, code_challenge_method: 'S256' };
      const signIn = () => loginThroughForm({ baseUrl: ctx.server.url, jar: new CookieJar() }, query, { username: user.username, password: PASSWORD });
      assert.equal((await signIn()).status, 200, 'before: the password leads to the second factor\'s page');
      await expectOutcome(ctx, via, expected, {
        cli: ['user', 'reset-factors', user.username],
        manage: { method: 'POST', path: `/users/${user.id}/factors/reset`, actor: admin },
        console: { path: `/manage/users/${user.id}/factors/reset`, actor: admin },
      });
      assert.deepEqual(await store.factors.list(user.id), []);
      const after = await signIn();
      assert.equal(after.status, 303, 'after: the password alone signs in');
      assert.ok(new URL(after.headers.get('location')!).searchParams.get('code'), 'an authorization code');
    },
  },
  factorRenameRule('x'.repeat(65), 'refused'),
  factorRenameRule('Work phone', 'done'),
  sendResetRule('refused'),
  sendResetRule('done'),
  {
    name: 'organization cycles: moving an organization under its own sub-organization',
    row: { cli: 'refused', 'identity API': 'refused', 'management API': 'refused', console: 'refused' },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const token = await issueManageToken(ctx.server, { userId: admin.id });
      const create = async (body: Record<string, unknown>) => {
        const answer = await manageCall(ctx.server, 'POST', '/organizations', { token, body });
        assert.equal(answer.status, 201, answer.text);
        return answer.json as { id: string; name: string; technical_name: string };
      };
      const top = await create({ technical_name: `top-${randomUUID()}` });
      const child = await create({ technical_name: 'child', parent_id: top.id });
      await expectOutcome(ctx, via, expected, {
        cli: ['org', 'update', top.id, '--parent', child.id],
        identity: { method: 'PUT', path: `/2.0/organizations/${top.id}?parentOrganizationId=${child.id}` },
        manage: { method: 'PATCH', path: `/organizations/${top.id}`, actor: admin, body: { parent_id: child.id } },
        console: { path: `/manage/organizations/${top.id}/edit`, actor: admin, form: { name: top.name, technical_name: top.technical_name, parent_id: child.id, type: '' }, inForm: 'parent_id' },
        refusal: CYCLE,
        identityStatus: 400,
        manageStatus: 400,
      });
      const after = await ctx.server.gatehouse.store.organizations.get(top.id);
      assert.equal(after?.parentId, undefined, 'still at the root: no cycle in the tree');
    },
  },
  {
    name: 'disabled user: after disabling, refreshing and signing in are refused, and the refresh token is revoked for good',
    row: { cli: 'done', 'identity API': 'done', 'management API': 'done', console: 'done' },
    async attempt(ctx, via, expected) {
      const admin = await anAdministrator(ctx);
      const user = await createTestUser(ctx.server.gatehouse.store, { password: PASSWORD });
      const { client, secret } = await addClient(ctx.server.gatehouse.store);
      const { refreshToken } = await aSessionWithRefreshToken(ctx, user, client.clientId);
      await expectOutcome(ctx, via, expected, {
        cli: ['user', 'disable', user.username],
        identity: { method: 'PUT', path: `/2.0/users/${user.id}`, body: { attributes: { status: ['disabled'] } } },
        manage: { method: 'POST', path: `/users/${user.id}/disable`, actor: admin },
        console: { path: `/manage/users/${user.id}/disable`, actor: admin },
      });
      assert.equal((await ctx.server.gatehouse.store.users.get(user.id))?.status, 'disabled');
      const auth = { authorization: basic(client.clientId, secret) };
      assert.equal((await introspect(ctx, refreshToken, auth)).active, false, 'the refresh token is inactive');
      const refreshed = await postForm(`${ctx.server.issuer}/oauth2/token`, { grant_type: 'refresh_token', refresh_token: refreshToken }, auth);
      assert.equal(refreshed.status, 400, JSON.stringify(refreshed.body));
      assert.equal(refreshed.body.error, 'invalid_grant');
      // Signing in again with the right password: the login form again, 401 (as for a wrong password).
      const { challenge } = pkcePair();
      const query = { response_type: 'code', client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid', state: 'matrix', code_challenge: challenge, code_challenge_method: 'S256' };
      const login = await loginThroughForm({ baseUrl: ctx.server.url, jar: new CookieJar() }, query, { username: user.username, password: PASSWORD });
      assert.equal(login.status, 401, 'the sign-in is refused');
      // Revoked, not only refused while disabled (docs/cli.md, "user disable"): enabled again, the old token stays dead.
      const store = ctx.server.gatehouse.store;
      assert.ok(await store.users.update({ ...(await store.users.get(user.id))!, status: 'enabled' }));
      assert.equal((await introspect(ctx, refreshToken, auth)).active, false, 'the refresh token stays revoked after enabling again');
    },
  },
];

/**
 * A row of the last-administrator rule (docs/decisions.md MI6, AD2): the attempt on the sole
 * enabled administrator is refused alike everywhere — the identity API included, whose bearer
 * token here is the administrator's own — and `kept` says the administrator is still one after.
 */
function lastAdministrator(change: string, attempts: (ctx: Ctx, admin: User) => Promise<Attempts>, kept: (ctx: Ctx, admin: User) => Promise<boolean>): Rule {
  return {
    name: `last administrator: ${change}`,
    row: { cli: 'refused', 'identity API': 'refused', 'management API': 'refused', console: 'refused' },
    async attempt(ctx, via, expected) {
      const admin = await soleAdministrator(ctx);
      await expectOutcome(ctx, via, expected, { ...(await attempts(ctx, admin)), refusal: LAST_ADMIN, identityStatus: 409, manageStatus: 409 });
      assert.equal(await kept(ctx, admin), expected === 'refused');
    },
  };
}

interface Attempts {
  cli?: string[];
  identity?: { method: string; path: string; authorization?: string; body?: unknown; status?: number };
  manage?: { method: string; path: string; actor: User; body?: unknown; status?: number };
  /** A console form: posted with the CSRF token of `from` (default the action's page); `inForm`: a refusal re-renders the form, the error at this field. */
  console?: { path: string; actor: User; form?: Record<string, string>; from?: string; inForm?: string };
  /** What every front end's refusal says (its detail, message or stderr line). */
  refusal?: RegExp;
  identityStatus?: number;
  manageStatus?: number;
}

/** Runs the attempt through `via` and asserts that front end's wire form of the outcome. */
async function expectOutcome(ctx: Ctx, via: FrontEnd, expected: 'refused' | 'done', a: Attempts): Promise<void> {
  const refused = expected === 'refused';
  switch (via) {
    case 'cli': {
      const run = await runGatehouse(a.cli!, ctx.cliEnv);
      if (refused) {
        assert.equal(run.code, 2, `exit status 2: ${run.stderr}`);
        // docs/cli.md, Conventions: the store line, then one line `gatehouse: REASON`.
        const line = /^gatehouse: ([^\n]*)\n$/.exec(run.stderr.slice(storeLineOf(ctx.cliEnv).length));
        assert.ok(run.stderr.startsWith(storeLineOf(ctx.cliEnv)) && line, run.stderr);
        assert.match(line[1]!, a.refusal!);
      } else assert.equal(run.code, 0, run.stderr);
      return;
    }
    case 'identity API': {
      const { method, path, authorization, body, status } = a.identity!;
      const answer = await identityCall(ctx.server, method, path, { ...(authorization ? { authorization } : {}), ...(body ? { contentType: 'application/json', body: JSON.stringify(body) } : {}) });
      if (refused) {
        assert.equal(answer.status, a.identityStatus, answer.text);
        assert.deepEqual(Object.keys(answer.json), ['error']);
        assert.match(answer.json.error!.message, a.refusal!);
      } else assert.equal(answer.status, status ?? 200, answer.text);
      return;
    }
    case 'management API': {
      const { method, path, actor, body, status } = a.manage!;
      const answer = await manageCall(ctx.server, method, path, { token: await issueManageToken(ctx.server, { userId: actor.id }), body });
      if (refused) {
        assert.equal(answer.status, a.manageStatus, answer.text);
        assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
        assert.match(String(answer.json.detail), a.refusal!);
      } else assert.equal(answer.status, status ?? 200, answer.text);
      return;
    }
    case 'console': {
      const { path, actor, form, from, inForm } = a.console!;
      const { jar } = await consoleSignIn(ctx.server.url, actor.username, PASSWORD);
      const page = from ?? path;
      const response = await consolePost(ctx, jar, path, form ?? {}, page);
      if (refused && inForm) {
        // A form of its own: the form again, with the API's detail at the field at fault.
        assert.equal(response.status, a.manageStatus);
        const errors = [...(await response.text()).matchAll(/id="f-([^"]+)-error"><li>([^<]*)<\/li>/g)].map((m) => [m[1]!, unescape(m[2]!)]);
        assert.equal(errors.length, 1, JSON.stringify(errors));
        assert.equal(errors[0]![0], inForm);
        assert.match(errors[0]![1]!, a.refusal!);
      } else if (refused) {
        // An action without fields: back to the page, and the API's detail shown once as an alert.
        assert.equal(response.status, 303);
        assert.equal(response.headers.get('location'), page);
        const shown = await (await browse(`${ctx.server.url}${page}`, jar)).text();
        const alert = /<p class="message" role="alert">The change was not made: ([^<]*)<\/p>/.exec(shown)?.[1];
        assert.ok(alert !== undefined, 'the refusal is shown as an alert');
        assert.match(unescape(alert), a.refusal!);
      } else {
        assert.equal(response.status, 303, await response.text());
        assert.doesNotMatch(response.headers.getSetCookie().join('\n'), /gatehouse_console_flash=[^;]/, 'no refusal to show');
      }
      return;
    }
  }
}

/** A POST of a console form as the browser sends it: the CSRF token of the page it is on, our Origin and Referer. */
async function consolePost(ctx: Ctx, jar: CookieJar, path: string, form: Record<string, string>, from: string): Promise<Response> {
  const token = formFields(await (await browse(`${ctx.server.url}${from}`, jar)).text()).find(([n]) => n === 'csrf_token')?.[1];
  assert.ok(token, `a CSRF token on ${from}`);
  const origin = new URL(ctx.server.issuer).origin;
  return submit(`${ctx.server.url}${path}`, [['csrf_token', token], ...Object.entries(form)], jar, { origin, referer: `${origin}${from}` });
}

function unescape(html: string): string {
  return html.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** A new enabled administrator (who may also call the identity API), with PASSWORD for the console. */
async function anAdministrator(ctx: Ctx): Promise<User> {
  const store = ctx.server.gatehouse.store;
  const user = await createTestUser(store, { password: PASSWORD });
  for (const name of [ctx.server.config.manageAdminGroup, API_GROUP]) await store.groups.addMember((await store.groups.getByName(name))!.id, user.id);
  return user;
}

/** A new administrator, and every other member of the administrators group disabled: the last enabled one. */
async function soleAdministrator(ctx: Ctx): Promise<User> {
  const store = ctx.server.gatehouse.store;
  const admin = await anAdministrator(ctx);
  const group = (await store.groups.getByName(ctx.server.config.manageAdminGroup))!;
  for (const id of await store.groups.members(group.id)) if (id !== admin.id) await store.groups.removeMember(group.id, id);
  return admin;
}

async function identityBearer(ctx: Ctx, user: User): Promise<string> {
  return `Bearer ${(await accessToken(ctx.server, `openid ${ctx.server.apiClientId}`, user)).token}`;
}

/** An SSO session of `user` and a refresh token of `clientId` issued in it, stored as the token endpoint stores them. */
async function aSessionWithRefreshToken(ctx: Ctx, user: User, clientId: string): Promise<{ sessionIndex: string; refreshToken: string }> {
  const store = ctx.server.gatehouse.store;
  const now = ctx.server.gatehouse.deps.clock.now();
  const sessionIndex = `_${randomBytes(20).toString('hex')}`;
  await store.sessions.insert({ idHash: hashSecret(randomBytes(32).toString('base64url')), sessionIndex, userId: user.id, authTime: now, amr: ['pwd'], acr: undefined, createdAt: now, expiresAt: now + HOUR, maxExpiresAt: now + 8 * HOUR });
  const refreshToken = randomBytes(32).toString('base64url');
  await store.tokens.insert({ tokenHash: hashSecret(refreshToken), kind: 'refresh_token', clientId, userId: user.id, sessionIndex, authTime: now, amr: ['pwd'], acr: undefined, scope: 'openid', codeHash: undefined, familyId: randomUUID(), createdAt: now, expiresAt: now + HOUR, revokedAt: undefined, rotatedAt: undefined });
  return { sessionIndex, refreshToken };
}

async function introspect(ctx: Ctx, token: string, headers: Record<string, string>): Promise<Record<string, unknown>> {
  const answer = await postForm(`${ctx.server.issuer}/oauth2/introspection`, { token }, headers);
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body;
}

for (const db of DATABASES) {
  describe(`front-end matrix on ${db.name}`, () => {
    const ctx = {} as Ctx;
    let database: TestDatabase;
    before(async () => {
      database = await db.create();
      const mail = NEVER_SENT_MAIL;
      const apiClientId = `identity-api-${randomUUID()}`;
      const server = await startServer(db, { database, env: { ...mail, GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD, GATEHOUSE_API_CLIENT_ID: apiClientId, GATEHOUSE_PASSWORD_MIN_LENGTH: '12' } });
      await addClient(server.gatehouse.store, { clientId: apiClientId, name: 'Identity API', grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { resource_server: true } });
      ctx.server = Object.assign(server, { apiClientId });
      await ensureManagementSetup(server);
      await server.gatehouse.store.groups.insertIfAbsent({ id: randomUUID(), name: API_GROUP, description: undefined, createdAt: Date.now(), administrator: false });
      ctx.cliEnv = { ...mail, GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_ISSUER: server.issuer, GATEHOUSE_PASSWORD_MIN_LENGTH: '12' };
    });
    after(async () => {
      await ctx.server.close();
      await database.drop();
    });

    for (const rule of RULES) {
      describe(rule.name, () => {
        for (const via of FRONT_ENDS) {
          const expected = rule.row[via];
          if (typeof expected === 'object') test(`${via}: n/a (${expected.na})`, { skip: expected.na }, () => {});
          else test(`${via}: ${expected}`, () => rule.attempt(ctx, via, expected));
        }
      });
    }
  });
}
