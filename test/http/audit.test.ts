/**
 * Audit events (src/observability/audit.ts): each security-relevant fact is one structured line
 * with the right fields, and no line ever holds a secret — the actual passwords, codes, tokens,
 * client secrets and cookie values used in the flows below are searched for in every line.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createGatehouse } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { addClient, basic, mintCode, pkcePair, postForm } from '../helpers/back-channel.ts';
import { storeLineOf } from '../helpers/cli.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, formFields, loginThroughForm, logoutConfirmed, redirectParams, submit } from '../helpers/fixtures.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'audit pw: correct horse';
const PROXY = { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1' };
const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
/** A fingerprint: the first 12 characters of the stored SHA-256. */
const fp = (secret: string) => hashSecret(secret).slice(0, 12);

for (const db of DATABASES) {
  describe(`audit events on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    let user: User;
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    /** Every secret value a flow below used or received; none may appear in any audit line. */
    const secrets = new Set<string>([PASSWORD]);
    const tokenUrl = () => `${server.url}/uas/oauth2/token`;
    const query = () => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid profile' });

    /** Logs `user` in through the form; the code and the cookies. */
    async function signIn(): Promise<{ code: string; jar: CookieJar }> {
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(), { username: user.username, password: PASSWORD });
      assert.equal(response.status, 303);
      const code = redirectParams(response).get('code')!;
      for (const value of [code, ...jar.cookies.values()]) secrets.add(value);
      return { code, jar };
    }

    async function exchange(code: string): Promise<Record<string, unknown>> {
      const response = await postForm(tokenUrl(), { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret), 'x-forwarded-for': '203.0.113.40' });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      for (const name of ['access_token', 'refresh_token', 'id_token']) if (typeof response.body[name] === 'string') secrets.add(response.body[name] as string);
      return response.body;
    }

    before(async () => {
      server = await startServer(db, { clock, audit, env: PROXY });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store, { refreshTokens: true, rotateRefreshTokens: true }));
      secrets.add(clientSecret);
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    });
    after(async () => server.close());

    test('login.failed: the reason, and the account only when the typed name matched one', async () => {
      const disabled = await createTestUser(server.gatehouse.store, { password: PASSWORD, status: 'disabled' });
      const typedPassword = 'Tr0ub4dor&3 typed into the username field';
      secrets.add(typedPassword);
      const from = (ip: string) => ({ 'x-forwarded-for': ip });
      for (const [username, password, ip] of [
        [user.username, 'wrong password 1', '203.0.113.30'],
        [typedPassword, PASSWORD, '203.0.113.31'],
        [disabled.username, PASSWORD, '203.0.113.32'],
      ] as const) {
        secrets.add(password);
        const jar = new CookieJar();
        const page = await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams(query())}`, jar, from(ip));
        const fields = formFields(await page.text()).map(([n, v]): [string, string] => [n, n === 'username' ? username : n === 'password' ? password : v]);
        for (const value of jar.cookies.values()) secrets.add(value);
        assert.equal((await submit(`${server.url}/uas/oauth2/authorization/login`, fields, jar, from(ip))).status, 401);
      }
      const failed = audit.of('login.failed');
      assert.deepEqual(
        failed.map(({ reason, userId, username, clientId, ip }) => ({ reason, userId, username, clientId, ip })),
        [
          { reason: 'wrong_password', userId: user.id, username: user.username, clientId: client.clientId, ip: '203.0.113.30' },
          { reason: 'unknown_user', userId: undefined, username: undefined, clientId: client.clientId, ip: '203.0.113.31' },
          { reason: 'not_enabled', userId: disabled.id, username: disabled.username, clientId: client.clientId, ip: '203.0.113.32' },
        ],
      );
      for (const event of failed) assert.equal(event.audit, true);
    });

    test('lockout when a username reaches its threshold, then login.throttled for refused attempts', async () => {
      const victim = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      audit.clear();
      for (let i = 0; i < 6; i += 1) {
        secrets.add(`guess ${i}`);
        await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, query(), { username: victim.username, password: `guess ${i}` });
      }
      assert.equal(audit.of('login.failed').length, 5);
      assert.deepEqual(
        audit.of('lockout').map(({ kind, by, failures, retryAfter, userId, username }) => ({ kind, by, failures, retryAfter, userId, username })),
        [{ kind: 'login', by: 'username', failures: 5, retryAfter: 1, userId: victim.id, username: victim.username }],
      );
      assert.deepEqual(audit.of('login.throttled').map(({ by, retryAfter, ip }) => ({ by, retryAfter, ip })), [{ by: 'username', retryAfter: 1, ip: '127.0.0.1' }]);
    });

    test('login.succeeded, token.issued, token.refreshed, refresh_token.reused and code.replayed', async () => {
      audit.clear();
      const { code, jar } = await signIn();
      const [succeeded] = audit.of('login.succeeded');
      assert.equal(succeeded?.userId, user.id);
      assert.equal(succeeded?.username, user.username);
      assert.equal(succeeded?.clientId, client.clientId);
      assert.equal(succeeded?.ip, '127.0.0.1');
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      assert.equal(succeeded?.session, fp(session!.sessionIndex));

      const first = await exchange(code);
      const [issued] = audit.of('token.issued');
      const { grantType, clientId, userId, scope, accessToken, refreshToken, idToken, ip } = issued!;
      assert.deepEqual(
        { grantType, clientId, userId, scope, accessToken, refreshToken, idToken, ip },
        { grantType: 'authorization_code', clientId: client.clientId, userId: user.id, scope: 'openid profile', accessToken: fp(first.access_token as string), refreshToken: fp(first.refresh_token as string), idToken: true, ip: '203.0.113.40' },
      );
      assert.equal(issued?.audit, true);
      const stored = await server.gatehouse.store.tokens.find(hashSecret(first.access_token as string));
      assert.equal(stored?.familyId, hashSecret(code), 'the family is named by its code\'s hash');
      assert.equal(issued?.family, fp(code), 'and logged as the code\'s fingerprint, never in full');

      const refresh = (token: string) => postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: token }, { authorization: basic(client.clientId, clientSecret) });
      const second = await refresh(first.refresh_token as string);
      assert.equal(second.status, 200);
      for (const name of ['access_token', 'refresh_token']) secrets.add(second.body[name] as string);
      const [refreshed] = audit.of('token.refreshed');
      assert.equal(refreshed?.rotated, true);
      assert.equal(refreshed?.family, issued?.family);
      assert.equal(refreshed?.accessToken, fp(second.body.access_token as string));
      assert.equal(refreshed?.refreshToken, fp(second.body.refresh_token as string));

      assert.equal((await refresh(first.refresh_token as string)).status, 400);
      const [reused] = audit.of('refresh_token.reused');
      assert.equal(reused?.family, issued?.family);
      assert.equal(reused?.token, fp(first.refresh_token as string));
      assert.equal(reused?.userId, user.id);
      assert.ok((reused?.revoked ?? 0) >= 2, 'the family was revoked');

      const replay = await postForm(tokenUrl(), { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(replay.status, 400);
      const [replayed] = audit.of('code.replayed');
      assert.deepEqual(
        { clientId: replayed?.clientId, codeClientId: replayed?.codeClientId, userId: replayed?.userId, code: replayed?.code },
        { clientId: client.clientId, codeClientId: client.clientId, userId: user.id, code: fp(code) },
      );
    });

    test('code.retried, not code.replayed, when a code spent by a wrong code_verifier is presented again (issue 22 item 11)', async () => {
      const pair = pkcePair();
      const { code } = await mintCode(server.gatehouse.store, client, user, { codeChallenge: pair.challenge, codeChallengeMethod: 'S256', now: clock.now() });
      secrets.add(code);
      const redeem = (verifier: string) =>
        postForm(tokenUrl(), { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]!, code_verifier: verifier }, { authorization: basic(client.clientId, clientSecret), 'x-forwarded-for': '203.0.113.41' });
      audit.clear();
      assert.equal((await redeem(pkcePair().verifier)).status, 400);
      assert.equal((await redeem(pair.verifier)).body.error, 'invalid_grant');
      assert.equal((await redeem(pair.verifier)).body.error, 'invalid_grant', 'and again');
      assert.deepEqual(audit.of('code.replayed'), []);
      assert.deepEqual(
        audit.of('code.retried').map(({ clientId, codeClientId, userId, code: fingerprinted, refusedFor, ip }) => ({ clientId, codeClientId, userId, code: fingerprinted, refusedFor, ip })),
        [1, 2].map(() => ({ clientId: client.clientId, codeClientId: client.clientId, userId: user.id, code: fp(code), refusedFor: 'code_verifier', ip: '203.0.113.41' })),
      );
    });

    test('token.revoked at the revocation endpoint, and logout with the tokens it revoked', async () => {
      const { code, jar } = await signIn();
      const tokens = await exchange(code);
      audit.clear();
      const revoked = await postForm(`${server.url}/uas/oauth2/revocation`, { token: tokens.access_token as string }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(revoked.status, 200);
      assert.deepEqual(
        audit.of('token.revoked').map(({ clientId, userId, kind, token, revoked: count }) => ({ clientId, userId, kind, token, count })),
        [{ clientId: client.clientId, userId: user.id, kind: 'access_token', token: fp(tokens.access_token as string), count: 1 }],
      );
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      const logout = await logoutConfirmed(server.url, jar, {}, { 'x-forwarded-for': '203.0.113.41' });
      assert.equal(logout.status, 200);
      const [event] = audit.of('logout');
      assert.deepEqual(
        { userId: event?.userId, session: event?.session, revoked: event?.revoked, ip: event?.ip },
        { userId: user.id, session: fp(session!.sessionIndex), revoked: 1, ip: '203.0.113.41' },
      );
    });

    test('client_auth.failed names the client only when it is registered', async () => {
      audit.clear();
      secrets.add('wrong client secret');
      await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(client.clientId, 'wrong client secret'), 'x-forwarded-for': '203.0.113.50' });
      await postForm(`${server.url}/uas/oauth2/introspection`, { token: 'x', client_id: 'not-registered', client_secret: 'wrong client secret' });
      assert.deepEqual(
        audit.of('client_auth.failed').map(({ endpoint, clientId, reason, ip }) => ({ endpoint, clientId, reason, ip })),
        [
          { endpoint: 'token', clientId: client.clientId, reason: 'wrong client_secret', ip: '203.0.113.50' },
          { endpoint: 'introspection', clientId: undefined, reason: 'unknown client_id', ip: '127.0.0.1' },
        ],
      );
    });

    test('no audit line holds a password, code, token, client secret or cookie value', () => {
      assert.ok(audit.lines.length > 0);
      assert.ok(secrets.size > 15, `only ${secrets.size} secrets collected`);
      for (const line of audit.lines) {
        assert.doesNotThrow(() => JSON.parse(line));
        for (const secret of secrets) assert.ok(!line.includes(secret), `a secret (${secret.slice(0, 4)}…) in ${line}`);
      }
    });

    test('the store keeps the same events (GATEHOUSE_AUDIT_STORE), and no row of audit_events holds a secret either', async () => {
      await server.gatehouse.auditStore!.flush();
      const store = server.gatehouse.store as SqlStore;
      const rows = await store.database.db.selectFrom('audit_events').selectAll().orderBy('at').orderBy('id').execute();
      // Each test above cleared the capture: the last test's events are the stored ones' tail.
      const captured = audit.all().map((e) => e.event);
      assert.ok(rows.length > 15 && captured.length > 0);
      assert.deepEqual(rows.slice(-captured.length).map((r) => r.event), captured);
      assert.ok(rows.some((r) => r.event === 'token.refreshed') && rows.some((r) => r.event === 'login.failed'));
      const dump = JSON.stringify(rows);
      for (const secret of secrets) assert.ok(!dump.includes(secret), `a secret (${secret.slice(0, 4)}…) in audit_events`);
    });
  });

  describe(`where audit lines go, on ${db.name}`, () => {
    let dir: string;
    before(() => {
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-audit-'));
    });
    after(() => rmSync(dir, { recursive: true, force: true }));

    test('by default into the server log, as {"audit":true,"event":…} at info even when the log level is warn', async () => {
      const database = await db.create();
      const lines: string[] = [];
      const port = await freePort();
      const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_LOG_LEVEL: 'warn' });
      const gatehouse = await createGatehouse(config, {}, { logger: { level: 'warn', stream: { write: (line: string) => lines.push(line) } } });
      try {
        await gatehouse.app.listen({ host: '127.0.0.1', port });
        const { client } = await addClient(gatehouse.store);
        await postForm(`http://127.0.0.1:${port}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(client.clientId, 'nope') });
      } finally {
        await gatehouse.close();
        await database.drop();
      }
      const events = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.audit === true);
      assert.equal(events.length, 1, lines.join(''));
      assert.equal(events[0]?.event, 'client_auth.failed');
      assert.equal(events[0]?.level, 30);
    });

    test('with GATEHOUSE_AUDIT_LOG, into that file: the server’s events and the CLI’s user, client and policy changes', async () => {
      const database = await db.create();
      const file = join(dir, `audit-${db.name}.log`);
      const env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_AUDIT_LOG: file };
      try {
        const server = await startServer(db, { database, env });
        try {
          const { client } = await addClient(server.gatehouse.store);
          await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: 'x' }, { authorization: basic(client.clientId, 'nope') });
        } finally {
          await server.close();
        }
        const cliPassword = 'cli password 123';
        const created = await gatehouse(['user', 'create', '--username', 'audited', '--password-stdin', '--json'], env, cliPassword);
        const userId = (JSON.parse(created.stdout) as { id: string }).id;
        await gatehouse(['user', 'disable', 'audited'], env);
        await gatehouse(['user', 'set-password', 'audited', '--password-stdin'], env, `${cliPassword} 2`);
        await gatehouse(['user', 'delete', 'audited'], env);
        const registered = await gatehouse(['client', 'create', '--name', 'Audited RP', '--redirect-uri', 'https://rp.example/cb', '--json'], env);
        const { client_id: clientId, client_secret: secret } = JSON.parse(registered.stdout) as { client_id: string; client_secret: string };
        const rotated = await gatehouse(['client', 'rotate-secret', clientId, '--json'], env);
        const newSecret = (JSON.parse(rotated.stdout) as { client_secret: string }).client_secret;
        await gatehouse(['client', 'deactivate', clientId], env);
        await gatehouse(['client', 'delete', clientId], env);
        // Authorization policies: created, attached, replaced, detached, deleted.
        const policyFile = join(dir, `policy-${db.name}.json`);
        writeFileSync(policyFile, JSON.stringify({ name: 'audited-policy', claims: [{ claim: 'tenant', value: 'acme' }] }));
        await gatehouse(['policy', 'create', '--file', policyFile], env);
        const guarded = await gatehouse(['client', 'create', '--name', 'Guarded RP', '--redirect-uri', 'https://rp.example/cb', '--authorization-policy', 'audited-policy', '--json'], env);
        const guardedId = (JSON.parse(guarded.stdout) as { client_id: string }).client_id;
        writeFileSync(policyFile, JSON.stringify({ name: 'audited-policy', claims: [{ claim: 'tenant', value: 'acme-2' }] }));
        await gatehouse(['policy', 'update', 'audited-policy', '--file', policyFile], env);
        await gatehouse(['client', 'update', guardedId, '--authorization-policy', ''], env);
        await gatehouse(['policy', 'delete', 'audited-policy'], env);

        const text = readFileSync(file, 'utf8');
        const events = text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
        assert.deepEqual(
          events.map((e) => e.event),
          ['client_auth.failed', 'user.created', 'user.status_changed', 'user.password_changed', 'user.deleted', 'client.created', 'client.secret_rotated', 'client.status_changed', 'client.deleted', 'policy.created', 'client.created', 'policy.updated', 'client.updated', 'policy.deleted'],
        );
        const facts = (e: Record<string, unknown>) => ({ event: e.event, policy: e.policy, version: e.version, clientId: e.clientId, authorizationPolicy: e.authorizationPolicy, via: (e.actor as { via: string }).via });
        assert.deepEqual(events.slice(5, 6).map(facts), [{ event: 'client.created', policy: undefined, version: undefined, clientId, authorizationPolicy: null, via: 'cli' }]);
        assert.deepEqual(events.slice(9).map(facts), [
          { event: 'policy.created', policy: 'audited-policy', version: 1, clientId: undefined, authorizationPolicy: undefined, via: 'cli' },
          { event: 'client.created', policy: undefined, version: undefined, clientId: guardedId, authorizationPolicy: 'audited-policy', via: 'cli' },
          { event: 'policy.updated', policy: 'audited-policy', version: 2, clientId: undefined, authorizationPolicy: undefined, via: 'cli' },
          { event: 'client.updated', policy: undefined, version: undefined, clientId: guardedId, authorizationPolicy: null, via: 'cli' },
          { event: 'policy.deleted', policy: 'audited-policy', version: undefined, clientId: undefined, authorizationPolicy: undefined, via: 'cli' },
        ]);
        for (const e of events) assert.equal(e.audit, true);
        assert.equal((events[1]!.actor as { via: string }).via, 'cli');
        assert.deepEqual([events[1]!.userId, events[1]!.username], [userId, 'audited']);
        assert.deepEqual([events[2]!.status, events[7]!.active, events[5]!.clientId], ['disabled', false, clientId]);
        for (const secretValue of [cliPassword, `${cliPassword} 2`, secret, newSecret]) assert.ok(!text.includes(secretValue));

        // The store has every one too: the server's, flushed when it closed, and each CLI command's, flushed before it exited.
        const store = await openSqlStore(database.url);
        try {
          const stored = (await store.audit.page({ limit: 100 })).reverse();
          assert.deepEqual(stored.map((e) => e.event), events.map((e) => e.event));
          assert.deepEqual(stored.map((e) => e.actorId), events.map((e) => (e.actor as { caller?: string } | undefined)?.caller));
          assert.deepEqual(stored[1]!.userId, userId);
          const dump = JSON.stringify(stored);
          for (const secretValue of [cliPassword, `${cliPassword} 2`, secret, newSecret]) assert.ok(!dump.includes(secretValue));
        } finally {
          await store.close();
        }
      } finally {
        await database.drop();
      }
    });
  });
}

/** The real CLI; exits 0 with only the line naming the store on stderr, as its own suite requires. */
function gatehouse(args: string[], env: Record<string, string>, input = ''): Promise<{ stdout: string }> {
  return new Promise((resolve, reject) => {
    const { NODE_TEST_CONTEXT: _context, ...inherited } = process.env;
    const child = spawn(process.execPath, [BIN, ...args], { env: { ...inherited, GATEHOUSE_LOG_LEVEL: 'silent', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 && stderr === storeLineOf(env) ? resolve({ stdout }) : reject(new Error(`gatehouse ${args.join(' ')}: exit ${code}: ${stderr}`))));
    child.stdin.end(input);
  });
}
