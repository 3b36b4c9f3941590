/**
 * Scopes an API defines (issue 22, item 12; docs/decisions.md RS1–RS6): a resource server declares
 * the scope values it understands (`resource_scopes`), and a client asks for them — within its
 * registered `scope` and its `aud` — at the token endpoint (client_credentials, password), the
 * authorization endpoint (code, with the consent page naming them) and the device authorization
 * endpoint; asking for one implies that server's audience. The token carries them to
 * introspection and to RFC 9068 JWT access tokens; a refresh may narrow them; registration refuses
 * a `scope` the grants would not honour. openid-client is the machine client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from 'jose';
import * as oidc from 'openid-client';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient, updateClient } from '../../src/oauth/client-registration.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, loginThroughForm, RP_REDIRECT_URI, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect } from '../helpers/front-channel.ts';
import { ensureManagementSetup, manageCall, manageTokens } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'resource scopes password';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const ORDERS_URI = 'https://orders.example/api';

/** The items of the consent page's list labelled by the heading with this id. */
function listItems(html: string, id: string): string[] {
  const list = new RegExp(`<ul[^>]*aria-labelledby="${id}"[^>]*>([\\s\\S]*?)</ul>`).exec(html)?.[1];
  return list === undefined ? [] : [...list.matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]!);
}

for (const db of DATABASES) {
  describe(`scope values resource servers declare on ${db.name}`, () => {
    let server: RunningServer;
    /** JWT access tokens, scope values orders.read and orders.write, resource URI ORDERS_URI. */
    let orders: { client: Client; secret: string };
    /** Opaque tokens, scope value reports.read; in nobody's aud here but the wide machine's. */
    let reports: Client;
    /** client_credentials; aud: Orders; scope: orders.read only. */
    let machine: { client: Client; secret: string };
    /** client_credentials; aud: Orders and Reports; no registered scope. */
    let wide: { client: Client; secret: string };
    /** A third-party web app with every user grant; aud: Orders; scope: openid profile orders.read orders.write. */
    let portal: { client: Client; secret: string };
    let user: User;

    const deps = () => ({ clients: server.gatehouse.store.clients, transaction: server.gatehouse.store.transaction, clock: systemClock, random: cryptoRandom });
    const tokenUrl = () => `${server.url}/uas/oauth2/token`;
    const register = async (metadata: Record<string, unknown>) => {
      const { client, clientSecret } = await registerClient(deps(), metadata);
      return { client, secret: clientSecret! };
    };

    before(async () => {
      server = await startServer(db);
      orders = await register({ client_name: 'Orders API', resource_server: true, resource_uris: [ORDERS_URI], resource_scopes: ['orders.read', 'orders.write'], access_token_format: 'jwt' });
      ({ client: reports } = await register({ client_name: 'Reports API', resource_server: true, resource_scopes: ['reports.read'] }));
      machine = await register({ client_name: 'Nightly sync', grant_types: ['client_credentials'], aud: [orders.client.clientId], scope: 'orders.read' });
      wide = await register({ client_name: 'Auditor', grant_types: ['client_credentials'], aud: [orders.client.clientId, reports.clientId] });
      portal = await register({
        client_name: 'Partner portal',
        'client_name#fi': 'Kumppaniportaali',
        redirect_uris: [RP_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token', 'password', DEVICE_GRANT],
        refresh_tokens: true,
        consent_required: true,
        aud: [orders.client.clientId],
        scope: 'openid profile orders.read orders.write',
      });
      user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
    });
    after(async () => server.close());

    const configure = (clientId: string, secret: string) => oidc.discovery(new URL(server.issuer), clientId, secret, oidc.ClientSecretBasic(secret), { execute: [oidc.allowInsecureRequests] });
    /** Introspection by the Orders API, without the times (asserted apart where they matter). */
    async function introspect(token: string): Promise<Record<string, unknown>> {
      const { exp: _exp, iat: _iat, ...rest } = await oidc.tokenIntrospection(await configure(orders.client.clientId, orders.secret), token);
      return rest;
    }
    /** The JWT access token's claims, its signature checked against the published keys, without the times and jti. */
    async function jwtClaims(token: string): Promise<Record<string, unknown>> {
      const discovery = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as { jwks_uri: string };
      const jwks = (await (await fetch(discovery.jwks_uri)).json()) as JSONWebKeySet;
      const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer: server.issuer, typ: 'at+jwt' });
      assert.equal(protectedHeader.typ, 'at+jwt');
      const { exp: _exp, iat: _iat, jti: _jti, auth_time: _authTime, ...rest } = payload;
      return rest;
    }
    const clientCredentials = (client: { client: Client; secret: string }, scope: string) => postForm(tokenUrl(), { grant_type: 'client_credentials', scope }, { authorization: basic(client.client.clientId, client.secret) });

    test('client_credentials (RS-03): openid-client asks for orders.read and gets a JWT for the Orders API with exactly that scope; introspection says the same', async () => {
      const tokens = await oidc.clientCredentialsGrant(await configure(machine.client.clientId, machine.secret), { scope: 'orders.read' });
      assert.equal(tokens.scope, 'orders.read');
      assert.deepEqual(await jwtClaims(tokens.access_token), { iss: server.issuer, aud: orders.client.clientId, sub: machine.client.clientId, client_id: machine.client.clientId, scope: 'orders.read' });
      assert.deepEqual(await introspect(tokens.access_token), {
        active: true,
        sub: machine.client.clientId,
        iss: server.issuer,
        aud: orders.client.clientId,
        scope: 'orders.read',
        client_id: machine.client.clientId,
        token_type: 'access_token',
        token_audiences: [orders.client.clientId],
      });
      // Ubisecure's way keeps working next to it: the server's client_id as the scope value.
      const byId = await clientCredentials(machine, `orders.read ${orders.client.clientId}`);
      assert.equal(byId.body.scope, `orders.read ${orders.client.clientId}`);
      assert.deepEqual((await introspect(byId.body.access_token as string)).token_audiences, [orders.client.clientId]);
    });

    test('client_credentials (RS-03): two servers\' values give a token for both; without a registered scope any value of a server in aud', async () => {
      const both = await clientCredentials(wide, 'orders.write reports.read');
      assert.equal(both.status, 200, JSON.stringify(both.body));
      assert.equal(both.body.scope, 'orders.write reports.read');
      assert.deepEqual((await introspect(both.body.access_token as string)).token_audiences, [orders.client.clientId, reports.clientId]);
      // The Orders API asked for JWTs, so the token is one, for both audiences (decision JA2).
      assert.deepEqual(await jwtClaims(both.body.access_token as string), { iss: server.issuer, aud: [orders.client.clientId, reports.clientId], sub: wide.client.clientId, client_id: wide.client.clientId, scope: 'orders.write reports.read' });
    });

    test('refused (RS-03): a value outside the registered scope, a server outside aud, an unknown value are invalid_scope', async () => {
      const refused = async (client: { client: Client; secret: string }, scope: string, description: string) => {
        const response = await clientCredentials(client, scope);
        assert.equal(response.status, 400);
        assert.deepEqual(response.body, { error: 'invalid_scope', error_description: description });
      };
      await refused(machine, 'orders.write', "The scope value orders.write is not among this client's registered scope values (client metadata scope).");
      await refused(machine, 'orders.read orders.write', "The scope value orders.write is not among this client's registered scope values (client metadata scope).");
      const outside = await register({ client_name: 'Orders only', grant_types: ['client_credentials'], aud: [orders.client.clientId] });
      await refused(outside, 'reports.read', `The scope value reports.read belongs to the resource server ${reports.clientId}, which this client may not request as an audience (client metadata aud).`);
      await refused(outside, 'orders.delete', 'The scope value orders.delete is not an audience this client may request (client metadata aud).');
      // An inactive resource server's values are no audience either.
      await updateClient(deps(), reports.clientId, { active: false });
      try {
        await refused(wide, 'reports.read', `The audience ${reports.clientId} is not an active client.`);
      } finally {
        await updateClient(deps(), reports.clientId, { active: true });
      }
    });

    test('authorization code (RS-03): the consent page names the server and each value in en, fi and sv; the token carries them', async () => {
      const jar = new CookieJar();
      const query = { client_id: portal.client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid orders.read orders.write', state: 's' };
      const response = await loginThroughForm({ baseUrl: server.url, jar }, query, { username: user.username, password: PASSWORD });
      assert.equal(response.status, 200);
      const html = await response.text();
      assert.deepEqual(listItems(html, 'consent-scopes'), ['Sign you in', 'Use Orders API with the permission “orders.read”', 'Use Orders API with the permission “orders.write”']);
      assert.deepEqual(listItems(html, 'consent-audiences'), ['Orders API']);
      for (const [locale, expected] of [
        ['fi', ['Kirjata sinut sisään', 'Käyttää palvelua Orders API oikeudella ”orders.read”', 'Käyttää palvelua Orders API oikeudella ”orders.write”']],
        ['sv', ['Logga in dig', 'Använda Orders API med behörigheten ”orders.read”', 'Använda Orders API med behörigheten ”orders.write”']],
      ] as const) {
        const page = await browse(`${server.issuer}/oauth2/authorization?${new URLSearchParams({ ...query, ui_locales: locale })}`, jar);
        assert.deepEqual(listItems(await page.text(), 'consent-scopes'), expected, locale);
      }
      const code = assertCodeRedirect(await submit(new URL(formAction(html), server.url).toString(), [...formFields(html), ['decision', 'allow']], jar), { redirectUri: RP_REDIRECT_URI, state: 's', issuer: server.issuer, status: 303 });
      const tokens = await postForm(tokenUrl(), { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI }, { authorization: basic(portal.client.clientId, portal.secret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.equal(tokens.body.scope, 'openid orders.read orders.write');
      assert.deepEqual(await jwtClaims(tokens.body.access_token as string), { iss: server.issuer, aud: orders.client.clientId, sub: user.id, client_id: portal.client.clientId, scope: 'openid orders.read orders.write', amr: ['pwd'] });
      const introspection = await introspect(tokens.body.access_token as string);
      assert.deepEqual([introspection.scope, introspection.token_audiences, introspection.aud], ['openid orders.read orders.write', [orders.client.clientId], orders.client.clientId]);
    });

    test('refresh (RS-03): narrows to some values, or to the server by resource; wider is invalid_scope; a value no longer registered or declared is refused', async () => {
      const granted = await postForm(tokenUrl(), { grant_type: 'password', username: user.username, password: PASSWORD, scope: 'openid orders.read orders.write' }, { authorization: basic(portal.client.clientId, portal.secret) });
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(granted.body.scope, 'openid orders.read orders.write');
      let refreshToken = granted.body.refresh_token as string;
      const refresh = async (fields: [string, string][]) => {
        const response = await fetch(tokenUrl(), { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic(portal.client.clientId, portal.secret) }, body: new URLSearchParams([['grant_type', 'refresh_token'], ['refresh_token', refreshToken], ...fields]).toString() });
        const body = (await response.json()) as Record<string, unknown>;
        if (response.status === 200) refreshToken = body.refresh_token as string;
        return { status: response.status, body };
      };
      const narrowed = await refresh([['scope', 'orders.read']]);
      assert.equal(narrowed.body.scope, 'orders.read');
      assert.deepEqual(await jwtClaims(narrowed.body.access_token as string), { iss: server.issuer, aud: orders.client.clientId, sub: user.id, client_id: portal.client.clientId, scope: 'orders.read', amr: ['pwd'] });
      // resource names the server; scope keeps the values it lists (RFC 8707 §2.2).
      assert.equal((await refresh([['scope', 'openid orders.write'], ['resource', ORDERS_URI]])).body.scope, 'openid orders.write');
      assert.equal((await refresh([['resource', ORDERS_URI]])).body.scope, 'openid orders.read orders.write');
      assert.deepEqual((await refresh([['scope', 'orders.read orders.admin']])).body, { error: 'invalid_scope', error_description: 'The requested scope exceeds the scope originally granted.' });
      // The client's registered scope loses orders.write: a refresh keeping it is refused, one without it works.
      await updateClient(deps(), portal.client.clientId, { scope: 'openid profile orders.read' });
      try {
        assert.deepEqual((await refresh([])).body, { error: 'invalid_scope', error_description: "The scope value orders.write is no longer among this client's registered scope values (client metadata scope)." });
        assert.equal((await refresh([['scope', 'openid orders.read']])).body.scope, 'openid orders.read');
      } finally {
        await updateClient(deps(), portal.client.clientId, { scope: 'openid profile orders.read orders.write' });
      }
      // The server stops declaring orders.read: the value asks for nothing any more.
      await updateClient(deps(), orders.client.clientId, { resource_scopes: ['orders.write'] });
      try {
        assert.deepEqual((await refresh([])).body, { error: 'invalid_scope', error_description: 'The scope value orders.read no longer names a resource server or a scope value one declares.' });
      } finally {
        await updateClient(deps(), orders.client.clientId, { resource_scopes: ['orders.read', 'orders.write'] });
      }
    });

    test('device authorization (RS-03): the confirmation names the values with their server; the approved grant holds them and the poll\'s token carries them', async () => {
      const issued = await postForm(`${server.issuer}/oauth2/device_authorization`, { scope: 'openid orders.write' }, { authorization: basic(portal.client.clientId, portal.secret) });
      assert.equal(issued.status, 200, JSON.stringify(issued.body));
      const jar = new CookieJar();
      const page = `${server.issuer}/oauth2/device`;
      const form = new Map(formFields(await (await browse(page, jar)).text()));
      let html = await (await submit(page, { csrf_token: form.get('csrf_token')!, user_code: issued.body.user_code as string }, jar)).text();
      const login = Object.fromEntries(formFields(html));
      html = await (await submit(`${server.url}${formAction(html)}`, { ...login, username: user.username, password: PASSWORD }, jar)).text();
      // The confirmation names the value with its server, as the consent page does.
      assert.deepEqual([...(/<ul class="scopes">([\s\S]*?)<\/ul>/.exec(html)?.[1] ?? '').matchAll(/<li>([^<]*)<\/li>/g)].map((m) => m[1]), ['Confirming who you are', 'Use Orders API with the permission “orders.write”', 'Orders API']);
      const decided = await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), decision: 'approve' }, jar);
      assert.equal(decided.status, 200);
      const tokens = await postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: issued.body.device_code as string }, { authorization: basic(portal.client.clientId, portal.secret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.equal(tokens.body.scope, 'openid orders.write');
      assert.deepEqual((await introspect(tokens.body.access_token as string)).token_audiences, [orders.client.clientId]);
      const refused = await postForm(`${server.issuer}/oauth2/device_authorization`, { scope: 'openid reports.read' }, { authorization: basic(portal.client.clientId, portal.secret) });
      assert.deepEqual(refused.body, { error: 'invalid_scope', error_description: "The scope value reports.read is not among this client's registered scope values (client metadata scope)." });
    });

    test('registration (RS-04): the management API refuses a scope no grant honours and a taken or reserved value, naming the field; it shows what it stored', async () => {
      await ensureManagementSetup(server);
      const { admin } = await manageTokens(server);
      const refused = async (body: Record<string, unknown>, field: string, message: string) => {
        const response = await manageCall(server, 'POST', '/clients', { token: admin, body });
        assert.equal(response.status, 400, response.text);
        assert.deepEqual(response.json.errors, [{ field, message }]);
      };
      await refused({ client_name: 'Sync', grant_types: ['client_credentials'], scope: 'api.read api.write' }, 'scope', '"api.read" is not a scope value gatehouse grants: use openid, profile, email, the client_id of a resource server in aud, or a scope value one declared (resource_scopes)');
      await refused({ client_name: 'Sync', grant_types: ['client_credentials'], aud: [reports.clientId], scope: 'orders.read' }, 'scope', `The scope value orders.read belongs to the resource server ${orders.client.clientId}, which this client may not request as an audience (client metadata aud).`);
      await refused({ client_name: 'Clash', resource_server: true, resource_scopes: ['orders.read'] }, 'resource_scopes', `"orders.read" is already a scope value of the resource server ${orders.client.clientId}; a scope value names one resource server`);
      await refused({ client_name: 'Clash', resource_server: true, resource_scopes: ['openid'] }, 'resource_scopes', '"openid" is a scope value OpenID Connect defines; choose a name of the API\'s own, such as orders.read');
      const created = await manageCall(server, 'POST', '/clients', { token: admin, body: { client_name: 'Inventory API', resource_server: true, resource_scopes: ['inventory.read', 'inventory.read'] } });
      assert.equal(created.status, 201, created.text);
      assert.deepEqual(created.json.resource_scopes, ['inventory.read']);
      const machineDoc = await manageCall(server, 'POST', '/clients', { token: admin, body: { client_name: 'Stocktake', grant_types: ['client_credentials'], aud: [created.json.client_id], scope: 'inventory.read' } });
      assert.equal(machineDoc.status, 201, machineDoc.text);
      const token = await postForm(tokenUrl(), { grant_type: 'client_credentials', scope: 'inventory.read' }, { authorization: basic(machineDoc.json.client_id as string, machineDoc.json.client_secret as string) });
      assert.deepEqual([token.status, token.body.scope], [200, 'inventory.read']);
    });
  });
}
