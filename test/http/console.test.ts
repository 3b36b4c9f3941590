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
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { User } from '../../src/domain/user.ts';
import { CONSOLE_CLIENT_ID, MANAGE_API_CLIENT_ID } from '../../src/manage/clients.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { ensureManagementSetup } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'console password 1';
const BOOTSTRAP = 'npx gatehouse admin bootstrap --username &lt;name&gt; --password-stdin';

/** The value of the form field `name` on a page. */
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
      assert.ok(html.includes(BOOTSTRAP), 'the exact bootstrap command');
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
      for (const path of ['/manage/', '/manage/clients', '/manage/policies', '/manage/keys']) {
        const { response, html } = await page(jar, path);
        if (response.status === 404 || response.status === 502) continue; // a resource the API does not serve yet
        assert.equal(response.status, 200, path);
        const forms = [...html.matchAll(/<form\b[^>]*action="([^"]*)"/g)].map((m) => m[1]);
        assert.deepEqual(
          forms.filter((action) => action !== '/manage/sign-out' && !/method="get"/.test(action!)),
          forms.filter((action) => action !== '/manage/sign-out' && (action === '/manage/clients' || action === '/manage/policies')),
          `${path}: only the search and sign-out forms`,
        );
        assert.equal(/href="[^"]*\/(new|rotate|edit|delete)"/.test(html), false, `${path}: no write links`);
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

    test('the console asks for the API audience: the token is for gatehouse-manage-api', async () => {
      const jar = await signIn(admin);
      const token = decodeURIComponent(jar.cookies.get('gatehouse_console')!);
      const introspection = await server.gatehouse.store.tokens.find(createHash('sha256').update(token).digest('base64url'));
      assert.ok(introspection?.scope.split(' ').includes(MANAGE_API_CLIENT_ID), introspection?.scope);
    });
  });
}
