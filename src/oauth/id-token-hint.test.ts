// What makes a JWT of ours an ID token, rule by rule (idTokenRefusal); test/http/id-token-hint-kinds.test.ts
// has the real tokens at the authorization and logout endpoints.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idTokenRefusal } from './id-token-hint.ts';

const ID_TOKEN = { iss: 'https://op.example/uas', sub: 'user-1', aud: 'client-1', azp: 'client-1', exp: 2_000_000_000, iat: 1_999_999_000, auth_time: 1_999_999_000, session_index: '_ab' };

test('an ID token as we sign it passes, with typ JWT in any spelling RFC 7515 §4.1.9 allows, or none', () => {
  for (const typ of ['JWT', 'jwt', 'application/jwt', 'Application/JWT', undefined]) assert.equal(idTokenRefusal({ claims: ID_TOKEN, typ }), undefined, String(typ));
  assert.equal(idTokenRefusal({ claims: { ...ID_TOKEN, aud: ['client-1', 'rs-1'] }, typ: 'JWT' }), undefined);
});

test('any other typ is refused: an RFC 9068 access token or another explicitly typed JWT (RFC 8725 §3.11)', () => {
  for (const typ of ['at+jwt', 'application/at+jwt', 'AT+JWT', 'logout+jwt', 'secevent+jwt', 'JOSE', '']) assert.equal(idTokenRefusal({ claims: ID_TOKEN, typ }), `its typ is ${typ}`, typ);
});

test('the claims of an access token are refused even under typ JWT (RFC 9068 §2.2)', () => {
  assert.equal(idTokenRefusal({ claims: { ...ID_TOKEN, client_id: 'client-1' }, typ: 'JWT' }), 'it is an access token');
  assert.equal(idTokenRefusal({ claims: { ...ID_TOKEN, scope: 'openid' }, typ: 'JWT' }), 'it is an access token');
});

test('the claims OIDC Core §2 requires, and azp among the audiences (what a signed UserInfo response lacks)', () => {
  const without = (name: string) => Object.fromEntries(Object.entries(ID_TOKEN).filter(([key]) => key !== name));
  assert.equal(idTokenRefusal({ claims: without('sub'), typ: 'JWT' }), 'it has no subject');
  assert.equal(idTokenRefusal({ claims: without('exp'), typ: 'JWT' }), 'it has no exp or iat');
  assert.equal(idTokenRefusal({ claims: without('iat'), typ: 'JWT' }), 'it has no exp or iat');
  for (const claims of [without('azp'), without('aud'), { ...ID_TOKEN, azp: 'client-2' }, { ...ID_TOKEN, azp: ['client-1'] }]) {
    assert.equal(idTokenRefusal({ claims, typ: 'JWT' }), 'it names no authorized party (azp) among its audiences', JSON.stringify(claims));
  }
});
