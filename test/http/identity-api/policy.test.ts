/**
 * Who may call the identity API with a user's bearer token is the API client's authorization
 * policy (issue 13, item 5; docs/identity-api.md; docs/decisions.md PO11–PO15): the seeded
 * `identity-api` policy (members of GATEHOUSE_API_GROUP) until an administrator changes it or
 * attaches another policy to the API client, seen at the next request on a running server.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGroup, addMember } from '../../../src/identity/groups.ts';
import { cryptoRandom } from '../../../src/lib/random.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { updateClient } from '../../../src/oauth/client-registration.ts';
import { createPolicy, deletePolicy, getPolicy, updatePolicy } from '../../../src/oauth/policy/manage.ts';
import { addClient, addUser, basic, postForm } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import { anOrganization, unique } from '../../helpers/store.ts';
import { accessToken, assertCleanError, call, startApiServer } from './helpers.ts';
import { AS_OPERATOR } from '../../helpers/authority.ts';

const LIST = '/2.0/users/';
const GROUP = 'Identity API Users';
const SEEDED = { name: 'identity-api', access: { groups: [GROUP] } };

function refusal(policy: string): string {
  return `The identity API's authorization policy ${JSON.stringify(policy)} does not allow the token's user.`;
}

for (const db of DATABASES) {
  describe(`the identity API's authorization policy on ${db.name}`, () => {
    let server: RunningServer & { apiClientId: string };
    const policyDeps = () => ({ policies: server.gatehouse.store.policies, clock: systemClock });
    before(async () => {
      server = await startApiServer(db);
      await createGroup({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { name: GROUP }, AS_OPERATOR);
    });
    after(async () => server.close());

    async function member() {
      const user = await addUser(server.gatehouse.store);
      await addMember(server.gatehouse.store, GROUP, user.id, AS_OPERATOR);
      return user;
    }

    /** The status and, for a 403, the message of a bearer call to the API with a token of `user`. */
    async function bearerCall(token: string): Promise<{ status: number; message: string | undefined }> {
      const response = await call(server, 'GET', LIST, { authorization: `Bearer ${token}` });
      if (response.status !== 200) assertCleanError(response, response.status);
      return { status: response.status, message: response.json.error?.message };
    }

    test('startup seeds the identity-api policy from GATEHOUSE_API_GROUP; a member passes, a non-member gets 403 naming the policy (PO-17)', async () => {
      const stored = await getPolicy(policyDeps(), 'identity-api');
      assert.deepEqual({ version: stored.version, access: stored.document.access }, { version: 1, access: { groups: [GROUP], organizations: [], includeSubOrganizations: false, attributes: {} } });
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, await member());
      assert.deepEqual(await bearerCall(token), { status: 200, message: undefined });
      const outsider = await accessToken(server, `openid ${server.apiClientId}`);
      const refused = await call(server, 'GET', LIST, { authorization: `Bearer ${outsider.token}` });
      assertCleanError(refused, 403, 'Unauthorized');
      assert.deepEqual(refused.json.error, { code: 'Unauthorized', message: refusal('identity-api') });
    });

    test('updating the identity-api policy to an organization rule lets the organization in and keeps the group-only user out, at the next request (PO-19)', async () => {
      const organization = anOrganization();
      await server.gatehouse.store.organizations.insert(organization);
      const inOrganization = await addUser(server.gatehouse.store, { organizationId: organization.id });
      const groupOnly = await member();
      const [orgToken, groupToken] = [await accessToken(server, `openid ${server.apiClientId}`, inOrganization), await accessToken(server, `openid ${server.apiClientId}`, groupOnly)];
      assert.deepEqual(await bearerCall(orgToken.token), { status: 403, message: refusal('identity-api') });
      assert.deepEqual(await bearerCall(groupToken.token), { status: 200, message: undefined });
      await updatePolicy(policyDeps(), 'identity-api', { access: { organizations: [organization.id] } });
      try {
        assert.deepEqual(await bearerCall(orgToken.token), { status: 200, message: undefined });
        assert.deepEqual(await bearerCall(groupToken.token), { status: 403, message: refusal('identity-api') });
      } finally {
        await updatePolicy(policyDeps(), 'identity-api', SEEDED);
      }
      assert.deepEqual(await bearerCall(groupToken.token), { status: 200, message: undefined });
    });

    test('attaching another policy to the API client makes it the one that decides (PO-20)', async () => {
      const name = unique('api-admins-');
      await createPolicy(policyDeps(), { name, access: { attributes: { role: ['api-admin'] } } });
      const admin = await addUser(server.gatehouse.store, { attributes: { role: ['api-admin'] } });
      const groupOnly = await member();
      const [adminToken, groupToken] = [await accessToken(server, `openid ${server.apiClientId}`, admin), await accessToken(server, `openid ${server.apiClientId}`, groupOnly)];
      assert.deepEqual(await bearerCall(adminToken.token), { status: 403, message: refusal('identity-api') });
      const deps = { ...server.gatehouse.store, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom, apiClientId: server.apiClientId };
      await updateClient(deps, server.apiClientId, { authorization_policy: name });
      try {
        assert.deepEqual(await bearerCall(adminToken.token), { status: 200, message: undefined });
        assert.deepEqual(await bearerCall(groupToken.token), { status: 403, message: refusal(name) });
      } finally {
        await updateClient(deps, server.apiClientId, { authorization_policy: null });
      }
      // Detached, the API falls back to the seeded policy by name.
      assert.deepEqual(await bearerCall(groupToken.token), { status: 200, message: undefined });
      assert.deepEqual(await bearerCall(adminToken.token), { status: 403, message: refusal('identity-api') });
    });

    test('a deleted identity-api policy lets no one in: it fails closed (PO-21)', async () => {
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, await member());
      assert.deepEqual(await bearerCall(token), { status: 200, message: undefined });
      await deletePolicy(policyDeps(), 'identity-api');
      try {
        assert.deepEqual(await bearerCall(token), { status: 403, message: refusal('identity-api') });
        // Basic (the API account) is not a user's token: the policy does not apply to it.
        assert.equal((await call(server, 'GET', LIST)).status, 200);
      } finally {
        await createPolicy(policyDeps(), SEEDED);
      }
      assert.deepEqual(await bearerCall(token), { status: 200, message: undefined });
    });

    test("a client's own token (client_credentials) is not judged by the policy: the API in its aud is its permission (PO-22)", async () => {
      const { client, secret } = await addClient(server.gatehouse.store, { grantTypes: ['client_credentials'], metadata: { aud: [server.apiClientId] } });
      const issued = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials', scope: server.apiClientId }, { authorization: basic(client.clientId, secret) });
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      await updatePolicy(policyDeps(), 'identity-api', { access: { groups: [unique('nobody-')] } });
      try {
        assert.deepEqual(await bearerCall(issued.body.access_token as string), { status: 200, message: undefined });
      } finally {
        await updatePolicy(policyDeps(), 'identity-api', SEEDED);
      }
    });
  });

  describe(`seeding the identity API's policy at startup, on ${db.name}`, () => {
    test('an API client registered before a start gets the policy attached; one with its own policy keeps it, across restarts (PO-18)', async () => {
      const first = await startServer(db, { env: { GATEHOUSE_API_CLIENT_ID: unique('not-yet-') } });
      const store = first.gatehouse.store;
      try {
        const own = unique('own-');
        await createPolicy({ policies: store.policies, clock: systemClock }, { name: own, access: { groups: ['Admins'] } });
        const { client: bare } = await addClient(store, { grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { resource_server: true } });
        const { client: withOwn } = await addClient(store, { grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { resource_server: true }, authorizationPolicy: own });
        for (const apiClientId of [bare.clientId, withOwn.clientId, bare.clientId]) {
          const restarted = await startServer(db, { database: first.database, env: { GATEHOUSE_API_CLIENT_ID: apiClientId, GATEHOUSE_API_GROUP: 'Changed later' } });
          await restarted.close();
        }
        assert.equal((await store.clients.get(bare.clientId))!.authorizationPolicy, 'identity-api');
        assert.equal((await store.clients.get(withOwn.clientId))!.authorizationPolicy, own);
        // GATEHOUSE_API_GROUP only seeds: a later start with another group leaves the policy as it was created.
        const policy = await getPolicy({ policies: store.policies }, 'identity-api');
        assert.deepEqual({ version: policy.version, groups: policy.document.access?.groups }, { version: 1, groups: [GROUP] });
      } finally {
        await first.close();
      }
    });
  });
}
