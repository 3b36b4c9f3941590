/**
 * The device authorization grant (RFC 8628) over HTTP, rule by rule: the device authorization
 * endpoint, polling (authorization_pending, slow_down, expired_token, access_denied, tokens once,
 * another client's code), the user-code page (typed case-insensitively, CSRF, sign-in,
 * confirmation, localization) and the user-code entry limits. Time moves on an injected clock.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { USER_CODE_ALPHABET } from '../../src/oauth/device/user-code.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, logoutConfirmed, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { aGroup } from '../helpers/store.ts';
import { parsePolicyDocument } from '../../src/domain/policy.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const PASSWORD = 'device flow password';
const TTL_S = 600;
const INTERVAL_S = 5;

interface Issued {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  expires_in: number;
  interval: number;
}

for (const db of DATABASES) {
  describe(`device authorization grant on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    const audit = new AuditCapture();
    let server: RunningServer;
    let device: Client;
    let confidential: { client: Client; clientSecret: string };
    let webOnly: Client;
    let user: User;
    const endpoint = () => `${server.url}${server.config.issuerPath}/oauth2/device_authorization`;
    const tokenUrl = () => `${server.url}${server.config.issuerPath}/oauth2/token`;
    const pageUrl = () => `${server.url}${server.config.issuerPath}/oauth2/device`;

    before(async () => {
      // Entry limits out of the way here; they have their own suite below.
      const env = { GATEHOUSE_DEVICE_CODE_TTL: String(TTL_S), GATEHOUSE_DEVICE_CODE_INTERVAL: String(INTERVAL_S), GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_PER_ADDRESS: '100000', GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_GLOBAL: '100000', GATEHOUSE_DEVICE_AUTHORIZATIONS_PER_ADDRESS: '0' };
      server = await startServer(db, { clock, audit, env });
      const { store } = server.gatehouse;
      ({ client: device } = await createTestClient(store, { name: 'Living-room TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT, 'refresh_token'], refreshTokens: true }));
      confidential = await createTestClient(store, { name: 'CLI tool', redirectUris: [], grantTypes: [DEVICE_GRANT] });
      ({ client: webOnly } = await createTestClient(store, { tokenEndpointAuthMethod: 'none' }));
      user = await createTestUser(store, { password: PASSWORD });
    });
    after(async () => server.close());

    async function issue(client: Client = device, scope = 'openid profile'): Promise<Issued> {
      const auth: Record<string, string> = client === confidential.client ? { authorization: basic(client.clientId, confidential.clientSecret) } : {};
      const response = await postForm(endpoint(), client === confidential.client ? { scope } : { client_id: client.clientId, scope }, auth);
      assert.equal(response.status, 200, JSON.stringify(response.body));
      return response.body as unknown as Issued;
    }
    const poll = (issued: Issued, client: Client = device) => postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: issued.device_code, client_id: client.clientId });

    /** A browser that enters `typed` on the page, signs in if asked, and lands on the confirmation. */
    async function confirmationFor(typed: string, jar = new CookieJar(), headers: Record<string, string> = {}): Promise<{ jar: CookieJar; html: string; response: Response }> {
      const form = await browse(pageUrl(), jar, headers);
      const fields = new Map(formFields(await form.text()));
      let response = await submit(pageUrl(), { csrf_token: fields.get('csrf_token')!, user_code: typed }, jar, headers);
      let html = await response.text();
      if (html.includes('name="password"')) {
        const login = new Map(formFields(html));
        response = await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(login), username: user.username, password: PASSWORD }, jar, headers);
        html = await response.text();
      }
      return { jar, html, response };
    }

    async function decide(typed: string, decision: 'approve' | 'deny', headers: Record<string, string> = {}): Promise<Response> {
      const { jar, html, response } = await confirmationFor(typed, new CookieJar(), headers);
      assert.equal(response.status, 200, html);
      const fields = Object.fromEntries(formFields(html));
      return submit(`${server.url}${formAction(html)}`, { ...fields, decision }, jar, headers);
    }
    /** The title and the message of the page that ends the confirmation. */
    const donePage = async (response: Response) => {
      const html = await response.text();
      return [/<h1>([^<]*)<\/h1>/.exec(html)?.[1], /<p role="status">([^<]*)<\/p>/.exec(html)?.[1]];
    };

    test('the endpoint answers RFC 8628 §3.2: codes, where to go, how long and how often', async () => {
      const response = await postForm(endpoint(), { client_id: device.clientId, scope: 'openid profile unknown-value' });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      const body = response.body as unknown as Issued;
      assert.deepEqual(Object.keys(body).sort(), ['device_code', 'expires_in', 'interval', 'user_code', 'verification_uri', 'verification_uri_complete']);
      assert.match(body.device_code, /^[A-Za-z0-9_-]{43}$/);
      assert.match(body.user_code, new RegExp(`^[${USER_CODE_ALPHABET}]{4}-[${USER_CODE_ALPHABET}]{4}$`));
      assert.equal(body.verification_uri, `${server.issuer}/oauth2/device`);
      assert.equal(body.verification_uri_complete, `${server.issuer}/oauth2/device?user_code=${body.user_code}`);
      assert.equal(body.expires_in, TTL_S);
      assert.equal(body.interval, INTERVAL_S);
    });

    test('a confidential client authenticates; a wrong secret is invalid_client; a client without the grant is unauthorized_client', async () => {
      const ok = await postForm(endpoint(), { scope: 'openid' }, { authorization: basic(confidential.client.clientId, confidential.clientSecret) });
      assert.equal(ok.status, 200);
      const wrong = await postForm(endpoint(), { scope: 'openid' }, { authorization: basic(confidential.client.clientId, 'wrong') });
      assert.deepEqual([wrong.status, wrong.body.error], [401, 'invalid_client']);
      const unknown = await postForm(endpoint(), { client_id: 'nobody' });
      assert.deepEqual([unknown.status, unknown.body.error], [401, 'invalid_client']);
      const refused = await postForm(endpoint(), { client_id: webOnly.clientId, scope: 'openid' });
      assert.deepEqual([refused.status, refused.body.error], [400, 'unauthorized_client']);
      const get = await fetch(endpoint());
      assert.equal(get.status, 405);
      assert.equal(get.headers.get('allow'), 'POST');
      assert.deepEqual(await get.json(), { error: 'invalid_request', error_description: 'The device authorization endpoint accepts only POST.' });
    });

    test('discovery advertises the endpoint and the grant', async () => {
      const metadata = (await (await fetch(`${server.url}${server.config.issuerPath}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.equal(metadata.device_authorization_endpoint, `${server.issuer}/oauth2/device_authorization`);
      assert.ok((metadata.grant_types_supported as string[]).includes(DEVICE_GRANT));
    });

    test('polling before a decision: authorization_pending; too soon: slow_down and 5 s more; then on time again', async () => {
      const issued = await issue();
      const first = await poll(issued);
      assert.deepEqual([first.status, first.body.error], [400, 'authorization_pending']);
      clock.advance(INTERVAL_S * 1000 - 1);
      const fast = await poll(issued);
      assert.deepEqual([fast.status, fast.body.error], [400, 'slow_down']);
      // The interval is now 10 s: 9.999 s later is still too soon, 10 s is not.
      clock.advance(2 * INTERVAL_S * 1000 - 1);
      assert.equal((await poll(issued)).body.error, 'slow_down');
      clock.advance(3 * INTERVAL_S * 1000);
      assert.equal((await poll(issued)).body.error, 'authorization_pending');
    });

    test('approved on the page (code typed in lower case with spaces): one poll gets tokens bound to the sign-in, the next invalid_grant', async () => {
      const issued = await issue(device, 'openid profile');
      const typed = ` ${issued.user_code.toLowerCase().replace('-', ' ')} `;
      const done = await decide(typed, 'approve');
      assert.equal(done.status, 200);
      assert.match(await done.text(), /Device connected/);
      const tokens = await poll(issued);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.deepEqual(Object.keys(tokens.body).sort(), ['access_token', 'expires_in', 'id_token', 'refresh_token', 'scope', 'token_type']);
      assert.equal(tokens.body.scope, 'openid profile');
      const claims = decodeJwt(tokens.body.id_token as string);
      assert.equal(claims.sub, user.id);
      assert.equal(claims.aud, device.clientId);
      assert.deepEqual(claims.amr, ['pwd']);
      assert.match(claims.session_index as string, /^_[0-9a-f]{40}$/);
      const introspected = await postForm(`${server.url}${server.config.issuerPath}/oauth2/introspection`, { token: tokens.body.access_token as string }, { authorization: basic(confidential.client.clientId, confidential.clientSecret) });
      assert.equal(introspected.body.active, true);
      assert.equal(introspected.body.sub, user.id);
      const again = await poll(issued);
      assert.deepEqual([again.status, again.body.error], [400, 'invalid_grant']);
      const approved = audit.of('device.approved').at(-1)!;
      assert.deepEqual([approved.clientId, approved.userId], [device.clientId, user.id]);
    });

    test('a device token for a resource server registered for JWT access tokens is one (RFC 9068, JA-05)', async () => {
      const { store } = server.gatehouse;
      const { client: api } = await createTestClient(store, { name: 'TV guide API', redirectUris: [], grantTypes: [], metadata: { access_token_format: 'jwt', access_token_signed_response_alg: 'EdDSA' } });
      const { client: tv } = await createTestClient(store, { name: 'TV with a guide', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT], metadata: { aud: [api.clientId] } });
      const issued = await issue(tv, `openid ${api.clientId}`);
      assert.equal((await decide(issued.user_code, 'approve')).status, 200);
      const tokens = await poll(issued, tv);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      const token = tokens.body.access_token as string;
      const { typ, alg } = decodeProtectedHeader(token);
      assert.deepEqual([typ, alg], ['at+jwt', 'EdDSA']);
      const claims = decodeJwt(token);
      assert.deepEqual([claims.aud, claims.sub, claims.client_id, claims.scope, claims.amr], [api.clientId, user.id, tv.clientId, `openid ${api.clientId}`, ['pwd']]);
    });

    test('ten concurrent polls after approval: exactly one gets tokens, the others invalid_grant, and one set of tokens is stored', async () => {
      const issued = await issue();
      await decide(issued.user_code, 'approve');
      const polls = await Promise.all(Array.from({ length: 10 }, () => poll(issued)));
      assert.deepEqual(polls.map((p) => p.status).sort(), [200, ...Array<number>(9).fill(400)]);
      assert.deepEqual([...new Set(polls.filter((p) => p.status === 400).map((p) => p.body.error))], ['invalid_grant']);
      const stored = await (server.gatehouse.store as SqlStore).database.db
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('family_id', '=', hashSecret(issued.device_code))
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.n), 2, 'one access token and one refresh token');
    });

    test('a logout of the session that approved, before the poll: invalid_grant and no token', async () => {
      const issued = await issue();
      const { jar, html } = await confirmationFor(issued.user_code);
      const approved = await submit(`${server.url}${formAction(html)}`, { ...Object.fromEntries(formFields(html)), decision: 'approve' }, jar);
      assert.equal(approved.status, 200);
      assert.equal((await logoutConfirmed(server.url, jar)).status, 200);
      const polled = await poll(issued);
      assert.deepEqual([polled.status, polled.body.error], [400, 'invalid_grant']);
      const stored = await (server.gatehouse.store as SqlStore).database.db
        .selectFrom('tokens')
        .select((eb) => eb.fn.countAll().as('n'))
        .where('family_id', '=', hashSecret(issued.device_code))
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.n), 0);
    });

    test('without openid in scope there is no ID token; a client without refresh tokens gets none', async () => {
      const issued = await issue(confidential.client, 'profile');
      await decide(issued.user_code, 'approve');
      const tokens = await postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: issued.device_code }, { authorization: basic(confidential.client.clientId, confidential.clientSecret) });
      assert.equal(tokens.status, 200);
      assert.deepEqual(Object.keys(tokens.body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    });

    test('require_verified_email (docs/email-verification.md): a user with an unverified address cannot approve, the device gets access_denied; once verified, the device gets its tokens', async () => {
      const { store } = server.gatehouse;
      const name = `device-verified-${randomUUID().slice(0, 8)}`;
      await store.policies.insert({ document: parsePolicyDocument({ name, require_verified_email: true }), version: 1, createdAt: 0, updatedAt: 0 });
      const { client: guarded } = await createTestClient(store, { name: 'Verified TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT], authorizationPolicy: name });
      const current = (await store.users.get(user.id))!;
      await store.users.update({ ...current, email: 'tv@example.com', emailVerified: false });
      const refused = await issue(guarded);
      const page = await decide(refused.user_code, 'approve');
      assert.equal(page.status, 403);
      // The login page's words for it (AM58, AM106), not the generic refusal, and the way to mend it.
      const html = await page.clone().text();
      assert.deepEqual(await donePage(page), [
        'No access to this application',
        'Verified TV requires a verified e-mail address, and yours is not verified yet. Send yourself a verification link from your profile page, follow it, then sign in to the application again.',
      ]);
      assert.deepEqual(/<a href="([^"]*)" id="access-denied-verify">([^<]*)<\/a>/.exec(html)?.slice(1), ['/uas/account/profile?ui_locales=en', 'Verify your e-mail address']);
      const finnish = await decide((await issue(guarded)).user_code, 'approve', { 'accept-language': 'fi' });
      assert.equal((await donePage(finnish))[1], 'Verified TV edellyttää vahvistettua sähköpostiosoitetta, eikä omaasi ole vielä vahvistettu. Lähetä itsellesi vahvistuslinkki profiilisivultasi, avaa se ja kirjaudu sitten sovellukseen uudelleen.');
      const first = await poll(refused, guarded);
      assert.deepEqual([first.status, first.body.error], [400, 'access_denied']);
      await store.users.update({ ...current, email: 'tv@example.com', emailVerified: true });
      const approved = await issue(guarded);
      assert.equal((await decide(approved.user_code, 'approve')).status, 200);
      const tokens = await poll(approved, guarded);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      await store.users.update(current);
    });

    test('a user the client\'s authorization policy refuses cannot approve: the page explains it as the authorization endpoint does (en/fi/sv), the device gets access_denied; one removed from the group after approving gets access_denied at the poll (PO-15)', async () => {
      const { store } = server.gatehouse;
      const group = aGroup();
      await store.groups.insert(group);
      const name = `device-${group.id.slice(0, 8)}`;
      await store.policies.insert({ document: parsePolicyDocument({ name, access: { groups: [group.name] } }), version: 1, createdAt: 0, updatedAt: 0 });
      const { client: guarded } = await createTestClient(store, { name: 'Guarded TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT], authorizationPolicy: name });
      const refused = await issue(guarded);
      // The page says why, in the words of the authorization endpoint's refusal page, and in the user's language.
      const page = await decide(refused.user_code, 'approve');
      assert.equal(page.status, 403);
      assert.deepEqual(await donePage(page), [
        'No access to this application',
        'You are signed in, but your account is not allowed to use Guarded TV. If you think you should have access, contact the administrator of the application.',
      ]);
      const first = await poll(refused, guarded);
      assert.deepEqual([first.status, first.body.error], [400, 'access_denied']);
      const finnish = await decide((await issue(guarded)).user_code, 'approve', { 'accept-language': 'fi' });
      assert.deepEqual([finnish.status, ...(await donePage(finnish))], [
        403,
        'Ei pääsyä tähän sovellukseen',
        'Olet kirjautunut sisään, mutta tunnuksellasi ei ole oikeutta käyttää sovellusta Guarded TV. Jos sinulla mielestäsi pitäisi olla pääsy, ota yhteyttä sovelluksen ylläpitäjään.',
      ]);
      const swedish = await decide((await issue(guarded)).user_code, 'approve', { 'accept-language': 'sv' });
      assert.deepEqual([swedish.status, ...(await donePage(swedish))], [
        403,
        'Ingen åtkomst till den här applikationen',
        'Du är inloggad, men ditt konto får inte använda Guarded TV. Om du anser att du borde ha åtkomst, kontakta applikationens administratör.',
      ]);
      // The user's own denial keeps its own words.
      assert.deepEqual(await donePage(await decide((await issue(guarded)).user_code, 'deny')), ['Access denied', 'You have denied the device access. You can close this page.']);

      await store.groups.addMember(group.id, user.id);
      const approved = await issue(guarded);
      assert.equal((await decide(approved.user_code, 'approve')).status, 200);
      await store.groups.removeMember(group.id, user.id);
      const late = await poll(approved, guarded);
      assert.deepEqual([late.status, late.body.error], [400, 'access_denied']);
    });

    test('denied: polls get access_denied; the code cannot be approved afterwards', async () => {
      const issued = await issue();
      const done = await decide(issued.user_code, 'deny');
      assert.equal(done.status, 200);
      assert.match(await done.text(), /Access denied/);
      const polled = await poll(issued);
      assert.deepEqual([polled.status, polled.body.error], [400, 'access_denied']);
      const { html, response } = await confirmationFor(issued.user_code);
      assert.equal(response.status, 400);
      assert.match(html, /not valid, or it has expired/);
    });

    test('approving twice: the second confirmation is told the code is no longer valid', async () => {
      const issued = await issue();
      const { jar, html } = await confirmationFor(issued.user_code);
      const fields = Object.fromEntries(formFields(html));
      const first = await submit(`${server.url}${formAction(html)}`, { ...fields, decision: 'approve' }, jar);
      assert.equal(first.status, 200);
      const second = await submit(`${server.url}${formAction(html)}`, { ...fields, decision: 'deny' }, jar);
      assert.equal(second.status, 400);
      assert.match(await second.text(), /no longer valid/);
      assert.equal((await poll(issued)).status, 200);
    });

    test('ten concurrent confirmations, allow and deny mixed, from one signed-in browser: exactly one decides', async () => {
      const issued = await issue();
      const { jar, html } = await confirmationFor(issued.user_code);
      const fields = Object.fromEntries(formFields(html));
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => submit(`${server.url}${formAction(html)}`, { ...fields, decision: i % 2 === 0 ? 'approve' : 'deny' }, jar)));
      const winners = answers.filter((a) => a.status === 200);
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, ...Array<number>(9).fill(400)]);
      const approved = /Device connected/.test(await winners[0]!.text());
      const polled = await poll(issued);
      assert.equal(polled.status, approved ? 200 : 400);
      if (!approved) assert.equal(polled.body.error, 'access_denied');
    });

    test('expiry: after expires_in polls get expired_token and the page no longer knows the code', async () => {
      const issued = await issue();
      clock.advance(TTL_S * 1000);
      const polled = await poll(issued);
      assert.deepEqual([polled.status, polled.body.error], [400, 'expired_token']);
      const { response } = await confirmationFor(issued.user_code);
      assert.equal(response.status, 400);
    });

    test('another client polling the device code gets invalid_grant and consumes nothing', async () => {
      const issued = await issue();
      await decide(issued.user_code, 'approve');
      const other = await postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: issued.device_code }, { authorization: basic(confidential.client.clientId, confidential.clientSecret) });
      assert.deepEqual([other.status, other.body.error], [400, 'invalid_grant']);
      assert.equal((await poll(issued)).status, 200);
      const unknown = await postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: 'not-a-code', client_id: device.clientId });
      assert.deepEqual([unknown.status, unknown.body.error], [400, 'invalid_grant']);
    });

    test('a client that did not register the grant cannot poll', async () => {
      const polled = await postForm(tokenUrl(), { grant_type: DEVICE_GRANT, device_code: 'x', client_id: webOnly.clientId });
      assert.deepEqual([polled.status, polled.body.error], [400, 'unauthorized_client']);
    });

    test('the page: GET prefills ?user_code= and looks nothing up; wrong codes get a clear 400; the form needs its CSRF token', async () => {
      const issued = await issue();
      const jar = new CookieJar();
      const form = await browse(`${pageUrl()}?user_code=${encodeURIComponent(issued.user_code)}`, jar);
      assert.equal(form.status, 200);
      const html = await form.text();
      assert.equal(new Map(formFields(html)).get('user_code'), issued.user_code);
      assert.doesNotMatch(form.headers.get('content-security-policy') ?? '', /script-src|unsafe-inline/);
      assert.doesNotMatch(html, /<script/);
      const csrf = new Map(formFields(html)).get('csrf_token')!;
      const wrong = await submit(pageUrl(), { csrf_token: csrf, user_code: 'BBBB-BBBB' }, jar);
      assert.equal(wrong.status, 400);
      assert.match(await wrong.text(), /aria-invalid="true"/);
      const forged = await submit(pageUrl(), { csrf_token: 'x'.repeat(43), user_code: issued.user_code }, jar);
      assert.equal(forged.status, 403);
      assert.match(await forged.text(), /The form expired/);
      const noCookie = await submit(pageUrl(), { csrf_token: csrf, user_code: issued.user_code });
      assert.equal(noCookie.status, 403);
      // The confirmation refuses a forged decision too, and nothing is decided.
      const { html: confirm, jar: signedIn } = await confirmationFor(issued.user_code);
      const fields = Object.fromEntries(formFields(confirm));
      const forgedDecision = await submit(`${server.url}${formAction(confirm)}`, { ...fields, csrf_token: 'y'.repeat(43), decision: 'approve' }, signedIn);
      assert.equal(forgedDecision.status, 403);
      assert.equal((await poll(issued)).body.error, 'authorization_pending');
    });

    test('the confirmation names the client, the scopes and the signed-in user; a wrong password keeps the sign-in form', async () => {
      const issued = await issue(device, 'openid profile email');
      const jar = new CookieJar();
      const form = await browse(pageUrl(), jar);
      const csrf = new Map(formFields(await form.text())).get('csrf_token')!;
      const login = await submit(pageUrl(), { csrf_token: csrf, user_code: issued.user_code }, jar);
      const loginHtml = await login.text();
      assert.match(loginHtml, /Living-room TV/);
      const bad = await submit(`${server.url}${formAction(loginHtml)}`, { ...Object.fromEntries(formFields(loginHtml)), username: user.username, password: 'wrong' }, jar);
      assert.equal(bad.status, 401);
      const { html } = await confirmationFor(issued.user_code, jar);
      assert.match(html, /Living-room TV/);
      assert.match(html, /<li>Confirming who you are<\/li>\s*<li>Your name and username<\/li>\s*<li>Your email address<\/li>/);
      assert.ok(html.includes(user.username));
      assert.ok(html.includes(issued.user_code));
    });

    test('localized: Finnish and Swedish from Accept-Language, on the form and the confirmation', async () => {
      const fi = await (await browse(pageUrl(), undefined, { 'accept-language': 'fi' })).text();
      assert.match(fi, /<html lang="fi">/);
      assert.match(fi, /Yhdistä laite/);
      const sv = await (await browse(pageUrl(), undefined, { 'accept-language': 'sv-SE' })).text();
      assert.match(sv, /<html lang="sv">/);
      assert.match(sv, /Anslut en enhet/);
      const issued = await issue();
      const { html } = await confirmationFor(issued.user_code, new CookieJar(), { 'accept-language': 'fi' });
      assert.match(html, /Sallitaanko pääsy\?/);
      assert.match(html, /Henkilöllisyytesi vahvistaminen/);
    });
  });

  describe(`user-code entry limits on ${db.name}`, () => {
    const audit = new AuditCapture();
    const servers: RunningServer[] = [];
    const limits = (perAddress: number, global: number, more: Record<string, string> = {}) =>
      startServer(db, {
        audit,
        env: { GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_PER_ADDRESS: String(perAddress), GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_GLOBAL: String(global), GATEHOUSE_DEVICE_USER_CODE_ATTEMPTS_WINDOW: '900', ...more },
      }).then((server) => (servers.push(server), server));
    after(async () => Promise.all(servers.map((server) => server.close())));

    /** `count` wrong codes from `address`, `concurrent` at once: their statuses. */
    async function guess(server: RunningServer, address: string, count: number, concurrent = false): Promise<Response[]> {
      const pageUrl = `${server.url}${server.config.issuerPath}/oauth2/device`;
      const jar = new CookieJar();
      const headers = { 'x-forwarded-for': address };
      const csrf = new Map(formFields(await (await browse(pageUrl, jar, headers)).text())).get('csrf_token')!;
      const one = () => submit(pageUrl, { csrf_token: csrf, user_code: 'BCDF-GHJK' }, jar, headers);
      if (concurrent) return Promise.all(Array.from({ length: count }, one));
      const responses: Response[] = [];
      for (let i = 0; i < count; i++) responses.push(await one());
      return responses;
    }
    const statuses = (responses: Response[]) => responses.map((r) => r.status).sort();

    test('per address: of twelve concurrent wrong codes from one address exactly three are looked up; the rest get the 429 page', async () => {
      const server = await limits(3, 1000);
      const responses = await guess(server, '203.0.113.7', 12, true);
      assert.deepEqual(statuses(responses), [400, 400, 400, ...Array<number>(9).fill(429)]);
      const refused = responses.find((r) => r.status === 429)!;
      assert.equal(refused.headers.get('retry-after'), '900');
      assert.match(await refused.text(), /Too many codes have been entered\. Wait 15 minutes and try again\./);
      // Another address has its own budget.
      assert.deepEqual(statuses(await guess(server, '198.51.100.1', 1)), [400]);
    });

    test('device authorizations per address: beyond the budget 429 slow_down with Retry-After; another address is not affected', async () => {
      const server = await limits(3, 5, { GATEHOUSE_DEVICE_AUTHORIZATIONS_PER_ADDRESS: '2', GATEHOUSE_DEVICE_AUTHORIZATIONS_WINDOW: '60' });
      const { client } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT] });
      const start = (address: string) => postForm(`${server.url}${server.config.issuerPath}/oauth2/device_authorization`, { client_id: client.clientId }, { 'x-forwarded-for': address });
      const answers = await Promise.all(Array.from({ length: 5 }, () => start('203.0.113.50')));
      assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 429, 429, 429]);
      const refused = answers.find((a) => a.status === 429)!;
      assert.equal(refused.body.error, 'slow_down');
      assert.equal(refused.headers.get('retry-after'), '60');
      assert.equal((await start('198.51.100.50')).status, 200);
    });

    test('globally: once all addresses together used the global budget, every address is refused', async () => {
      const server = await limits(3, 5);
      const earlier = audit.of('device.user_code_rate_limited').length;
      assert.deepEqual(statuses(await guess(server, '203.0.113.8', 3)), [400, 400, 400]);
      assert.deepEqual(statuses(await guess(server, '198.51.100.2', 3)), [400, 400, 429]);
      assert.deepEqual(statuses(await guess(server, '192.0.2.99', 1)), [429]);
      // Each counter reports being filled once: the first address's and the global one.
      assert.deepEqual(audit.of('device.user_code_rate_limited').slice(earlier).map((e) => e.by).sort(), ['global', 'ip']);
    });
  });

  describe(`device flow under the issuer's path on ${db.name}`, () => {
    const servers: RunningServer[] = [];
    after(async () => Promise.all(servers.map((server) => server.close())));

    for (const [issuer, path] of [['https://sso.example.com/auth', '/auth'], ['https://sso.example.com', '']] as const) {
      test(`an issuer ${issuer}: the endpoint, verification_uri and the page are under "${path}", nothing under /uas`, async () => {
        const server = await startServer(db, { env: { GATEHOUSE_ISSUER: issuer } });
        servers.push(server);
        const { client } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: [DEVICE_GRANT] });
        const metadata = (await (await fetch(`${server.url}${path}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
        assert.equal(metadata.device_authorization_endpoint, `${issuer}/oauth2/device_authorization`);
        const issued = await postForm(`${server.url}${path}/oauth2/device_authorization`, { client_id: client.clientId });
        assert.equal(issued.status, 200);
        assert.equal(issued.body.verification_uri, `${issuer}/oauth2/device`);
        const page = await browse(`${server.url}${path}/oauth2/device`);
        assert.equal(page.status, 200);
        assert.equal(formAction(await page.text()), `${path}/oauth2/device`);
        assert.equal((await postForm(`${server.url}/uas/oauth2/device_authorization`, { client_id: client.clientId })).status, 404);
        assert.equal((await browse(`${server.url}/uas/oauth2/device`)).status, 404);
      });
    }
  });
}
