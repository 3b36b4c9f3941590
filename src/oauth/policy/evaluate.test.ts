// The policy evaluation (src/oauth/policy/evaluate.ts) on facts given directly: every access rule
// and every claim source, target and scope gate. The HTTP suite test/http/policies.test.ts runs
// the same through a real server on every database.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parsePolicyDocument } from '../../domain/policy.ts';
import type { UserProfile } from '../../domain/user.ts';
import type { PolicySubject } from '../../storage/ports.ts';
import { policyAllows, policyClaims, type PolicyFacts } from './evaluate.ts';

const ROOT = '11111111-1111-4111-8111-111111111111';
const CHILD = '22222222-2222-4222-8222-222222222222';
const USER: UserProfile = { id: 'u1', username: 'alice', status: 'enabled', givenName: 'Alice', familyName: undefined, email: 'alice@example.com', emailVerified: false, organizationId: CHILD, createdAt: 0, updatedAt: 0 };
const SUBJECT: PolicySubject = {
  policy: undefined,
  attributes: { department: ['Sales', 'Legal'], level: ['3'] },
  groups: ['Staff', 'Testers'],
  organizations: [
    { id: CHILD, technicalName: 'acme-fi', friendlyName: 'Acme Finland' },
    { id: ROOT, technicalName: 'acme', friendlyName: 'Acme' },
  ],
};
const facts = (document: unknown, subject: PolicySubject = SUBJECT): PolicyFacts => ({ document: parsePolicyDocument(document), subject });

describe('policy access rules', () => {
  test('no policy, or a policy without access rules, lets everyone in; a policy that is not stored lets no one in', () => {
    assert.equal(policyAllows(undefined), true);
    assert.equal(policyAllows(facts({ name: 'p' })), true);
    assert.equal(policyAllows({ document: undefined, subject: SUBJECT }), false);
  });

  test('groups match case-insensitively; any one rule is enough', () => {
    assert.equal(policyAllows(facts({ name: 'p', access: { groups: ['staff'] } })), true);
    assert.equal(policyAllows(facts({ name: 'p', access: { groups: ['Admins'] } })), false);
    assert.equal(policyAllows(facts({ name: 'p', access: { groups: ['Admins'], attributes: { level: ['3'] } } })), true);
  });

  test('organizations: the user\'s own, or with include_sub_organizations an organization above it', () => {
    assert.equal(policyAllows(facts({ name: 'p', access: { organizations: [CHILD] } })), true);
    assert.equal(policyAllows(facts({ name: 'p', access: { organizations: [ROOT] } })), false);
    assert.equal(policyAllows(facts({ name: 'p', access: { organizations: [ROOT], include_sub_organizations: true } })), true);
    assert.equal(policyAllows(facts({ name: 'p', access: { organizations: [ROOT], include_sub_organizations: true } }, { ...SUBJECT, organizations: [] })), false);
  });

  test('attributes: the user holds one of the listed values', () => {
    assert.equal(policyAllows(facts({ name: 'p', access: { attributes: { department: ['Legal', 'HR'] } } })), true);
    assert.equal(policyAllows(facts({ name: 'p', access: { attributes: { department: ['HR'] } } })), false);
    assert.equal(policyAllows(facts({ name: 'p', access: { attributes: { unknown: ['x'] } } })), false);
  });
});

describe('policy claim mappings', () => {
  const document = {
    name: 'p',
    claims: [
      { claim: 'department', from: 'attribute:department', in: ['id_token', 'userinfo'], scope: 'profile' },
      { claim: 'level', from: 'attribute:level', single: true },
      { claim: 'missing', from: 'attribute:none' },
      { claim: 'groups', from: 'groups' },
      { claim: 'uid', from: 'user.id' },
      { claim: 'login', from: 'user.username' },
      { claim: 'first', from: 'user.givenName' },
      { claim: 'last', from: 'user.familyName' },
      { claim: 'mail', from: 'user.email', in: ['introspection'] },
      { claim: 'org_id', from: 'organization.id' },
      { claim: 'org', from: 'organization.technicalName' },
      { claim: 'org_name', from: 'organization.name' },
      { claim: 'tenant', value: 'acme' },
    ],
  };

  test('each source, with targets and the scope gate', () => {
    const common = { level: '3', groups: ['Staff', 'Testers'], uid: 'u1', login: 'alice', first: 'Alice', org_id: CHILD, org: 'acme-fi', org_name: 'Acme Finland', tenant: 'acme' };
    assert.deepEqual(policyClaims(facts(document), USER, 'userinfo', ['openid', 'profile']), { department: ['Sales', 'Legal'], ...common });
    assert.deepEqual(policyClaims(facts(document), USER, 'userinfo', ['openid']), common);
    assert.deepEqual(policyClaims(facts(document), USER, 'introspection', ['openid', 'profile']), { ...common, mail: 'alice@example.com' });
    assert.deepEqual(policyClaims(facts(document), USER, 'access_token', ['openid', 'profile']), common);
  });

  test('no organization and no policy leave those claims out', () => {
    const { org_id: _a, org: _b, org_name: _c, ...rest } = policyClaims(facts(document), USER, 'access_token', []);
    assert.deepEqual(policyClaims(facts(document, { ...SUBJECT, organizations: [] }), USER, 'access_token', []), rest);
    assert.deepEqual(policyClaims(undefined, USER, 'id_token', ['profile']), {});
  });
});
