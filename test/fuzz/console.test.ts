/**
 * Property-based fuzzing of the web console at `/manage/` (docs/console.md) against a real
 * listening server: every page of the registry CONSOLE_PAGES (so a page added later is fuzzed
 * too), the plugin's own routes (`/manage`, `/manage/callback`, `/manage/sign-out`, the assets) and
 * paths beside them; random methods; real, unknown and hostile path parameters; random and repeated
 * query parameters; form bodies with hostile, repeated, huge and JSON-garbage values under any
 * content type; every kind of caller — no cookie, a garbled or forged session cookie, a reader and
 * an administrator signed in through the real login form — with and without the CSRF token and
 * Origin, plus hostile language, flash and sign-in cookies.
 *
 * Every answer: no 5xx, no internals, the security headers; an HTML page carries the console's
 * strict CSP (no 'unsafe-inline') and no-store. Anything but an administrator's POST with a valid
 * CSRF token and Origin (or a signed-in caller's own sign-out) changes nothing stored.
 */
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import type { User } from '../../src/domain/user.ts';
import { consoleCookieName } from '../../src/http/console/cookies.ts';
import { CONSOLE_PATH } from '../../src/manage/management-clients.ts';
import { csrfTokenFor } from '../../src/http/console/csrf.ts';
import { CONSOLE_PAGES } from '../../src/http/console/pages/index.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestUser, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { ensureManagementSetup, manageCall } from '../helpers/manage.ts';
import { assertNoProcessFailures, assertSafeResponse, CONTENT_TYPES, encodePairs, fingerprint, fuzzParams, hostileString, installProcessHandlers, PASSWORD, send, startFuzzTarget, targetOf, type FuzzTarget, type RawResponse } from './harness.ts';
import { encoding } from './mutate.ts';

installProcessHandlers();

/** The plugin's own routes and paths beside the pages (plugin.ts registers the first ones itself). */
const OWN_ROUTES: (readonly [string, string])[] = [
  ['GET', ''],
  ['GET', '/callback'],
  ['POST', '/sign-out'],
  ['GET', '/assets/console.css'],
  ['GET', '/assets/console.js'],
];
const BESIDE = ['/nothing', '/assets/nothing.css', '/assets/../plugin.ts', '/callback/x', '/sign-out/x', '/api', '/clients/:id/nothing', '/users/:id/sessions', '/groups/:name/members', '/theme/preview/x', '//clients', '/%2e%2e/uas/status'];

/** Every field name a console form posts, and some no form has. */
const FIELDS = [
  'client_name', 'client_name#fi', 'client_name#sv', 'redirect_uris', 'post_logout_redirect_uris', 'grant_types', 'token_endpoint_auth_method', 'scope', 'authorization_policy', 'logo_uri',
  'consent_required', 'aud', 'resource_server', 'resource_uris', 'access_token_format', 'document', 'username', 'email', 'given_name', 'family_name', 'password', 'group', 'name', 'description',
  'technical_name', 'parent_id', 'type', 'expires_in', 'uses', '__proto__', 'constructor', 'csrf_token[]', 'csrf_token',
];
const QUERY = ['q', 'cursor', 'limit', 'lang', 'done', 'group_q', 'display', 'locale', 'error', 'missing', 'since', 'until', 'type', 'user', 'client', 'state', 'code', 'iss', '__proto__'];

/** What a JSON text area may be given: documents, near-documents and garbage. */
const JSON_TEXT = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value)),
  fc.dictionary(fc.constantFrom('name', 'access', 'client_name', 'redirect_uris', 'client_id', 'grant_types', '__proto__', 'constructor', 'jwks_uri', 'aud'), fc.oneof(hostileString(), fc.array(hostileString(), { maxLength: 3 }), fc.constant(null), fc.integer(), fc.constant({ groups: ['x'] })), { maxKeys: 5 }).map((doc) => JSON.stringify(doc)),
  fc.constantFrom('{"name":', '{"__proto__":{"admin":true}}', '{"constructor":{"prototype":{"x":1}}}', `${'['.repeat(40)}${']'.repeat(40)}`, `${'['.repeat(5000)}${']'.repeat(5000)}`, '1e999999', '"\\ud800"', '{"name":"fuzz-policy","access":{"groups":["Staff"]}}', '{"client_name":"x","redirect_uris":["https://a.example/cb"]}', 'null', '[]', '{"client_id":"other"}'),
);

/** Values a field may hold: hostile strings, JSON, known-good values that get the handlers further. */
const VALUE = fc.oneof(
  { weight: 4, arbitrary: hostileString() },
  { weight: 2, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) },
  { weight: 2, arbitrary: JSON_TEXT },
  { weight: 2, arbitrary: fc.constantFrom('fuzz-group', 'fuzz-policy', 'gatehouse-admins', 'authorization_code', 'client_credentials', 'none', 'client_secret_basic', 'jwt', 'opaque', 'true', '3600', '1', 'https://rp.example.test/cb', 'fuzz-victim') },
  { weight: 1, arbitrary: fc.constantFrom('x'.repeat(65_000), 'é'.repeat(30_000)) },
);

type Caller = 'admin' | 'reader' | 'none' | 'garbage' | 'forged';
type Csrf = 'valid' | 'none' | 'wrong' | 'repeated' | 'no-origin' | 'foreign-origin' | 'referer-only';

/** Counts the console's changes would move beyond the harness's fingerprint. */
async function consoleFingerprint(t: FuzzTarget): Promise<Record<string, number>> {
  const { db } = (t.store as SqlStore).database;
  const { rows } = await sql<Record<string, number | string>>`
    select
      (select count(*) from policies) as policies,
      (select coalesce(sum(version), 0) from policies) as "policyVersions",
      (select count(*) from initial_access_tokens) as "initialAccessTokens",
      (select count(*) from signing_keys) as "signingKeys",
      (select coalesce(sum(active), 0) from clients) as "activeClients",
      (select coalesce(sum(updated_at), 0) from clients) as "clientsUpdated"
  `.execute(db);
  const extra = Object.fromEntries(Object.entries(rows[0]!).map(([name, value]) => [name, Number(value)]));
  return { ...(await fingerprint(t.server)), ...extra };
}

/**
 * The console's headers on top of assertSafeResponse's: every HTML answer is no-store with the
 * console's policy (or, for the theme preview, the login pages'), never an inline allowance.
 */
function assertConsoleHeaders(response: RawResponse, context: string): void {
  if (!/^text\/html/.test(response.headers['content-type'] ?? '')) return;
  assert.equal(response.headers['cache-control'], 'no-store', `no-store on ${context}`);
  assert.doesNotMatch(response.headers['content-security-policy'] ?? '', /unsafe-inline|unsafe-eval|\*/, `CSP on ${context}`);
}

for (const db of DATABASES) {
  describe(`fuzz: web console on ${db.name}`, () => {
    let t: FuzzTarget;
    let origin: string;
    let admin: User;
    let reader: User;
    const sessions = new Map<'admin' | 'reader', string>();
    /** Real ids and names for each kind of path parameter. */
    const real = { group: 'fuzz-group', policy: 'fuzz-policy', organization: '', token: '', victim: '' };

    /** Signs in through the real login form, as a browser does, and keeps the session cookie. */
    async function signIn(who: 'admin' | 'reader'): Promise<void> {
      const user = who === 'admin' ? admin : reader;
      const jar = new CookieJar();
      const first = await browse(`${t.server.url}${CONSOLE_PATH}/`, jar);
      assert.equal(first.status, 302);
      const login = await browse(first.headers.get('location')!, jar);
      const back =
        login.status === 302 || login.status === 303
          ? login
          : await (async () => {
              const html = await login.text();
              const fields = formFields(html).map(([n, v]): [string, string] => [n, n === 'username' ? user.username : n === 'password' ? PASSWORD : v]);
              return submit(new URL(formAction(html), t.server.url).toString(), fields, jar);
            })();
      const done = await browse(back.headers.get('location')!, jar);
      assert.equal(done.status, 303, `${who} signed in`);
      sessions.set(who, jar.cookies.get(consoleCookieName(t.server.config, 'session'))!);
    }

    /** Whether the caller's session still works (a fuzzed sign-out may have ended it). */
    async function stillSignedIn(who: 'admin' | 'reader'): Promise<boolean> {
      return (await manageCall(t.server, 'GET', '/me', { token: sessions.get(who)! })).status === 200;
    }

    before(async () => {
      t = await startFuzzTarget(db);
      origin = new URL(t.server.issuer).origin;
      await ensureManagementSetup(t.server);
      const member = async (group: string) => {
        const user = await createTestUser(t.store, { password: PASSWORD });
        await t.store.groups.addMember((await t.store.groups.getByName(group))!.id, user.id);
        return user;
      };
      admin = await member(t.server.config.manageAdminGroup);
      reader = await member(t.server.config.manageReadonlyGroup);
      await signIn('admin');
      await signIn('reader');
      const token = sessions.get('admin')!;
      const api = async (path: string, body: unknown) => {
        const answer = await manageCall(t.server, 'POST', path, { token, body });
        assert.equal(answer.status, 201, `${path}: ${answer.text}`);
        return answer.json;
      };
      await api('/groups', { name: real.group });
      await api('/policies', { name: real.policy, access: { groups: [real.group] } });
      real.organization = String((await api('/organizations', { technical_name: 'fuzz-org' })).id);
      real.token = String((await api('/initial-access-tokens', { expires_in: 3600, uses: 1 })).id);
      real.victim = t.user.id;
    });
    after(async () => {
      await t.close();
      assertNoProcessFailures();
    });

    /** A real value for the parameter `name` of `template`. */
    function realParam(template: string, name: string): string {
      if (name === 'sid' || name === 'user_id') return name === 'user_id' ? real.victim : 'no-such-session';
      if (name === 'client_id') return t.client.clientId;
      if (template.startsWith('/clients')) return t.client.clientId;
      if (template.startsWith('/users')) return real.victim;
      if (template.startsWith('/groups')) return real.group;
      if (template.startsWith('/policies')) return real.policy;
      if (template.startsWith('/organizations')) return real.organization;
      if (template.startsWith('/registration-tokens')) return real.token;
      return 'x';
    }

    test('random requests over every page and route: safe answers; only an administrator with a valid CSRF token changes anything', async () => {
      const pages = CONSOLE_PAGES.map((p) => [p.method, p.path] as const);
      const templates = [...new Set([...pages.map(([, path]) => path), ...OWN_ROUTES.map(([, path]) => path), ...BESIDE])];
      const param = fc.oneof(
        { weight: 4, arbitrary: fc.constant('@real') },
        { weight: 1, arbitrary: fc.constantFrom('gatehouse-console', 'gatehouse-manage-api', 'gatehouse-admins', '00000000-0000-4000-8000-000000000000', '@admin') },
        { weight: 2, arbitrary: hostileString().map((value) => encodeURIComponent(value.toWellFormed())) },
        { weight: 1, arbitrary: fc.constantFrom('%FF', '%', '..', '%2e%2e', 'a%2Fb', '%2F', '.', 'a'.repeat(3000), '%00', '%C3%A9t%C3%A9', '😀') },
      );
      const query = fc.array(fc.tuple(fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...QUERY) }, hostileString()), fc.oneof(hostileString(), fc.constantFrom('en', 'fi', 'sv', 'page', 'popup', '1', 'created', 'x'))), { maxLength: 5 });
      const form = fc.array(fc.tuple(fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...FIELDS) }, hostileString()), VALUE), { maxLength: 6 });
      const body = fc.record({ pairs: form, type: fc.oneof({ weight: 6, arbitrary: fc.constant<string | undefined>('application/x-www-form-urlencoded') }, fc.constantFrom<string | undefined>(...CONTENT_TYPES, undefined)), raw: fc.option(hostileString(), { freq: 8, nil: undefined }) });
      const caller = fc.oneof({ weight: 4, arbitrary: fc.constant<Caller>('admin') }, { weight: 2, arbitrary: fc.constant<Caller>('reader') }, fc.constantFrom<Caller>('none', 'garbage', 'forged'));
      const csrf = fc.oneof({ weight: 5, arbitrary: fc.constant<Csrf>('valid') }, fc.constantFrom<Csrf>('none', 'wrong', 'repeated', 'no-origin', 'foreign-origin', 'referer-only'));
      const cookies = fc.record({ lang: fc.option(hostileString(), { freq: 4, nil: undefined }), flash: fc.option(fc.oneof(hostileString(), fc.constantFrom(Buffer.from('{"kind":"refused","detail":"<b>x</b>"}').toString('base64url'), Buffer.from('{"kind":"lost"}').toString('base64url'))), { freq: 4, nil: undefined }), signIn: fc.option(hostileString(), { freq: 6, nil: undefined }),
        idToken: fc.option(hostileString(), { freq: 6, nil: undefined }),
        acceptLanguage: fc.option(fc.oneof(hostileString(), fc.constantFrom('fi', 'sv;q=0.9, en;q=0.1', '*', 'fi-FI, xx;q=abc')), { freq: 4, nil: undefined }),
      });
      const referer = fc.option(fc.oneof(fc.constantFrom('@page', 'https://evil.example/manage/', 'null'), hostileString()), { freq: 3, nil: undefined });
      await fc.assert(
        fc.asyncProperty(
          // Mostly a page as registered (its own method), so that requests reach the handlers.
          fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...pages, ...OWN_ROUTES) },
            { weight: 2, arbitrary: fc.tuple(fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE'), fc.constantFrom(...templates)) },
          ),
          param,
          query,
          encoding,
          body,
          caller,
          csrf,
          cookies,
          referer,
          hostileString(),
          async ([method, template], paramChoice, queryPairs, how, payload, who, csrfChoice, extraCookies, refererChoice, garbage) => {
            for (const signedIn of ['admin', 'reader'] as const) if (!(await stillSignedIn(signedIn))) await signIn(signedIn);
            const path = `${CONSOLE_PATH}${template.replace(/:([a-z_]+)/g, (_, name: string) => {
              if (paramChoice === '@admin') return admin.id;
              if (paramChoice !== '@real') return paramChoice;
              // Deletes of the fixtures would leave later runs only 404s: aim them at unknown names.
              return method === 'POST' && /\/delete$/.test(template) ? 'no-such-thing' : encodeURIComponent(realParam(template, name));
            })}`;
            const target = targetOf(path, encodePairs(queryPairs, how));
            const session = who === 'admin' || who === 'reader' ? sessions.get(who)! : who === 'forged' ? 'Zm9yZ2VkLXRva2VuLXRoYXQtbG9va3MtcmVhbA' : garbage;
            const headers: [string, string][] = [];
            const cookieList: string[] = [];
            if (who !== 'none') cookieList.push(`${consoleCookieName(t.server.config, 'session')}=${Buffer.from(session, 'utf8').toString('latin1')}`);
            if (extraCookies.lang !== undefined) cookieList.push(`${consoleCookieName(t.server.config, 'lang')}=${encodeURIComponent(extraCookies.lang.toWellFormed())}`);
            if (extraCookies.flash !== undefined) cookieList.push(`${consoleCookieName(t.server.config, 'flash')}=${encodeURIComponent(extraCookies.flash.toWellFormed())}`);
            if (extraCookies.signIn !== undefined) cookieList.push(`${consoleCookieName(t.server.config, 'signIn')}=${encodeURIComponent(extraCookies.signIn.toWellFormed())}`);
            if (extraCookies.idToken !== undefined) cookieList.push(`${consoleCookieName(t.server.config, 'idToken')}=${encodeURIComponent(extraCookies.idToken.toWellFormed())}`);
            if (cookieList.length > 0) headers.push(['cookie', cookieList.join('; ')]);
            if (extraCookies.acceptLanguage !== undefined) headers.push(['accept-language', Buffer.from(extraCookies.acceptLanguage, 'utf8').toString('latin1')]);
            let text: string | undefined;
            const fields: [string, string][] = [...payload.pairs];
            if (method !== 'GET' && method !== 'HEAD') {
              const token = csrfTokenFor(session);
              if (csrfChoice === 'wrong') fields.unshift(['csrf_token', csrfTokenFor(`${session}x`)]);
              else if (csrfChoice === 'repeated') fields.unshift(['csrf_token', token], ['csrf_token', token]);
              else if (csrfChoice !== 'none') fields.unshift(['csrf_token', token]);
              if (csrfChoice === 'foreign-origin') headers.push(['origin', 'https://evil.example']);
              else if (csrfChoice === 'referer-only') headers.push(['referer', `${origin}${CONSOLE_PATH}/`]);
              else if (csrfChoice !== 'no-origin') headers.push(['origin', origin]);
              text = payload.raw ?? encodePairs(fields, how);
              if (payload.type !== undefined) headers.push(['content-type', payload.type]);
            }
            if (refererChoice !== undefined && csrfChoice !== 'referer-only') headers.push(['referer', refererChoice === '@page' ? `${origin}${path}` : Buffer.from(refererChoice, 'utf8').toString('latin1')]);
            const before = await consoleFingerprint(t);
            const response = await send(t.port, { method, target, headers, body: text });
            const context = `${method} ${target.slice(0, 200)} caller=${who} csrf=${csrfChoice} type=${payload.type} body=${text?.slice(0, 200)}`;
            assertSafeResponse(response, context, [...queryPairs.flat(), ...fields.flat(), text ?? '', path, garbage, ...Object.values(extraCookies).map((v) => v ?? '')].join('\n'), { referrerPolicies: ['no-referrer', 'same-origin'] });
            assertConsoleHeaders(response, context);
            // The one change anyone signed in may make with a valid token: ending their own session.
            const ownSignOut = template === '/sign-out' && method === 'POST' && (who === 'admin' || who === 'reader');
            const authorized = (who === 'admin' || ownSignOut) && method === 'POST' && ['valid', 'referer-only'].includes(csrfChoice) && payload.raw === undefined;
            if (!authorized) assert.deepEqual(await consoleFingerprint(t), before, `${context} → ${response.status} ${response.body.slice(0, 300)}`);
          },
        ),
        fuzzParams(150),
      );
    });
  });
}
