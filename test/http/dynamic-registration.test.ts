/**
 * RFC 7591 dynamic client registration and RFC 7592 client configuration over HTTP against a real
 * server, on every database: off by default; on, open only with an initial access token an
 * administrator minted (expiry and use count enforced, spent atomically with the client insert);
 * the registration access token manages that one client; privileged metadata and hostile input
 * are refused with RFC 7591 §3.2.2 errors, never a 5xx (the server helper fails on any 5xx).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { mintInitialAccessToken } from '../../src/oauth/dynamic-registration.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { addClient, basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const ON = { GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token' };
const HOUR = 3600;

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

async function send(url: string, init: { method?: string; token?: string; body?: unknown; raw?: string; contentType?: string; authorization?: string } = {}): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (init.token !== undefined) headers.authorization = `Bearer ${init.token}`;
  if (init.authorization !== undefined) headers.authorization = init.authorization;
  const body = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  if (body !== undefined) headers['content-type'] = init.contentType ?? 'application/json';
  const response = await fetch(url, { method: init.method ?? (body === undefined ? 'GET' : 'POST'), headers, ...(body === undefined ? {} : { body }) });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const WEB_APP = { client_name: 'Self-registered app', redirect_uris: ['https://app.example.com/cb'], grant_types: ['authorization_code', 'client_credentials'] };

for (const db of DATABASES) {
  describe(`dynamic client registration off by default on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    test('off: discovery names no registration_endpoint and the endpoints answer 404 (DR-01)', async () => {
      const discovery = await send(`${server.url}/uas/.well-known/openid-configuration`);
      assert.equal(discovery.body.registration_endpoint, undefined);
      const iat = (await mintInitialAccessToken({ registrations: server.gatehouse.store.registrations, clock: { now: () => Date.now() }, random: cryptoRandom }, { expiresIn: HOUR, uses: 1, createdBy: 'test' })).value;
      const register = await send(`${server.url}/uas/oauth2/register`, { token: iat, body: WEB_APP });
      assert.equal(register.status, 404);
      assert.equal((await send(`${server.url}/uas/oauth2/register/${randomUUID()}`, { token: iat })).status, 404);
      assert.deepEqual(await server.gatehouse.store.clients.list(), []);
    });
  });

  describe(`dynamic client registration on ${db.name}`, () => {
    let server: RunningServer;
    let clock: ManualClock;
    let audit: AuditCapture;
    before(async () => {
      clock = new ManualClock(Date.now());
      audit = new AuditCapture();
      server = await startServer(db, { env: ON, clock, audit });
    });
    after(async () => server.close());

    const endpoint = () => `${server.url}/uas/oauth2/register`;
    const mint = async (uses = 1, expiresIn = HOUR) =>
      mintInitialAccessToken({ registrations: server.gatehouse.store.registrations, clock, random: cryptoRandom }, { expiresIn, uses, createdBy: 'test' });
    const clientCount = async () => (await server.gatehouse.store.clients.list()).length;
    const register = async (metadata: unknown = WEB_APP, uses = 1) => {
      const { value } = await mint(uses);
      const answer = await send(endpoint(), { token: value, body: metadata });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      return answer.body as Record<string, unknown> & { client_id: string; client_secret: string; registration_access_token: string; registration_client_uri: string };
    };
    /** The captured events of one name (audit.of cannot narrow the events that share a union member). */
    const eventsNamed = (name: string) => audit.all().filter((e) => e.event === name) as unknown as { clientId: string; actor: unknown }[];
    const usesLeft = async (id: string) => (await server.gatehouse.store.registrations.listInitialAccessTokens({ limit: 1000 })).find((t) => t.id === id)?.usesLeft;

    test('on: discovery publishes registration_endpoint under the issuer (DR-01)', async () => {
      const discovery = await send(`${server.url}/uas/.well-known/openid-configuration`);
      assert.equal(discovery.body.registration_endpoint, `${server.issuer}/oauth2/register`);
    });

    test('a registration without an initial access token, or with an unknown, malformed or other kind of token, is 401 invalid_token with a Bearer challenge; nothing is created (DR-02)', async () => {
      const before = await clientCount();
      const none = await send(endpoint(), { body: WEB_APP });
      assert.deepEqual([none.status, none.body.error], [401, 'invalid_token']);
      assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="gatehouse"', 'RFC 6750 §3.1: no error attribute without a token');
      for (const authorization of [`Bearer ${cryptoRandom.token()}`, 'Basic dXNlcjpwYXNz', 'Bearer', `Bearer a b`, `Bearer ${'x'.repeat(600)}`]) {
        const refused = await send(endpoint(), { authorization, body: WEB_APP });
        assert.deepEqual([refused.status, refused.body.error], [401, 'invalid_token'], authorization.slice(0, 20));
        assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer realm="gatehouse", error="invalid_token"/);
      }
      // A client's own access token is not an initial access token.
      const { client, secret } = await addClient(server.gatehouse.store, { grantTypes: ['client_credentials'], redirectUris: [] });
      const accessToken = (await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, secret) })).body.access_token as string;
      assert.equal((await send(endpoint(), { token: accessToken, body: WEB_APP })).status, 401);
      assert.equal(await clientCount(), before + 1);
    });

    test('with an initial access token: 201 with client_id, secret, issue time, expiry 0, registration access token and URI, and the registered metadata; the client gets tokens (DR-03)', async () => {
      const { token, value } = await mint(1);
      audit.clear();
      const answer = await send(endpoint(), { token: value, body: { ...WEB_APP, scope: 'openid profile', 'client_name#fi': 'Itse rekisteröity' } });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.equal(answer.headers.get('cache-control'), 'no-store');
      const body = answer.body;
      const clientId = body.client_id as string;
      assert.match(clientId, /^[0-9a-f-]{36}$/);
      assert.equal(typeof body.client_secret, 'string');
      assert.equal((body.client_secret as string).length, 43);
      assert.equal(body.client_id_issued_at, Math.floor(clock.now() / 1000));
      assert.equal(body.client_secret_expires_at, 0);
      assert.equal(body.registration_client_uri, `${server.issuer}/oauth2/register/${clientId}`);
      assert.equal(answer.headers.get('location'), body.registration_client_uri);
      assert.equal((body.registration_access_token as string).length, 43);
      assert.equal(body.client_name, 'Self-registered app');
      assert.equal(body['client_name#fi'], 'Itse rekisteröity');
      assert.deepEqual(body.redirect_uris, WEB_APP.redirect_uris);
      assert.deepEqual(body.grant_types, WEB_APP.grant_types);
      assert.equal(body.token_endpoint_auth_method, 'client_secret_basic', 'RFC 7591 §2 default');
      assert.equal(body.scope, 'openid profile');
      assert.equal(body.consent_required, true, 'decision DR6');
      assert.equal(body.active, undefined);

      // Stored: active, the registration access token and secret as hashes only; the token's one use spent.
      const stored = await server.gatehouse.store.clients.get(clientId);
      assert.equal(stored?.active, true);
      assert.equal(stored?.secretHash, hashSecret(body.client_secret as string));
      assert.equal(await server.gatehouse.store.registrations.registrationTokenHash(clientId), hashSecret(body.registration_access_token as string));
      assert.equal(await usesLeft(token.id), 0);

      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(clientId, body.client_secret as string) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.equal(typeof tokens.body.access_token, 'string');

      const actor = { via: 'dcr', clientId };
      assert.deepEqual(audit.of('client.registered').map(({ event, clientId: id, initialAccessTokenId: spent, actor: who, ip }) => ({ event, id, spent, who, ip })), [{ event: 'client.registered', id: clientId, spent: token.id, who: actor, ip: '127.0.0.1' }]);
      assert.deepEqual(eventsNamed('client.created').map((e) => e.actor), [actor]);
      assert.ok(!audit.lines.join('\n').includes(value), 'no event carries the initial access token');
      assert.ok(!audit.lines.join('\n').includes(body.registration_access_token as string));
    });

    test('a public client gets no secret and no client_secret_expires_at (DR-03)', async () => {
      const body = await register({ client_name: 'SPA', redirect_uris: ['https://spa.example.com/cb'], token_endpoint_auth_method: 'none', code_challenge_method: 'S256' });
      assert.equal(body.client_secret, undefined);
      assert.equal(body.client_secret_expires_at, undefined);
      assert.equal(body.token_endpoint_auth_method, 'none');
    });

    test('the use count and the expiry are enforced; a refused registration spends no use (DR-04)', async () => {
      const { token, value } = await mint(2);
      const bad = await send(endpoint(), { token: value, body: { ...WEB_APP, redirect_uris: ['http://evil.example.com/cb'] } });
      assert.deepEqual([bad.status, bad.body.error], [400, 'invalid_redirect_uri']);
      assert.equal(await usesLeft(token.id), 2, 'a failed registration spends nothing');
      assert.equal((await send(endpoint(), { token: value, body: WEB_APP })).status, 201);
      assert.equal((await send(endpoint(), { token: value, body: WEB_APP })).status, 201);
      const usedUp = await send(endpoint(), { token: value, body: WEB_APP });
      assert.deepEqual([usedUp.status, usedUp.body.error, usedUp.body.error_description], [401, 'invalid_token', 'The initial access token is used up.']);

      const expiring = await mint(5, 60);
      clock.advance(60_000);
      const expired = await send(endpoint(), { token: expiring.value, body: WEB_APP });
      assert.deepEqual([expired.status, expired.body.error, expired.body.error_description], [401, 'invalid_token', 'The initial access token has expired.']);
      assert.equal(await usesLeft(expiring.token.id), 5);
    });

    test('10 concurrent registrations with a one-use token create exactly one client (DR-05)', async () => {
      const { token, value } = await mint(1);
      const before = await clientCount();
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => send(endpoint(), { token: value, body: { ...WEB_APP, client_name: `racer ${i}` } })));
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 401, 401, 401, 401, 401, 401, 401, 401, 401]);
      assert.ok(answers.filter((a) => a.status === 401).every((a) => a.body.error === 'invalid_token'));
      assert.equal(await clientCount(), before + 1);
      assert.equal(await usesLeft(token.id), 0);
      // And with three uses, three of ten.
      const three = await mint(3);
      const more = await Promise.all(Array.from({ length: 10 }, () => send(endpoint(), { token: three.value, body: WEB_APP })));
      assert.equal(more.filter((a) => a.status === 201).length, 3);
      assert.equal(await clientCount(), before + 4);
    });

    test('RFC 7592: read with the registration access token; another client\'s token, none, or a wrong one is 401 (DR-06)', async () => {
      const mine = await register();
      const theirs = await register();
      const read = await send(mine.registration_client_uri, { token: mine.registration_access_token });
      assert.equal(read.status, 200);
      assert.equal(read.headers.get('cache-control'), 'no-store');
      const { client_secret: _secret, ...expected } = mine;
      assert.deepEqual(read.body, expected, 'the registration as answered, without the secret (shown once)');
      for (const token of [theirs.registration_access_token, cryptoRandom.token()]) {
        const refused = await send(mine.registration_client_uri, { token });
        assert.deepEqual([refused.status, refused.body.error], [401, 'invalid_token']);
      }
      const none = await send(mine.registration_client_uri);
      assert.deepEqual([none.status, none.headers.get('www-authenticate')], [401, 'Bearer realm="gatehouse"']);
      // A client the CLI registered has no registration access token: it cannot be managed here.
      const { client } = await addClient(server.gatehouse.store);
      assert.equal((await send(`${endpoint()}/${client.clientId}`, { token: mine.registration_access_token })).status, 401);
      assert.equal((await send(`${endpoint()}/${'%00'}`, { token: mine.registration_access_token })).status, 401);
    });

    test('RFC 7592 update replaces the metadata; client_id must match, client_secret if sent must be the current one, server members are refused (DR-07)', async () => {
      const mine = await register({ ...WEB_APP, scope: 'openid profile' });
      const { client_secret: secret, registration_access_token: rat, registration_client_uri: uri, client_id_issued_at: _iat, client_secret_expires_at: _exp, ...metadata } = mine;
      audit.clear();
      const updated = await send(uri, { method: 'PUT', token: rat, body: { ...metadata, scope: undefined, client_name: 'Renamed', client_secret: secret } });
      assert.equal(updated.status, 200, JSON.stringify(updated.body));
      assert.equal(updated.body.client_name, 'Renamed');
      assert.equal(updated.body.scope, undefined, 'an omitted field is removed (RFC 7592 §2.2)');
      assert.equal(updated.body.client_secret, undefined);
      assert.equal(updated.body.registration_access_token, rat);
      assert.equal((await server.gatehouse.store.clients.get(mine.client_id))?.name, 'Renamed');
      assert.deepEqual(eventsNamed('client.updated').map((e) => e.actor), [{ via: 'dcr', clientId: mine.client_id }]);
      // The secret still works.
      assert.equal((await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(mine.client_id, secret) })).status, 200);

      const refusals: [Record<string, unknown>, string][] = [
        [{ ...metadata, client_id: randomUUID() }, 'client_id'],
        [{ ...metadata, client_id: undefined }, 'client_id'],
        [{ ...metadata, client_secret: 'chosen-by-me' }, 'client_secret'],
        [{ ...metadata, registration_access_token: rat }, 'registration_access_token'],
        [{ ...metadata, client_id_issued_at: 1 }, 'client_id_issued_at'],
        [{ ...metadata, aud: ['gatehouse-manage-api'] }, 'aud'],
      ];
      for (const [body, field] of refusals) {
        const refused = await send(uri, { method: 'PUT', token: rat, body });
        assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_client_metadata'], field);
        assert.match(refused.body.error_description as string, new RegExp(`^${field}: `));
      }
      const other = await register();
      assert.equal((await send(uri, { method: 'PUT', token: other.registration_access_token, body: metadata })).status, 401);
      assert.equal((await server.gatehouse.store.clients.get(mine.client_id))?.name, 'Renamed');
    });

    test('an update keeps what an administrator set and may repeat it, never change it (DR-07, DR-08)', async () => {
      const mine = await register();
      const { client_secret: _s, registration_access_token: rat, registration_client_uri: uri, client_id_issued_at: _i, client_secret_expires_at: _e, ...metadata } = mine;
      const store = server.gatehouse.store;
      const rs = await addClient(store, { metadata: { resource_server: true }, grantTypes: [] });
      const current = (await store.clients.get(mine.client_id))!;
      await store.clients.update({ ...current, metadata: { ...current.metadata, aud: [rs.client.clientId] } });
      const kept = await send(uri, { method: 'PUT', token: rat, body: { ...metadata, client_name: 'Still limited' } });
      assert.equal(kept.status, 200, JSON.stringify(kept.body));
      assert.deepEqual(kept.body.aud, [rs.client.clientId], 'omitting a privileged key keeps it');
      const echoed = await send(uri, { method: 'PUT', token: rat, body: { ...kept.body, registration_access_token: undefined, registration_client_uri: undefined, client_id_issued_at: undefined, client_secret_expires_at: undefined } });
      assert.equal(echoed.status, 200, JSON.stringify(echoed.body));
      const widened = await send(uri, { method: 'PUT', token: rat, body: { ...metadata, aud: [rs.client.clientId, 'gatehouse-manage-api'] } });
      assert.deepEqual([widened.status, widened.body.error], [400, 'invalid_client_metadata']);
      const deactivated = await send(uri, { method: 'PUT', token: rat, body: { ...metadata, active: false } });
      assert.deepEqual([deactivated.status, deactivated.body.error], [400, 'invalid_client_metadata']);
      // Made a resource server by an administrator, it still may not declare scope values itself (RS-06).
      const promoted = (await store.clients.get(mine.client_id))!;
      await store.clients.update({ ...promoted, metadata: { ...promoted.metadata, resource_server: true } });
      const declared = await send(uri, { method: 'PUT', token: rat, body: { ...metadata, resource_scopes: ['self.declared'] } });
      assert.deepEqual([declared.status, declared.body], [400, { error: 'invalid_client_metadata', error_description: 'resource_scopes: is set by an administrator only; a dynamically registered client cannot set it.' }]);
    });

    test('RFC 7592 delete: 204, then the client and its registration access token are gone; another client\'s token cannot delete (DR-09)', async () => {
      const mine = await register();
      const other = await register();
      assert.equal((await send(mine.registration_client_uri, { method: 'DELETE', token: other.registration_access_token })).status, 401);
      assert.ok(await server.gatehouse.store.clients.get(mine.client_id));
      audit.clear();
      const deleted = await fetch(mine.registration_client_uri, { method: 'DELETE', headers: { authorization: `Bearer ${mine.registration_access_token}` } });
      assert.equal(deleted.status, 204);
      assert.equal(await deleted.text(), '');
      assert.equal(await server.gatehouse.store.clients.get(mine.client_id), undefined);
      assert.equal(await server.gatehouse.store.registrations.registrationTokenHash(mine.client_id), undefined);
      assert.equal((await send(mine.registration_client_uri, { token: mine.registration_access_token })).status, 401);
      assert.deepEqual(eventsNamed('client.deleted').map((e) => [e.clientId, e.actor]), [[mine.client_id, { via: 'dcr', clientId: mine.client_id }]]);
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(mine.client_id, mine.client_secret) });
      assert.equal(tokens.status, 401);
    });

    test('privileged metadata, the password grant, consent_required false and software statements are refused, naming the field, and spend nothing (DR-08)', async () => {
      const { token, value } = await mint(1);
      const rs = await addClient(server.gatehouse.store, { metadata: { resource_server: true }, grantTypes: [] });
      const cases: [Record<string, unknown>, string, string][] = [
        [{ aud: ['gatehouse-manage-api'] }, 'aud', 'invalid_client_metadata'],
        [{ aud: [rs.client.clientId] }, 'aud', 'invalid_client_metadata'],
        [{ resource_server: true, grant_types: [] }, 'resource_server', 'invalid_client_metadata'],
        [{ resource_uris: ['https://api.example.com'] }, 'resource_uris', 'invalid_client_metadata'],
        [{ resource_scopes: ['orders.read'] }, 'resource_scopes', 'invalid_client_metadata'],
        // A scope value no grant honours (RS-04): refused by registerClient's own rule.
        [{ scope: 'openid api.read' }, 'scope', 'invalid_client_metadata'],
        [{ access_token_format: 'jwt' }, 'access_token_format', 'invalid_client_metadata'],
        [{ authorization_policy: 'identity-api' }, 'authorization_policy', 'invalid_client_metadata'],
        [{ active: false }, 'active', 'invalid_client_metadata'],
        [{ jwks_uri: 'http://127.0.0.1:5432/' }, 'jwks_uri', 'invalid_client_metadata'],
        [{ grant_types: ['password'] }, 'grant_types', 'invalid_client_metadata'],
        [{ consent_required: false }, 'consent_required', 'invalid_client_metadata'],
        [{ client_id: 'mine' }, 'client_id', 'invalid_client_metadata'],
        [{ client_secret: 'mine' }, 'client_secret', 'invalid_client_metadata'],
        [{ registration_access_token: 'x' }, 'registration_access_token', 'invalid_client_metadata'],
        [{ redirect_uris: ['https://app.example.com/cb#frag'] }, 'redirect_uris', 'invalid_redirect_uri'],
        [{ redirect_uris: 'https://app.example.com/cb' }, 'redirect_uris', 'invalid_redirect_uri'],
        [{ client_name: 42 }, 'client_name', 'invalid_client_metadata'],
        [{ grant_types: ['implicit'] }, 'grant_types', 'invalid_client_metadata'],
        [{ frontchannel_logout_uri: 'https://app.example.com/logout#f' }, 'frontchannel_logout_uri', 'invalid_client_metadata'],
        // Back-Channel Logout 1.0 §2.2: absolute, no fragment; https (http on loopback only, LO5).
        [{ backchannel_logout_uri: 'https://app.example.com/logout#x' }, 'backchannel_logout_uri', 'invalid_client_metadata'],
        [{ backchannel_logout_uri: 'http://app.example.com/logout' }, 'backchannel_logout_uri', 'invalid_client_metadata'],
        [{ backchannel_logout_uri: '/logout' }, 'backchannel_logout_uri', 'invalid_client_metadata'],
        [{ backchannel_logout_session_required: 'yes' }, 'backchannel_logout_session_required', 'invalid_client_metadata'],
        [{ id_token_encrypted_response_alg: 'RSA-OAEP' }, 'id_token_encrypted_response_alg', 'invalid_client_metadata'],
        [{ subject_type: 'pairwise' }, 'subject_type', 'invalid_client_metadata'],
        [{ default_max_age: -1 }, 'default_max_age', 'invalid_client_metadata'],
        [{ default_max_age: '60' }, 'default_max_age', 'invalid_client_metadata'],
        [{ default_acr_values: 'urn:a' }, 'default_acr_values', 'invalid_client_metadata'],
        [{ default_acr_values: ['has space'] }, 'default_acr_values', 'invalid_client_metadata'],
        // Longer than the server's GATEHOUSE_ACCESS_TOKEN_TTL (default 3600): administrators only (DR11).
        [{ access_token_ttl: 3601 }, 'access_token_ttl', 'invalid_client_metadata'],
      ];
      for (const [extra, field, error] of cases) {
        const answer = await send(endpoint(), { token: value, body: { ...WEB_APP, ...extra } });
        assert.deepEqual([answer.status, answer.body.error], [400, error], field);
        assert.match(answer.body.error_description as string, new RegExp(`^${field}: `), field);
      }
      const levels = await send(endpoint(), { token: (await mint(1)).value, body: { ...WEB_APP, default_acr_values: ['urn:a', 'urn:b'], default_max_age: 300 } });
      assert.deepEqual([levels.status, levels.body.default_acr_values, levels.body.default_max_age], [201, ['urn:a', 'urn:b'], 300], 'OIDC Registration §2: registered and echoed (issue 24)');
      const logout = await send(endpoint(), { token: (await mint(1)).value, body: { ...WEB_APP, backchannel_logout_uri: 'https://app.example.com/bcl?tenant=1', backchannel_logout_session_required: true } });
      assert.deepEqual([logout.status, logout.body.backchannel_logout_uri, logout.body.backchannel_logout_session_required], [201, 'https://app.example.com/bcl?tenant=1', true], 'Back-Channel Logout §2.2: registered and echoed (issue 26)');
      const shorter = await send(endpoint(), { token: value, body: { ...WEB_APP, access_token_ttl: 600 } });
      assert.deepEqual([shorter.status, shorter.body.access_token_ttl], [201, 600], 'a shorter lifetime is the client\'s to ask');
      const statement = await send(endpoint(), { token: (await mint(1)).value, body: { ...WEB_APP, software_statement: 'eyJhbGciOiJub25lIn0.e30.' } });
      assert.deepEqual([statement.status, statement.body.error], [400, 'invalid_software_statement']);
      assert.equal(await usesLeft(token.id), 0, 'only the one accepted registration spent a use');
    });

    test('metadata gatehouse does not understand is ignored as RFC 7591 §2 requires: left out of the registration and the answer; known but unsupported keys are refused (DR-10)', async () => {
      const body = await register({ ...WEB_APP, contacts: ['ops@example.com'], software_id: 'build-bot', software_version: '1.2', 'x-vendor': { nested: true }, constructor: 'x' });
      for (const key of ['contacts', 'software_id', 'software_version', 'x-vendor']) assert.equal(body[key], undefined, key);
      const stored = await server.gatehouse.store.clients.get(body.client_id);
      assert.deepEqual(Object.keys(stored!.metadata).filter((key) => ['contacts', 'software_id', 'software_version', 'x-vendor', 'constructor'].includes(key)), []);
      const { value } = await mint(1);
      const unsupported = await send(endpoint(), { token: value, body: { ...WEB_APP, subject_type: 'pairwise' } });
      assert.deepEqual([unsupported.status, unsupported.body.error], [400, 'invalid_client_metadata']);
      assert.match(unsupported.body.error_description as string, /^subject_type: is not supported/);
    });

    test('a minimal registration (redirect_uris only) is named by its client_id; display links and require_auth_time are ignored, not refused (DR-14)', async () => {
      const informational = { client_uri: 'https://app.example.com/', policy_uri: 'https://app.example.com/policy', tos_uri: 'https://app.example.com/tos', require_auth_time: true };
      const body = await register({ redirect_uris: ['https://minimal.example.com/cb'], ...informational });
      assert.equal(body.client_name, body.client_id, 'RFC 7591 §2: without client_name the client_id is shown');
      for (const key of Object.keys(informational)) assert.equal(body[key], undefined, `${key} is not registered`);
      const stored = await server.gatehouse.store.clients.get(body.client_id);
      assert.equal(stored?.name, body.client_id);
      assert.deepEqual(Object.keys(stored!.metadata).filter((key) => key in informational), []);
      // RFC 7592 §2.2: an update without client_name removes it; the client_id is shown again.
      const { client_secret: _s, registration_access_token: rat, registration_client_uri: uri, client_id_issued_at: _i, client_secret_expires_at: _e, ...metadata } = body;
      const renamed = await send(uri, { method: 'PUT', token: rat, body: { ...metadata, client_name: 'Named later' } });
      assert.deepEqual([renamed.status, renamed.body.client_name], [200, 'Named later']);
      const { client_name: _n, ...unnamed } = renamed.body;
      const cleared = await send(uri, { method: 'PUT', token: rat, body: { ...unnamed, registration_access_token: undefined, registration_client_uri: undefined, client_id_issued_at: undefined, client_secret_expires_at: undefined, ...informational } });
      assert.deepEqual([cleared.status, cleared.body.client_name], [200, body.client_id]);
      for (const key of Object.keys(informational)) assert.equal(cleared.body[key], undefined, `${key} is not registered by an update`);
    });

    test('malformed, oversized and hostile bodies are 400 invalid_client_metadata, never a 5xx, and spend nothing (DR-10)', async () => {
      const { token, value } = await mint(1);
      const hostile: { raw: string; contentType?: string }[] = [
        { raw: '{"client_name": "x",' },
        { raw: 'null' },
        { raw: '[]' },
        { raw: '"a string"' },
        { raw: '42' },
        { raw: '' },
        { raw: 'client_name=x&redirect_uris=https://a.example/cb', contentType: 'application/x-www-form-urlencoded' },
        { raw: 'client_name', contentType: 'text/plain' },
        { raw: '<client/>', contentType: 'application/xml' },
        { raw: JSON.stringify({ ...WEB_APP, client_name: 'x'.repeat(70 * 1024) }) },
        { raw: '{"__proto__": {"active": false}, "client_name": "x"}' },
        { raw: '{"constructor": {"prototype": {"x": 1}}, "client_name": "x"}' },
        { raw: JSON.stringify({ ...WEB_APP, client_name: 'nul\u0000name' }) },
        { raw: JSON.stringify({ ...WEB_APP, 'client_name#\u0000': 'x' }) },
        { raw: JSON.stringify({ ...WEB_APP, redirect_uris: [{ nested: [[[[]]]] }] }) },
        { raw: `${'['.repeat(5000)}${']'.repeat(5000)}` },
        { raw: JSON.stringify({ ...WEB_APP, jwks: { keys: [{ kty: 'oct', k: 'AAAA' }] } }) },
        { raw: JSON.stringify({ ...WEB_APP, scope: 'a"b' }) },
        { raw: JSON.stringify({ ...WEB_APP, redirect_uris: Array.from({ length: 2000 }, (_, i) => `https://a.example/${i}`) }) },
      ];
      for (const { raw, contentType } of hostile) {
        const answer = await send(endpoint(), { token: value, raw, ...(contentType ? { contentType } : {}) });
        assert.ok(answer.status === 400, `${raw.slice(0, 40)}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`);
        assert.ok(['invalid_client_metadata', 'invalid_redirect_uri'].includes(answer.body.error as string), `${raw.slice(0, 40)}: ${String(answer.body.error)}`);
      }
      const put = await register();
      const broken = await send(put.registration_client_uri, { method: 'PUT', token: put.registration_access_token, raw: '{"client_id":' });
      assert.deepEqual([broken.status, broken.body.error], [400, 'invalid_client_metadata']);
      assert.equal(await usesLeft(token.id), 1);
      // Other methods: 405 with Allow.
      const get = await send(endpoint(), { token: value });
      assert.deepEqual([get.status, get.headers.get('allow')], [405, 'POST']);
    });
  });

  describe(`dynamic client registration under another issuer path on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db, { env: { ...ON, GATEHOUSE_ISSUER: 'https://sso.example.com/auth/tenant', GATEHOUSE_SECURE_COOKIES: 'false' } });
    });
    after(async () => server.close());

    test('the endpoint and the configuration URI live under the issuer\'s path, like the other endpoints; nothing under /uas (DR-01)', async () => {
      const discovery = await send(`${server.url}/auth/tenant/.well-known/openid-configuration`);
      assert.equal(discovery.body.registration_endpoint, 'https://sso.example.com/auth/tenant/oauth2/register');
      const { value } = await mintInitialAccessToken({ registrations: server.gatehouse.store.registrations, clock: { now: () => Date.now() }, random: cryptoRandom }, { expiresIn: HOUR, uses: 1, createdBy: 'test' });
      assert.equal((await send(`${server.url}/uas/oauth2/register`, { token: value, body: WEB_APP })).status, 404);
      const registered = await send(`${server.url}/auth/tenant/oauth2/register`, { token: value, body: WEB_APP });
      assert.equal(registered.status, 201, JSON.stringify(registered.body));
      const uri = registered.body.registration_client_uri as string;
      assert.equal(uri, `https://sso.example.com/auth/tenant/oauth2/register/${registered.body.client_id as string}`);
      const read = await send(`${server.url}${new URL(uri).pathname}`, { token: registered.body.registration_access_token as string });
      assert.equal(read.status, 200);
      assert.equal(read.body.client_id, registered.body.client_id);
    });
  });
}
