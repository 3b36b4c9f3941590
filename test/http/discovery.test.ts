import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`discovery, JWKS and health on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    test('both well-known paths serve the same metadata, whose issuer is the URL it was fetched under (DISC-01/02)', async () => {
      const oidc = await fetch(`${server.url}/uas/.well-known/openid-configuration`);
      assert.equal(oidc.status, 200);
      assert.match(oidc.headers.get('content-type') ?? '', /^application\/json/);
      const metadata = (await oidc.json()) as Record<string, unknown>;
      const rfc8414 = (await (await fetch(`${server.url}/uas/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
      assert.deepEqual(rfc8414, metadata);
      assert.equal(metadata.issuer, `${server.url}/uas`);
      assert.equal(`${metadata.issuer}/.well-known/openid-configuration`, oidc.url);
    });

    test('metadata lists the endpoints and capabilities we implement (DISC-04..13)', async () => {
      const m = (await (await fetch(`${server.url}/uas/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      const base = `${server.url}/uas/oauth2`;
      assert.equal(m.authorization_endpoint, `${base}/authorization`);
      assert.equal(m.token_endpoint, `${base}/token`);
      assert.equal(m.userinfo_endpoint, `${base}/userinfo`);
      assert.equal(m.introspection_endpoint, `${base}/introspection`);
      assert.equal(m.revocation_endpoint, `${base}/revocation`);
      assert.equal(m.jwks_uri, `${base}/metadata.jwks`);
      assert.deepEqual(m.response_types_supported, ['code']);
      assert.deepEqual(m.subject_types_supported, ['public']);
      assert.deepEqual(m.id_token_signing_alg_values_supported, ['RS256']);
      assert.deepEqual(m.code_challenge_methods_supported, ['S256', 'plain']);
      assert.ok((m.grant_types_supported as string[]).includes('authorization_code'));
      assert.ok((m.grant_types_supported as string[]).includes('refresh_token'));
      assert.ok((m.scopes_supported as string[]).includes('openid'));
      for (const claim of ['session_index', 'amr', 'acr', 'auth_time', 'sub']) assert.ok((m.claims_supported as string[]).includes(claim), claim);
      assert.ok((m.token_endpoint_auth_methods_supported as string[]).includes('client_secret_basic'));
      assert.ok((m.token_endpoint_auth_methods_supported as string[]).includes('client_secret_post'));
      assert.equal(m.request_parameter_supported, false);
      assert.equal(m.request_uri_parameter_supported, false);
      assert.deepEqual(m.ui_locales_supported, ['en', 'fi', 'sv']);
      assert.ok(Array.isArray(m.display_values_supported));
    });

    test('JWKS has one public RS256 key of 2048 bits or more with kid, use and alg (JWKS-01..05)', async () => {
      const response = await fetch(`${server.url}/uas/oauth2/metadata.jwks`);
      assert.equal(response.status, 200);
      const { keys } = (await response.json()) as { keys: Record<string, string>[] };
      assert.equal(keys.length, 1);
      const [key] = keys;
      assert.equal(key!.kty, 'RSA');
      assert.equal(key!.alg, 'RS256');
      assert.equal(key!.use, 'sig');
      assert.ok(key!.kid);
      assert.ok(Buffer.from(key!.n!, 'base64url').length >= 256);
      for (const member of ['d', 'p', 'q', 'dp', 'dq', 'qi', 'k']) assert.equal(key![member], undefined, member);
    });

    test('liveness and readiness answer 200 while the store is up', async () => {
      assert.equal((await fetch(`${server.url}/health/live`)).status, 200);
      const ready = await fetch(`${server.url}/health/ready`);
      assert.equal(ready.status, 200);
      assert.deepEqual(await ready.json(), { status: 'ok' });
    });

    test('an unknown path is a JSON 404, not a 5xx', async () => {
      const response = await fetch(`${server.url}/uas/nothing-here`);
      assert.equal(response.status, 404);
      assert.equal(((await response.json()) as { error: string }).error, 'not_found');
    });
  });
}
