// The policy document's one validation (src/domain/policy.ts): what it accepts, and that each
// rule it refuses names the field at fault.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePolicyDocument, policyDocumentJson, PolicyDocumentError, PROTECTED_CLAIMS } from './policy.ts';

const ISSUE_EXAMPLE = {
  name: 'staff-apps',
  access: { groups: ['Staff'], organizations: ['5b0e1f3c-9d7a-4f61-8d3e-2a9c4b1e7f00'], include_sub_organizations: true },
  claims: [
    { claim: 'department', from: 'attribute:department', in: ['id_token', 'userinfo'], scope: 'profile' },
    { claim: 'groups', from: 'groups' },
    { claim: 'org', from: 'organization.technicalName' },
    { claim: 'tenant', value: 'acme' },
  ],
};

function refusedAt(doc: unknown): string {
  try {
    parsePolicyDocument(doc);
  } catch (error) {
    assert.ok(error instanceof PolicyDocumentError, String(error));
    return error.field;
  }
  assert.fail('the document was accepted');
}

describe('policy documents', () => {
  test('the issue example is accepted and round-trips to the same wire form', () => {
    const doc = parsePolicyDocument(ISSUE_EXAMPLE);
    assert.deepEqual(doc.claims.map((c) => [c.claim, c.source.type, c.targets.length, c.scope]), [
      ['department', 'attribute', 2, 'profile'],
      ['groups', 'groups', 4, undefined],
      ['org', 'organization', 4, undefined],
      ['tenant', 'value', 4, undefined],
    ]);
    assert.deepEqual(policyDocumentJson(doc), ISSUE_EXAMPLE);
  });

  test('every profile and organization source is known by its wire name', () => {
    const froms = ['user.id', 'user.username', 'user.givenName', 'user.familyName', 'user.email', 'organization.id', 'organization.technicalName', 'organization.name', 'groups', 'attribute:x'];
    const doc = parsePolicyDocument({ name: 'p', claims: froms.map((from, i) => ({ claim: `c${i}`, from })) });
    assert.deepEqual((policyDocumentJson(doc).claims as { from: string }[]).map((c) => c.from), froms);
  });

  test('each protected claim is refused, naming the field', () => {
    for (const claim of PROTECTED_CLAIMS) assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'ok', value: 'v' }, { claim, value: 'v' }] }), 'claims[1].claim');
    assert.deepEqual([...PROTECTED_CLAIMS].filter((c) => ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'amr', 'acr', 'session_index', 'nonce', 'azp', 'jti', 'scope', 'client_id', 'active', 'token_type', 'at_hash', 'nbf', 'token_audiences'].includes(c)).length, 19);
  });

  test('bad documents are refused with the field at fault', () => {
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x' }, { claim: 'b', value: 'y' }, { claim: 'c', from: 'user.password' }] }), 'claims[2].from');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x', from: 'groups' }] }), 'claims[0].from');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a' }] }), 'claims[0].from');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x' }, { claim: 'a', from: 'groups' }] }), 'claims[1].claim');
    assert.equal(refusedAt({ name: 'p', extra: 1 }), 'extra');
    assert.equal(refusedAt({ name: 'p', access: { groups: ['a'], roles: [] } }), 'access.roles');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x', colour: 'red' }] }), 'claims[0].colour');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x', in: ['id_token', 'cookie'] }] }), 'claims[0].in[1]');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x', single: true }] }), 'claims[0].single');
    assert.equal(refusedAt({ name: 'p', claims: [{ claim: 'a', value: 'x', scope: 'two words' }] }), 'claims[0].scope');
    assert.equal(refusedAt({ name: 'p', access: { organizations: ['not-a-uuid'] } }), 'access.organizations[0]');
    assert.equal(refusedAt({ name: 'p', access: {} }), 'access');
    assert.equal(refusedAt({ name: 'p', access: { attributes: { dept: [] } } }), 'access.attributes.dept');
    assert.equal(refusedAt({ name: 'has space' }), 'name');
    assert.equal(refusedAt({ name: 'x'.repeat(101) }), 'name');
    assert.equal(refusedAt({ name: 'p', claims: Array.from({ length: 51 }, (_, i) => ({ claim: `c${i}`, value: 'v' })) }), 'claims');
    assert.equal(refusedAt({ name: 'p', access: { groups: Array.from({ length: 101 }, (_, i) => `g${i}`) } }), 'access.groups');
    assert.equal(refusedAt([]), '(document)');
  });
  test('minimum_authentication (issue 24): one of the requirements, kept in the wire form; anything else refused naming it', () => {
    const doc = parsePolicyDocument({ name: 'mfa', minimum_authentication: 'multi' });
    assert.equal(doc.minimumAuthentication, 'multi');
    assert.deepEqual(policyDocumentJson(doc), { name: 'mfa', claims: [], minimum_authentication: 'multi' });
    assert.deepEqual(parsePolicyDocument(policyDocumentJson(doc)), doc);
    assert.equal(parsePolicyDocument({ name: 'none' }).minimumAuthentication, undefined);
    assert.equal('minimum_authentication' in policyDocumentJson(parsePolicyDocument({ name: 'none' })), false);
    for (const bad of ['MFA', 'strong', 2, null, ['multi']]) {
      assert.throws(() => parsePolicyDocument({ name: 'p', minimum_authentication: bad }), (error: unknown) => error instanceof PolicyDocumentError && error.field === 'minimum_authentication', String(bad));
    }
  });
});
