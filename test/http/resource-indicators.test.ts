/**
 * Resource servers and RFC 8707 resource indicators (issue 13, item 2; docs/conformance.md 2.24
 * RI-*). A client asks for a token meant for a resource server either Ubisecure's way (the server's
 * client_id as a scope value) or with `resource` = one of the server's registered resource_uris, at
 * the authorization, token and device authorization endpoints; the server's client_id is then in
 * the granted scope, and introspection reports it in `token_audiences`.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { addMember, createGroup } from '../../src/identity/groups.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { basic } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, pkce, RP_REDIRECT_URI, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { call } from './identity-api/helpers.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';

const PASSWORD = 'correct horse battery';
const API_GROUP = 'Identity API Users';
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A form POST whose fields may repeat (resource), answered as JSON. */
async function post(url: string, fields: [string, string][], headers: Record<string, string> = {}): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(fields).toString() });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

const resources = (...uris: string[]): [string, string][] => uris.map((uri) => ['resource', uri]);

for (const db of DATABASES) {
  describe(`resource servers and resource indicators (RFC 8707) on ${db.name}`, () => {
    let server: RunningServer;
    const tag = randomUUID().slice(0, 8);
    const API_URI = `https://idapi-${tag}.example/customerid-rest/`;
    const ORDERS_URI = `https://orders-${tag}.example/api`;
    const ORDERS_V2_URI = `https://orders-${tag}.example/v2`;
    const OTHER_URI = `https://other-${tag}.example/`;
    const SLEEPING_URI = `http://127.0.0.1:9/${tag}`;
    let api: Client;
    let orders: { client: Client; secret: string };
    let sleeping: Client;
    /** Confidential, every grant, `aud` naming the API, Orders and the inactive server (not Other). */
    let app: { client: Client; secret: string };
    let member: User;
    /** The member's browser, signed in to gatehouse (a single sign-on session). */
    let jar: CookieJar;

    const tokenUrl = () => `${server.url}/uas/oauth2/token`;
    const asApp = () => ({ authorization: basic(app.client.clientId, app.secret) });

    before(async () => {
      const apiClientId = `identity-api-${tag}`;
      server = await startServer(db, { env: { GATEHOUSE_API_CLIENT_ID: apiClientId } });
      const store = server.gatehouse.store;
      const deps = { clients: store.clients, transaction: store.transaction, clock: systemClock, random: cryptoRandom, apiClientId };
      // The identity API registered as docs/identity-api.md does, with a resource URI of its own.
      ({ client: api } = await registerClient(deps, { client_name: 'Identity API', resource_server: true, resource_uris: [API_URI] }));
      await store.clients.delete(api.clientId);
      api = { ...api, clientId: apiClientId };
      await store.clients.insert(api);
      const registered = await registerClient(deps, { client_name: 'Orders API', resource_server: true, resource_uris: [ORDERS_URI, ORDERS_V2_URI] });
      orders = { client: registered.client, secret: registered.clientSecret! };
      await registerClient(deps, { client_name: 'Other API', resource_server: true, resource_uris: [OTHER_URI] });
      ({ client: sleeping } = await registerClient(deps, { client_name: 'Sleeping API', resource_server: true, resource_uris: [SLEEPING_URI] }));
      const created = await registerClient(deps, {
        client_name: 'Portal',
        redirect_uris: [RP_REDIRECT_URI],
        grant_types: ['authorization_code', 'refresh_token', 'client_credentials', 'password', DEVICE_GRANT],
        refresh_tokens: true,
        aud: [apiClientId, orders.client.clientId, sleeping.clientId],
      });
      app = { client: created.client, secret: created.clientSecret! };
      await store.clients.update({ ...sleeping, active: false });
      await createGroup({ ...store, clock: systemClock, random: cryptoRandom }, { name: API_GROUP }, AS_OPERATOR);
      member = await createTestUser(store, { password: PASSWORD });
      await addMember(store, API_GROUP, member.id, AS_OPERATOR);
      jar = new CookieJar();
      // Signs in once through the login form, asking for two resources: the form carries both.
      const { challenge } = pkce();
      const page = await browse(authorizationUrl(server.url, [['response_type', 'code'], ['client_id', app.client.clientId], ['redirect_uri', RP_REDIRECT_URI], ['scope', 'openid'], ['state', 's'], ['code_challenge', challenge], ['code_challenge_method', 'S256'], ...resources(ORDERS_URI, API_URI)]), jar);
      const html = await page.text();
      assert.equal(page.status, 200, html);
      const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? member.username : name === 'password' ? PASSWORD : value]);
      assert.deepEqual(fields.filter(([name]) => name === 'resource'), resources(ORDERS_URI, API_URI), 'the login form carries every resource');
      assertCodeRedirect(await submit(new URL(formAction(html), server.url).toString(), fields, jar), { redirectUri: RP_REDIRECT_URI, state: 's', issuer: server.issuer, status: 303 });
    });
    after(async () => server.close());

    /** A silent authorization request in the member's browser with these extra parameters. */
    async function authorization(extra: [string, string][], scope = 'openid'): Promise<{ response: Response; verifier: string }> {
      const { verifier, challenge } = pkce();
      const query: [string, string][] = [['response_type', 'code'], ['client_id', app.client.clientId], ['redirect_uri', RP_REDIRECT_URI], ['scope', scope], ['state', 'st'], ['prompt', 'none'], ['code_challenge', challenge], ['code_challenge_method', 'S256'], ...extra];
      return { response: await browse(authorizationUrl(server.url, query), jar), verifier };
    }

    async function code(extra: [string, string][], scope = 'openid'): Promise<{ code: string; verifier: string }> {
      const { response, verifier } = await authorization(extra, scope);
      return { code: assertCodeRedirect(response, { redirectUri: RP_REDIRECT_URI, state: 'st', issuer: server.issuer }), verifier };
    }

    const redeem = (issued: { code: string; verifier: string }, extra: [string, string][] = []) =>
      post(tokenUrl(), [['grant_type', 'authorization_code'], ['code', issued.code], ['redirect_uri', RP_REDIRECT_URI], ['code_verifier', issued.verifier], ...extra], asApp());

    async function introspect(token: string): Promise<Record<string, unknown>> {
      const response = await post(`${server.url}/uas/oauth2/introspection`, [['token', token]], { authorization: basic(orders.client.clientId, orders.secret) });
      assert.equal(response.status, 200);
      return response.body;
    }

    test('resource at the authorization endpoint (RI-05): each resource server in aud becomes an audience; introspection lists them in token_audiences, aud stays the asking client', async () => {
      const tokens = await redeem(await code(resources(ORDERS_URI, API_URI)));
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.equal(tokens.body.scope, `openid ${orders.client.clientId} ${api.clientId}`);
      const introspection = await introspect(tokens.body.access_token as string);
      assert.deepEqual([introspection.aud, introspection.token_audiences, introspection.scope], [orders.client.clientId, [orders.client.clientId, api.clientId], tokens.body.scope]);
      // Two URIs of one server, or the server asked both ways, are one audience.
      const twice = await redeem(await code(resources(ORDERS_URI, ORDERS_V2_URI), `openid ${orders.client.clientId}`));
      assert.equal(twice.body.scope, `openid ${orders.client.clientId}`);
    });

    test('the identity API is a resource server (RI-12): a token asked for by its resource URI works there', async () => {
      const tokens = await redeem(await code(resources(API_URI)));
      assert.equal(tokens.body.scope, `openid ${api.clientId}`);
      const response = await call(server, 'GET', `/2.0/users/${member.id}`, { authorization: `Bearer ${tokens.body.access_token as string}` });
      assert.equal(response.status, 200, response.text);
      // Without the API audience the same member's token is refused there (insufficient_scope).
      const other = await redeem(await code(resources(ORDERS_URI)));
      assert.equal((await call(server, 'GET', `/2.0/users/${member.id}`, { authorization: `Bearer ${other.body.access_token as string}` })).status, 403);
    });

    test('refused at the authorization endpoint (RI-06): malformed, unknown, outside aud or inactive resource is invalid_target; an audience outside aud asked as a scope value stays invalid_scope', async () => {
      const refused = async (extra: [string, string][], error: string, description: string, scope?: string) => {
        const params = assertErrorRedirect((await authorization(extra, scope)).response, { redirectUri: RP_REDIRECT_URI, error, state: 'st', issuer: server.issuer });
        assert.equal(params.get('error_description'), description);
      };
      const malformed = 'The resource parameter must be an absolute URI without a fragment (RFC 8707 section 2).';
      await refused(resources('/relative/path'), 'invalid_target', malformed);
      await refused(resources(`${ORDERS_URI}#fragment`), 'invalid_target', malformed);
      await refused(resources(`https://orders-${tag}.example/a b`), 'invalid_target', malformed);
      await refused(resources(`https://x.example/${'a'.repeat(2048)}`), 'invalid_target', malformed);
      await refused(resources(`${ORDERS_URI}/`), 'invalid_target', `The resource ${ORDERS_URI}/ is not a registered resource server's URI.`);
      await refused(resources(ORDERS_URI, OTHER_URI), 'invalid_target', `This client may not obtain tokens for the resource ${OTHER_URI} (client metadata aud).`);
      await refused(resources(SLEEPING_URI), 'invalid_target', `The resource ${SLEEPING_URI} belongs to an inactive resource server.`);
      const otherId = (await server.gatehouse.store.clients.findByResourceUri(OTHER_URI))!.clientId;
      await refused([], 'invalid_scope', `The scope value ${otherId} is a client_id this client may not request as an audience (client metadata aud).`, `openid ${otherId}`);
      await refused(Array.from({ length: 11 }, (_, i) => ['resource', `${ORDERS_URI}/${i}`]), 'invalid_target', 'At most 10 resource parameters are accepted.');
    });

    test('the scope-value way (RI-07) at the authorization and token endpoints still works, and mixes with resource', async () => {
      const tokens = await redeem(await code(resources(ORDERS_URI), `openid ${api.clientId}`));
      assert.equal(tokens.body.scope, `openid ${api.clientId} ${orders.client.clientId}`);
      const machine = await post(tokenUrl(), [['grant_type', 'client_credentials'], ['scope', orders.client.clientId]], asApp());
      assert.equal(machine.body.scope, orders.client.clientId);
    });

    test('authorization_code with resource (RI-08): narrows to granted audiences; another is invalid_target; an unknown one leaves the code usable', async () => {
      const issued = await code(resources(ORDERS_URI, API_URI));
      const unknown = await redeem(issued, resources(`https://nowhere-${tag}.example/`));
      assert.deepEqual(unknown.body, { error: 'invalid_target', error_description: `The resource https://nowhere-${tag}.example/ is not a registered resource server's URI.` });
      const narrowed = await redeem(issued, resources(ORDERS_V2_URI));
      assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
      assert.equal(narrowed.body.scope, `openid ${orders.client.clientId}`);
      assert.deepEqual((await introspect(narrowed.body.access_token as string)).token_audiences, [orders.client.clientId]);
      // The refresh token holds the whole grant (RFC 8707 §2.2): a refresh may ask for the other audience.
      const refreshed = await post(tokenUrl(), [['grant_type', 'refresh_token'], ['refresh_token', narrowed.body.refresh_token as string], ...resources(API_URI)], asApp());
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
      assert.equal(refreshed.body.scope, `openid ${api.clientId}`);
      // With a narrower scope too: scope decides the other values, resource the audiences.
      const both = await post(tokenUrl(), [['grant_type', 'refresh_token'], ['refresh_token', refreshed.body.refresh_token as string], ['scope', `${orders.client.clientId}`], ...resources(API_URI, ORDERS_URI)], asApp());
      assert.equal(both.status, 200, JSON.stringify(both.body));
      assert.equal(both.body.scope, `${orders.client.clientId} ${api.clientId}`);
      const widened = await redeem(await code(resources(API_URI)), resources(ORDERS_URI));
      assert.deepEqual(widened.body, { error: 'invalid_target', error_description: `The resource ${ORDERS_URI} was not granted; a token may only be narrowed to the audiences granted.` });
    });

    test('refresh_token with resource (RI-09): narrowing works, widening is invalid_target and does not spend the rotating refresh token', async () => {
      const tokens = await redeem(await code(resources(ORDERS_URI)));
      const refresh = (extra: [string, string][]) => post(tokenUrl(), [['grant_type', 'refresh_token'], ['refresh_token', tokens.body.refresh_token as string], ...extra], asApp());
      const widened = await refresh(resources(API_URI));
      assert.equal(widened.status, 400);
      assert.deepEqual(widened.body, { error: 'invalid_target', error_description: `The resource ${API_URI} was not granted; a token may only be narrowed to the audiences granted.` });
      const malformed = await refresh(resources('urn:x#y'));
      assert.deepEqual(malformed.body, { error: 'invalid_target', error_description: 'The resource parameter must be an absolute URI without a fragment (RFC 8707 section 2).' });
      const narrowed = await refresh(resources(ORDERS_URI));
      assert.equal(narrowed.status, 200, JSON.stringify(narrowed.body));
      assert.equal(narrowed.body.scope, `openid ${orders.client.clientId}`);
    });

    test('client_credentials with resource (RI-10): checked against aud; outside it, unknown, inactive or malformed is invalid_target', async () => {
      const granted = await post(tokenUrl(), [['grant_type', 'client_credentials'], ...resources(ORDERS_URI)], asApp());
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(granted.body.scope, orders.client.clientId);
      assert.deepEqual((await introspect(granted.body.access_token as string)).token_audiences, [orders.client.clientId]);
      const refused = async (uri: string, description: string) => {
        const response = await post(tokenUrl(), [['grant_type', 'client_credentials'], ...resources(uri)], asApp());
        assert.equal(response.status, 400);
        assert.deepEqual(response.body, { error: 'invalid_target', error_description: description });
      };
      await refused(OTHER_URI, `This client may not obtain tokens for the resource ${OTHER_URI} (client metadata aud).`);
      await refused(SLEEPING_URI, `The resource ${SLEEPING_URI} belongs to an inactive resource server.`);
      await refused(`https://nowhere-${tag}.example/`, `The resource https://nowhere-${tag}.example/ is not a registered resource server's URI.`);
      await refused('relative', 'The resource parameter must be an absolute URI without a fragment (RFC 8707 section 2).');
    });

    test('password with resource (RI-10): checked against aud before the password', async () => {
      const granted = await post(tokenUrl(), [['grant_type', 'password'], ['username', member.username], ['password', PASSWORD], ['scope', 'openid'], ...resources(API_URI)], asApp());
      assert.equal(granted.status, 200, JSON.stringify(granted.body));
      assert.equal(granted.body.scope, `openid ${api.clientId}`);
      const refused = await post(tokenUrl(), [['grant_type', 'password'], ['username', member.username], ['password', 'wrong'], ...resources(OTHER_URI)], asApp());
      assert.deepEqual(refused.body, { error: 'invalid_target', error_description: `This client may not obtain tokens for the resource ${OTHER_URI} (client metadata aud).` });
    });

    test('device authorization with resource (RI-11): granted into the approved scope; outside aud is invalid_target; the poll may narrow only', async () => {
      const endpoint = `${server.url}/uas/oauth2/device_authorization`;
      const refused = await post(endpoint, [['scope', 'openid'], ...resources(OTHER_URI)], asApp());
      assert.equal(refused.status, 400);
      assert.deepEqual(refused.body, { error: 'invalid_target', error_description: `This client may not obtain tokens for the resource ${OTHER_URI} (client metadata aud).` });
      const approve = async (): Promise<string> => {
        const issued = await post(endpoint, [['scope', 'openid'], ...resources(ORDERS_URI, API_URI)], asApp());
        assert.equal(issued.status, 200, JSON.stringify(issued.body));
        const page = `${server.url}/uas/oauth2/device`;
        const form = new Map(formFields(await (await browse(page, jar)).text()));
        const confirmation = await (await submit(page, { csrf_token: form.get('csrf_token')!, user_code: issued.body.user_code as string }, jar)).text();
        const decided = await submit(`${server.url}${formAction(confirmation)}`, { ...Object.fromEntries(formFields(confirmation)), decision: 'approve' }, jar);
        assert.equal(decided.status, 200);
        return issued.body.device_code as string;
      };
      const poll = (deviceCode: string, extra: [string, string][] = []) => post(tokenUrl(), [['grant_type', DEVICE_GRANT], ['device_code', deviceCode], ...extra], asApp());
      const whole = await poll(await approve());
      assert.equal(whole.status, 200, JSON.stringify(whole.body));
      assert.equal(whole.body.scope, `openid ${orders.client.clientId} ${api.clientId}`);
      const narrowed = await poll(await approve(), resources(API_URI));
      assert.equal(narrowed.body.scope, `openid ${api.clientId}`);
      const widened = await poll(await approve(), resources(`https://nowhere-${tag}.example/`));
      assert.equal(widened.body.error, 'invalid_target');
    });

    test('introspection (RI-13): token_audiences is an empty array for a token meant for no resource server', async () => {
      const tokens = await redeem(await code([]));
      assert.equal(tokens.body.scope, 'openid');
      const introspection = await introspect(tokens.body.access_token as string);
      assert.deepEqual([introspection.aud, introspection.token_audiences], [orders.client.clientId, []]);
    });

    test('a legacy aud entry naming a client that is not a resource server (stored before the rule) is still honoured (RI-04)', async () => {
      const store = server.gatehouse.store;
      const { client: legacyAudience } = await createTestClient(store, { grantTypes: [], redirectUris: [] });
      const { client, clientSecret } = await createTestClient(store, { grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [legacyAudience.clientId] } });
      const response = await post(tokenUrl(), [['grant_type', 'client_credentials'], ['scope', legacyAudience.clientId]], { authorization: basic(client.clientId, clientSecret) });
      assert.equal(response.status, 200, JSON.stringify(response.body));
      assert.equal(response.body.scope, legacyAudience.clientId);
    });
  });
}
