/**
 * JOSE algorithm confusion in the only JWTs gatehouse accepts from outside: `id_token_hint` at the
 * authorization and logout endpoints. Verification takes RS256 against our own JWKS and nothing
 * else (jose CVE-2022-36083, the classic alg:none and HS256-with-the-public-key attacks).
 */
import assert from 'node:assert/strict';
import { createHmac, createPublicKey } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm } from '../helpers/fixtures.ts';
import { assertErrorPage, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const b64 = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');

for (const db of DATABASES.slice(0, 1)) {
  describe(`id_token_hint algorithm confusion on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    let user: User;
    let forged: Record<string, string>;
    before(async () => {
      server = await startServer(db);
      ({ client } = await createTestClient(server.gatehouse.store));
      user = await createTestUser(server.gatehouse.store, { password: 'correct horse battery' });
      const now = Math.floor(Date.now() / 1000);
      const claims = { iss: server.issuer, sub: user.id, aud: client.clientId, iat: now, exp: now + 600 };
      const jwks = (await (await fetch(`${server.url}/uas/oauth2/metadata.jwks`)).json()) as { keys: Record<string, string>[] };
      const jwk = jwks.keys[0]!;
      const publicPem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' }).toString();
      const hs256 = (secret: string) => {
        const input = `${b64({ alg: 'HS256', kid: jwk.kid, typ: 'JWT' })}.${b64(claims)}`;
        return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
      };
      forged = {
        'alg none': `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
        'alg None, with a signature': `${b64({ alg: 'None', kid: jwk.kid })}.${b64(claims)}.c2ln`,
        'HS256 keyed by our public key (PEM)': hs256(publicPem),
        'HS256 keyed by our public key (JWK n)': hs256(jwk.n!),
        'a JWE with PBES2 and a huge p2c': `${b64({ alg: 'PBES2-HS512+A256KW', enc: 'A256GCM', p2c: 2_000_000_000, p2s: 'c2FsdHNhbHQ' })}.${b64('k')}.${b64('iv')}.${b64('ct')}.${b64('tag')}`,
        'RS256 header over an unsigned body': `${b64({ alg: 'RS256', kid: jwk.kid })}.${b64(claims)}.`,
      };
    });
    after(async () => server.close());

    test('at the authorization endpoint every forged hint is invalid_request, never a silent login', async () => {
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid' }, { username: user.username, password: 'correct horse battery' });
      for (const [name, token] of Object.entries(forged)) {
        const started = Date.now();
        const response = await browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid', prompt: 'none', id_token_hint: token, state: 'st' }), jar);
        assertErrorRedirect(response, { redirectUri: client.redirectUris[0]!, error: 'invalid_request', state: 'st', issuer: server.issuer });
        assert.ok(Date.now() - started < 2000, `${name}: answered quickly (no PBES2 work)`);
      }
    });

    test('at the logout endpoint every forged hint gets the error page and ends nothing', async () => {
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid' }, { username: user.username, password: 'correct horse battery' });
      for (const token of Object.values(forged)) await assertErrorPage(await browse(`${server.url}/uas/oauth2/logout?id_token_hint=${encodeURIComponent(token)}`, jar), 'invalid_request');
      const silent = await browse(authorizationUrl(server.url, { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid', prompt: 'none' }), jar);
      assert.equal(silent.status, 302);
      assert.ok(new URL(silent.headers.get('location')!).searchParams.get('code'), 'the session survived every forged logout');
    });
  });
}
