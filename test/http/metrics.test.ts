/**
 * Issue 11, item 5: Prometheus metrics on a separate listener (GATEHOUSE_METRICS_PORT), behind a
 * bearer token when GATEHOUSE_METRICS_TOKEN is set, and nowhere unless configured. Counters move
 * with logins and token requests; request series are labelled by route pattern, never the URL.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { SIGNING_ALGS } from '../../src/protocol/constants.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { basic, mintCode, pkcePair, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { CookieJar, createTestClient, formAction, formFields, submit, createTestUser, loginThroughForm, pkce, redirectParams, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import { metricNames, parseExposition, scrape } from '../helpers/metrics.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const TOKEN = 'a metrics token of at least thirty-two characters';
const PASSWORD = 'correct horse battery staple';

/** The gatehouse-specific samples, without the process and Node.js ones. */
function own(text: string): Map<string, number> {
  return new Map([...parseExposition(text)].filter(([name]) => name.startsWith('gatehouse_')));
}

for (const kind of DATABASES) {
  describe(`metrics on ${kind.name}`, () => {
    const clock = new ManualClock(Date.now());
    let server: RunningServer;
    let metricsUrl: string;
    before(async () => {
      server = await startServer(kind, { clock, env: { GATEHOUSE_METRICS_PORT: '0', GATEHOUSE_METRICS_TOKEN: TOKEN } });
      const address = server.gatehouse.metrics!.server!.address() as { address: string; port: number };
      assert.equal(address.address, '127.0.0.1', 'bound to loopback by default');
      metricsUrl = `http://127.0.0.1:${address.port}/metrics`;
    });
    after(async () => server.close());

    test('the listener wants the bearer token; the main port has no /metrics', async () => {
      assert.deepEqual(await scrape(metricsUrl), { status: 401, contentType: 'text/plain; charset=utf-8', text: 'unauthorized\n' });
      assert.equal((await scrape(metricsUrl, `${TOKEN}x`)).status, 401);
      assert.equal((await scrape(metricsUrl.replace('/metrics', '/other'), TOKEN)).status, 404);
      const ok = await scrape(metricsUrl, TOKEN);
      assert.equal(ok.status, 200);
      assert.equal(ok.contentType, 'text/plain; version=0.0.4; charset=utf-8');
      assert.equal((await fetch(`${server.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 404);
    });

    test('a login, a failed login and a token request move their counters; requests are counted by route pattern', async () => {
      const before = own((await scrape(metricsUrl, TOKEN)).text);
      const store = server.gatehouse.store;
      const { client, clientSecret } = await createTestClient(store);
      const user = await createTestUser(store, { password: PASSWORD });
      const { verifier, challenge } = pkce();
      const query = { response_type: 'code', client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, scope: 'openid', state: 's', code_challenge: challenge, code_challenge_method: 'S256' };
      const failed = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, query, { username: user.username, password: 'wrong password' });
      assert.equal(failed.status, 401, "the form again, after a wrong password");
      const signedIn = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, query, { username: user.username, password: PASSWORD });
      const code = redirectParams(signedIn).get('code')!;
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: RP_REDIRECT_URI, code_verifier: verifier }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      // A URL with an id in it and a query, and one no route matches.
      await fetch(`${server.url}/customerid-rest/services/2.0/users/some-user-id-123?attributes=x`);
      await fetch(`${server.url}/uas/no-such-path-456?q=1`);
      clock.advance(10_000);

      const scraped = await scrape(metricsUrl, TOKEN);
      const afterwards = own(scraped.text);
      const moved = (name: string) => (afterwards.get(name) ?? 0) - (before.get(name) ?? 0);
      assert.equal(moved('gatehouse_logins_total{outcome="succeeded"}'), 1);
      assert.equal(moved('gatehouse_logins_total{outcome="wrong_password"}'), 1);
      assert.equal(moved('gatehouse_token_grants_total{grant_type="authorization_code",outcome="issued"}'), 1);
      assert.equal(moved('gatehouse_http_request_duration_seconds_count{method="POST",route="/uas/oauth2/token",status="200"}'), 1);
      // The login form was shown twice and posted twice.
      assert.equal(moved('gatehouse_http_request_duration_seconds_count{method="GET",route="/uas/oauth2/authorization",status="200"}'), 2);
      assert.equal(moved('gatehouse_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}'), 1);
      const routes = new Set([...afterwards.keys()].filter((k) => k.startsWith('gatehouse_http_request_duration_seconds_count')).map((k) => /route="([^"]*)"/.exec(k)![1]));
      assert.ok(![...routes].some((route) => /some-user-id|no-such-path|\?/.test(route!)), `no raw URL in a route label: ${[...routes].join(' ')}`);
      assert.ok(routes.has('/customerid-rest/services/2.0/users/:id'), [...routes].join(' '));
      assert.equal(afterwards.get('gatehouse_processes'), 1);
      assert.equal(afterwards.get('gatehouse_sso_sessions'), 1, 'the one session of the successful login');
      // The keys were created when the server started, at the clock's start; the clock moved 10 s.
      for (const alg of SIGNING_ALGS) assert.equal(afterwards.get(`gatehouse_signing_key_age_seconds{alg="${alg}"}`), 10, alg);
      assert.ok(moved('gatehouse_store_query_duration_seconds_count{outcome="ok"}') > 0, 'store queries are timed');
      if (kind.name === 'postgres') {
        assert.equal(afterwards.get('gatehouse_store_pool_max'), 10);
        assert.equal(afterwards.get('gatehouse_store_pool_waiting'), 0);
        assert.ok((afterwards.get('gatehouse_store_pool_connections{state="idle"}') ?? 0) >= 1);
      } else {
        assert.equal(afterwards.get('gatehouse_store_pool_max'), undefined, 'no pool on SQLite');
      }
      // Process metrics, per prom-client's defaults.
      const all = parseExposition(scraped.text);
      assert.ok(all.has('process_cpu_seconds_total'));
      assert.ok(all.has('nodejs_eventloop_lag_seconds'));
    });
    test('a login with a second factor counts second_factor_required after the password, then succeeded after the code (issue 24)', async () => {
      const before = own((await scrape(metricsUrl, TOKEN)).text);
      const store = server.gatehouse.store;
      const { client } = await createTestClient(store);
      const user = await createTestUser(store, { password: PASSWORD });
      const secret = await enrolTotp(store, user.id, clock.now());
      const jar = new CookieJar();
      const query = { response_type: 'code', client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, scope: 'openid', state: 's' };
      const asked = await loginThroughForm({ baseUrl: server.url, jar }, query, { username: user.username, password: PASSWORD });
      const html = await asked.text();
      const signedIn = await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), code: totpAt(secret, clock.now()) }, jar);
      assert.equal(signedIn.status, 303);
      const afterwards = own((await scrape(metricsUrl, TOKEN)).text);
      const moved = (name: string) => (afterwards.get(name) ?? 0) - (before.get(name) ?? 0);
      assert.deepEqual([moved('gatehouse_logins_total{outcome="second_factor_required"}'), moved('gatehouse_logins_total{outcome="succeeded"}')], [1, 1]);
    });

    test('a client_credentials grant is counted under its own grant_type (CC-01)', async () => {
      const before = own((await scrape(metricsUrl, TOKEN)).text);
      const { client, clientSecret } = await createTestClient(server.gatehouse.store, { grantTypes: ['client_credentials'], redirectUris: [], refreshTokens: false });
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const afterwards = own((await scrape(metricsUrl, TOKEN)).text);
      const moved = (name: string) => (afterwards.get(name) ?? 0) - (before.get(name) ?? 0);
      assert.equal(moved('gatehouse_token_grants_total{grant_type="client_credentials",outcome="issued"}'), 1);
      assert.equal(moved('gatehouse_token_grants_total{grant_type="authorization_code",outcome="issued"}'), 0);
    });

    test('a wrong code_verifier spends the code; the right retry counts as retried, a second use of a redeemed code as replayed (issue 22 item 11)', async () => {
      const store = server.gatehouse.store;
      const { client, clientSecret } = await createTestClient(store);
      const user = await createTestUser(store, { password: PASSWORD });
      const auth = { authorization: basic(client.clientId, clientSecret) };
      const redeem = (code: string, verifier: string) =>
        postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]!, code_verifier: verifier }, auth);
      const before = own((await scrape(metricsUrl, TOKEN)).text);

      const pair = pkcePair();
      const { code } = await mintCode(store, client, user, { codeChallenge: pair.challenge, codeChallengeMethod: 'S256', now: clock.now() });
      assert.equal((await redeem(code, pkcePair().verifier)).body.error_description, 'The code_verifier does not match the code_challenge.');
      const retry = await redeem(code, pair.verifier);
      assert.deepEqual(retry.body, { error: 'invalid_grant', error_description: 'The authorization code was spent by an earlier, refused redemption; start a new authorization request.' }, 'the code stays spent');

      const redeemed = await mintCode(store, client, user, { codeChallenge: pair.challenge, codeChallengeMethod: 'S256', now: clock.now() });
      assert.equal((await redeem(redeemed.code, pair.verifier)).status, 200);
      assert.equal((await redeem(redeemed.code, pair.verifier)).body.error_description, 'The authorization code has already been used.');

      const afterwards = own((await scrape(metricsUrl, TOKEN)).text);
      const moved = (name: string) => (afterwards.get(name) ?? 0) - (before.get(name) ?? 0);
      assert.deepEqual(
        ['issued', 'retried', 'replayed'].map((outcome) => moved(`gatehouse_token_grants_total{grant_type="authorization_code",outcome="${outcome}"}`)),
        [1, 1, 1],
      );
    });

    test('a password grant counts as a login and as a password grant, and adds no SSO session (PW-01)', async () => {
      const store = server.gatehouse.store;
      const { client, clientSecret } = await createTestClient(store, { grantTypes: ['password'], redirectUris: [] });
      const user = await createTestUser(store, { password: PASSWORD });
      const before = own((await scrape(metricsUrl, TOKEN)).text);
      const auth = { authorization: basic(client.clientId, clientSecret) };
      assert.equal((await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'password', username: user.username, password: 'wrong password' }, auth)).status, 400);
      assert.equal((await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'password', username: user.username, password: PASSWORD, scope: 'openid' }, auth)).status, 200);
      const afterwards = own((await scrape(metricsUrl, TOKEN)).text);
      const moved = (name: string) => (afterwards.get(name) ?? 0) - (before.get(name) ?? 0);
      assert.equal(moved('gatehouse_logins_total{outcome="succeeded"}'), 1);
      assert.equal(moved('gatehouse_logins_total{outcome="wrong_password"}'), 1);
      assert.equal(moved('gatehouse_token_grants_total{grant_type="password",outcome="issued"}'), 1);
      assert.equal(moved('gatehouse_token_grants_total{grant_type="authorization_code",outcome="issued"}'), 0);
      assert.equal(moved('gatehouse_sso_sessions'), 0);
    });
  });

  describe(`the Grafana dashboard against a scrape on ${kind.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(kind, { env: { GATEHOUSE_METRICS_PORT: '0' } });
    });
    after(async () => server.close());

    test('every metric docs/grafana-dashboard.json queries exists, and it shows every gatehouse metric', async () => {
      const { port } = server.gatehouse.metrics!.server!.address() as { port: number };
      const scraped = await scrape(`http://127.0.0.1:${port}/metrics`);
      assert.equal(scraped.status, 200, 'no token configured: none asked');
      const families = new Set(metricNames(scraped.text));
      const dashboard = JSON.parse(readFileSync(new URL('../../docs/grafana-dashboard.json', import.meta.url), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
      const queried = new Set(dashboard.panels.flatMap((panel) => panel.targets.flatMap((target) => [...target.expr.matchAll(/\b([a-z][a-z0-9_]*)\{/g)].map((m) => m[1]!))));
      const family = (name: string) => (families.has(name) ? name : name.replace(/_(bucket|count|sum)$/, ''));
      // The pool exists on PostgreSQL only.
      const expected = (name: string) => kind.name === 'postgres' || !name.startsWith('gatehouse_store_pool_');
      assert.deepEqual([...queried].filter(expected).filter((name) => !families.has(family(name))), [], 'queried but not exposed');
      const shown = new Set([...queried].map(family));
      assert.deepEqual([...families].filter((name) => name.startsWith('gatehouse_') && !shown.has(name)), [], 'exposed but not on the dashboard');
    });
  });

  describe(`no metrics unless configured, on ${kind.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startServer(kind);
    });
    after(async () => server.close());

    test('nothing is collected or served', async () => {
      assert.equal(server.gatehouse.metrics, undefined);
      assert.equal((await fetch(`${server.url}/metrics`)).status, 404);
    });
  });
}
