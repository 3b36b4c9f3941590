/**
 * The web console at /manage/ over real HTTP, on every database (docs/console.md): without the
 * console's client it explains `gatehouse admin bootstrap`; without a session it redirects to
 * gatehouse's own authorization endpoint with PKCE S256, state, nonce and the management API as
 * resource; the callback refuses a foreign state; signing in through the real login form gives a
 * session cookie scoped to /manage; every POST needs the CSRF token derived from the session and
 * our Origin; a reader sees no write forms; a user in neither group is told how to get access;
 * the pages carry a CSP without 'unsafe-inline'.
 */
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../src/domain/user.ts';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID } from '../../src/manage/management-clients.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { enrolTotp, giveRecoveryCodes } from '../helpers/factors.ts';
import { ensureManagementSetup } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'console password 1';
const BOOTSTRAP = 'npx gatehouse admin bootstrap --username &lt;name&gt; --password-stdin';

/** The value of the form field `name` on a page. */
/** The action of the page's last form (the first is the header's sign-out). */
function lastFormAction(html: string): string | undefined {
  return [...html.matchAll(/<form\b[^>]*\baction="([^"]*)"/g)].at(-1)?.[1];
}

/** Text of an HTML text node or attribute as the page's template escaped it. */
function unescapeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

function hidden(html: string, name: string): string | undefined {
  return formFields(html).find(([n]) => n === name)?.[1];
}

for (const db of DATABASES) {
  describe(`web console on ${db.name}`, () => {
    let server: RunningServer;
    let admin: User;
    let reader: User;
    let nobody: User;

    before(async () => {
      server = await startServer(db);
    });
    after(async () => server.close());

    const newMember = async (group: string | undefined): Promise<User> => {
      const store = server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD });
      if (group !== undefined) await store.groups.addMember((await store.groups.getByName(group))!.id, user.id);
      return user;
    };

    /**
     * Signs in as `user` the way a browser does: /manage/ → authorization endpoint → login form →
     * callback → /manage/. Returns the jar with the console's cookies.
     */
    /** Signs in to the console's client as `username` without expecting the console to let them in. */
    async function signInAs(username: string, password: string): Promise<void> {
      const jar = new CookieJar();
      const first = await browse(`${server.url}/manage/`, jar);
      const login = await browse(first.headers.get('location')!, jar);
      const html = await login.text();
      const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? username : n === 'password' ? password : v]);
      const back = await submit(new URL(formAction(html), server.url).toString(), fields, jar);
      assert.equal(back.status, 303);
    }

    async function signIn(user: User, start = '/manage/'): Promise<CookieJar> {
      const jar = new CookieJar();
      const first = await browse(`${server.url}${start}`, jar);
      assert.equal(first.status, 302);
      const login = await browse(first.headers.get('location')!, jar);
      assert.equal(login.status, 200, 'the login page');
      const html = await login.text();
      const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? user.username : n === 'password' ? PASSWORD : v]);
      const back = await submit(new URL(formAction(html), server.url).toString(), fields, jar);
      assert.equal(back.status, 303, 'the login form redirects to the callback');
      const callback = back.headers.get('location')!;
      assert.ok(callback.startsWith(`${new URL(server.issuer).origin}/manage/callback?`), callback);
      const done = await browse(callback, jar);
      assert.equal(done.status, 303, await done.clone().text());
      assert.equal(done.headers.get('location'), start);
      return jar;
    }

    const page = async (jar: CookieJar, path: string) => {
      const response = await browse(`${server.url}${path}`, jar);
      return { response, html: await response.text() };
    };

    test('before the bootstrap, /manage/ says how to create the console client and the first administrator', async () => {
      const response = await browse(`${server.url}/manage/`);
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
      const html = await response.text();
      // The server's own settings in front of it (test/http/console-issuer.test.ts runs it verbatim).
      const store = server.config.sqlitePath === undefined ? `&#39;${server.config.databaseUrl}&#39;` : `sqlite:${server.config.sqlitePath}`;
      assert.equal(/<code id="bootstrap-command">([^<]*)<\/code>/.exec(html)?.[1], `GATEHOUSE_ISSUER=${server.issuer} GATEHOUSE_DATABASE_URL=${store} ${BOOTSTRAP}`, 'the exact bootstrap command');
    });

    test('set up: the management clients, groups and three users', async () => {
      await ensureManagementSetup(server);
      admin = await newMember(server.config.manageAdminGroup);
      reader = await newMember(server.config.manageReadonlyGroup);
      nobody = await newMember(undefined);
    });

    test('without a session, /manage/ redirects to the authorization endpoint with PKCE S256, state, nonce and the API as resource', async () => {
      const response = await browse(`${server.url}/manage/clients?q=x`);
      assert.equal(response.status, 302);
      const location = new URL(response.headers.get('location')!);
      assert.equal(`${location.origin}${location.pathname}`, `${server.issuer}/oauth2/authorization`);
      const origin = new URL(server.issuer).origin;
      const q = location.searchParams;
      assert.equal(q.get('response_type'), 'code');
      assert.equal(q.get('client_id'), CONSOLE_CLIENT_ID);
      assert.equal(q.get('redirect_uri'), `${origin}/manage/callback`);
      assert.equal(q.get('scope'), 'openid');
      assert.equal(q.get('code_challenge_method'), 'S256');
      assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.match(q.get('state') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.match(q.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
      assert.equal(q.get('resource'), `${origin}/manage/api/v1`);
      const cookie = response.headers.getSetCookie().find((c) => c.startsWith('gatehouse_console_signin='));
      assert.ok(cookie, 'the sign-in transaction cookie');
      assert.match(cookie, /HttpOnly/i);
      assert.match(cookie, /Path=\/manage/);
      assert.match(cookie, /SameSite=Lax/i);
      assert.match(cookie, /Max-Age=600/);
      // The cookie holds the PKCE verifier whose S256 challenge was sent.
      const transaction = JSON.parse(Buffer.from(decodeURIComponent(cookie.split(';')[0]!.split('=')[1]!), 'base64url').toString('utf8')) as { state: string; verifier: string; returnTo: string };
      assert.equal(transaction.state, q.get('state'));
      assert.equal(createHash('sha256').update(transaction.verifier).digest('base64url'), q.get('code_challenge'));
      assert.equal(transaction.returnTo, '/manage/clients?q=x');
    });

    test('the callback refuses a state this browser did not start, and one without any sign-in', async () => {
      const jar = new CookieJar();
      await browse(`${server.url}/manage/`, jar);
      const wrong = await browse(`${server.url}/manage/callback?code=abc&state=not-the-state`, jar);
      assert.equal(wrong.status, 400);
      assert.match(await wrong.text(), /<h1>Sign-in not completed<\/h1>/);
      assert.equal(wrong.headers.getSetCookie().some((c) => /^gatehouse_console=/.test(c)), false, 'no session');
      const none = await browse(`${server.url}/manage/callback?code=abc&state=abc`);
      assert.equal(none.status, 400);
    });

    /**
     * Starts a sign-in in a fresh jar, then logs in through an authorization request of our own
     * making (`change` edits its parameters): the callback URL the login form answers with.
     */
    async function callbackFor(user: User, change: (params: URLSearchParams) => void): Promise<{ jar: CookieJar; callback: URL }> {
      const jar = new CookieJar();
      const first = await browse(`${server.url}/manage/`, jar);
      const authorization = new URL(first.headers.get('location')!);
      change(authorization.searchParams);
      const login = await browse(authorization.toString(), jar);
      const html = await login.text();
      const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? user.username : n === 'password' ? PASSWORD : v]);
      const back = await submit(new URL(formAction(html), server.url).toString(), fields, jar);
      assert.equal(back.status, 303);
      return { jar, callback: new URL(back.headers.get('location')!) };
    }

    test('the callback refuses a real code that comes back with another state (RFC 6749 §10.12)', async () => {
      const { jar, callback } = await callbackFor(admin, () => {});
      callback.searchParams.set('state', 'tampered');
      const response = await browse(callback.toString(), jar);
      assert.equal(response.status, 400);
      assert.equal(response.headers.getSetCookie().some((c) => /^gatehouse_console=[^;]/.test(c)), false, 'no session');
    });

    test('the callback refuses an ID token whose nonce is not the one this browser sent (OIDC Core §3.1.3.7)', async () => {
      // Same state and PKCE challenge as the browser's transaction, another nonce: only the nonce check can tell.
      const { jar, callback } = await callbackFor(admin, (params) => params.set('nonce', 'someone-elses-nonce'));
      const response = await browse(callback.toString(), jar);
      assert.equal(response.status, 400);
      assert.equal(response.headers.getSetCookie().some((c) => /^gatehouse_console=[^;]/.test(c)), false, 'no session');
    });

    test('a sign-in cookie whose page to return to holds characters no header may carry returns to the console home, not a 500', async () => {
      for (const returnTo of ['/manage/clients\u0001', '/manage/\u0100', '/manage/\u007f']) {
        const { jar, callback } = await callbackFor(admin, () => {});
        const transaction = JSON.parse(Buffer.from(jar.cookies.get('gatehouse_console_signin')!, 'base64url').toString('utf8')) as Record<string, string>;
        jar.cookies.set('gatehouse_console_signin', Buffer.from(JSON.stringify({ ...transaction, returnTo }), 'utf8').toString('base64url'));
        const response = await browse(callback.toString(), jar);
        assert.equal(response.status, 303, JSON.stringify(returnTo));
        assert.equal(response.headers.get('location'), '/manage/', JSON.stringify(returnTo));
      }
    });

    test('an administrator signs in through the login form; the session cookie is HttpOnly, SameSite=Strict, Path=/manage', async () => {
      const jar = new CookieJar();
      const first = await browse(`${server.url}/manage/`, jar);
      const login = await browse(first.headers.get('location')!, jar);
      const html = await login.text();
      const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? admin.username : n === 'password' ? PASSWORD : v]);
      const back = await submit(new URL(formAction(html), server.url).toString(), fields, jar);
      const done = await fetch(back.headers.get('location')!, { redirect: 'manual', headers: jar.header() });
      assert.equal(done.status, 303);
      const session = done.headers.getSetCookie().find((c) => c.startsWith('gatehouse_console='));
      assert.ok(session, 'the session cookie');
      assert.match(session, /HttpOnly/i);
      assert.match(session, /SameSite=Strict/i);
      assert.match(session, /Path=\/manage(;|$)/);
      assert.match(session, /Max-Age=\d+/);
      assert.ok(done.headers.getSetCookie().some((c) => c.startsWith('gatehouse_console_id=')), 'the ID token for sign-out');
      // The cookie is a bearer token for the management API itself.
      const token = decodeURIComponent(session.split(';')[0]!.slice('gatehouse_console='.length));
      const me = await fetch(`${server.url}/manage/api/v1/me`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(me.status, 200);
      assert.deepEqual(((await me.json()) as { role: string }).role, 'admin');
      // A replayed callback (the transaction is spent) is refused.
      jar.store(done);
      const again = await browse(back.headers.get('location')!, jar);
      assert.equal(again.status, 400);
    });

    test('the overview shows who is signed in and their role; pages carry a strict CSP and Referrer-Policy same-origin', async () => {
      const jar = await signIn(admin);
      const { response, html } = await page(jar, '/manage/');
      assert.equal(response.status, 200);
      assert.ok(html.includes(admin.username));
      assert.match(html, /administrator/);
      const csp = response.headers.get('content-security-policy') ?? '';
      for (const directive of ["default-src 'none'", "script-src 'self'", "style-src 'self'", "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"]) assert.ok(csp.includes(directive), `${directive} in ${csp}`);
      assert.equal(/unsafe-inline|unsafe-eval/.test(csp), false, csp);
      assert.equal(response.headers.get('referrer-policy'), 'same-origin');
      assert.equal(response.headers.get('cache-control'), 'no-store');
      assert.equal(response.headers.get('x-frame-options'), 'DENY');
      // No inline script or style on the page.
      assert.equal(/<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i.test(html), false);
    });

    test('?lang= chooses the language and is remembered', async () => {
      const jar = await signIn(admin);
      const fi = await page(jar, '/manage/?lang=fi');
      assert.match(fi.html, /<html lang="fi">/);
      const next = await page(jar, '/manage/');
      assert.match(next.html, /<html lang="fi">/);
      const sv = await page(jar, '/manage/?lang=sv');
      assert.match(sv.html, /<html lang="sv">/);
    });

    test('a POST without the CSRF token, with a wrong one, or from another origin is refused with 403; with both it is done', async () => {
      const jar = await signIn(admin);
      const { html } = await page(jar, '/manage/');
      const token = hidden(html, 'csrf_token')!;
      assert.match(token, /^[A-Za-z0-9_-]{43}$/);
      const origin = new URL(server.issuer).origin;
      const post = (form: Record<string, string>, headers: Record<string, string>) => submit(`${server.url}/manage/sign-out`, form, jar, headers);
      for (const [form, headers, why] of [
        [{}, { origin }, 'no token'],
        [{ csrf_token: 'A'.repeat(43) }, { origin }, 'a wrong token'],
        [{ csrf_token: token }, { origin: 'https://evil.example' }, 'another origin'],
        [{ csrf_token: token }, { origin: 'null' }, 'an opaque origin'],
        [{ csrf_token: token }, {}, 'no Origin and no Referer'],
        [{ csrf_token: token }, { referer: 'https://evil.example/manage/' }, 'a foreign Referer'],
      ] as const) {
        const response = await post(form, headers);
        assert.equal(response.status, 403, why);
        assert.match(await response.text(), /Form not accepted/, why);
      }
      // Still signed in: nothing was done.
      assert.equal((await page(jar, '/manage/')).response.status, 200);
      const out = await post({ csrf_token: token }, { origin });
      assert.equal(out.status, 303);
      const location = new URL(out.headers.get('location')!);
      assert.equal(`${location.origin}${location.pathname}`, `${server.issuer}/oauth2/logout`);
      assert.equal(location.searchParams.get('post_logout_redirect_uri'), `${origin}/manage/`);
      assert.ok(location.searchParams.get('id_token_hint'), 'id_token_hint');
      assert.ok(out.headers.getSetCookie().some((c) => /^gatehouse_console=;/.test(c)), 'the session cookie is cleared');
      // The token was revoked too: the old cookie no longer works.
      const old = await page(jar, '/manage/');
      assert.equal(old.response.status, 302);
    });

    test('the CSRF token of one session does not work with another', async () => {
      const first = await signIn(admin);
      const second = await signIn(admin);
      const token = hidden((await page(first, '/manage/')).html, 'csrf_token')!;
      const response = await submit(`${server.url}/manage/sign-out`, { csrf_token: token }, second, { origin: new URL(server.issuer).origin });
      assert.equal(response.status, 403);
    });

    test('a reader sees the pages without any write form or button', async () => {
      const jar = await signIn(reader);
      for (const path of ['/manage/', '/manage/clients', '/manage/policies', '/manage/keys', '/manage/users', '/manage/groups', '/manage/organizations', '/manage/audit', `/manage/users/${admin.id}`, `/manage/groups/${encodeURIComponent(server.config.manageAdminGroup)}`, `/manage/clients/${CONSOLE_CLIENT_ID}`]) {
        const { response, html } = await page(jar, path);
        if (response.status === 404 || response.status === 502) continue; // a resource the API does not serve yet
        assert.equal(response.status, 200, path);
        const forms = [...html.matchAll(/<form\b[^>]*action="([^"]*)"/g)].map((m) => m[1]);
        const posts = [...html.matchAll(/<form method="post" action="([^"]*)"/g)].map((m) => m[1]);
        assert.deepEqual(posts, ['/manage/sign-out'], `${path}: no form but sign-out posts (${forms.join(', ')})`);
        assert.equal(/href="[^"]*\/(new|rotate|edit|delete|password|disable|end|withdraw|import|metadata|remove|reset)"/.test(html), false, `${path}: no write links`);
      }
      assert.match((await page(jar, '/manage/')).html, /reader/);
    });

    test('a signed-in user in neither group is told how to get access, with the bootstrap command', async () => {
      const jar = await signIn(nobody);
      const { response, html } = await page(jar, '/manage/');
      assert.equal(response.status, 403);
      assert.ok(html.includes(BOOTSTRAP));
      assert.ok(html.includes(server.config.manageAdminGroup));
      assert.match(html, /action="\/manage\/sign-out"/, 'they can sign out');
    });

    test('a session cookie that is not a live token signs in again; a POST with it changes nothing', async () => {
      const jar = new CookieJar();
      jar.cookies.set('gatehouse_console', 'not-a-token');
      const response = await browse(`${server.url}/manage/keys`, jar);
      assert.equal(response.status, 302);
      assert.ok(response.headers.get('location')!.startsWith(`${server.issuer}/oauth2/authorization?`));
      const { html } = await page(await signIn(admin), '/manage/');
      jar.cookies.set('gatehouse_console', 'not-a-token');
      const post = await submit(`${server.url}/manage/keys/rotate`, { csrf_token: hidden(html, 'csrf_token')! }, jar, { origin: new URL(server.issuer).origin });
      assert.equal(post.status, 403, 'the token is derived from the other session');
    });

    test('a console path not in its normal form is a 400 page, with or without cookies (found by test/fuzz/console.test.ts)', async () => {
      const jar = await signIn(admin);
      // Refused by the root's path check (decision X3) before the cookie parser ran.
      for (const [path, cookies] of [['/manage/clients/%61', jar], ['/manage/users/a%2D/edit', undefined], ['/manage/groups/%7Estaff', jar]] as const) {
        const response = await browse(`${server.url}${path}`, cookies);
        assert.equal(response.status, 400, path);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/, path);
        assert.match(await response.text(), /percent-encodes a character that needs no encoding/, path);
      }
    });

    /** Posts a console form with the session's CSRF token (read from `from`) and our Origin. */
    const post = async (jar: CookieJar, path: string, form: Record<string, string> | [string, string][] = {}, from = '/manage/') => {
      const token = hidden((await page(jar, from)).html, 'csrf_token')!;
      const fields: [string, string][] = [['csrf_token', token], ...(Array.isArray(form) ? form : Object.entries(form))];
      const response = await submit(`${server.url}${path}`, fields, jar, { origin: new URL(server.issuer).origin });
      return { response, html: await response.text() };
    };

    test('registering a client: the API’s field errors next to their field, then the secret once with the settings to paste', async () => {
      const jar = await signIn(admin);
      const form = await page(jar, '/manage/clients/new');
      assert.equal(form.response.status, 200);
      assert.match(form.html, /<label for="f-client_name">Name<\/label>/);
      const fields = (redirect: string): [string, string][] => [
        ['client_name', 'Console web app'],
        ['redirect_uris', redirect],
        ['post_logout_redirect_uris', 'http://127.0.0.1:3000/'],
        ['token_endpoint_auth_method', 'client_secret_basic'],
        ['grant_types', 'authorization_code'],
        ['grant_types', 'refresh_token'],
      ];
      const refused = await post(jar, '/manage/clients/new', fields('http://127.0.0.1:3000/callback\nnot a uri'));
      assert.equal(refused.response.status, 400);
      const block = /<div class="field invalid">\s*<label for="f-redirect_uris">[\s\S]*?<\/div>/.exec(refused.html)?.[0] ?? '';
      assert.match(block, /aria-invalid="true"/, 'the field is marked');
      assert.match(block, /<ul class="field-error" id="f-redirect_uris-error"><li>[^<]*not a uri/, 'the error, next to the field');
      assert.match(refused.html, /not a uri<\/textarea>/, 'what was typed stays');

      const created = await post(jar, '/manage/clients/new', fields('http://127.0.0.1:3000/callback'));
      assert.equal(created.response.status, 200, created.html);
      const secret = /<code id="client-secret" class="value">([^<]+)<\/code>/.exec(created.html)?.[1];
      const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(created.html)?.[1];
      assert.ok(secret && clientId);
      const stored = await server.gatehouse.store.clients.get(clientId);
      assert.equal(stored?.secretHash, createHash('sha256').update(secret).digest('base64url'), 'the secret shown is the registered one');
      assert.ok(created.html.includes(`${server.issuer}/.well-known/openid-configuration`), 'the discovery URL');
      assert.ok(created.html.includes(`export CLIENT_ID=&#39;${clientId}&#39;`), 'the web SSO example settings');
      assert.ok(created.html.includes(`export CLIENT_SECRET=&#39;${secret}&#39;`));
      // What was registered: no scope restricts nothing (issue 22 item 11); never a made-up `openid`.
      assert.equal(/<dd id="client-scope">([^]*?)<\/dd>/.exec(created.html)?.[1], 'not restricted: the client may ask for every scope');
      const scoped = await post(jar, '/manage/clients/new', [...fields('http://127.0.0.1:3000/callback'), ['scope', 'openid email']]);
      assert.equal(/<dd id="client-scope">([^]*?)<\/dd>/.exec(scoped.html)?.[1], '<code>openid email</code>');
      // Never again: the detail page shows no secret.
      const detail = await page(jar, `/manage/clients/${clientId}`);
      assert.equal(detail.response.status, 200);
      assert.equal(detail.html.includes(secret), false);
      // Search finds it; export downloads its metadata document.
      assert.ok((await page(jar, '/manage/clients?q=console+web')).html.includes(clientId));
      const exported = await browse(`${server.url}/manage/clients/${clientId}/metadata.json`, jar);
      assert.equal(exported.status, 200);
      assert.match(exported.headers.get('content-disposition') ?? '', /^attachment; filename="/);
      assert.equal(((await exported.json()) as { client_name: string }).client_name, 'Console web app');
    });

    test('edit, deactivate and activate, rotate the secret and delete a client, each destructive change after a confirmation page', async () => {
      const jar = await signIn(admin);
      const { client } = await createTestClient(server.gatehouse.store, { name: 'Doomed app' });
      const path = `/manage/clients/${client.clientId}`;
      const edit = await page(jar, `${path}/edit`);
      assert.match(edit.html, /<input id="f-client_name" name="client_name" type="text" value="Doomed app"/, 'the form shows the client as it is');
      const saved = await post(jar, `${path}/edit`, [
        ['client_name', 'Renamed app'],
        ['redirect_uris', client.redirectUris.join('\n')],
        ['token_endpoint_auth_method', 'client_secret_basic'],
        ['grant_types', 'authorization_code'],
        ['grant_types', 'refresh_token'],
      ]);
      assert.equal(saved.response.status, 303, saved.html);
      assert.equal((await server.gatehouse.store.clients.get(client.clientId))?.name, 'Renamed app');

      const confirm = await page(jar, `${path}/deactivate`);
      assert.equal(confirm.response.status, 200);
      assert.match(confirm.html, /Renamed app/);
      assert.equal(lastFormAction(confirm.html), `${path}/deactivate`);
      assert.equal((await server.gatehouse.store.clients.get(client.clientId))?.active, true, 'the confirmation page changes nothing');
      const off = await post(jar, `${path}/deactivate`);
      assert.equal(off.response.status, 303);
      assert.equal(off.response.headers.get('location'), `${path}?done=deactivated`);
      assert.equal((await server.gatehouse.store.clients.get(client.clientId))?.active, false);
      const on = await post(jar, `${path}/activate`);
      assert.equal(on.response.status, 303);
      assert.equal((await server.gatehouse.store.clients.get(client.clientId))?.active, true);

      const before = (await server.gatehouse.store.clients.get(client.clientId))?.secretHash;
      const rotated = await post(jar, `${path}/rotate-secret`);
      assert.equal(rotated.response.status, 200);
      const secret = /<code id="client-secret" class="value">([^<]+)<\/code>/.exec(rotated.html)?.[1] ?? '';
      const after = (await server.gatehouse.store.clients.get(client.clientId))?.secretHash;
      assert.notEqual(after, before);
      assert.equal(after, createHash('sha256').update(secret).digest('base64url'));

      assert.equal((await page(jar, `${path}/delete`)).response.status, 200);
      const deleted = await post(jar, `${path}/delete`);
      assert.equal(deleted.response.status, 303);
      assert.equal(deleted.response.headers.get('location'), '/manage/clients?done=deleted');
      assert.equal(await server.gatehouse.store.clients.get(client.clientId), undefined);
      assert.equal((await page(jar, path)).response.status, 404, 'a deleted client: the not-found page');
    });

    test('the detail page offers to rotate the secret exactly for clients whose method holds one (issue 23, item 4)', async () => {
      const jar = await signIn(admin);
      const jwks = { keys: [{ kty: 'EC', crv: 'P-256', x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU', y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0', kid: 'k1', use: 'sig' }] };
      const offered: Record<string, boolean> = {};
      for (const method of [undefined, 'client_secret_basic', 'client_secret_post', 'private_key_jwt', 'none'] as const) {
        const { client } = await createTestClient(server.gatehouse.store, { tokenEndpointAuthMethod: method, metadata: method === 'private_key_jwt' ? { jwks } : {} });
        const path = `/manage/clients/${client.clientId}`;
        const detail = await page(jar, path);
        assert.equal(detail.response.status, 200, detail.html);
        offered[method ?? 'no method'] = detail.html.includes(`href="${path}/rotate-secret"`);
      }
      assert.deepEqual(offered, { 'no method': true, client_secret_basic: true, client_secret_post: true, private_key_jwt: false, none: false });
    });

    test('import a client from an exported document (its client_id kept, a new secret once); errors at the text area', async () => {
      const jar = await signIn(admin);
      const { client } = await createTestClient(server.gatehouse.store, { name: 'Exported app', scope: 'openid profile' });
      const exported = JSON.parse(await (await browse(`${server.url}/manage/clients/${client.clientId}/metadata.json`, jar)).text()) as Record<string, unknown>;
      assert.equal(exported.client_id, client.clientId);
      const list = await page(jar, '/manage/clients');
      assert.match(list.html, /href="\/manage\/clients\/import">Import a client \(JSON\)<\/a>/);

      const clientId = `imported-${Date.now()}`;
      const document = { ...exported, client_id: clientId, client_name: 'Imported app' };
      const imported = await post(jar, '/manage/clients/import', { document: JSON.stringify(document) });
      assert.equal(imported.response.status, 200, imported.html);
      assert.match(imported.html, /<h1>Client imported<\/h1>/);
      const secret = /<code id="client-secret" class="value">([^<]+)<\/code>/.exec(imported.html)?.[1] ?? '';
      const stored = await server.gatehouse.store.clients.get(clientId);
      assert.equal(stored?.secretHash, createHash('sha256').update(secret).digest('base64url'), 'the secret shown is the one stored');
      assert.notEqual(stored?.secretHash, client.secretHash, 'a new secret, not the exported client’s');
      assert.deepEqual(JSON.parse(await (await browse(`${server.url}/manage/clients/${clientId}/metadata.json`, jar)).text()), document, 'registered as the document says');

      const again = await post(jar, '/manage/clients/import', { document: JSON.stringify(document) });
      assert.equal(again.response.status, 409);
      assert.match(again.html, new RegExp(`id="f-document-error"><li>client_id: a client with the client_id &quot;${clientId}&quot; is already registered</li>`));
      const asUser = await post(jar, '/manage/clients/import', { document: JSON.stringify({ ...document, client_id: admin.id }) });
      assert.equal(asUser.response.status, 409, 'a user’s id is no client_id (issue 22, item 4)');
      assert.match(asUser.html, new RegExp(`id="f-document-error"><li>client_id: the client_id &quot;${admin.id}&quot; is the id of a user: a client&#39;s tokens would name that user as their subject \\(sub\\)</li>`));
      assert.equal(await server.gatehouse.store.clients.get(admin.id), undefined);
      const notJson = await post(jar, '/manage/clients/import', { document: '{ nope' });
      assert.equal(notJson.response.status, 400);
      assert.match(notJson.html, /id="f-document-error"><li>This is not JSON: /);
      assert.match(notJson.html, /<textarea id="f-document" name="document" rows="20" spellcheck="false" aria-describedby="f-document-hint f-document-error" aria-invalid="true" required>\{ nope<\/textarea>/, 'what was typed is kept');
      const refused = await post(jar, '/manage/clients/import', { document: JSON.stringify({ client_name: 'No redirect', redirect_uris: ['not a uri'] }) });
      assert.equal(refused.response.status, 400);
      assert.match(refused.html, /id="f-document-error"><li>redirect_uris/);

      for (const hostile of ['{"__proto__": {"client_name": "x"}, "client_name": "Proto", "redirect_uris": ["https://p.example/cb"]}', '{"constructor": {"prototype": {}}, "client_name": "C"}', '['.repeat(5000) + ']'.repeat(5000), '"just a string"', 'null', JSON.stringify({ client_name: 'x'.repeat(300), redirect_uris: ['https://x.example/cb'] })]) {
        const answer = await post(jar, '/manage/clients/import', { document: hostile });
        assert.equal(answer.response.status, 400, hostile.slice(0, 60));
        assert.match(answer.html, /id="f-document-error"><li>/, hostile.slice(0, 60));
      }
      const deep = await post(jar, '/manage/clients/import', { document: '['.repeat(33) + ']'.repeat(33) });
      assert.match(deep.html, /id="f-document-error"><li>The JSON is nested more than 32 levels deep.<\/li>/);
      const long = { client_name: 'Long document', redirect_uris: Array.from({ length: 90 }, (_, i) => `https://long-${i}.example/callback/${'x'.repeat(100)}`) };
      assert.ok(JSON.stringify(long).length > 8192, 'longer than a protocol parameter may be');
      const accepted = await post(jar, '/manage/clients/import', { document: JSON.stringify(long) });
      assert.equal(accepted.response.status, 200, accepted.html.slice(0, 500));
      const malformed = await fetch(`${server.url}/manage/clients/import`, { method: 'POST', redirect: 'manual', headers: { ...jar.header(), origin: new URL(server.issuer).origin, 'content-type': 'application/x-www-form-urlencoded' }, body: 'csrf_token=%ZZ' });
      assert.equal(malformed.status, 400, 'a malformed form is a 400 page, not a server error');
      assert.match(await malformed.text(), /malformed percent-encoding/);
      const generated = await post(jar, '/manage/clients/import', { document: JSON.stringify({ client_name: 'Fresh import', redirect_uris: ['https://fresh.example/cb'] }) });
      assert.equal(generated.response.status, 200, generated.html);
      const generatedId = /<code id="client-id">([^<]+)<\/code>/.exec(generated.html)?.[1];
      assert.ok(generatedId !== undefined && (await server.gatehouse.store.clients.get(generatedId))?.name === 'Fresh import', 'without a client_id, one is generated');
    });

    test('edit all of a client’s metadata as JSON: the document replaces the registration; client_id fixed; errors at the text area', async () => {
      const jar = await signIn(admin);
      const { client } = await createTestClient(server.gatehouse.store, { name: 'JSON app', scope: 'openid profile' });
      const path = `/manage/clients/${client.clientId}`;
      const exportOf = async () => JSON.parse(await (await browse(`${server.url}${path}/metadata.json`, jar)).text()) as Record<string, unknown>;
      const { client_id: _id, ...registered } = await exportOf();
      const detail = await page(jar, path);
      assert.match(detail.html, new RegExp(`<a href="${path}/metadata">Edit all metadata \\(JSON\\)</a>`));
      const form = await page(jar, `${path}/metadata`);
      assert.equal(form.response.status, 200);
      const shown = /<textarea id="f-document" name="document"[^>]*>([\s\S]*?)<\/textarea>/.exec(form.html)?.[1] ?? '';
      assert.deepEqual(JSON.parse(unescapeHtml(shown)), registered, 'the export without its client_id');

      const { scope: _scope, ...withoutScope } = registered;
      const edited = { ...withoutScope, client_name: 'Edited as JSON', 'client_name#fi': 'Muokattu JSONina', logo_uri: 'https://cdn.example/logo.png' };
      const saved = await post(jar, `${path}/metadata`, { document: JSON.stringify({ client_id: client.clientId, ...edited }) });
      assert.equal(saved.response.status, 303, saved.html);
      assert.equal(saved.response.headers.get('location'), `${path}?done=saved`);
      assert.deepEqual(await exportOf(), { client_id: client.clientId, ...edited }, 'the removed scope is gone, the rest as written');

      for (const [body, status, error] of [
        [JSON.stringify({ ...edited, client_id: 'someone-else' }), 400, `client_id: the client_id cannot change; leave it out or keep ${client.clientId}.`],
        ['[1, 2]', 400, 'The document must be a JSON object: { … }.'],
        ['{ nope', 400, undefined],
        [JSON.stringify({ ...edited, redirect_uris: ['not a uri'] }), 400, undefined],
      ] as const) {
        const refused = await post(jar, `${path}/metadata`, { document: body });
        assert.equal(refused.response.status, status, body);
        const errors = [...(/id="f-document-error">([\s\S]*?)<\/ul>/.exec(refused.html)?.[1] ?? '').matchAll(/<li>([\s\S]*?)<\/li>/g)].map((m) => unescapeHtml(m[1]!));
        assert.equal(errors.length, 1, `${body}: ${errors.join(' | ')}`);
        if (error !== undefined) assert.equal(errors[0], error);
      }
      assert.deepEqual(await exportOf(), { client_id: client.clientId, ...edited }, 'nothing refused was written');
    });

    test('lists page with the API’s cursor: a next-page link, and the next page continues where the first ended', async () => {
      const jar = await signIn(admin);
      const prefix = `paged-${Date.now()}`;
      for (let i = 0; i < 55; i++) await createTestClient(server.gatehouse.store, { clientId: `${prefix}-${String(i).padStart(2, '0')}`, name: prefix });
      const first = await page(jar, `/manage/clients?q=${prefix}`);
      const shown = (html: string) => [...html.matchAll(new RegExp(`<code>(${prefix}-\\d+)</code>`, 'g'))].map((m) => m[1]!);
      assert.equal(shown(first.html).length, 50);
      const next = /<a href="([^"]+)" rel="next">/.exec(first.html)?.[1];
      assert.ok(next, 'a next-page link');
      const second = await page(jar, next.replace(/&amp;/g, '&'));
      assert.deepEqual([...shown(first.html), ...shown(second.html)].sort(), Array.from({ length: 55 }, (_, i) => `${prefix}-${String(i).padStart(2, '0')}`));
      assert.equal(/rel="next"/.test(second.html), false, 'the last page has no next link');
    });

    test('policies: JSON that does not parse and a document the API refuses are shown at the text area; create, view, delete', async () => {
      const jar = await signIn(admin);
      const notJson = await post(jar, '/manage/policies/new', { document: '{ nope' });
      assert.equal(notJson.response.status, 400);
      assert.match(notJson.html, /id="f-document-error"><li>This is not JSON: /);
      const refused = await post(jar, '/manage/policies/new', { document: JSON.stringify({ name: 'console-bad', access: { groups: 'Staff' } }) });
      assert.equal(refused.response.status, 400);
      assert.match(refused.html, /id="f-document-error"><li>access/);
      const name = `console-${Date.now()}`;
      const created = await post(jar, '/manage/policies/new', { document: JSON.stringify({ name, access: { groups: ['Staff'] } }) });
      assert.equal(created.response.status, 303, created.html);
      assert.equal(created.response.headers.get('location'), `/manage/policies/${name}?done=created`);
      const shown = await page(jar, `/manage/policies/${name}`);
      assert.match(shown.html, /&quot;Staff&quot;/);
      const deleted = await post(jar, `/manage/policies/${name}/delete`);
      assert.equal(deleted.response.status, 303);
      assert.equal(await server.gatehouse.store.policies.get(name), undefined);
    });

    test('keys: an administrator rotates after the confirmation page; a reader’s rotation is refused by the API (403 page)', async () => {
      const jar = await signIn(admin);
      const count = async () => (await server.gatehouse.store.keys.list(server.gatehouse.deps.clock.now())).length;
      const before = await count();
      const confirm = await page(jar, '/manage/keys/rotate');
      assert.equal(lastFormAction(confirm.html), '/manage/keys/rotate');
      const rotated = await post(jar, '/manage/keys/rotate');
      assert.equal(rotated.response.status, 303);
      assert.equal(await count(), before + 1);
      assert.match((await page(jar, '/manage/keys?done=rotated')).html, /The signing keys were rotated/);

      const readerJar = await signIn(reader);
      const refused = await post(readerJar, '/manage/keys/rotate');
      assert.equal(refused.response.status, 403);
      assert.match(refused.html, /<h1>Not allowed<\/h1>/);
      assert.equal(await count(), before + 1);
    });

    test('users and groups: create a user, add them to a group, end their session; the audit view finds those changes', async () => {
      const jar = await signIn(admin);
      const username = `console-user-${Date.now()}`;
      const refused = await post(jar, '/manage/users/new', { username, password: 'short' });
      assert.equal(refused.response.status, 400);
      assert.match(refused.html, /id="f-password-error"/, 'the password error next to the password field');
      const created = await post(jar, '/manage/users/new', { username, password: 'a long enough password', email: 'someone@example.test' });
      assert.equal(created.response.status, 303, created.html);
      const userPath = created.response.headers.get('location')!.split('?')[0]!;
      const userId = userPath.split('/').at(-1)!;
      assert.equal((await server.gatehouse.store.users.getProfile(userId))?.username, username);

      const group = `Console group ${Date.now()}`;
      const madeGroup = await post(jar, '/manage/groups/new', { name: group, description: 'from the console' });
      assert.equal(madeGroup.response.status, 303, madeGroup.html);
      const groupPath = `/manage/groups/${encodeURIComponent(group)}`;
      const missing = await post(jar, `${groupPath}/members/add`, { username: 'nobody-by-this-name' });
      assert.equal(missing.response.status, 303);
      assert.match((await page(jar, missing.response.headers.get('location')!)).html, /There is no user/);
      const added = await post(jar, `${groupPath}/members/add`, { username });
      assert.equal(added.response.status, 303);
      assert.ok((await page(jar, groupPath)).html.includes(`>${username}</a>`));
      assert.ok((await page(jar, userPath)).html.includes(`>${group}</a>`), 'the user page lists the group');

      // A session of the user (they sign in to the console's client, though they cannot use it): then end it.
      await signInAs(username, 'a long enough password');
      const withSession = await page(jar, userPath);
      const end = /href="([^"]*\/sessions\/[^"]*\/end)"/.exec(withSession.html)?.[1];
      assert.ok(end, 'an End session link');
      assert.equal((await page(jar, end)).response.status, 200, 'the confirmation page');
      const ended = await post(jar, end);
      assert.equal(ended.response.status, 303);
      assert.equal(/\/sessions\/[^"]*\/end"/.test((await page(jar, userPath)).html), false, 'no session left');

      // Events reach the store in batches: made visible without waiting (the sink's flush).
      await server.gatehouse.auditStore!.flush();
      const audit = await page(jar, `/manage/audit?user=${userId}`);
      assert.equal(audit.response.status, 200);
      for (const event of ['user.created', 'user.group_added', 'session.ended']) assert.ok(audit.html.includes(`<code>${event}</code>`), `${event} in the audit view`);
      // People by username, linked by id (issue 22 item 11): the user and the administrator who acted.
      const createdRow = /<tr><td>[^<]*<\/td><td><code>user\.created<\/code><\/td><td>(.*?)<\/td><td>.*?<\/td><td>(.*?)<\/td>/.exec(audit.html);
      assert.equal(createdRow?.[1], `<a href="/manage/users/${userId}" title="${userId}">${username}</a>`);
      assert.equal(createdRow?.[2], `manage-api · <a href="/manage/users/${admin.id}" title="${admin.id}">${admin.username}</a> · gatehouse-console`);
      const filtered = await page(jar, `/manage/audit?type=session.*&user=${userId}`);
      assert.equal(filtered.html.includes('<code>user.created</code>'), false);
      const bad = await page(jar, '/manage/audit?since=yesterday');
      assert.equal(bad.response.status, 400);
      assert.match(bad.html, /id="f-since-error"/, 'the API names the since field; shown next to it');
    });

    test('second factors: the user page lists them; remove one and reset all after a confirmation page; a reader sees them without buttons; in fi and sv', async () => {
      const store = server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD });
      const now = Date.now();
      const secret = await enrolTotp(store, user.id, now - 2000);
      const codes = await giveRecoveryCodes(store, user.id, now - 1000);
      const [totp] = await store.factors.list(user.id);
      const userPath = `/manage/users/${user.id}`;

      const readerView = await page(await signIn(reader), userPath);
      assert.match(readerView.html, /<h2 id="factors">Second factors<\/h2>/);
      assert.ok(readerView.html.includes('<td>phone</td><td>Authenticator app (TOTP)</td>'), 'the reader sees the factors');
      assert.equal(/\/factors\/[^"]*(remove|reset)"/.test(readerView.html), false, 'no Remove or Reset for a reader');

      const jar = await signIn(admin);
      const shown = await page(jar, userPath);
      assert.ok(shown.html.includes('<td>Recovery codes</td><td>Recovery codes</td>') && shown.html.includes('<td>10</td>'), 'the recovery codes and how many are left');
      assert.equal(shown.html.includes(secret) || codes.some((c) => shown.html.includes(c)), false, 'no secret, no code');
      const remove = `${userPath}/factors/${totp!.id}/remove`;
      assert.ok(shown.html.includes(`href="${remove}" aria-label="Remove phone"`), 'a Remove link naming the factor');
      const confirm = await page(jar, remove);
      assert.equal(confirm.response.status, 200);
      assert.match(unescapeHtml(confirm.html), new RegExp(`Remove the second factor “phone” of “${user.username}”\\?`));
      assert.equal((await store.factors.list(user.id)).length, 2, 'the confirmation page changes nothing');
      const removed = await post(jar, remove, {}, remove);
      assert.equal(removed.response.status, 303);
      assert.deepEqual((await store.factors.list(user.id)).map((f) => f.kind), ['recovery_codes']);
      assert.match((await page(jar, removed.response.headers.get('location')!)).html, /Removed\./);
      // Removed meanwhile (another tab): the API's 404 as the console's not-found page; nothing else changes.
      const again = await post(jar, remove, {}, userPath);
      assert.equal(again.response.status, 404);
      assert.deepEqual((await store.factors.list(user.id)).map((f) => f.kind), ['recovery_codes']);

      const reset = `${userPath}/factors/reset`;
      assert.ok((await page(jar, userPath)).html.includes(`href="${reset}"`), 'a Reset all link');
      assert.match(unescapeHtml((await page(jar, reset)).html), /Remove every second factor of “[^”]+”\? They sign in with the password alone/);
      const done = await post(jar, reset, {}, reset);
      assert.equal(done.response.status, 303);
      assert.deepEqual(await store.factors.list(user.id), []);
      const after = await page(jar, done.response.headers.get('location')!);
      assert.match(after.html, /The second factors were removed/);
      assert.equal(after.html.includes(`href="${reset}"`), false, 'nothing left to reset');

      await enrolTotp(store, user.id);
      assert.match((await page(jar, `${userPath}?lang=fi`)).html, /<h2 id="factors">Toiset tunnistustekijät<\/h2>[\s\S]*Todennussovellus \(TOTP\)[\s\S]*Poista kaikki toiset tunnistustekijät/);
      assert.match((await page(jar, `${userPath}?lang=sv`)).html, /<h2 id="factors">Andra faktorer<\/h2>[\s\S]*Autentiseringsapp \(TOTP\)[\s\S]*Återställ alla andra faktorer/);
      await page(jar, '/manage/?lang=en');
    });

    test('second factors: rename one on a form of its own; a name the rule refuses is shown at its field, nothing changed; a reader has no Rename; a factor gone meanwhile is the not-found page', async () => {
      const store = server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD });
      await enrolTotp(store, user.id);
      const [totp] = await store.factors.list(user.id);
      const userPath = `/manage/users/${user.id}`;
      const rename = `${userPath}/factors/${totp!.id}/rename`;
      assert.equal((await page(await signIn(reader), userPath)).html.includes('/rename"'), false, 'no Rename for a reader');

      const jar = await signIn(admin);
      assert.ok((await page(jar, userPath)).html.includes(`href="${rename}" aria-label="Rename phone"`), 'a Rename link naming the factor');
      const form = await page(jar, rename);
      assert.equal(form.response.status, 200);
      assert.match(unescapeHtml(form.html), new RegExp(`<h1>Rename the second factor “phone” of “${user.username}”</h1>`));
      assert.match(form.html, /name="name"[^>]*value="phone"/);

      const refused = await post(jar, rename, { name: 'x'.repeat(65) }, rename);
      assert.equal(refused.response.status, 400);
      assert.match(refused.html, /id="f-name-error"><li>the name must be 1 to 64 characters, without control characters<\/li>/);
      assert.deepEqual((await store.factors.list(user.id)).map((f) => f.name), ['phone']);

      const renamed = await post(jar, rename, { name: 'work phone' }, rename);
      assert.equal(renamed.response.status, 303);
      assert.deepEqual((await store.factors.list(user.id)).map((f) => f.name), ['work phone']);
      assert.match((await page(jar, renamed.response.headers.get('location')!)).html, /Renamed\.[\s\S]*<td>work phone<\/td>/);

      await store.factors.delete(user.id, totp!.id);
      assert.equal((await page(jar, rename)).response.status, 404);
      assert.equal((await post(jar, rename, { name: 'late' }, userPath)).response.status, 404);
    });

    test('second factors: a passkey is listed as Passkey (fi Pääsyavain, sv Lösennyckel) with its Remove link (issue 24)', async () => {
      const store = server.gatehouse.store;
      const user = await createTestUser(store, { password: PASSWORD });
      const factorId = randomUUID();
      await store.factors.insertPasskey({
        factor: { id: factorId, userId: user.id, kind: 'passkey', name: 'Laptop', createdAt: Date.now(), lastUsedAt: undefined, backupEligible: false },
        credentialId: randomUUID(),
        publicKey: 'pQECAyYgASFYIA',
        signCount: 0,
        transports: [],
        backedUp: false,
        aaguid: '00000000-0000-0000-0000-000000000000',
      });
      const jar = await signIn(admin);
      const userPath = `/manage/users/${user.id}`;
      const shown = await page(jar, userPath);
      assert.ok(shown.html.includes('<td>Laptop</td><td>Passkey</td>'), 'the passkey, by its kind');
      assert.ok(shown.html.includes(`href="${userPath}/factors/${factorId}/remove" aria-label="Remove Laptop"`));
      assert.ok((await page(jar, `${userPath}?lang=fi`)).html.includes('<td>Laptop</td><td>Pääsyavain</td>'));
      assert.ok((await page(jar, `${userPath}?lang=sv`)).html.includes('<td>Laptop</td><td>Lösennyckel</td>'));
      await page(jar, '/manage/?lang=en');
    });

    test('organizations: a refused parent shown at its field; create, rename, delete after confirmation', async () => {
      const jar = await signIn(admin);
      const technical = `console-org-${Date.now()}`;
      const refused = await post(jar, '/manage/organizations/new', { technical_name: technical, parent_id: '00000000-0000-4000-8000-000000000000' });
      assert.equal(refused.response.status, 400, refused.html);
      assert.match(refused.html, /id="f-parent_id-error"/);
      const created = await post(jar, '/manage/organizations/new', { technical_name: technical, name: 'Console Org' });
      assert.equal(created.response.status, 303, created.html);
      const path = created.response.headers.get('location')!.split('?')[0]!;
      assert.match((await page(jar, path)).html, /Console Org/);
      const renamed = await post(jar, `${path}/edit`, { technical_name: technical, name: 'Renamed Org' });
      assert.equal(renamed.response.status, 303, renamed.html);
      assert.ok((await page(jar, `/manage/organizations?q=${technical}`)).html.includes('Renamed Org'));
      assert.equal((await page(jar, `${path}/delete`)).response.status, 200);
      const deleted = await post(jar, `${path}/delete`);
      assert.equal(deleted.response.status, 303);
      assert.equal((await page(jar, path)).response.status, 404);
    });

    test('a forged session cookie (line break, non-ASCII, huge) is no session, never a server error', async () => {
      for (const value of ['abc%0D%0AX-Injected%3A%201', '%C3%A9t%C3%A9', 'A'.repeat(5000), '"quoted"']) {
        const jar = new CookieJar();
        jar.cookies.set('gatehouse_console', value);
        const response = await browse(`${server.url}/manage/clients`, jar);
        assert.equal(response.status, 302, value.slice(0, 40));
        const posted = await submit(`${server.url}/manage/keys/rotate`, { csrf_token: 'x' }, jar, { origin: new URL(server.issuer).origin });
        assert.ok(posted.status === 303 || posted.status === 403, `${posted.status} for ${value.slice(0, 40)}`);
      }
    });

    test('a JSON or oversized body is refused as a page with a 4xx, never run', async () => {
      const jar = await signIn(admin);
      const origin = new URL(server.issuer).origin;
      const json = await fetch(`${server.url}/manage/keys/rotate`, { method: 'POST', redirect: 'manual', headers: { ...jar.header(), origin, 'content-type': 'application/json' }, body: '{"csrf_token":"x"}' });
      assert.equal(json.status, 415);
      assert.match(json.headers.get('content-type') ?? '', /^text\/html/);
      const big = await fetch(`${server.url}/manage/keys/rotate`, { method: 'POST', redirect: 'manual', headers: { ...jar.header(), origin, 'content-type': 'application/x-www-form-urlencoded' }, body: `csrf_token=${'a'.repeat(2_000_000)}` });
      assert.ok(big.status >= 400 && big.status < 500, String(big.status));
    });

    test('a path under /manage/ that is no page is the console’s 404 page (in the chosen language); under /manage/api/v1 the API’s problem document', async () => {
      for (const path of ['/manage/nothing-here', '/manage/clients/x/y/z', '/manage/assets/missing.js']) {
        const response = await fetch(`${server.url}${path}?lang=fi`, { redirect: 'manual' });
        assert.equal(response.status, 404, path);
        assert.match(response.headers.get('content-type') ?? '', /^text\/html/, path);
        assert.equal(response.headers.get('cache-control'), 'no-store', path);
        assert.doesNotMatch(response.headers.get('content-security-policy') ?? '', /unsafe-inline/, path);
        assert.match(await response.text(), /<h1>Ei löytynyt<\/h1>/, path);
      }
      // The API authenticates before it routes: without a token, its 401 problem document.
      const api = await fetch(`${server.url}/manage/api/v1/nothing-here`);
      assert.equal(api.status, 401);
      assert.match(api.headers.get('content-type') ?? '', /^application\/problem\+json/);
    });

    test('the console asks for the API audience: the token is for gatehouse-manage-api', async () => {
      const jar = await signIn(admin);
      const token = decodeURIComponent(jar.cookies.get('gatehouse_console')!);
      const introspection = await server.gatehouse.store.tokens.find(createHash('sha256').update(token).digest('base64url'));
      assert.ok(introspection?.scope.split(' ').includes(MANAGE_API_CLIENT_ID), introspection?.scope);
    });
  });
}
