// The JWT access token's own rules, below HTTP (test/http/jwt-access-tokens.test.ts has the rest):
// the registration of the two client metadata keys, and the protected claims that the policy's
// extra claims cannot set.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { InvalidClientMetadata, parseClientMetadata } from './client-metadata.ts';
import { signAccessToken, type AccessTokenContent } from './jwt-access-token.ts';

/** The header and payload of a compact JWS (jose is for src/crypto only; this reads, it does not check). */
function decode(token: string): { header: unknown; payload: Record<string, unknown> } {
  const [header, payload] = token.split('.').slice(0, 2).map((part) => JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as Record<string, unknown>);
  return { header, payload: payload! };
}

/** An ES256 key pair as the key ring holds one (a WebCrypto key). */
async function es256() {
  return crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign', 'verify']);
}

const base = { client_name: 'Resource server', resource_server: true };

describe('access_token_format and access_token_signed_response_alg (client metadata)', () => {
  test('are kept in metadata as registered', () => {
    const settings = parseClientMetadata({ ...base, access_token_format: 'jwt', access_token_signed_response_alg: 'ES256' });
    assert.deepEqual(settings.metadata, { resource_server: true, access_token_format: 'jwt', access_token_signed_response_alg: 'ES256' });
  });

  test('are for resource servers only: they describe the tokens meant for one', () => {
    for (const key of ['access_token_format', 'access_token_signed_response_alg']) {
      const value = key === 'access_token_format' ? 'jwt' : 'ES256';
      assert.throws(() => parseClientMetadata({ client_name: 'App', redirect_uris: ['https://app.example/cb'], [key]: value }), (error: unknown) => error instanceof InvalidClientMetadata && error.message === `${key}: is for resource servers only (resource_server: true): it describes the access tokens meant for one`);
    }
  });

  test('refuse an unknown format, none, an algorithm gatehouse does not sign with, and a non-string', () => {
    const refused = (doc: Record<string, unknown>, message: RegExp) => assert.throws(() => parseClientMetadata({ ...base, ...doc }), (error: unknown) => error instanceof InvalidClientMetadata && message.test(error.message));
    refused({ access_token_format: 'JWT' }, /^access_token_format: must be one of opaque, jwt$/);
    refused({ access_token_format: true }, /^access_token_format: must be one of opaque, jwt$/);
    refused({ access_token_signed_response_alg: 'none' }, /^access_token_signed_response_alg: "none" is refused/);
    refused({ access_token_signed_response_alg: 'HS256' }, /^access_token_signed_response_alg: "HS256" is not an algorithm gatehouse signs with; use one of RS256, PS256, ES256, EdDSA$/);
    refused({ access_token_signed_response_alg: ['RS256'] }, /^access_token_signed_response_alg: \["RS256"\] is not an algorithm/);
  });
});

describe('signAccessToken', () => {
  const content: AccessTokenContent = {
    issuer: 'https://id.example.com/uas',
    audiences: ['rs-1'],
    subject: 'user-1',
    clientId: 'app-1',
    scope: 'openid rs-1',
    jti: 'jti-1',
    issuedAt: 1_800_000_000_000,
    expiresAt: 1_800_000_300_000,
    authentication: undefined,
  };

  test('policy claims are added, but never replace or add a protected claim', async () => {
    const { privateKey, publicKey } = await es256();
    const key = { kid: 'k1', alg: 'ES256' as const, privateKey, createdAt: 0 };
    const extra = { department: 'R&D', sub: 'someone-else', aud: 'evil', scope: 'admin', acr: 'loa-4', auth_time: 1, amr: ['hwk'], nonce: 'n', azp: 'x', active: true, token_type: 'x', session_index: 's', iss: 'x', exp: 9e9, iat: 0, jti: 'j', client_id: 'c' };
    const token = await signAccessToken(key, content, extra);
    const { header, payload } = decode(token);
    assert.deepEqual(header, { alg: 'ES256', kid: 'k1', typ: 'at+jwt' });
    assert.deepEqual(payload, { department: 'R&D', iss: content.issuer, exp: 1_800_000_300, aud: 'rs-1', sub: 'user-1', client_id: 'app-1', iat: 1_800_000_000, jti: 'jti-1', scope: 'openid rs-1' });
    const [signingInput, signature] = [token.slice(0, token.lastIndexOf('.')), token.slice(token.lastIndexOf('.') + 1)];
    assert.equal(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, publicKey, Buffer.from(signature, 'base64url'), Buffer.from(signingInput)), true);
  });

  test('a user token carries auth_time, amr and acr; acr is left out when there is none', async () => {
    const { privateKey } = await es256();
    const key = { kid: 'k1', alg: 'ES256' as const, privateKey, createdAt: 0 };
    const withAcr = decode(await signAccessToken(key, { ...content, authentication: { authTime: 1_799_999_999_000, amr: ['pwd'], acr: 'loa-2' } }));
    assert.deepEqual([withAcr.payload.auth_time, withAcr.payload.amr, withAcr.payload.acr], [1_799_999_999, ['pwd'], 'loa-2']);
    const withoutAcr = decode(await signAccessToken(key, { ...content, authentication: { authTime: 1_799_999_999_000, amr: ['pwd'], acr: undefined } }, { acr: 'forged' }));
    assert.equal('acr' in withoutAcr.payload, false);
  });
});
