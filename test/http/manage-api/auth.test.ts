/**
 * Who may call the management API: bearer tokens only (RFC 6750 §2.1), for the API's audience,
 * of an active client allowed it, of an enabled user in one of the administrator groups (read at
 * every request), or a client's own token. Everything else is 401 with a Bearer challenge, or 403.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID, manageApiResourceUri } from '../../../src/manage/management-clients.ts';
import { basic, mintCode, pkcePair, postForm } from '../../helpers/back-channel.ts';
import { createTestClient } from '../../helpers/fixtures.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { issueManageToken, manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

for (const db of DATABASES) {
  describe(`management API authentication (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    before(async () => {
      server = await startServer(db);
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    test('an administrator, a reader and a client token each see who they are', async () => {
      const admin = await manageCall(server, 'GET', '/me', { token: tokens.admin });
      assert.equal(admin.status, 200, admin.text);
      assert.deepEqual(admin.json, { role: 'admin', user_id: tokens.adminUser.id, username: tokens.adminUser.username, client_id: CONSOLE_CLIENT_ID });
      assert.equal(admin.headers.get('cache-control'), 'no-store');
      const reader = await manageCall(server, 'GET', '/me', { token: tokens.reader });
      assert.deepEqual(reader.json, { role: 'reader', user_id: tokens.readerUser.id, username: tokens.readerUser.username, client_id: CONSOLE_CLIENT_ID });
      const automation = await manageCall(server, 'GET', '/me', { token: tokens.automation });
      assert.deepEqual(automation.json, { role: 'admin', client_id: tokens.automationClient.clientId });
    });

    test('no token: 401 with a Bearer challenge without an error (RFC 6750 §3.1)', async () => {
      const answer = await manageCall(server, 'GET', '/me');
      assert.equal(answer.status, 401);
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer realm="gatehouse management API"');
      assert.match(answer.headers.get('content-type') ?? '', /^application\/problem\+json/);
      assert.equal(answer.json.status, 401);
      assert.equal(answer.headers.get('cache-control'), 'no-store');
    });

    test('a token for another audience, an unknown token, a Basic header or a token in the query: 401 invalid_token', async () => {
      for (const authorization of [`Bearer ${tokens.otherAudience}`, 'Bearer not-a-token', 'Basic YWRtaW46YWRtaW4=', `Bearer ${tokens.admin} extra`]) {
        const answer = await manageCall(server, 'GET', '/me', { headers: { authorization } });
        assert.equal(answer.status, 401, authorization);
        assert.match(answer.headers.get('www-authenticate') ?? '', /^Bearer realm="gatehouse management API", error="invalid_token", error_description="/);
      }
      const inQuery = await manageCall(server, 'GET', `/me?access_token=${tokens.admin}`);
      assert.equal(inQuery.status, 401, 'RFC 6750 §2.3 is not accepted');
      assert.equal(inQuery.headers.get('www-authenticate'), 'Bearer realm="gatehouse management API"');
    });

    test('an enabled user in neither group: 403; a disabled administrator: 401', async () => {
      const answer = await manageCall(server, 'GET', '/me', { token: tokens.nobody });
      assert.equal(answer.status, 403, answer.text);
      assert.equal(answer.json.title, 'Forbidden');
      const store = server.gatehouse.store;
      const { addManager } = await import('../../helpers/manage.ts');
      const disabled = await addManager(server, server.config.manageAdminGroup, { status: 'disabled' });
      const token = await issueManageToken(server, { userId: disabled.id });
      assert.equal((await manageCall(server, 'GET', '/me', { token })).status, 401);
      assert.ok(store);
    });

    test('group membership is read at every request: removed from the group, refused at the next call', async () => {
      const { addManager } = await import('../../helpers/manage.ts');
      const user = await addManager(server, server.config.manageAdminGroup);
      const token = await issueManageToken(server, { userId: user.id });
      assert.equal((await manageCall(server, 'GET', '/me', { token })).json.role, 'admin');
      const group = (await server.gatehouse.store.groups.getByName(server.config.manageAdminGroup))!;
      await server.gatehouse.store.groups.removeMember(group.id, user.id);
      assert.equal((await manageCall(server, 'GET', '/me', { token })).status, 403);
    });

    test("a client whose aud no longer lists the API, or an inactive API client: the tokens stop working", async () => {
      const store = server.gatehouse.store;
      const { client } = await (await import('../../helpers/fixtures.ts')).createTestClient(store, { grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [MANAGE_API_CLIENT_ID] } });
      const token = await issueManageToken(server, { clientId: client.clientId, scope: MANAGE_API_CLIENT_ID });
      assert.equal((await manageCall(server, 'GET', '/me', { token })).status, 200);
      await store.clients.update({ ...client, metadata: {} });
      assert.equal((await manageCall(server, 'GET', '/me', { token })).status, 401);
      const api = (await store.clients.get(MANAGE_API_CLIENT_ID))!;
      await store.clients.update({ ...api, active: false });
      try {
        const answer = await manageCall(server, 'GET', '/me', { token: tokens.admin });
        assert.equal(answer.status, 401);
        assert.match(answer.json.detail as string, /not enabled/);
      } finally {
        await store.clients.update({ ...api, active: true });
      }
    });

    test('over the token endpoint: a client_credentials token asked with resource=<origin>/manage/api/v1 is an administrator', async () => {
      const { client, clientSecret } = await createTestClient(server.gatehouse.store, { grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [MANAGE_API_CLIENT_ID] } });
      const issued = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'client_credentials', resource: manageApiResourceUri(server.config) }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const me = await manageCall(server, 'GET', '/me', { token: issued.body.access_token as string });
      assert.equal(me.status, 200, me.text);
      assert.deepEqual(me.json, { role: 'admin', client_id: client.clientId });
      const plain = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal((await manageCall(server, 'GET', '/me', { token: plain.body.access_token as string })).status, 401, 'without the audience the token is not for the API');
    });

    test("over the token endpoint: the console client's code + PKCE exchange gives an administrator's token", async () => {
      const store = server.gatehouse.store;
      const console = (await store.clients.get(CONSOLE_CLIENT_ID))!;
      const pair = pkcePair();
      const { code } = await mintCode(store, console, tokens.adminUser, { scope: `openid ${MANAGE_API_CLIENT_ID}`, codeChallenge: pair.challenge, codeChallengeMethod: 'S256' });
      const issued = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: console.redirectUris[0]!, client_id: CONSOLE_CLIENT_ID, code_verifier: pair.verifier });
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const me = await manageCall(server, 'GET', '/me', { token: issued.body.access_token as string });
      assert.equal(me.json.role, 'admin', me.text);
      assert.equal(me.json.client_id, CONSOLE_CLIENT_ID);
    });

    test('the OpenAPI document needs no token; unknown paths are 404 problems, other methods 405 with Allow', async () => {
      const doc = await manageCall(server, 'GET', '/openapi.json');
      assert.equal(doc.status, 200);
      assert.equal(doc.json.openapi, '3.1.0');
      const unknown = await manageCall(server, 'GET', '/nothing-here', { token: tokens.admin });
      assert.equal(unknown.status, 404);
      assert.match(unknown.headers.get('content-type') ?? '', /problem\+json/);
      const wrong = await manageCall(server, 'DELETE', '/me', { token: tokens.admin });
      assert.equal(wrong.status, 405);
      assert.equal(wrong.headers.get('allow'), 'GET, HEAD');
    });
  });
}
