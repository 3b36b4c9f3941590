/**
 * Step-up from a password session to `phr` over HTTP (issue 24, items 2–3; docs/authorization.md,
 * "Levels of authentication"), with the software authenticator: a user with a password, a TOTP
 * factor and a passkey signs in at the multi level with the password and a code; then a request
 * for `phr` (acr_values, or the claims parameter's essential acr) shows only the passkey step (no
 * password, no code field), and its answer gives amr exactly ["pwd","otp","mfa","hwk"], acr `phr`
 * and a new auth_time; a silent request at phr then gives a code without a page. A TOTP code
 * posted to the step-up's page anyway is refused by the server (the level needs a passkey).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, redirectParams, submit } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { passkeyForm, SoftAuthenticator } from '../helpers/webauthn.ts';

const PASSWORD = 'step up to a passkey';
const MFA = 'urn:test:mfa';
const LEVELS = `urn:test:pwd=single,${MFA}=multi,phr`;

type Json = Record<string, unknown> & { challenge: string };

for (const db of DATABASES) {
  describe(`step-up from a password session to phr on ${db.name}`, () => {
    const clock = new ManualClock(Date.now());
    let server: RunningServer;
    let client: Client;
    let clientSecret: string;
    let origin: string;

    before(async () => {
      server = await startServer(db, { clock, env: { GATEHOUSE_ACR_LEVELS: LEVELS } });
      ({ client, clientSecret } = await createTestClient(server.gatehouse.store));
      origin = new URL(server.issuer).origin;
    });
    after(async () => server.close());

    const query = (extra: Record<string, string>) => ({ client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 'st', nonce: 'n', ...extra });
    const post = (path: string, form: Record<string, string>, jar: CookieJar) => submit(new URL(path, server.url).toString(), form, jar, { origin: server.url });
    const fieldsOf = (html: string) => Object.fromEntries(formFields(html));

    async function optionsOf(form: { options: string; fields: Record<string, string> }, jar: CookieJar): Promise<Json> {
      const response = await post(form.options, form.fields, jar);
      assert.equal(response.status, 200, await response.clone().text());
      return (await response.json()) as Json;
    }

    /** The ID token's amr, acr and auth_time for a code. */
    async function claimsOf(code: string): Promise<{ amr: unknown; acr: unknown; auth_time: number }> {
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: basic(client.clientId, clientSecret) });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return JSON.parse(Buffer.from(String(tokens.body.id_token).split('.')[1]!, 'base64url').toString()) as { amr: unknown; acr: unknown; auth_time: number };
    }

    /** A user with a password, a passkey (enrolled on the account page) and then a TOTP factor. */
    async function aUser(): Promise<{ user: User; authenticator: SoftAuthenticator; code: () => string }> {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const authenticator = new SoftAuthenticator({ origin });
      const account = new CookieJar();
      const login = await (await browse(`${server.url}/uas/account/security`, account)).text();
      assert.equal((await post(formAction(login), { ...fieldsOf(login), username: user.username, password: PASSWORD }, account)).status, 303);
      const form = passkeyForm(await (await browse(`${server.url}/uas/account/security`, account)).text());
      const options = await optionsOf(form, account);
      assert.equal((await post(form.action, { ...form.fields, name: 'laptop', response: JSON.stringify(authenticator.register(options as never)) }, account)).status, 200);
      const secret = await enrolTotp(server.gatehouse.store, user.id, clock.now());
      return { user, authenticator, code: () => totpAt(secret, clock.now()) };
    }

    /** Signs `user` in at the multi level with the password and a TOTP code; the ID token's claims. */
    async function multiSession(user: User, code: () => string, jar: CookieJar) {
      const login = await (await browse(authorizationUrl(server.url, query({ acr_values: MFA })), jar)).text();
      const second = await post(formAction(login), { ...fieldsOf(login), username: user.username, password: PASSWORD }, jar);
      assert.equal(second.status, 200);
      const html = await second.text();
      const answer = await post(formAction(html), { ...fieldsOf(html), code: code() }, jar);
      assert.equal(answer.status, 303);
      const claims = await claimsOf(redirectParams(answer).get('code')!);
      assert.deepEqual([claims.amr, claims.acr], [['pwd', 'otp', 'mfa'], MFA]);
      return claims;
    }

    for (const [how, extra] of [
      ['acr_values=phr', { acr_values: 'phr' }],
      ['the claims parameter\'s essential acr phr', { claims: JSON.stringify({ id_token: { acr: { essential: true, value: 'phr' } } }) }],
    ] as const) {
      test(`${how}: only the passkey step; a TOTP code posted to it is refused; the passkey gives amr ["pwd","otp","mfa","hwk"], acr phr, a new auth_time; then silent at phr`, async () => {
        const { user, authenticator, code } = await aUser();
        const jar = new CookieJar();
        const first = await multiSession(user, code, jar);
        clock.advance(60_000);

        const page = await browse(authorizationUrl(server.url, query(extra)), jar);
        assert.equal(page.status, 200);
        const html = await page.text();
        assert.doesNotMatch(html, /name="password"/, 'no password field');
        assert.doesNotMatch(html, /name="code"/, 'no code field');
        const form = passkeyForm(html);
        assert.equal(form.action, '/uas/oauth2/authorization/second-factor/passkey');

        // The code field hidden is not enough: the server refuses a right TOTP code for phr.
        const fields = { ...form.fields, kinds: 'totp,recovery_codes', method: 'totp' };
        delete (fields as Record<string, string>).response;
        const coded = await post('/uas/oauth2/authorization/second-factor', { ...fields, code: code() }, jar);
        assert.equal(coded.status, 401);
        assert.equal(coded.headers.get('location'), null);

        const options = await optionsOf(form, jar);
        const answer = await post(form.action, { ...form.fields, response: JSON.stringify(authenticator.assert(options)) }, jar);
        assert.equal(answer.status, 303);
        const stepped = await claimsOf(redirectParams(answer).get('code')!);
        assert.deepEqual([stepped.amr, stepped.acr], [['pwd', 'otp', 'mfa', 'hwk'], 'phr']);
        assert.equal(stepped.auth_time, first.auth_time + 60);

        const silent = await browse(authorizationUrl(server.url, query({ ...extra, prompt: 'none' })), jar);
        assert.equal(silent.status, 302);
        const params = redirectParams(silent);
        assert.equal(params.get('error'), null);
        const again = await claimsOf(params.get('code')!);
        assert.deepEqual([again.amr, again.acr, again.auth_time], [['pwd', 'otp', 'mfa', 'hwk'], 'phr', stepped.auth_time]);
      });
    }
  });
}
