/**
 * Authorization policies through a real server (docs/authorization.md, "Authorization policies";
 * conformance PO-*): the access check at the authorization endpoint (after the login form, with
 * an SSO session from another client, under prompt=none), at the refresh and password grants, and
 * the mapped claims in the ID token, UserInfo (plain and signed) and introspection, read at each
 * response.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { Group } from '../../src/domain/group.ts';
import { parsePolicyDocument, policyDocumentJson } from '../../src/domain/policy.ts';
import type { User } from '../../src/domain/user.ts';
import { actingAs } from '../helpers/administration.ts';
import { DATABASES } from '../helpers/databases.ts';
import { basic, mintCode, postForm, REDIRECT_URI } from '../helpers/back-channel.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, loginThroughForm } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { aGroup, anOrganization } from '../helpers/store.ts';

const PASSWORD = 'policy password 1';
const DENIED_DESCRIPTION = 'The authorization policy of this client does not allow this user.';

for (const db of DATABASES) {
  describe(`authorization policies on ${db.name}`, () => {
    let server: RunningServer;
    let staff: Group;
    let open: Client;
    let guarded: Client;
    let guardedSecret: string;
    let signed: Client;
    let signedSecret: string;
    let alice: User;
    let bob: User;
    const orgRoot = anOrganization({ friendlyName: 'Acme' });
    const orgChild = anOrganization({ friendlyName: 'Acme Finland', parentId: orgRoot.id });
    const policyName = `staff-${randomUUID().slice(0, 8)}`;
    const claims = [
      { claim: 'department', from: 'attribute:department', in: ['id_token', 'userinfo'], scope: 'profile' },
      { claim: 'level', from: 'attribute:level', single: true },
      { claim: 'groups', from: 'groups' },
      { claim: 'org', from: 'organization.technicalName' },
      { claim: 'org_name', from: 'organization.name', in: ['introspection'] },
      { claim: 'login', from: 'user.username', in: ['userinfo'] },
      { claim: 'tenant', value: 'acme' },
      // Overrides the standard email claim of the email scope.
      { claim: 'email', value: 'hidden@example.com', in: ['userinfo'] },
    ];

    const tokenUrl = () => `${server.url}/uas/oauth2/token`;
    const userinfo = async (accessToken: string) => {
      const response = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
      assert.equal(response.status, 200);
      return response.headers.get('content-type')?.startsWith('application/jwt') ? decodeJwt(await response.text()) : ((await response.json()) as Record<string, unknown>);
    };
    const introspect = async (token: string) => (await postForm(`${server.url}/uas/oauth2/introspection`, { token }, { authorization: basic(guarded.clientId, guardedSecret) })).body;
    const tokensFor = async (client: Client, secret: string, user: User, scope = 'openid profile email') => {
      const { code } = await mintCode(server.gatehouse.store, client, user, { scope });
      const response = await postForm(tokenUrl(), { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, { authorization: basic(client.clientId, secret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body as { access_token: string; id_token: string; refresh_token?: string };
    };
    const query = (client: Client, extra: Record<string, string> = {}) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's1', ...extra });
    /** The claims gatehouse adds for this policy, without the standard ones. */
    const mapped = (all: Record<string, unknown>, names: string[]) => Object.fromEntries(names.filter((n) => n in all).map((n) => [n, all[n]]));
    const NAMES = ['department', 'level', 'groups', 'org', 'org_name', 'login', 'tenant', 'email'];

    before(async () => {
      server = await startServer(db);
      const store = server.gatehouse.store;
      await store.organizations.insert(orgRoot);
      await store.organizations.insert(orgChild);
      staff = aGroup({ name: `Staff-${randomUUID().slice(0, 8)}` });
      await store.groups.insert(staff);
      await store.policies.insert({ document: parsePolicyDocument({ name: policyName, access: { groups: [staff.name] }, claims }), version: 1, createdAt: 0, updatedAt: 0 });
      ({ client: open } = await createTestClient(store, { redirectUris: ['https://open.example.test/cb'] }));
      ({ client: guarded, clientSecret: guardedSecret } = await createTestClient(store, {
        redirectUris: [REDIRECT_URI],
        authorizationPolicy: policyName,
        refreshTokens: true,
        rotateRefreshTokens: true,
        grantTypes: ['authorization_code', 'refresh_token', 'password'],
      }));
      ({ client: signed, clientSecret: signedSecret } = await createTestClient(store, { redirectUris: [REDIRECT_URI], authorizationPolicy: policyName, userinfoSignedResponseAlg: 'RS256' }));
      alice = await createTestUser(store, { password: PASSWORD, email: 'alice@example.com', organizationId: orgChild.id, attributes: { department: ['Sales', 'Legal'], level: ['3', '4'] } });
      bob = await createTestUser(store, { password: PASSWORD, email: 'bob@example.com' });
      await store.groups.addMember(staff.id, alice.id);
    });
    after(async () => server.close());

    test('PO-08: a refused user is shown the explanation page after the login form; its link delivers access_denied', async () => {
      const jar = new CookieJar();
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query(guarded, { ui_locales: 'fi' }), { username: bob.username, password: PASSWORD });
      assert.equal(response.status, 403);
      const html = await response.text();
      assert.match(html, /<h1>Ei pääsyä tähän sovellukseen<\/h1>/);
      const href = /<a class="back" href="([^"]+)" id="access-denied-continue">Palaa sovellukseen<\/a>/.exec(html)?.[1]?.replaceAll('&amp;', '&');
      assert.ok(href, html);
      const location = new URL(href);
      assert.equal(`${location.origin}${location.pathname}`, REDIRECT_URI);
      assert.deepEqual(Object.fromEntries(location.searchParams), { error: 'access_denied', error_description: DENIED_DESCRIPTION, state: 's1', iss: server.issuer });
      // Signed in all the same: the open client gets a code from the session.
      assertCodeRedirect(await browse(authorizationUrl(server.url, query(open)), jar), { redirectUri: open.redirectUris[0]!, state: 's1', issuer: server.issuer });
    });

    test('PO-09: an SSO session from a client without a policy does not get past the policy; prompt=none gets access_denied at once', async () => {
      const jar = new CookieJar();
      assertCodeRedirect(await loginThroughForm({ baseUrl: server.url, jar }, query(open), { username: bob.username, password: PASSWORD }), { redirectUri: open.redirectUris[0]!, state: 's1', issuer: server.issuer, status: 303 });
      const page = await browse(authorizationUrl(server.url, query(guarded)), jar);
      assert.equal(page.status, 403);
      assert.match(await page.text(), /<h1>No access to this application<\/h1>/);
      const params = assertErrorRedirect(await browse(authorizationUrl(server.url, query(guarded, { prompt: 'none' })), jar), { redirectUri: REDIRECT_URI, error: 'access_denied', state: 's1', issuer: server.issuer });
      assert.equal(params.get('error_description'), DENIED_DESCRIPTION);
    });

    test('PO-10: an allowed user gets a code, by the login form and silently', async () => {
      const jar = new CookieJar();
      assertCodeRedirect(await loginThroughForm({ baseUrl: server.url, jar }, query(guarded), { username: alice.username, password: PASSWORD }), { redirectUri: REDIRECT_URI, state: 's1', issuer: server.issuer, status: 303 });
      assertCodeRedirect(await browse(authorizationUrl(server.url, query(guarded, { prompt: 'none' })), jar), { redirectUri: REDIRECT_URI, state: 's1', issuer: server.issuer });
    });

    test('PO-11: the mapped claims, per target, in the ID token, UserInfo (plain and signed) and introspection; scope-gated claims need their scope', async () => {
      const tokens = await tokensFor(guarded, guardedSecret, alice);
      const common = { level: '3', groups: [staff.name], org: orgChild.technicalName, tenant: 'acme' };
      assert.deepEqual(mapped(decodeJwt(tokens.id_token), NAMES), { department: ['Sales', 'Legal'], ...common });
      assert.deepEqual(mapped(await userinfo(tokens.access_token), NAMES), { department: ['Sales', 'Legal'], ...common, login: alice.username, email: 'hidden@example.com' });
      // The email mapping is for userinfo only: introspection keeps the standard email claim.
      assert.deepEqual(mapped(await introspect(tokens.access_token), NAMES), { ...common, org_name: 'Acme Finland', email: 'alice@example.com' });
      const signedTokens = await tokensFor(signed, signedSecret, alice);
      assert.deepEqual(mapped(await userinfo(signedTokens.access_token), NAMES), { department: ['Sales', 'Legal'], ...common, login: alice.username, email: 'hidden@example.com' });
      const narrow = await tokensFor(guarded, guardedSecret, alice, 'openid');
      assert.deepEqual(mapped(decodeJwt(narrow.id_token), NAMES), common);
      assert.deepEqual(mapped(await userinfo(narrow.access_token), NAMES), { ...common, login: alice.username, email: 'hidden@example.com' });
      // A client without a policy gets none of them.
      const { client: plain, clientSecret } = await createTestClient(server.gatehouse.store, { redirectUris: [REDIRECT_URI] });
      const plainTokens = await tokensFor(plain, clientSecret, alice);
      assert.deepEqual(mapped(await userinfo(plainTokens.access_token), NAMES), { email: 'alice@example.com' });
    });

    test('PO-12: a changed attribute shows at the next UserInfo, and a changed policy at the next response', async () => {
      const store = server.gatehouse.store;
      const carol = await createTestUser(store, { password: PASSWORD, attributes: { department: ['Sales'], level: ['1'] } });
      await store.groups.addMember(staff.id, carol.id);
      const tokens = await tokensFor(guarded, guardedSecret, carol);
      assert.deepEqual(mapped(await userinfo(tokens.access_token), ['department', 'level']), { department: ['Sales'], level: '1' });
      const current = (await store.users.get(carol.id))!;
      await store.users.update({ ...current, attributes: { department: ['Legal'], level: ['2'] } });
      assert.deepEqual(mapped(await userinfo(tokens.access_token), ['department', 'level']), { department: ['Legal'], level: '2' });

      const other = `${policyName}-b`;
      await store.policies.insert({ document: parsePolicyDocument({ name: other, claims: [{ claim: 'tenant', value: 'before' }] }), version: 1, createdAt: 0, updatedAt: 0 });
      const { client, clientSecret } = await createTestClient(store, { redirectUris: [REDIRECT_URI], authorizationPolicy: other });
      const changing = await tokensFor(client, clientSecret, carol);
      assert.equal((await userinfo(changing.access_token)).tenant, 'before');
      await store.policies.update(parsePolicyDocument({ name: other, claims: [{ claim: 'tenant', value: 'after' }] }), 1);
      assert.equal((await userinfo(changing.access_token)).tenant, 'after');
      assert.equal((await introspect(changing.access_token)).tenant, 'after');
    });

    test('PO-13: a refresh after the user left the group is invalid_grant and does not spend the refresh token', async () => {
      const store = server.gatehouse.store;
      const dave = await createTestUser(store, { password: PASSWORD });
      await store.groups.addMember(staff.id, dave.id);
      const tokens = await tokensFor(guarded, guardedSecret, dave);
      assert.ok(tokens.refresh_token);
      await store.groups.removeMember(staff.id, dave.id);
      const refused = await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { authorization: basic(guarded.clientId, guardedSecret) });
      assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_grant']);
      await store.groups.addMember(staff.id, dave.id);
      const again = await postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: tokens.refresh_token }, { authorization: basic(guarded.clientId, guardedSecret) });
      assert.equal(again.status, 200, JSON.stringify(again.body));
    });

    test('PO-16: organizations: a user of a sub-organization is let in only with include_sub_organizations, seen at the next grant after the policy changes', async () => {
      const store = server.gatehouse.store;
      const name = `${policyName}-org`;
      const orgOnly = (sub: boolean) => parsePolicyDocument({ name, access: { organizations: [orgRoot.id], include_sub_organizations: sub }, claims: [{ claim: 'org', from: 'organization.name' }] });
      await store.policies.insert({ document: orgOnly(false), version: 1, createdAt: 0, updatedAt: 0 });
      const { client, clientSecret } = await createTestClient(store, { redirectUris: [REDIRECT_URI], grantTypes: ['authorization_code', 'password'] });
      await store.clients.update({ ...client, authorizationPolicy: name });
      const grant = () => postForm(tokenUrl(), { grant_type: 'password', username: alice.username, password: PASSWORD, scope: 'openid' }, { authorization: basic(client.clientId, clientSecret) });
      assert.deepEqual([(await grant()).status, (await grant()).body.error], [400, 'invalid_grant']);
      await store.policies.update(orgOnly(true), 1);
      const allowed = await grant();
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assert.equal(decodeJwt(allowed.body.id_token as string).org, 'Acme Finland');
      await store.policies.update(orgOnly(false), 2);
      assert.equal((await grant()).status, 400);
    });

    test('require_verified_email: an unverified address gets no code (a page leading to the profile page; prompt=none access_denied), no password grant and no refresh; a verified one gets them (docs/email-verification.md)', async () => {
      const store = server.gatehouse.store;
      const name = `${policyName}-verified`;
      await store.policies.insert({ document: parsePolicyDocument({ name, require_verified_email: true }), version: 1, createdAt: 0, updatedAt: 0 });
      assert.deepEqual(policyDocumentJson((await store.policies.get(name))!.document), { name, claims: [], require_verified_email: true });
      const { client, clientSecret } = await createTestClient(store, { redirectUris: [REDIRECT_URI], authorizationPolicy: name, refreshTokens: true, grantTypes: ['authorization_code', 'refresh_token', 'password'] });
      const auth = { authorization: basic(client.clientId, clientSecret) };
      const unverified = await createTestUser(store, { password: PASSWORD, email: 'unverified@example.com' });
      const description = 'The authorization policy of this client requires a verified e-mail address; the user has not verified theirs.';

      const jar = new CookieJar();
      const page = await loginThroughForm({ baseUrl: server.url, jar }, query(client), { username: unverified.username, password: PASSWORD });
      assert.equal(page.status, 403);
      const html = await page.text();
      assert.match(html, /requires a verified e-mail address, and yours is not verified yet/);
      assert.match(html, /<a href="\/uas\/account\/profile\?ui_locales=en" id="access-denied-verify">Verify your e-mail address<\/a>/);
      const href = /<a class="back" href="([^"]+)" id="access-denied-continue">/.exec(html)?.[1]?.replaceAll('&amp;', '&');
      assert.equal(new URL(href!).searchParams.get('error_description'), description);
      const silent = assertErrorRedirect(await browse(authorizationUrl(server.url, query(client, { prompt: 'none' })), jar), { redirectUri: REDIRECT_URI, error: 'access_denied', state: 's1', issuer: server.issuer });
      assert.equal(silent.get('error_description'), description);
      const password = () => postForm(tokenUrl(), { grant_type: 'password', username: unverified.username, password: PASSWORD, scope: 'openid' }, auth);
      assert.deepEqual([(await password()).status, (await password()).body.error], [400, 'invalid_grant']);

      await server.gatehouse.deps.admin.users.update(actingAs(), unverified.id, { emailVerified: true });
      const allowed = await password();
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assertCodeRedirect(await browse(authorizationUrl(server.url, query(client, { prompt: 'none' })), jar), { redirectUri: REDIRECT_URI, state: 's1', issuer: server.issuer });
      const refresh = () => postForm(tokenUrl(), { grant_type: 'refresh_token', refresh_token: allowed.body.refresh_token as string }, auth);
      await server.gatehouse.deps.admin.users.update(actingAs(), unverified.id, { email: 'changed@example.com' });
      assert.deepEqual([(await refresh()).status, (await refresh()).body.error], [400, 'invalid_grant'], 'a changed address is unverified: no refresh');
      await server.gatehouse.deps.admin.users.update(actingAs(), unverified.id, { emailVerified: true });
      assert.equal((await refresh()).status, 200);
    });

    test('PO-14: the password grant refuses a user the policy refuses with invalid_grant; an allowed user gets the mapped claims', async () => {
      const refused = await postForm(tokenUrl(), { grant_type: 'password', username: bob.username, password: PASSWORD, scope: 'openid' }, { authorization: basic(guarded.clientId, guardedSecret) });
      assert.deepEqual([refused.status, refused.body.error], [400, 'invalid_grant']);
      const allowed = await postForm(tokenUrl(), { grant_type: 'password', username: alice.username, password: PASSWORD, scope: 'openid' }, { authorization: basic(guarded.clientId, guardedSecret) });
      assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
      assert.equal(decodeJwt(allowed.body.id_token as string).tenant, 'acme');
    });
  });
}
