/**
 * A dump of the store yields nothing usable (DESIGN principle 4, docs/security.md S1): after a
 * full flow, no table holds a client secret, password, session cookie, pending sign-in cookie, code,
 * access or refresh token in the clear — and with GATEHOUSE_KEY_ENCRYPTION_KEY set, no private key material either.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { createUser } from '../../src/identity/users.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { assertionFields, secretAssertion } from '../helpers/client-assertions.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp } from '../helpers/factors.ts';
import { CookieJar, loginThroughForm, redirectParams } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'a password nobody may find';

for (const db of DATABASES) {
  describe(`a dump of the ${db.name} store`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_KEY_ENCRYPTION_KEY: 'k'.repeat(40) } });
    });
    after(async () => server.close());

    test('holds no secret in the clear after registration, login, code exchange and refresh', async () => {
      const store = server.gatehouse.store as SqlStore;
      const deps = { ...store, clients: store.clients, clock: systemClock, random: cryptoRandom };
      const { client, clientSecret } = await registerClient(deps, { client_name: 'dump', redirect_uris: ['https://rp.example.test/cb'], refresh_tokens: true, grant_types: ['authorization_code', 'refresh_token'] });
      const user = await createUser(deps, { username: `dump-${Date.now()}`, password: PASSWORD }, AS_OPERATOR);
      const jar = new CookieJar();
      const redirect = await loginThroughForm({ baseUrl: server.url, jar }, { response_type: 'code', client_id: client.clientId, redirect_uri: 'https://rp.example.test/cb', scope: 'openid' }, { username: user.username, password: PASSWORD });
      const code = redirectParams(redirect).get('code')!;
      const auth = { authorization: basic(client.clientId, clientSecret!) };
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: 'https://rp.example.test/cb' }, auth);
      const refreshed = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: tokens.body.refresh_token as string }, auth);
      assert.equal(refreshed.status, 200);
      // A client_secret_jwt client keeps its secret sealed (docs/decisions.md J1), and it authenticates with it.
      const hmacClient = await registerClient({ ...deps, keyEncryptionKey: 'k'.repeat(40) }, { client_name: 'dump jwt', redirect_uris: ['https://rp.example.test/cb'], token_endpoint_auth_method: 'client_secret_jwt' });
      const revocation = `${server.url}/uas/oauth2/revocation`;
      const revoked = await postForm(revocation, { token: 'x', ...assertionFields(await secretAssertion(hmacClient.clientSecret!, hmacClient.client.clientId, revocation)) });
      assert.equal(revoked.status, 200, JSON.stringify(revoked.body));

      // A sign-in left waiting for its second factor (issue 24): its cookie is a secret too.
      const waiting = await createUser(deps, { username: `dump-2fa-${Date.now()}`, password: PASSWORD }, AS_OPERATOR);
      await enrolTotp(store, waiting.id);
      const pendingJar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar: pendingJar }, { response_type: 'code', client_id: client.clientId, redirect_uri: 'https://rp.example.test/cb', scope: 'openid' }, { username: waiting.username, password: PASSWORD });
      assert.ok(pendingJar.cookies.get('gatehouse_pending'));

      const secrets: Record<string, string> = {
        pending_sign_in_cookie: pendingJar.cookies.get('gatehouse_pending')!,
        client_secret: clientSecret!,
        client_secret_jwt_secret: hmacClient.clientSecret!,
        password: PASSWORD,
        code,
        access_token: tokens.body.access_token as string,
        refresh_token: tokens.body.refresh_token as string,
        refreshed_access_token: refreshed.body.access_token as string,
        ...Object.fromEntries([...jar.cookies].map(([name, value]) => [`cookie ${name}`, value])),
      };
      // The audit events of the flows above, stored (GATEHOUSE_AUDIT_STORE, on by default) before the dump.
      await server.gatehouse.auditStore!.flush();
      const tables = ['clients', 'users', 'user_attributes', 'sessions', 'authorization_codes', 'tokens', 'signing_keys', 'throttle_counters', 'groups', 'organizations', 'client_assertions', 'audit_events', 'pending_sign_ins'];
      let dump = '';
      for (const table of tables) {
        const { rows } = await sql`select * from ${sql.table(table)}`.execute(store.database.db);
        dump += JSON.stringify(rows);
      }
      assert.ok(dump.includes(client.clientId), 'the dump has the rows');
      assert.ok(dump.includes(hashSecret(secrets.pending_sign_in_cookie!)), 'the dump has the pending sign-in, by its hash');
      assert.ok(dump.includes('token.refreshed'), 'the dump has the audit events');
      for (const [name, value] of Object.entries(secrets)) assert.ok(!dump.includes(value), `${name} is in the dump`);
      const keys = await sql<{ private_jwk: string; encrypted: number }>`select private_jwk, encrypted from signing_keys`.execute(store.database.db);
      for (const key of keys.rows) {
        assert.equal(Number(key.encrypted), 1);
        assert.doesNotMatch(key.private_jwk, /"d"\s*:/, 'no private exponent in the clear');
      }
    });
  });
}
