/**
 * The console's later pages over real HTTP, on every database (docs/console.md): initial access
 * tokens for dynamic registration (list, mint shown once with the endpoint and a curl example that
 * works, revoke after a confirmation; the page says when registration is off); the theme page and
 * its preview documents; adding a group member by exact username and a user to a group by search;
 * a refusal of the API (409) shown as an alert on the page the form was on; a form posted without
 * a session told about after the sign-in; and every client setting the API takes editable.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../src/domain/user.ts';
import { CONSOLE_CLIENT_ID } from '../../src/manage/management-clients.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { ensureManagementSetup } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'console password 1';
const EXAMPLE_THEME = join(import.meta.dirname, '..', '..', 'examples', 'theme');

/** The values of a select's options, in order. */
function optionsOf(html: string, name: string): string[] {
  const select = new RegExp(`<select id="[^"]*" name="${name}"[^>]*>([\\s\\S]*?)</select>`).exec(html)?.[1] ?? '';
  return [...select.matchAll(/<option value="([^"]*)"/g)].map((m) => m[1]!);
}

function hidden(html: string, name: string): string | undefined {
  return formFields(html).find(([n]) => n === name)?.[1];
}

/** The text of an element's HTML with tags dropped and entities of the templates undone. */
function textOf(html: string): string {
  return html
    .replace(/<[^>]*>/g, '')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** What a browser submits for a form as the page shows it: inputs (checkboxes only when checked), text areas, selected options; no CSRF token. */
function submittedFields(html: string): [string, string][] {
  const inputs = [...html.matchAll(/<input\b([^>]*)>/g)]
    .map((m) => m[1]!)
    .filter((a) => !/\btype="checkbox"/.test(a) || /\bchecked\b/.test(a))
    .map((a): [string, string] => [/\bname="([^"]*)"/.exec(a)?.[1] ?? '', textOf(/\bvalue="([^"]*)"/.exec(a)?.[1] ?? '')])
    .filter(([n]) => n !== '' && n !== 'csrf_token');
  const textareas = [...html.matchAll(/<textarea id="[^"]*" name="([^"]*)"[^>]*>([^<]*)<\/textarea>/g)].map((m): [string, string] => [m[1]!, textOf(m[2]!)]);
  const selects = [...html.matchAll(/<select id="[^"]*" name="([^"]*)"[^>]*>[\s\S]*?<\/select>/g)].map((m): [string, string] => [m[1]!, /<option value="([^"]*)" selected>/.exec(m[0])?.[1] ?? /<option value="([^"]*)"/.exec(m[0])?.[1] ?? '']);
  return [...inputs, ...textareas, ...selects];
}

function consoleSuite(db: (typeof DATABASES)[number], env: Record<string, string>, body: (ctx: Ctx) => void): void {
  const ctx = {} as Ctx;
  before(async () => {
    ctx.server = await startServer(db, { env });
    await ensureManagementSetup(ctx.server);
    ctx.admin = await ctx.newMember(ctx.server.config.manageAdminGroup);
    ctx.reader = await ctx.newMember(ctx.server.config.manageReadonlyGroup);
  });
  after(async () => ctx.server.close());
  ctx.newMember = async (group) => {
    const store = ctx.server.gatehouse.store;
    const user = await createTestUser(store, { password: PASSWORD });
    if (group !== undefined) await store.groups.addMember((await store.groups.getByName(group))!.id, user.id);
    return user;
  };
  ctx.signIn = async (user, start = '/manage/') => {
    const jar = new CookieJar();
    const first = await browse(`${ctx.server.url}${start}`, jar);
    assert.equal(first.status, 302);
    return ctx.finishSignIn(jar, first.headers.get('location')!, user, start);
  };
  ctx.finishSignIn = async (jar, authorization, user, start) => {
    const login = await browse(authorization, jar);
    // With a live SSO session the authorization endpoint answers at once, without the login form.
    const back = login.status === 303 || login.status === 302 ? login : await (async () => {
      const html = await login.text();
      const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? user.username : n === 'password' ? PASSWORD : v]);
      return submit(new URL(formAction(html), ctx.server.url).toString(), fields, jar);
    })();
    assert.ok(back.status === 302 || back.status === 303, String(back.status));
    const done = await browse(back.headers.get('location')!, jar);
    assert.equal(done.status, 303);
    assert.equal(done.headers.get('location'), start);
    return jar;
  };
  ctx.page = async (jar, path) => {
    const response = await browse(`${ctx.server.url}${path}`, jar);
    return { response, html: await response.text() };
  };
  ctx.post = async (jar, path, form = {}, from = '/manage/') => {
    const token = hidden((await ctx.page(jar, from)).html, 'csrf_token')!;
    const fields: [string, string][] = [['csrf_token', token], ...(Array.isArray(form) ? form : Object.entries(form))];
    const origin = new URL(ctx.server.issuer).origin;
    const response = await submit(`${ctx.server.url}${path}`, fields, jar, { origin, referer: `${origin}${from}` });
    return { response, html: await response.text() };
  };
  body(ctx);
}

interface Ctx {
  server: RunningServer;
  admin: User;
  reader: User;
  newMember(group: string | undefined): Promise<User>;
  signIn(user: User, start?: string): Promise<CookieJar>;
  finishSignIn(jar: CookieJar, authorization: string, user: User, start: string): Promise<CookieJar>;
  page(jar: CookieJar, path: string): Promise<{ response: Response; html: string }>;
  post(jar: CookieJar, path: string, form?: Record<string, string> | [string, string][], from?: string): Promise<{ response: Response; html: string }>;
}

for (const db of DATABASES) {
  describe(`console extras on ${db.name}, dynamic registration on, example theme, a key-encryption key`, () => {
    consoleSuite(db, { GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token', GATEHOUSE_THEME_DIR: EXAMPLE_THEME, GATEHOUSE_KEY_ENCRYPTION_KEY: 'k'.repeat(40) }, (ctx) => {
      test('with GATEHOUSE_KEY_ENCRYPTION_KEY the client form offers every authentication method discovery lists, client_secret_jwt too (issue 22 item 6)', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const form = await ctx.page(jar, '/manage/clients/new');
        assert.deepEqual(optionsOf(form.html, 'token_endpoint_auth_method'), ['client_secret_basic', 'client_secret_post', 'client_secret_jwt', 'private_key_jwt', 'none']);
        const discovery = (await (await fetch(`${ctx.server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
        assert.deepEqual(optionsOf(form.html, 'token_endpoint_auth_method'), discovery.token_endpoint_auth_methods_supported);
      });

      test('the client form registers a native app (application_type), whose edit form shows it; web removes it (issue 22 item 2)', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const form = await ctx.page(jar, '/manage/clients/new?lang=sv');
        assert.deepEqual(optionsOf(form.html, 'application_type'), ['web', 'native']);
        assert.match(form.html, /<label for="f-application_type">Applikationstyp<\/label>\n<select id="f-application_type" name="application_type" aria-describedby="f-application_type-hint">\n<option value="web" selected>/);
        const made = await ctx.post(
          jar,
          '/manage/clients/new',
          [
            ['client_name', 'Desktop app'],
            ['redirect_uris', 'http://127.0.0.1/callback'],
            ['token_endpoint_auth_method', 'none'],
            ['application_type', 'native'],
            ['grant_types', 'authorization_code'],
          ],
          '/manage/clients/new',
        );
        assert.equal(made.response.status, 200, made.html.slice(0, 2000));
        const id = textOf(/<code id="client-id">([^<]*)<\/code>/.exec(made.html)?.[1] ?? '');
        assert.equal((await ctx.server.gatehouse.store.clients.get(id))?.metadata.application_type, 'native');
        const edit = await ctx.page(jar, `/manage/clients/${id}/edit`);
        assert.match(edit.html, /<select id="f-application_type" name="application_type"[^>]*>\n<option value="web">[^<]*<\/option><option value="native" selected>/);
        const web = await ctx.post(jar, `/manage/clients/${id}/edit`, [['client_name', 'Desktop app'], ['redirect_uris', 'http://127.0.0.1:8000/callback'], ['token_endpoint_auth_method', 'none'], ['application_type', 'web'], ['grant_types', 'authorization_code']], `/manage/clients/${id}/edit`);
        assert.equal(web.response.status, 303, web.html.slice(0, 2000));
        assert.equal((await ctx.server.gatehouse.store.clients.get(id))?.metadata.application_type, undefined);
        const refused = await ctx.post(jar, '/manage/clients/new', [['client_name', 'x'], ['redirect_uris', 'https://x.example/cb'], ['application_type', 'desktop'], ['token_endpoint_auth_method', 'client_secret_basic']], '/manage/clients/new');
        assert.equal(refused.response.status, 400);
        assert.match(refused.html, /<ul class="field-error" id="f-application_type-error"><li>[^<]*web[^<]*native[^<]*<\/li><\/ul>/);
      });

      test('registration tokens: mint one (shown once with the endpoint and a curl example that registers a client), list it, revoke it after a confirmation', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const list = await ctx.page(jar, '/manage/registration-tokens');
        assert.equal(list.response.status, 200);
        assert.match(list.html, /aria-current="page">Registration tokens</);
        assert.equal(list.html.includes('GATEHOUSE_DYNAMIC_REGISTRATION=initial_access_token'), false, 'no "turn it on" when it is on');
        const endpoint = `${ctx.server.issuer}/oauth2/register`;
        assert.ok(list.html.includes(endpoint));

        const refused = await ctx.post(jar, '/manage/registration-tokens/new', { expires_in: '86400', uses: '0', description: 'ci' }, '/manage/registration-tokens');
        assert.equal(refused.response.status, 400);
        assert.match(refused.html, /<div class="field invalid">\s*<label for="f-uses">/, 'the error at the uses field');

        const minted = await ctx.post(jar, '/manage/registration-tokens/new', { expires_in: '86400', uses: '2', description: 'ci pipeline' }, '/manage/registration-tokens');
        assert.equal(minted.response.status, 200);
        const value = textOf(/<code id="token-value" class="value">([^<]*)<\/code>/.exec(minted.html)?.[1] ?? '');
        assert.ok(value.length >= 20, 'the token value');
        assert.match(minted.html, /data-copy="token-value"/, 'a copy button');
        const curl = textOf(/<code id="curl-example">([^<]*)<\/code>/.exec(minted.html)?.[1] ?? '');
        assert.equal(curl, `curl -H "Authorization: Bearer ${value}" -H 'content-type: application/json' -d '{"client_name":"Example app","redirect_uris":["https://app.example/cb"]}' ${endpoint}`);
        // The curl example works as shown.
        const registered = await fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' }, body: '{"client_name":"Example app","redirect_uris":["https://app.example/cb"]}' });
        assert.equal(registered.status, 201, await registered.clone().text());

        const again = await ctx.page(jar, '/manage/registration-tokens');
        assert.equal(again.html.includes(value), false, 'never shown again');
        const row = /<tr><td><code>([^<]+)<\/code><\/td><td>ci pipeline<\/td>[\s\S]*?<\/tr>/.exec(again.html);
        assert.ok(row, 'listed with its description');
        const id = row[1]!;
        assert.match(row[0], /<td>1<\/td>/, 'one use left');

        const confirm = await ctx.page(jar, `/manage/registration-tokens/${id}/revoke`);
        assert.equal(confirm.response.status, 200);
        assert.ok(confirm.html.includes(id));
        assert.equal((await ctx.server.gatehouse.store.registrations.listInitialAccessTokens({ limit: 10 })).some((t) => t.id === id), true, 'the GET changed nothing');
        const revoked = await ctx.post(jar, `/manage/registration-tokens/${id}/revoke`, {}, `/manage/registration-tokens/${id}/revoke`);
        assert.equal(revoked.response.status, 303);
        assert.equal(revoked.response.headers.get('location'), '/manage/registration-tokens?done=revoked');
        const refusedNow = await fetch(endpoint, { method: 'POST', headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' }, body: '{"redirect_uris":["https://app.example/cb"]}' });
        assert.equal(refusedNow.status, 401);
      });

      test('registration tokens: a reader sees the list but no mint form, and the API refuses a reader who posts anyway', async () => {
        const jar = await ctx.signIn(ctx.reader);
        const list = await ctx.page(jar, '/manage/registration-tokens');
        assert.equal(list.response.status, 200);
        assert.equal(list.html.includes('action="/manage/registration-tokens/new"'), false);
        const posted = await ctx.post(jar, '/manage/registration-tokens/new', { expires_in: '3600', uses: '1' });
        assert.equal(posted.response.status, 403);
      });

      test('theme: the page shows the active theme and links a preview per display and locale; the preview is its own document under the login pages’ policy', async () => {
        for (const user of [ctx.admin, ctx.reader]) {
          const jar = await ctx.signIn(user);
          const { response, html } = await ctx.page(jar, '/manage/theme');
          assert.equal(response.status, 200);
          assert.ok(html.includes('Northwind Library'), 'the product name');
          assert.ok(html.includes('<code>#0b6e4f</code>'), 'the primary colour');
          assert.ok(html.includes('logo.svg') && html.includes('custom.css'), 'the files');
          assert.ok(html.includes('<code>signInTitle</code>'), 'an overridden text key');
          for (const display of ['page', 'popup', 'touch']) for (const locale of ['en', 'fi', 'sv']) assert.ok(html.includes(`href="/manage/theme/preview?display=${display}&amp;locale=${locale}"`), `${display} ${locale}`);
          // The console's own policy is unchanged: no framing of anything.
          const csp = response.headers.get('content-security-policy') ?? '';
          assert.equal(/frame-src|unsafe-inline/.test(csp), false, csp);
        }
        const jar = await ctx.signIn(ctx.reader);
        const sv = await ctx.page(jar, '/manage/theme/preview?display=touch&locale=sv');
        assert.equal(sv.response.status, 200);
        assert.match(sv.html, /<html lang="sv"/);
        assert.ok(sv.html.includes('Bibliotekskortets nummer'), 'the theme’s Swedish text');
        assert.ok(sv.html.includes('Exempelapplikationen'), 'the sample client’s Swedish name');
        const csp = sv.response.headers.get('content-security-policy') ?? '';
        assert.match(csp, /frame-ancestors 'none'/);
        assert.equal(/script-src|unsafe-inline/.test(csp), false, csp);
        assert.equal(sv.response.headers.get('cache-control'), 'no-store');
        for (const bad of ['display=fullscreen&locale=en', 'display=page&locale=de', 'display=page&locale=en&locale=fi']) {
          const answer = await ctx.page(jar, `/manage/theme/preview?${bad}`);
          assert.equal(answer.response.status, 400, bad);
          assert.match(answer.html, /display|locale/, bad);
        }
        // Without a session the preview signs in like every other console page.
        const anonymous = await browse(`${ctx.server.url}/manage/theme/preview?display=page&locale=fi`);
        assert.equal(anonymous.status, 302);
      });

      test('a group member is added by exact username; an unknown one is named next to the field', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const created = await ctx.post(jar, '/manage/groups/new', { name: 'Extras Staff' }, '/manage/groups/new');
        assert.equal(created.response.status, 303);
        const groupPage = '/manage/groups/Extras%20Staff';
        // "ann" is a substring of "joanna": only the exact one is added.
        const store = ctx.server.gatehouse.store;
        const ann = await createTestUser(store, { username: 'ann', password: PASSWORD });
        const joanna = await createTestUser(store, { username: 'joanna', password: PASSWORD });
        const added = await ctx.post(jar, `${groupPage}/members/add`, { username: 'ann' }, groupPage);
        assert.equal(added.response.status, 303);
        const group = (await store.groups.getByName('Extras Staff'))!;
        const members = await store.groups.members(group.id);
        assert.ok(members.includes(ann.id));
        assert.equal(members.includes(joanna.id), false);
        const missing = await ctx.post(jar, `${groupPage}/members/add`, { username: 'an' }, groupPage);
        assert.equal(missing.response.status, 303);
        const shown = await ctx.page(jar, missing.response.headers.get('location')!);
        assert.match(shown.html, /<input id="member-username"[^>]*aria-invalid="true" aria-describedby="member-username-error">/);
        assert.match(shown.html, /<p class="field-error" id="member-username-error" role="alert">There is no user “an”.<\/p>/);
      });

      test('a user is added to a group found by search, not picked from the first groups', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const user = await ctx.newMember(undefined);
        const userPage = `/manage/users/${user.id}`;
        await ctx.post(jar, '/manage/groups/new', { name: 'Searchable Team' }, '/manage/groups/new');
        const before = await ctx.page(jar, userPage);
        assert.match(before.html, /<input id="group-q" name="group_q" type="search"/);
        assert.equal(before.html.includes('Searchable Team'), false, 'nothing listed before a search');
        const found = await ctx.page(jar, `${userPage}?group_q=searchable`);
        assert.ok(found.html.includes('Add to Searchable Team'));
        const none = await ctx.page(jar, `${userPage}?group_q=no-such-group-xyz`);
        assert.match(none.html, /<p role="status">Nothing matches “no-such-group-xyz”.<\/p>/);
        const added = await ctx.post(jar, `${userPage}/groups/add`, { group: 'Searchable Team' }, `${userPage}?group_q=searchable`);
        assert.equal(added.response.status, 303);
        assert.ok((await ctx.page(jar, userPage)).html.includes('href="/manage/groups/Searchable%20Team"'));
      });

      test('a 409 of the API is an alert with its detail on the page the form was on (the last administrator; a protected client)', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const adminGroup = `/manage/groups/${encodeURIComponent(ctx.server.config.manageAdminGroup)}`;
        const removed = await ctx.post(jar, `${adminGroup}/members/${ctx.admin.id}/remove`, {}, adminGroup);
        assert.equal(removed.response.status, 303);
        assert.equal(removed.response.headers.get('location'), adminGroup);
        const flash = removed.response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_console_flash='));
        assert.ok(flash, 'the flash cookie');
        assert.match(flash, /HttpOnly/i);
        assert.match(flash, /Path=\/manage/);
        const shown = await ctx.page(jar, adminGroup);
        assert.match(shown.html, /<p class="message" role="alert">The change was not made: [^<]*administrator[^<]*<\/p>/);
        assert.ok(shown.response.headers.getSetCookie().some((c) => /^gatehouse_console_flash=;/.test(c)), 'shown once');
        assert.equal((await ctx.page(jar, adminGroup)).html.includes('role="alert"'), false, 'not again');
        assert.ok(await ctx.server.gatehouse.store.groups.isMember(ctx.admin.id, ctx.server.config.manageAdminGroup), 'still an administrator');

        const confirmPage = `/manage/clients/${CONSOLE_CLIENT_ID}/delete`;
        const deleted = await ctx.post(jar, confirmPage, {}, confirmPage);
        assert.equal(deleted.response.status, 303);
        assert.equal(deleted.response.headers.get('location'), confirmPage);
        const again = await ctx.page(jar, confirmPage);
        assert.match(again.html, /<p class="message" role="alert">The change was not made: [^<]+<\/p>/);
        assert.ok(await ctx.server.gatehouse.store.clients.get(CONSOLE_CLIENT_ID), 'still there');
      });

      test('a form posted after the session ended changes nothing, and after signing in again the page says the change must be repeated', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const usersPage = '/manage/users/new';
        const token = hidden((await ctx.page(jar, usersPage)).html, 'csrf_token')!;
        jar.cookies.delete('gatehouse_console');
        const origin = new URL(ctx.server.issuer).origin;
        const lost = await submit(`${ctx.server.url}/manage/users/new`, { csrf_token: token, username: 'lost-change', password: 'long enough password' }, jar, { origin, referer: `${origin}${usersPage}` });
        assert.equal(lost.status, 303);
        assert.equal(lost.headers.get('location'), usersPage, 'back to the form’s page');
        assert.equal(await ctx.server.gatehouse.store.users.getByUsername('lost-change'), undefined);
        const signIn = await browse(`${ctx.server.url}${usersPage}`, jar);
        assert.equal(signIn.status, 302);
        await ctx.finishSignIn(jar, signIn.headers.get('location')!, ctx.admin, usersPage);
        const shown = await ctx.page(jar, usersPage);
        assert.match(shown.html, /<p class="message" role="alert">Your last change was not made: [^<]+<\/p>/);
        const foreignReferer = await submit(`${ctx.server.url}/manage/users/new`, { csrf_token: token }, new CookieJar(), { origin, referer: 'https://evil.example/manage/users' });
        assert.equal(foreignReferer.headers.get('location'), '/manage/', 'a foreign Referer is not followed');
      });

      test('client forms edit every setting people need: localized names, aud, scope, policy (chosen from the policies), resource server, resource URIs and scope values (RS-05), token format', async () => {
        const jar = await ctx.signIn(ctx.admin);
        await ctx.post(jar, '/manage/policies/new', { document: JSON.stringify({ name: 'extras-policy', access: { groups: ['Staff'] } }) }, '/manage/policies/new');
        const form = await ctx.page(jar, '/manage/clients/new');
        for (const name of ['client_name#fi', 'client_name#sv', 'aud', 'resource_server', 'resource_uris', 'resource_scopes', 'access_token_format', 'authorization_policy']) assert.ok(form.html.includes(`name="${name}"`), name);
        assert.match(form.html, /<select id="f-authorization_policy" name="authorization_policy"[^>]*>[\s\S]*<option value="extras-policy">extras-policy<\/option>/);
        const api: [string, string][] = [
          ['client_name', 'Extras API'],
          ['client_name#fi', 'Lisä-API'],
          ['client_name#sv', 'Extra-API'],
          ['token_endpoint_auth_method', 'client_secret_basic'],
          ['grant_types', 'client_credentials'],
          ['resource_server', 'true'],
          ['resource_uris', 'https://api.extras.example/'],
          ['resource_scopes', 'extras.read\r\nextras.write'],
          ['access_token_format', 'jwt'],
        ];
        const made = await ctx.post(jar, '/manage/clients/new', api, '/manage/clients/new');
        assert.equal(made.response.status, 200, made.html.slice(0, 2000));
        const apiId = textOf(/<code id="client-id">([^<]*)<\/code>/.exec(made.html)?.[1] ?? '');
        const stored = await ctx.server.gatehouse.store.clients.get(apiId);
        assert.ok(stored);
        const app: [string, string][] = [
          ['client_name', 'Extras app'],
          ['redirect_uris', 'https://app.extras.example/cb'],
          ['token_endpoint_auth_method', 'client_secret_basic'],
          ['grant_types', 'authorization_code'],
          ['aud', apiId],
          ['scope', 'openid extras.read'],
          ['authorization_policy', 'extras-policy'],
          ['backchannel_logout_uri', 'https://app.extras.example/bcl'],
          ['backchannel_logout_session_required', 'true'],
          ['frontchannel_logout_uri', 'https://app.extras.example/fcl'],
          ['frontchannel_logout_session_required', 'true'],
        ];
        const appMade = await ctx.post(jar, '/manage/clients/new', app, '/manage/clients/new');
        assert.equal(appMade.response.status, 200, appMade.html.slice(0, 2000));
        const appId = textOf(/<code id="client-id">([^<]*)<\/code>/.exec(appMade.html)?.[1] ?? '');
        const view = async (id: string) => (await fetch(`${ctx.server.url}/manage/api/v1/clients/${id}`, { headers: { authorization: `Bearer ${decodeURIComponent(jar.cookies.get('gatehouse_console')!)}` } })).json() as Promise<Record<string, unknown>>;
        const apiView = await view(apiId);
        assert.equal(apiView['client_name#fi'], 'Lisä-API');
        assert.equal(apiView['client_name#sv'], 'Extra-API');
        assert.equal(apiView.resource_server, true);
        assert.deepEqual(apiView.resource_uris, ['https://api.extras.example/']);
        assert.deepEqual(apiView.resource_scopes, ['extras.read', 'extras.write']);
        assert.equal(apiView.access_token_format, 'jwt');
        const appView = await view(appId);
        assert.deepEqual(appView.aud, [apiId]);
        assert.equal(appView.scope, 'openid extras.read');
        assert.equal(appView.authorization_policy, 'extras-policy');
        assert.deepEqual([appView.backchannel_logout_uri, appView.backchannel_logout_session_required], ['https://app.extras.example/bcl', true], 'issue 26: Back-Channel Logout §2.2');
        assert.deepEqual([appView.frontchannel_logout_uri, appView.frontchannel_logout_session_required], ['https://app.extras.example/fcl', true], 'issue 26: Front-Channel Logout §2');
        // The client page says how its last back-channel logout token went (decisions LO13); a client without a URI says nothing of it.
        const line = (html: string) => /<dt id="logout-delivery">([^<]*)<\/dt>\s*<dd>([\s\S]*?)<\/dd>/.exec(html)?.slice(1);
        assert.deepEqual(line((await ctx.page(jar, `/manage/clients/${appId}`)).html), ['Last back-channel logout token', 'None sent yet']);
        await ctx.server.gatehouse.store.logoutDeliveries.record({ clientId: appId, status: 'failed', attemptedAt: Date.parse('2026-11-28T10:00:00Z'), messageId: 'bcl-x', error: 'the relying party answered 503' });
        const failedLine = line((await ctx.page(jar, `/manage/clients/${appId}`)).html);
        assert.match(failedLine?.[1] ?? '', /^Failed .+: <code>the relying party answered 503<\/code>$/);
        assert.equal(line((await ctx.page(jar, `/manage/clients/${apiId}`)).html), undefined);

        // The edit form shows them, and emptying one removes it.
        const edit = await ctx.page(jar, `/manage/clients/${apiId}/edit`);
        assert.match(edit.html, /name="client_name#fi" type="text" value="Lisä-API"/);
        assert.match(edit.html, /<option value="jwt" selected>/);
        const fields = formFields(edit.html).filter(([n]) => n !== 'csrf_token' && n !== 'grant_types' && n !== 'resource_server' && n !== 'consent_required' && n !== 'backchannel_logout_session_required' && n !== 'frontchannel_logout_session_required' && n !== 'refresh_tokens').map(([n, v]): [string, string] => [n, n === 'client_name#fi' ? '' : v]);
        const textareas = [...edit.html.matchAll(/<textarea id="[^"]*" name="([^"]*)"[^>]*>([^<]*)<\/textarea>/g)].map((m): [string, string] => [m[1]!, textOf(m[2]!)]);
        const selects = [...edit.html.matchAll(/<select id="[^"]*" name="([^"]*)"[^>]*>[\s\S]*?<option value="([^"]*)" selected>/g)].map((m): [string, string] => [m[1]!, m[2]!]);
        const saved = await ctx.post(jar, `/manage/clients/${apiId}/edit`, [...fields, ...textareas, ...selects, ['grant_types', 'client_credentials'], ['resource_server', 'true']], `/manage/clients/${apiId}/edit`);
        assert.equal(saved.response.status, 303, saved.html.slice(0, 3000));
        const after = await view(apiId);
        assert.equal(after['client_name#fi'], undefined);
        assert.equal(after['client_name#sv'], 'Extra-API');
        assert.equal(after.access_token_format, 'jwt');
        assert.deepEqual(after.resource_scopes, ['extras.read', 'extras.write'], 'the edit form keeps the declared values');
      });
    });
  });

  describe(`console extras on ${db.name}, dynamic registration off, no theme, no key-encryption key`, () => {
    consoleSuite(db, {}, (ctx) => {
      test('the client page shows each setting by its label in the page’s language, lists as lists, yes/no (issue 22 item 11)', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const bearer = { authorization: `Bearer ${decodeURIComponent(jar.cookies.get('gatehouse_console')!)}` };
        const made = await fetch(`${ctx.server.url}/manage/api/v1/clients`, {
          method: 'POST',
          headers: { ...bearer, 'content-type': 'application/json' },
          body: JSON.stringify({ client_name: 'Labelled', 'client_name#fi': 'Nimetty', redirect_uris: ['https://labelled.example/a', 'https://labelled.example/b'], refresh_tokens: true, access_token_ttl: 600 }),
        });
        assert.equal(made.status, 201);
        const id = ((await made.json()) as { client_id: string }).client_id;
        const rows = async (lang: string) =>
          [...(await ctx.page(jar, `/manage/clients/${id}?lang=${lang}`)).html.matchAll(/<dt id="setting-([^"]*)">([^<]*)<\/dt>\n<dd>(.*?)<\/dd>/g)].map((m) => [m[1], textOf(m[2]!), m[3]]);
        const list = (...values: string[]) => `<ul class="plain">${values.map((v) => `<li><code>${v}</code></li>`).join('')}</ul>`;
        assert.deepEqual(await rows('en'), [
          ['redirect_uris', 'Redirect URIs', list('https://labelled.example/a', 'https://labelled.example/b')],
          ['grant_types', 'Grant types', list('authorization_code', 'refresh_token')],
          ['refresh_tokens', 'Issue refresh tokens', 'yes'],
          ['rotate_refresh_tokens', 'New refresh token at each use (rotation)', 'yes'],
          ['access_token_ttl', 'Access token lifetime (seconds)', '<code>600</code>'],
          ['post_logout_redirect_uris', 'Post-logout redirect URIs', '(none)'],
          ['id_token_signed_response_alg', 'ID token signing algorithm', '<code>RS256</code>'],
          ['client_name-fi', 'Client name in Finnish', '<code>Nimetty</code>'],
          ['scope', 'Scope', 'not restricted: the client may ask for every scope'],
        ]);
        assert.deepEqual((await rows('fi')).map(([key, label, value]) => [key, label, value]).slice(0, 3), [
          ['redirect_uris', 'Paluuosoitteet (redirect URI)', list('https://labelled.example/a', 'https://labelled.example/b')],
          ['grant_types', 'Myöntötyypit (grant types)', list('authorization_code', 'refresh_token')],
          ['refresh_tokens', 'Myönnä refresh-tokeneita', 'kyllä'],
        ]);
        assert.equal((await rows('sv')).find(([key]) => key === 'client_name-fi')?.[1], 'Klientens namn på finska');
      });

      test('the new-client form starts from the API’s defaults: left as it is, it registers the client the API registers (issue 22 item 11)', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const bearer = { authorization: `Bearer ${decodeURIComponent(jar.cookies.get('gatehouse_console')!)}` };
        const view = async (id: string) => (await fetch(`${ctx.server.url}/manage/api/v1/clients/${id}`, { headers: bearer })).json() as Promise<Record<string, unknown>>;
        const defaults = (client: Record<string, unknown>) => ({ grant_types: client.grant_types, refresh_tokens: client.refresh_tokens, rotate_refresh_tokens: client.rotate_refresh_tokens });
        const typed: [string, string][] = [['client_name', 'Form defaults'], ['redirect_uris', 'https://defaults.example/cb']];
        const form = submittedFields((await ctx.page(jar, '/manage/clients/new')).html).filter(([n]) => n !== 'client_name' && n !== 'redirect_uris');
        const made = await ctx.post(jar, '/manage/clients/new', [...typed, ...form], '/manage/clients/new');
        assert.equal(made.response.status, 200, made.html.slice(0, 2000));
        const consoleClient = await view(textOf(/<code id="client-id">([^<]*)<\/code>/.exec(made.html)?.[1] ?? ''));
        const byApi = await fetch(`${ctx.server.url}/manage/api/v1/clients`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'API defaults', redirect_uris: ['https://defaults.example/cb'] }) });
        assert.equal(byApi.status, 201);
        const apiClient = (await byApi.json()) as Record<string, unknown>;
        assert.deepEqual(defaults(consoleClient), defaults(apiClient));
        assert.deepEqual(defaults(consoleClient), { grant_types: ['authorization_code', 'refresh_token'], refresh_tokens: false, rotate_refresh_tokens: true });

        // Ticked, the box asks for refresh tokens; the edit form shows the client's choice.
        const asked = await ctx.post(jar, '/manage/clients/new', [...typed, ...form, ['refresh_tokens', 'true']], '/manage/clients/new');
        const askedId = textOf(/<code id="client-id">([^<]*)<\/code>/.exec(asked.html)?.[1] ?? '');
        assert.equal((await view(askedId)).refresh_tokens, true);
        assert.match((await ctx.page(jar, `/manage/clients/${askedId}/edit`)).html, /<input id="f-refresh_tokens" name="refresh_tokens" type="checkbox" value="true" checked/);
      });

      test('without GATEHOUSE_KEY_ENCRYPTION_KEY the client form does not offer client_secret_jwt, as discovery does not; a client registered with it keeps it on its edit form (issue 22 item 6)', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const form = await ctx.page(jar, '/manage/clients/new');
        assert.deepEqual(optionsOf(form.html, 'token_endpoint_auth_method'), ['client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']);
        const discovery = (await (await fetch(`${ctx.server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
        assert.deepEqual(optionsOf(form.html, 'token_endpoint_auth_method'), discovery.token_endpoint_auth_methods_supported);
        // Registered while the server had the key (the store as an earlier configuration left it).
        const { client } = await createTestClient(ctx.server.gatehouse.store, { name: 'HMAC app', redirectUris: ['https://hmac.example/cb'], tokenEndpointAuthMethod: 'client_secret_jwt' });
        const edit = await ctx.page(jar, `/manage/clients/${client.clientId}/edit`);
        assert.deepEqual(optionsOf(edit.html, 'token_endpoint_auth_method'), ['client_secret_jwt', 'client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none']);
        assert.match(edit.html, /<option value="client_secret_jwt" selected>/);
      });

      test('the registration tokens page says registration is off and how to turn it on; a token can still be minted', async () => {
        const jar = await ctx.signIn(ctx.admin);
        const list = await ctx.page(jar, '/manage/registration-tokens');
        assert.equal(list.response.status, 200);
        assert.ok(list.html.includes('GATEHOUSE_DYNAMIC_REGISTRATION=initial_access_token'));
        assert.match(list.html, /Dynamic registration is off/);
        const minted = await ctx.post(jar, '/manage/registration-tokens/new', { expires_in: '3600', uses: '1' }, '/manage/registration-tokens');
        assert.equal(minted.response.status, 200);
        assert.match(minted.html, /<code id="token-value" class="value">/);
        assert.match(minted.html, /Dynamic registration is off/);
      });

      test('without a theme the page says so and how to set GATEHOUSE_THEME_DIR; the preview is the built-in page', async () => {
        const jar = await ctx.signIn(ctx.reader);
        const { html } = await ctx.page(jar, '/manage/theme?lang=fi');
        assert.match(html, /Ei teemaa/);
        assert.ok(html.includes('GATEHOUSE_THEME_DIR='));
        const preview = await ctx.page(jar, '/manage/theme/preview?display=page&locale=fi');
        assert.equal(preview.response.status, 200);
        assert.match(preview.html, /<html lang="fi"/);
        assert.ok(preview.html.includes('Esimerkkisovellus'));
      });
    });
  });
}
