/**
 * Levels of authentication and step-up over HTTP (issue 24, item 3; docs/authorization.md,
 * "Levels of authentication"), with openid-client as the relying party: acr_values steps a
 * password session up by asking only for the TOTP code; an essential acr the user cannot reach is
 * unmet_authentication_requirements at the redirect URI; a voluntary one goes on lower; the
 * client's default_acr_values and default_max_age; a policy requiring MFA for one client and not
 * another in one SSO session; prompt=none; amr/acr exact in the ID token, userinfo, introspection
 * and a refresh; discovery's acr_values_supported exact. The clock is injected (TOTP codes).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oidc from 'openid-client';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { manageCall, manageTokens } from '../helpers/manage.ts';
import { consentSessionBinding } from '../../src/http/interaction/consent-page.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'levels of assurance';
const REDIRECT = 'https://levels.example.com/callback';
const PWD = 'urn:test:pwd';
const MFA = 'urn:test:mfa';
const LEVELS = `${PWD}=single,${MFA}=multi,phr`;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

for (const db of DATABASES) {
  describe(`levels of authentication and step-up on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    let server: RunningServer;
    const rps = new Map<string, oidc.Configuration>();

    before(async () => {
      server = await startServer(db, { clock, env: { GATEHOUSE_ACR_LEVELS: LEVELS } });
      await server.gatehouse.store.policies.insert({ document: parsePolicyDocument({ name: 'needs-mfa', minimum_authentication: 'multi' }), version: 1, createdAt: clock.now(), updatedAt: clock.now() });
    });
    after(async () => server.close());

    /** A relying party registered with `metadata` (and the authorization_code and refresh grants). */
    async function relyingParty(name: string, metadata: Record<string, unknown> = {}): Promise<oidc.Configuration> {
      const { store } = server.gatehouse;
      const rp = await registerClient({ clients: store.clients, transaction: store.transaction, clock, random: cryptoRandom }, { client_name: name, redirect_uris: [REDIRECT], grant_types: ['authorization_code', 'refresh_token'], refresh_tokens: true, ...metadata });
      const config = await oidc.discovery(new URL(server.issuer), rp.client.clientId, rp.clientSecret, oidc.ClientSecretBasic(rp.clientSecret!), { execute: [oidc.allowInsecureRequests] });
      rps.set(name, config);
      return config;
    }

    type Page = 'login' | 'code' | 'enrol' | 'create-passkey';
    /**
     * One authorization request in the browser `jar`: the pages shown on the way (answered with the
     * password or `code()`), then the redirect's parameters and, for a code, the tokens.
     */
    async function authorize(config: oidc.Configuration, jar: CookieJar, user: User, extra: Record<string, string> = {}, code?: () => string) {
      const verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256', state, nonce, ...extra });
      const pages: Page[] = [];
      let answer = await browse(url.href, jar);
      while (answer.status === 200 || answer.status === 401) {
        const html = await answer.text();
        const fields = Object.fromEntries(formFields(html));
        // A passkey to create (enrol-passkey.test.ts goes on from there): the pages so far.
        if (/data-passkey="register"/.test(html) && fields.secret === undefined) return { pages: [...pages, 'create-passkey' as const], error: undefined, state: null, sent: state, tokens: undefined };
        const page: Page = /name="password"/.test(html) ? 'login' : fields.secret !== undefined ? 'enrol' : 'code';
        assert.ok(page === 'login' || /autocomplete="one-time-code"/.test(html), 'a login, enrolment or second-factor page');
        pages.push(page);
        if (pages.length > 3) break;
        // The enrolment page: the code the new app would show for the secret on the page.
        const filled = page === 'login' ? { ...fields, username: user.username, password: PASSWORD } : { ...fields, code: page === 'enrol' ? totpAt(fields.secret!, clock.now()) : code!() };
        answer = await submit(new URL(formAction(html), server.url).toString(), filled, jar);
      }
      const location = new URL(answer.headers.get('location')!);
      if (location.searchParams.has('error')) return { pages, error: location.searchParams.get('error'), state: location.searchParams.get('state'), sent: state, tokens: undefined };
      const tokens = await oidc.authorizationCodeGrant(config, location, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
      return { pages, error: undefined, state: location.searchParams.get('state'), sent: state, tokens };
    }

    /** amr and acr as the ID token, userinfo, introspection and, after a refresh, introspection and userinfo say them. */
    async function everywhere(config: oidc.Configuration, tokens: oidc.TokenEndpointResponse & oidc.TokenEndpointResponseHelpers, sub: string) {
      const id = tokens.claims()!;
      const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, sub);
      const introspected = await oidc.tokenIntrospection(config, tokens.access_token);
      const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
      const refreshedIntrospection = await oidc.tokenIntrospection(config, refreshed.access_token);
      const refreshedUserinfo = await oidc.fetchUserInfo(config, refreshed.access_token, sub);
      const facts = [id, userinfo, introspected, refreshedIntrospection, refreshedUserinfo].map((c) => [c.amr, c.acr]);
      const first = JSON.stringify(facts[0]);
      assert.ok(facts.every((f) => JSON.stringify(f) === first), `one truth everywhere: ${JSON.stringify(facts)}`);
      return { amr: facts[0]![0], acr: facts[0]![1], authTime: id.auth_time };
    }

    const aUser = () => createTestUser(server.gatehouse.store, { password: PASSWORD });
    const withTotp = async () => {
      const user = await aUser();
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      return { user, code: () => totpAt(secret, clock.now()) };
    };

    test('discovery lists exactly the configured acr values', async () => {
      const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.deepEqual(metadata.acr_values_supported, [PWD, MFA, 'phr']);
    });

    test('password only: amr ["pwd"], acr the single level, everywhere; password + TOTP: ["pwd","otp","mfa"] and the multi level', async () => {
      const rp = await relyingParty('plain');
      const plain = await aUser();
      const one = await authorize(rp, new CookieJar(), plain);
      assert.deepEqual(one.pages, ['login']);
      assert.deepEqual(await everywhere(rp, one.tokens!, plain.id).then((f) => [f.amr, f.acr]), [['pwd'], PWD]);
      const { user, code } = await withTotp();
      const two = await authorize(rp, new CookieJar(), user, {}, code);
      assert.deepEqual(two.pages, ['login', 'code']);
      assert.deepEqual(await everywhere(rp, two.tokens!, user.id).then((f) => [f.amr, f.acr]), [['pwd', 'otp', 'mfa'], MFA]);
    });

    test('acr_values steps a password session up by asking only for the TOTP code: the union amr, a new auth_time, the level asked for', async () => {
      const rp = await relyingParty('step-up');
      const user = await aUser();
      const jar = new CookieJar();
      // A password session (the user had no factor yet), then a TOTP factor enrolled.
      const first = await authorize(rp, jar, user);
      assert.equal((await everywhere(rp, first.tokens!, user.id)).acr, PWD);
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      clock.advance(60_000);
      // prompt=none shows no page: a voluntary level is skipped, the code at the session's level.
      const silent = await authorize(rp, jar, user, { acr_values: MFA, prompt: 'none' });
      assert.deepEqual([silent.pages, (await everywhere(rp, silent.tokens!, user.id)).acr], [[], PWD]);
      const stepped = await authorize(rp, jar, user, { acr_values: `${MFA} ${PWD}` }, () => totpAt(secret, clock.now()));
      assert.deepEqual(stepped.pages, ['code'], 'no password again: only the code');
      const facts = await everywhere(rp, stepped.tokens!, user.id);
      assert.deepEqual([facts.amr, facts.acr], [['pwd', 'otp', 'mfa'], MFA]);
      assert.equal(facts.authTime, Math.floor(clock.now() / 1000), 'auth_time is the step-up\'s');
      // The stepped-up session now answers silently at that level; a single-level request gets the first value it names that is met.
      const again = await authorize(rp, jar, user, { acr_values: MFA });
      assert.deepEqual(again.pages, []);
      const lower = await authorize(rp, jar, user, { acr_values: PWD });
      assert.deepEqual([lower.pages, (await everywhere(rp, lower.tokens!, user.id)).acr], [[], PWD]);
    });

    test('an essential acr no sign-in can meet: unmet_authentication_requirements at the redirect URI with the state; a voluntary one: a code at the lower level; phr for a TOTP user: a passkey to create after the code', async () => {
      const rp = await relyingParty('unmet');
      const user = await aUser();
      const jar = new CookieJar();
      const unknown = await authorize(rp, new CookieJar(), user, { claims: JSON.stringify({ userinfo: { acr: { essential: true, values: ['urn:not:configured'] } } }) });
      assert.deepEqual([unknown.pages, unknown.error, unknown.state === unknown.sent], [[], 'unmet_authentication_requirements', true], 'no configured value: no sign-in could meet it, so not even the login page');
      const voluntary = await authorize(rp, jar, user, { acr_values: 'phr' });
      assert.equal((await everywhere(rp, voluntary.tokens!, user.id)).acr, PWD);
      const { user: totpUser, code } = await withTotp();
      const passkeyOnly = await authorize(rp, new CookieJar(), totpUser, { claims: JSON.stringify({ id_token: { acr: { essential: true, values: ['phr'] } } }) }, code);
      assert.deepEqual([passkeyOnly.pages, passkeyOnly.tokens], [['login', 'code', 'create-passkey'], undefined], 'TOTP never reaches phr: after it, a passkey to create, nothing issued (SA124)');
    });

    test('a policy requiring MFA for client A but not client B, in one SSO session: B silent, A asks only for the code; prompt=none at A is login_required before', async () => {
      const a = await relyingParty('A', { authorization_policy: 'needs-mfa' });
      const b = await relyingParty('B');
      const user = await aUser();
      const jar = new CookieJar();
      const atB = await authorize(b, jar, user);
      assert.deepEqual(atB.pages, ['login']);
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const silentA = await authorize(a, jar, user, { prompt: 'none' });
      assert.deepEqual([silentA.pages, silentA.error], [[], 'login_required']);
      const atA = await authorize(a, jar, user, {}, () => totpAt(secret, clock.now()));
      assert.deepEqual(atA.pages, ['code']);
      assert.deepEqual(await everywhere(a, atA.tokens!, user.id).then((f) => [f.amr, f.acr]), [['pwd', 'otp', 'mfa'], MFA]);
      const againB = await authorize(b, jar, user);
      assert.deepEqual(againB.pages, [], 'B: single sign-on, the session now holds MFA');
      assert.deepEqual(await everywhere(b, againB.tokens!, user.id).then((f) => [f.amr, f.acr]), [['pwd', 'otp', 'mfa'], MFA]);
    });

    test('enrolment required by the policy: a user without a second factor adds an authenticator app after the password, before any code; the app is then theirs', async () => {
      const a = await relyingParty('A-enrol', { authorization_policy: 'needs-mfa' });
      const user = await aUser();
      const enrolled = await authorize(a, new CookieJar(), user);
      assert.deepEqual(enrolled.pages, ['login', 'enrol']);
      assert.deepEqual(await everywhere(a, enrolled.tokens!, user.id).then((f) => [f.amr, f.acr]), [['pwd', 'otp', 'mfa'], MFA]);
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).map((f) => f.kind), ['totp']);
      // Nothing is issued on a wrong code: the page again, no session, no factor.
      const other = await aUser();
      const jar = new CookieJar();
      const login = await browse(oidc.buildAuthorizationUrl(a, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }).href, jar);
      const loginHtml = await login.text();
      const atEnrol = await submit(new URL(formAction(loginHtml), server.url).toString(), { ...Object.fromEntries(formFields(loginHtml)), username: other.username, password: PASSWORD }, jar);
      const enrolHtml = await atEnrol.text();
      const wrong = await submit(new URL(formAction(enrolHtml), server.url).toString(), { ...Object.fromEntries(formFields(enrolHtml)), code: '000000' }, jar);
      assert.deepEqual([wrong.status, jar.cookies.has('gatehouse_session'), (await server.gatehouse.store.factors.list(other.id)).length], [401, false, 0]);
      // A phishing-resistant level: the page offers a passkey only (test/http/enrol-passkey.test.ts).
      const phrJar = new CookieJar();
      const phrLogin = await (await browse(oidc.buildAuthorizationUrl(a, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256', claims: JSON.stringify({ id_token: { acr: { essential: true, value: 'phr' } } }) }).href, phrJar)).text();
      const phrPage = await (await submit(new URL(formAction(phrLogin), server.url).toString(), { ...Object.fromEntries(formFields(phrLogin)), username: (await aUser()).username, password: PASSWORD }, phrJar)).text();
      assert.deepEqual([/data-passkey="register"/.test(phrPage), /name="secret"/.test(phrPage), /name="code"/.test(phrPage)], [true, false, false]);
    });

    test('enrolment at sign-in: the right code posted eight times at once stores one factor and issues one code; the other posts find nothing held', async () => {
      const a = await relyingParty('A-enrol-race', { authorization_policy: 'needs-mfa' });
      const user = await aUser();
      const jar = new CookieJar();
      const login = await browse(oidc.buildAuthorizationUrl(a, { redirect_uri: REDIRECT, scope: 'openid', code_challenge: 'x'.repeat(43), code_challenge_method: 'S256' }).href, jar);
      const loginHtml = await login.text();
      const atEnrol = await submit(new URL(formAction(loginHtml), server.url).toString(), { ...Object.fromEntries(formFields(loginHtml)), username: user.username, password: PASSWORD }, jar);
      const enrolHtml = await atEnrol.text();
      const fields = Object.fromEntries(formFields(enrolHtml));
      const answers = await Promise.all(Array.from({ length: 8 }, () => submit(new URL(formAction(enrolHtml), server.url).toString(), { ...fields, code: totpAt(fields.secret!, clock.now()) }, jar)));
      const codes = answers.filter((r) => r.status === 303 && new URL(r.headers.get('location')!).searchParams.has('code'));
      assert.deepEqual([codes.length, (await server.gatehouse.store.factors.list(user.id)).map((f) => f.kind)], [1, ['totp']]);
    });

    test('the consent form of a third-party client whose policy requires MFA, posted from a password session without the step-up: login_required, no code', async () => {
      const c = await relyingParty('C', { authorization_policy: 'needs-mfa', consent_required: true });
      const user = await aUser();
      const jar = new CookieJar();
      await authorize(await relyingParty('D'), jar, user);
      const session = await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now());
      // Any page of this browser gives the CSRF cookie and its token.
      const page = await (await browse(oidc.buildAuthorizationUrl(c, { redirect_uri: REDIRECT, scope: 'openid', prompt: 'login' }).href, jar)).text();
      const csrf = Object.fromEntries(formFields(page)).csrf_token!;
      const forged = await submit(`${server.issuer}/oauth2/authorization/consent`, { client_id: c.clientMetadata().client_id, redirect_uri: REDIRECT, response_type: 'code', scope: 'openid', state: 'forged', csrf_token: csrf, consent_session: consentSessionBinding(session!), decision: 'allow' }, jar);
      const location = new URL(forged.headers.get('location')!);
      assert.deepEqual([location.searchParams.get('error'), location.searchParams.get('code')], ['login_required', null]);
    });

    test('a refresh keeps the original amr and acr, and gets nothing once the policy requires more than they prove', async () => {
      const { store } = server.gatehouse;
      await store.policies.insert({ document: parsePolicyDocument({ name: 'raised-later' }), version: 1, createdAt: clock.now(), updatedAt: clock.now() });
      const rp = await relyingParty('E', { authorization_policy: 'raised-later' });
      const user = await aUser();
      const { tokens } = await authorize(rp, new CookieJar(), user);
      const before = await oidc.refreshTokenGrant(rp, tokens!.refresh_token!);
      assert.deepEqual([(await oidc.tokenIntrospection(rp, before.access_token)).acr], [PWD]);
      await store.policies.update(parsePolicyDocument({ name: 'raised-later', minimum_authentication: 'multi' }), clock.now());
      await assert.rejects(oidc.refreshTokenGrant(rp, before.refresh_token ?? tokens!.refresh_token!), (error: { error?: string }) => error.error === 'invalid_grant');
    });

    test('other ways in follow the policy: the password grant is invalid_grant; a device approval from a password session is access_denied; the policy round-trips through the management API', async () => {
      const { store } = server.gatehouse;
      const user = await aUser();
      const grantClient = await createTestClient(store, { grantTypes: ['password'], authorizationPolicy: 'needs-mfa' });
      const grant = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'password', username: user.username, password: PASSWORD, scope: 'openid' }, { authorization: basic(grantClient.client.clientId, grantClient.clientSecret) });
      assert.deepEqual([grant.status, grant.body.error], [400, 'invalid_grant']);
      const { client: device } = await createTestClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT], authorizationPolicy: 'needs-mfa' });
      const issued = (await postForm(`${server.issuer}/oauth2/device_authorization`, { client_id: device.clientId, scope: 'openid' })).body as { device_code: string; user_code: string };
      const jar = new CookieJar();
      const pageUrl = `${server.issuer}/oauth2/device`;
      const form = new Map(formFields(await (await browse(pageUrl, jar)).text()));
      let html = await (await submit(pageUrl, { csrf_token: form.get('csrf_token')!, user_code: issued.user_code }, jar)).text();
      html = await (await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), username: user.username, password: PASSWORD }, jar)).text();
      await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), decision: 'approve' }, jar);
      const poll = await postForm(`${server.issuer}/oauth2/token`, { grant_type: DEVICE_GRANT, device_code: issued.device_code, client_id: device.clientId });
      assert.deepEqual([poll.status, poll.body.error], [400, 'access_denied']);
      const tokens = await manageTokens(server);
      const created = await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'api-mfa', minimum_authentication: 'phr' } });
      assert.deepEqual([created.status, created.json.minimum_authentication], [201, 'phr'], created.text);
      const bad = await manageCall(server, 'POST', '/policies', { token: tokens.admin, body: { name: 'api-bad', minimum_authentication: 'strong' } });
      assert.deepEqual([bad.status, bad.json.errors?.[0]?.field], [400, 'minimum_authentication']);
    });

    test('the device page steps a password session up for a client whose policy requires MFA: only the code, then the confirmation; the device\'s tokens say both', async () => {
      const { store } = server.gatehouse;
      const user = await aUser();
      const jar = new CookieJar();
      await authorize(await relyingParty('F'), jar, user);
      const secret = await enrolTotp(store, user.id, clock.now());
      const { client: device } = await createTestClient(store, { tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT], authorizationPolicy: 'needs-mfa' });
      const issued = (await postForm(`${server.issuer}/oauth2/device_authorization`, { client_id: device.clientId, scope: 'openid' })).body as { device_code: string; user_code: string };
      const pageUrl = `${server.issuer}/oauth2/device`;
      const form = new Map(formFields(await (await browse(pageUrl, jar)).text()));
      let html = await (await submit(pageUrl, { csrf_token: form.get('csrf_token')!, user_code: issued.user_code }, jar)).text();
      assert.doesNotMatch(html, /name="password"/, 'no password again');
      assert.match(html, /autocomplete="one-time-code"/);
      html = await (await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), code: totpAt(secret, clock.now()) }, jar)).text();
      await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), decision: 'approve' }, jar);
      const poll = await postForm(`${server.issuer}/oauth2/token`, { grant_type: DEVICE_GRANT, device_code: issued.device_code, client_id: device.clientId });
      assert.equal(poll.status, 200, JSON.stringify(poll.body));
      const claims = JSON.parse(Buffer.from((poll.body.id_token as string).split('.')[1]!, 'base64url').toString()) as { amr: string[]; acr: string };
      assert.deepEqual([claims.amr, claims.acr], [['pwd', 'otp', 'mfa'], MFA]);
    });

    test('the client\'s default_acr_values step up like acr_values; default_max_age asks for the password again', async () => {
      const defaults = await relyingParty('defaults', { default_acr_values: [MFA] });
      const aged = await relyingParty('aged', { default_max_age: 60 });
      const user = await aUser();
      const jar = new CookieJar();
      assert.deepEqual((await authorize(aged, jar, user)).pages, ['login']);
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      const code = () => totpAt(secret, clock.now());
      const stepped = await authorize(defaults, jar, user, {}, code);
      assert.deepEqual(stepped.pages, ['code']);
      assert.equal((await everywhere(defaults, stepped.tokens!, user.id)).acr, MFA);
      assert.deepEqual((await authorize(aged, jar, user)).pages, [], 'within default_max_age');
      clock.advance(61_000);
      assert.deepEqual((await authorize(aged, jar, user, {}, code)).pages, ['login', 'code'], 'past default_max_age: the password, then the factor');
    });
  });
}
