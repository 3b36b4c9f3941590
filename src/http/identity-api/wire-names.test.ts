/**
 * The wire names are written once (wire-names.ts): what the API shows a client, the client can
 * send back and filter by, and the error texts use the same names.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { FastifyRequest } from 'fastify';
import type { Organization } from '../../domain/organization.ts';
import type { User } from '../../domain/user.ts';
import { IdentityError } from '../../identity/errors.ts';
import { toApiError } from './errors.ts';
import { organizationEntity, userEntity, type Entity, type WireAttributes } from './representation.ts';
import { organizationFilters, userFilters } from './wire-filters.ts';
import { newOrganization, newUser, organizationChanges, userChanges } from './wire-input.ts';
import { ORGANIZATION_ENTITY_NAME, ORGANIZATION_TYPE_ALIAS, ORGANIZATION_WIRE_NAMES, USER_CN, USER_WIRE_NAMES } from './wire-names.ts';

const userId = '0b5d6a2e-7c1f-4e0a-9d3b-2f6c8e1a4b7d';
const organizationId = '4e2f8c1a-9b3d-4a6e-8f0c-1d7b5e3a2c9f';
const parentId = '9c1e3a5b-7d2f-4b8e-a0c6-3f5d7b9e1a2c';

const user: User = {
  id: userId,
  username: 'ada',
  status: 'enabled',
  givenName: 'Ada',
  familyName: 'Lovelace',
  email: 'ada@example.com',
  emailVerified: false,
  organizationId,
  attributes: { mobile: ['+358'] },
  createdAt: 0,
  updatedAt: 0,
};

const organization: Organization = {
  id: organizationId,
  parentId,
  technicalName: 'acme',
  friendlyName: 'Acme',
  type: 'company',
  virtual: true,
  attributes: { vatnumber: ['12345'] },
  createdAt: 0,
  updatedAt: 0,
};

/** What a client read, as it would send it back: every attribute but the computed ones. */
function sentBack(entity: Entity, computed: string): WireAttributes {
  return Object.fromEntries(entity.attributes.filter(([name]) => name !== computed));
}

/** The same, as a listing's query string (one value each) with the id. */
function asFilters(entity: Entity, computed: string): Record<string, string> {
  return { id: entity.id, ...Object.fromEntries(entity.attributes.filter(([name]) => name !== computed).map(([name, values]) => [name, values[0]!])) };
}

describe('identity API wire names', () => {
  test('every user field shown round-trips through create and update input', () => {
    const attributes = sentBack(userEntity(user), USER_CN);
    const { id: _id, createdAt: _c, updatedAt: _u, ...fields } = user;
    assert.deepEqual(newUser(attributes), { ...fields, password: undefined });
    assert.deepEqual(userChanges(attributes, userId), { ...fields, password: undefined });
  });

  test('every organization field shown round-trips through create and update input', () => {
    const attributes = sentBack(organizationEntity(organization, 'acme'), ORGANIZATION_ENTITY_NAME);
    const { id: _id, createdAt: _c, updatedAt: _u, ...fields } = organization;
    assert.deepEqual(newOrganization(attributes), fields);
    assert.deepEqual(organizationChanges(attributes, organizationId), fields);
  });

  test('every user attribute shown is a filter on the field it shows', () => {
    assert.deepEqual(userFilters(asFilters(userEntity(user), USER_CN)), {
      id: userId,
      username: 'ada',
      status: 'enabled',
      givenName: 'Ada',
      familyName: 'Lovelace',
      email: 'ada@example.com',
      emailVerified: 'false',
      organizationId,
      mobile: '+358',
    });
  });

  test('every organization attribute shown but virtual is a filter in the store’s names', () => {
    const { virtual: _virtual, ...query } = asFilters(organizationEntity(organization, 'acme'), ORGANIZATION_ENTITY_NAME);
    const { organizationClass: _alias, ...withoutAlias } = query;
    const expected = { id: organizationId, technicalName: 'acme', friendlyName: 'Acme', organizationType: 'company', parentOrganizationId: parentId, vatnumber: '12345' };
    assert.deepEqual(organizationFilters(withoutAlias), expected);
    assert.throws(() => organizationFilters(query), /organizationClass is given twice/);
  });

  test('the use cases’ error texts name each field by the wire name the client sees', () => {
    const shown = new Set([...userEntity(user).attributes, ...organizationEntity(organization, 'acme').attributes].map(([name]) => name));
    const messages = [...Object.entries(USER_WIRE_NAMES), ...Object.entries(ORGANIZATION_WIRE_NAMES)]
      .filter(([field]) => field !== 'id' && field !== 'password')
      .map(([field, wire]) => {
        assert.ok(shown.has(wire), `${wire} is shown`);
        // Only the IdentityError branch is taken, which does not read the request.
        return toApiError(new IdentityError('invalid_argument', `${field} is required`, field), {} as FastifyRequest).message;
      });
    assert.deepEqual(messages, [
      'login is required',
      'status is required',
      'firstname is required',
      'surname is required',
      'email is required',
      'emailVerified is required',
      'organization is required',
      'technicalName is required',
      'friendlyName is required',
      'organizationType is required',
      'parentOrganizationId is required',
      'virtual is required',
    ]);
  });

  test('the modules that read and write the wire spell no wire name of their own', () => {
    const renamed = [...Object.entries(USER_WIRE_NAMES), ...Object.entries(ORGANIZATION_WIRE_NAMES)].filter(([field, wire]) => field !== wire).map(([, wire]) => wire);
    const names = [...renamed, ORGANIZATION_TYPE_ALIAS, USER_CN, ORGANIZATION_ENTITY_NAME];
    for (const module of ['errors.ts', 'representation.ts', 'wire-filters.ts', 'wire-input.ts']) {
      // The entity type `organization` is a word of its own, not the user's attribute.
      const source = readFileSync(new URL(module, import.meta.url), 'utf8').replaceAll(`'user' | 'organization'`, '').replaceAll(`type: 'organization'`, '');
      assert.deepEqual(names.filter((name) => source.includes(`'${name}'`)), [], module);
    }
  });
});
