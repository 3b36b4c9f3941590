// The JWT access token's own rules, below HTTP (test/http/jwt-access-tokens.test.ts has the rest):
// the registration of the two client metadata keys, and the protected claims that the policy's
// extra claims cannot set.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, jwtVerify } from 'jose';
import { InvalidClientMetadata, parseClientMetadata } from './client-metadata.ts';
import { signAccessToken, type AccessTokenContent } from './jwt-access-token.ts';

const base = { client_name: 'Resource server', grant_types: [] };

describe('access_token_format and access_token_signed_response_alg (client metadata)', () => {
  test('are kept in metadata as registered', () => {
    const settings = parseClientMetadata({ ...base, access_token_format: 'jwt', access_token_signed_response_alg: 'ES256' });
    assert.deepEqual(settings.metadata, { access_token_format: 'jwt', access_token_signed_response_alg: 'ES256' });
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
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const key = { kid: 'k1', alg: 'ES256' as const, privateKey, createdAt: 0 };
    const extra = { department: 'R&D', sub: 'someone-else', aud: 'evil', scope: 'admin', acr: 'loa-4', auth_time: 1, amr: ['hwk'], nonce: 'n', azp: 'x', active: true, token_type: 'x', session_index: 's', iss: 'x', exp: 9e9, iat: 0, jti: 'j', client_id: 'c' };
    const token = await signAccessToken(key, content, extra);
    assert.deepEqual(decodeProtectedHeader(token), { alg: 'ES256', kid: 'k1', typ: 'at+jwt' });
    assert.deepEqual(decodeJwt(token), { department: 'R&D', iss: content.issuer, exp: 1_800_000_300, aud: 'rs-1', sub: 'user-1', client_id: 'app-1', iat: 1_800_000_000, jti: 'jti-1', scope: 'openid rs-1' });
    await jwtVerify(token, await exportJWK(publicKey).then((jwk) => ({ ...jwk, alg: 'ES256' })), { typ: 'at+jwt', currentDate: new Date(content.issuedAt) });
  });

  test('a user token carries auth_time, amr and acr; acr is left out when there is none', async () => {
    const { privateKey } = await generateKeyPair('ES256');
    const key = { kid: 'k1', alg: 'ES256' as const, privateKey, createdAt: 0 };
    const withAcr = decodeJwt(await signAccessToken(key, { ...content, authentication: { authTime: 1_799_999_999_000, amr: ['pwd'], acr: 'loa-2' } }));
    assert.deepEqual([withAcr.auth_time, withAcr.amr, withAcr.acr], [1_799_999_999, ['pwd'], 'loa-2']);
    const withoutAcr = decodeJwt(await signAccessToken(key, { ...content, authentication: { authTime: 1_799_999_999_000, amr: ['pwd'], acr: undefined } }, { acr: 'forged' }));
    assert.equal('acr' in withoutAcr, false);
  });
});
