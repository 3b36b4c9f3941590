/**
 * JWT client authentication (RFC 7523 §2.2, §3; RFC 7521 §4.2; OIDC Core §9) at the token,
 * introspection and revocation endpoints, with assertions built by hand: each rule an assertion
 * must keep, and what a client's jwks_uri may do. The server's clock is injected; the jwks_uri is
 * a local HTTP server. Every refusal is 401 invalid_client (or 400 invalid_request for a request
 * that mixes methods), never a 5xx (startServer fails on any).
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { sealClientSecret } from '../../src/crypto/key-encryption.ts';
import { addClient, basic, postForm } from '../helpers/back-channel.ts';
import { addKeyClient, addSecretJwtClient, assertionFields, keyAssertion, secretAssertion, signingKey, TEST_KEK, unsecuredAssertion, type SigningKey } from '../helpers/client-assertions.ts';
import { DATABASES } from '../helpers/databases.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const MINUTE = 60;

for (const db of DATABASES) {
  describe(`JWT client authentication on ${db.name}`, () => {
    let server: RunningServer;
    let clock: ManualClock;
    let audit: AuditCapture;
    /** The clients' jwks_uri server: what it serves at each path, and how often it was asked. */
    let keysServer: Server;
    let keysBase: string;
    const served: Record<string, () => { status: number; body: string } | undefined> = {};
    const fetched: Record<string, number> = {};
    before(async () => {
      keysServer = createServer((request, response) => {
        fetched[request.url!] = (fetched[request.url!] ?? 0) + 1;
        const answer = served[request.url!]?.();
        if (answer) response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
        // no answer: the request hangs (a slow jwks_uri)
      });
      await new Promise<void>((resolve) => keysServer.listen(0, '127.0.0.1', resolve));
      keysBase = `http://127.0.0.1:${(keysServer.address() as { port: number }).port}`;
      clock = new ManualClock(Date.now());
      audit = new AuditCapture();
      server = await startServer(db, { clock, audit, env: { GATEHOUSE_THROTTLE: 'false', GATEHOUSE_KEY_ENCRYPTION_KEY: TEST_KEK }, jwks: { timeoutMs: 300, maxBytes: 8192, cooldownMs: 60_000, ttlMs: 300_000 } });
    });
    after(async () => {
      keysServer.closeAllConnections();
      await new Promise((resolve) => keysServer.close(resolve));
      await server.close();
    });
    const store = () => server.gatehouse.store;
    const url = (endpoint: string) => `${server.issuer}/oauth2/${endpoint}`;
    const nowS = () => Math.floor(clock.now() / 1000);
    /** Revocation: 200 when the client authenticated (the bogus token is not an error, RFC 7009 §2.2). */
    const revoke = (fields: Record<string, string>, headers: Record<string, string> = {}) => postForm(url('revocation'), { token: 'not-a-token', ...fields }, headers);
    const accepted = async (fields: Record<string, string>, message?: string) => {
      const response = await revoke(fields);
      assert.equal(response.status, 200, `${message ?? ''} ${JSON.stringify(response.body)}`);
    };
    const refused = async (fields: Record<string, string>, message?: string, expected = { status: 401, error: 'invalid_client' }) => {
      const response = await revoke(fields);
      assert.deepEqual([response.status, response.body.error], [expected.status, expected.error], `${message ?? ''} ${JSON.stringify(response.body)}`);
      return response;
    };

    let key: SigningKey;
    let clientId: string;
    before(async () => {
      key = await signingKey('ES256');
      clientId = (await addKeyClient(store(), { keys: [key] })).clientId;
    });
    const assertion = (options: Parameters<typeof keyAssertion>[3] = {}, audience: string | string[] = url('revocation')) => keyAssertion(key, clientId, audience, { now: nowS(), ...options });

    test('private_key_jwt authenticates at the device authorization endpoint (RFC 8628 §3.1) too: aud its URL or the issuer; another endpoint\'s URL is refused (JW-01, JW-05)', async () => {
      const deviceGrant = 'urn:ietf:params:oauth:grant-type:device_code';
      const device = await addKeyClient(store(), { keys: [key], overrides: { grantTypes: [deviceGrant], redirectUris: [] } });
      const start = async (audience: string) => postForm(url('device_authorization'), { scope: 'openid', ...assertionFields(await keyAssertion(key, device.clientId, audience, { now: nowS() })) });
      for (const audience of [url('device_authorization'), server.issuer]) {
        const started = await start(audience);
        assert.equal(started.status, 200, `${audience}: ${JSON.stringify(started.body)}`);
        assert.deepEqual(Object.keys(started.body).sort(), ['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete']);
      }
      const elsewhere = await start(url('token'));
      assert.deepEqual([elsewhere.status, elsewhere.body.error], [401, 'invalid_client']);
    });

    test('private_key_jwt authenticates at the token, introspection and revocation endpoints, with aud the endpoint URL or the issuer (JW-01, JW-05)', async () => {
      const token = await postForm(url('token'), { grant_type: 'refresh_token', refresh_token: 'not-a-token', ...assertionFields(await assertion({}, url('token'))) });
      assert.deepEqual([token.status, token.body.error], [400, 'invalid_grant'], 'authenticated, then the grant failed');
      const introspection = await postForm(url('introspection'), { token: 'not-a-token', ...assertionFields(await assertion({}, url('introspection'))) });
      assert.deepEqual([introspection.status, introspection.body], [200, { active: false }]);
      await accepted(assertionFields(await assertion()), 'aud the endpoint');
      await accepted(assertionFields(await assertion({}, server.issuer)), 'aud the issuer');
      await accepted(assertionFields(await assertion({}, ['https://elsewhere.example', url('revocation')])), 'aud an array holding the endpoint');
      await accepted(assertionFields(await assertion(), { client_id: clientId }), 'client_id beside it, the same');
    });

    test('every algorithm of the allow-list works; none, and HS256 by a private_key_jwt client, never do (JW-06)', async () => {
      for (const alg of ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519']) {
        const algKey = await signingKey(alg);
        const algClient = await addKeyClient(store(), { keys: [algKey] });
        await accepted(assertionFields(await keyAssertion(algKey, algClient.clientId, url('revocation'), { now: nowS() })), alg);
      }
      await refused(assertionFields(unsecuredAssertion(clientId, url('revocation'), { now: nowS() })), 'alg none');
      // An HMAC assertion keyed by anything the attacker knows — here the client's public key.
      await refused(assertionFields(await secretAssertion(JSON.stringify(key.publicJwk), clientId, url('revocation'), { now: nowS() })), 'HS256 by a private_key_jwt client');
      const other = await signingKey('ES256', key.kid);
      await refused(assertionFields(await keyAssertion(other, clientId, url('revocation'), { now: nowS() })), 'signed by another key with the same kid');
    });

    test('token_endpoint_auth_signing_alg restricts the client to that algorithm (JW-06)', async () => {
      const es = await signingKey('ES256');
      const rs = await signingKey('RS256');
      const restricted = await addKeyClient(store(), { keys: [es, rs], metadata: { token_endpoint_auth_signing_alg: 'RS256' } });
      await accepted(assertionFields(await keyAssertion(rs, restricted.clientId, url('revocation'), { now: nowS() })));
      await refused(assertionFields(await keyAssertion(es, restricted.clientId, url('revocation'), { now: nowS() })), 'ES256 when RS256 is registered');
    });

    test('the claims: iss = sub = client_id, aud this endpoint or the issuer, exp required and at most 60 minutes ahead, nbf and iat not in the future, jti required (JW-02, JW-03, JW-04, JW-05)', async () => {
      await refused(assertionFields(await assertion({}, url('token'))), 'aud another endpoint');
      await refused(assertionFields(await assertion({}, 'https://evil.example')), 'aud elsewhere');
      await refused(assertionFields(await assertion({ claims: { aud: undefined } })), 'no aud');
      await refused(assertionFields(await assertion({ claims: { exp: undefined } })), 'no exp');
      await refused(assertionFields(await assertion({ claims: { jti: undefined } })), 'no jti');
      await refused(assertionFields(await assertion({ claims: { jti: 42 } })), 'jti not a string');
      await refused(assertionFields(await assertion({ claims: { exp: nowS() - 31 } })), 'expired (beyond the 30 s leeway)');
      await refused(assertionFields(await assertion({ claims: { exp: nowS() + 61 * MINUTE } })), 'exp more than 60 minutes ahead');
      await accepted(assertionFields(await assertion({ claims: { exp: nowS() + 59 * MINUTE } })), 'exp 59 minutes ahead');
      await refused(assertionFields(await assertion({ claims: { nbf: nowS() + 5 * MINUTE } })), 'nbf in the future');
      await refused(assertionFields(await assertion({ claims: { iat: nowS() + 5 * MINUTE } })), 'iat in the future');
      await refused(assertionFields(await assertion({ claims: { iss: 'someone-else' } })), 'iss not the client');
      await refused(assertionFields(await assertion({ claims: { sub: 'someone-else' } })), 'sub not the client');
      await refused(assertionFields(await assertion(), { client_id: 'someone-else' }), 'client_id beside it differs');
      const unknown = await keyAssertion(key, 'no-such-client', url('revocation'), { now: nowS() });
      await refused(assertionFields(unknown), 'unknown client');
    });

    test('a jti is used once: the same assertion again is refused, even after the clock moved (JW-04)', async () => {
      const once = await assertion({ claims: { exp: nowS() + 10 * MINUTE } });
      await accepted(assertionFields(once));
      await refused(assertionFields(once), 'replayed at once');
      clock.advance(5 * MINUTE * 1000);
      await refused(assertionFields(once), 'replayed five minutes later');
      // The same jti in a new assertion is still the same jti.
      const jti = 'fixed-jti-' + nowS();
      await accepted(assertionFields(await assertion({ claims: { jti } })));
      await refused(assertionFields(await assertion({ claims: { jti } })), 'another assertion with a used jti');
    });

    test('the same assertion sent 12 times at once: exactly one is accepted (JW-04)', async () => {
      const once = await assertion();
      const statuses = await Promise.all(Array.from({ length: 12 }, () => revoke(assertionFields(once)).then((response) => response.status)));
      assert.deepEqual(statuses.sort(), [200, ...Array<number>(11).fill(401)]);
    });

    test('malformed requests: two methods at once is invalid_request; a bad type or a non-JWT is invalid_client (JW-07)', async () => {
      const { client: secretClient, secret } = await addClient(store());
      const good = await assertion();
      const both = await revoke(assertionFields(good), { authorization: basic(secretClient.clientId, secret) });
      assert.deepEqual([both.status, both.body.error], [400, 'invalid_request'], 'Basic and an assertion (RFC 6749 §2.3)');
      await refused({ ...assertionFields(good), client_id: secretClient.clientId, client_secret: secret }, 'client_secret and an assertion', { status: 400, error: 'invalid_request' });
      await refused({ client_assertion: good }, 'no client_assertion_type', { status: 400, error: 'invalid_request' });
      await refused({ client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer' }, 'no client_assertion', { status: 400, error: 'invalid_request' });
      await refused({ client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer', client_assertion: good }, 'another assertion type');
      await refused(assertionFields('not.a.jwt'), 'not a JWT');
      await refused(assertionFields('x'.repeat(5000)), 'too long');
    });

    test('a client registered for another method may not use an assertion, nor a private_key_jwt client a secret (JW-07)', async () => {
      const { client: secretClient, secret } = await addClient(store(), { tokenEndpointAuthMethod: 'client_secret_basic' });
      await refused(assertionFields(await secretAssertion(secret, secretClient.clientId, url('revocation'), { now: nowS() })), 'client_secret_basic client sends client_secret_jwt');
      const otherKey = await signingKey();
      const keyOfSecretClient = await addClient(store(), { tokenEndpointAuthMethod: 'client_secret_post', metadata: { jwks: { keys: [otherKey.publicJwk] } } });
      await refused(assertionFields(await keyAssertion(otherKey, keyOfSecretClient.client.clientId, url('revocation'), { now: nowS() })), 'client_secret_post client sends private_key_jwt');
    });

    test('client_secret_jwt: HS256 keyed by the secret; a wrong secret, another alg or a secret sealed under another key are refused (JW-08)', async () => {
      const { client, secret } = await addSecretJwtClient(store());
      const hs = (keyedBy: string, options = {}) => secretAssertion(keyedBy, client.clientId, url('revocation'), { now: nowS(), ...options });
      await accepted(assertionFields(await hs(secret)));
      await refused(assertionFields(await hs(`${secret}x`)), 'wrong secret');
      await refused(assertionFields(await hs(secret, { header: { alg: 'HS512' } })), 'HS512: only HS256 is allowed');
      await refused(assertionFields(unsecuredAssertion(client.clientId, url('revocation'), { now: nowS() })), 'alg none');
      const elsewhere = await addSecretJwtClient(store());
      await store().clients.update({ ...elsewhere.client, secretSealed: sealClientSecret(elsewhere.secret, 'another key-encryption key, 40 characters') });
      await refused(assertionFields(await secretAssertion(elsewhere.secret, elsewhere.client.clientId, url('revocation'), { now: nowS() })), 'sealed under another key');
      assert.ok(audit.of('client_auth.failed').some((event) => event.clientId === elsewhere.client.clientId && /does not open/.test(event.reason)));
    });

    test('jwks_uri: fetched once and cached; an unknown kid refetches once (key rotation), at most once per cooldown (JW-09)', async () => {
      const [first, second, third] = [await signingKey('ES256'), await signingKey('ES256'), await signingKey('ES256')];
      let keys = [first];
      served['/rotating'] = () => ({ status: 200, body: JSON.stringify({ keys: keys.map((k) => k.publicJwk) }) });
      const client = await addKeyClient(store(), { jwksUri: `${keysBase}/rotating` });
      const signed = (k: SigningKey) => keyAssertion(k, client.clientId, url('revocation'), { now: nowS() });
      await accepted(assertionFields(await signed(first)));
      await accepted(assertionFields(await signed(first)));
      assert.equal(fetched['/rotating'], 1, 'cached');
      clock.advance(60_000);
      keys = [first, second];
      await accepted(assertionFields(await signed(second)), 'rotated: the unknown kid made it fetch again');
      assert.equal(fetched['/rotating'], 2);
      keys = [first, second, third];
      await refused(assertionFields(await signed(third)), 'another new kid within the cooldown: not fetched again');
      await refused(assertionFields(await signed(await signingKey('ES256'))), 'nor for an attacker\'s made-up kid');
      assert.equal(fetched['/rotating'], 2, 'unknown kids cannot make it fetch per request');
      clock.advance(60_000);
      await accepted(assertionFields(await signed(third)), 'after the cooldown');
      assert.equal(fetched['/rotating'], 3);
    });

    test('jwks_uri serving garbage, too much, an error, private keys, or nothing in time: invalid_client, never a 5xx (JW-09)', async () => {
      const k = await signingKey('ES256');
      served['/garbage'] = () => ({ status: 200, body: '<html>' });
      served['/large'] = () => ({ status: 200, body: JSON.stringify({ keys: [k.publicJwk], padding: 'x'.repeat(10_000) }) });
      served['/error'] = () => ({ status: 500, body: '{}' });
      served['/private'] = () => ({ status: 200, body: JSON.stringify({ keys: [{ ...k.publicJwk, d: 'AAAA' }] }) });
      for (const path of ['/garbage', '/large', '/error', '/private', '/slow']) {
        const client = await addKeyClient(store(), { jwksUri: `${keysBase}${path}` });
        const response = await refused(assertionFields(await keyAssertion(k, client.clientId, url('revocation'), { now: nowS() })), path);
        assert.equal(response.body.error_description, 'Client authentication failed.');
      }
      const reasons = audit.of('client_auth.failed').map((event) => event.reason);
      for (const reason of [/did not answer with JSON/, /more than 8192 bytes/, /answered 500/, /private or symmetric/, /did not answer within 300 ms/]) assert.ok(reasons.some((r) => reason.test(r)), String(reason));
    });
  });
}
