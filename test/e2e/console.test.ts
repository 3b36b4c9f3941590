/**
 * The web console in Chromium (docs/console.md), under its real Content-Security-Policy: after
 * `gatehouse admin bootstrap` (the real CLI), an administrator signs in through the real login page,
 * registers a client and reads its secret from the page once, and rotates a signing key after the
 * confirmation page. On every page visited: axe-core finds no serious or critical violation
 * (WCAG 2.2 AA tags) and no CSP violation is reported. Keyboard: the main navigation and the
 * registration form are reached with Tab, and every form control has a label.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { bootstrap as bootstrapAs, launchChromium, noChromium, recordCspViolations, ROOT, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, giveRecoveryCodes } from '../helpers/factors.ts';
import { createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';

const skip = noChromium;
const PASSWORD = 'console administrator password 1';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

/** `gatehouse admin bootstrap --username … --password-stdin` against the server's store, as an operator runs it. */
const bootstrap = (server: RunningServer, username: string) => bootstrapAs({ databaseUrl: server.database.url, issuer: server.issuer }, username, PASSWORD);

/** What Tab reaches from the top of the page, in order: `tag text`, up to `limit` stops. */
async function tabStops(page: Page, limit: number): Promise<string[]> {
  await page.evaluate('document.activeElement && document.activeElement.blur && document.activeElement.blur()');
  const stops: string[] = [];
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab');
    stops.push(await page.evaluate<string>(`(() => { const e = document.activeElement; return e ? e.tagName.toLowerCase() + ' ' + (e.getAttribute('name') || e.textContent || '').trim().replace(/\\s+/g, ' ') : ''; })()`));
  }
  return stops;
}

describe('the web console in Chromium', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  const username = `console-admin-${Date.now()}`;

  before(async () => {
    server = await startServer(sqlite);
    const output = await bootstrap(server, username);
    assert.match(output, /gatehouse-console/);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  test('sign in, register a client and read its secret once, rotate a key: accessible, keyboard-usable, no CSP violation', { timeout: 180_000 }, async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.issuer).origin });
    // Recorded from the start of every document (the DevTools protocol is not subject to the page's CSP).
    await recordCspViolations(context);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const found: Record<string, string[]> = {};
    const check = async (name: string) => {
      found[name] = await seriousViolations(page);
      const violations = await page.evaluate<string[]>('window.__cspViolations');
      assert.deepEqual(violations, [], `CSP violations on ${name}`);
    };

    try {
      // Signing in: /manage/ → gatehouse's own login page → back to the overview.
      await page.goto(`${server.url}/manage/`);
      assert.match(page.url(), /\/uas\/oauth2\/authorization\?/);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${server.url}/manage/`);
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
      assert.ok((await page.textContent('header'))?.includes(username));
      await check('overview');

      // Keyboard: skip link, languages, sign-out, then the main navigation, all with Tab.
      const stops = await tabStops(page, 16);
      for (const label of ['Overview', 'Clients', 'Users', 'Groups', 'Policies', 'Signing keys', 'Audit events']) assert.ok(stops.includes(`a ${label}`), `Tab reaches "${label}": ${stops.join(' | ')}`);
      assert.equal(stops[0], 'a Skip to content');

      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Clients' }).click();
      await page.getByRole('heading', { name: 'Clients' }).waitFor();
      await check('clients');

      await page.getByRole('link', { name: 'Register a client' }).click();
      await page.getByRole('heading', { name: 'Register a client' }).waitFor();
      await check('register form');
      // Every control has a label, and Tab goes through the form's fields.
      const unlabelled = await page.evaluate<string[]>(
        `[...document.querySelectorAll('main input:not([type=hidden]), main select, main textarea')].filter((e) => e.labels.length === 0).map((e) => e.name)`,
      );
      assert.deepEqual(unlabelled, []);
      // The navigation comes first (the Outbox link of issue 25 among it): enough stops to get through it and the form.
      const formStops = await tabStops(page, 40);
      for (const name of ['client_name', 'redirect_uris', 'token_endpoint_auth_method', 'application_type', 'grant_types', 'scope']) assert.ok(formStops.some((s) => s.split(' ')[1] === name), `Tab reaches ${name}: ${formStops.join(' | ')}`);

      await page.getByLabel('Name', { exact: true }).fill('Browser-registered app');
      await page.getByLabel('Redirect URIs', { exact: true }).fill('http://127.0.0.1:3000/callback');
      await page.getByLabel('Post-logout redirect URIs').fill('http://127.0.0.1:3000/');
      // Both kinds of logout notice (issue 26: Back-Channel Logout §2.2, Front-Channel Logout §2).
      await page.getByLabel('Back-channel logout URI', { exact: true }).fill('http://127.0.0.1:3000/logout/back');
      await page.getByLabel('Front-channel logout URI', { exact: true }).fill('http://127.0.0.1:3000/logout/front');
      await page.getByLabel('Needs iss and sid in its front-channel logout URI').check();
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('heading', { name: 'Client registered' }).waitFor();
      await check('client registered');
      const secret = (await page.locator('#client-secret').textContent())?.trim() ?? '';
      const clientId = (await page.locator('#client-id').textContent())?.trim() ?? '';
      assert.match(secret, /^[A-Za-z0-9_-]{20,}$/);
      assert.ok((await page.textContent('main'))?.includes(`${server.issuer}/.well-known/openid-configuration`));
      // The copy button exists only when the script ran (under script-src 'self'), and copies the secret.
      const copy = page.getByRole('button', { name: 'Copy: Client secret' });
      await copy.click();
      await page.locator('button[data-copy="client-secret"]', { hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), secret);
      const stored = await server.gatehouse.store.clients.get(clientId);
      assert.equal(stored?.name, 'Browser-registered app');
      assert.deepEqual(
        [stored?.metadata.backchannel_logout_uri, stored?.metadata.backchannel_logout_session_required, stored?.metadata.frontchannel_logout_uri, stored?.metadata.frontchannel_logout_session_required],
        ['http://127.0.0.1:3000/logout/back', undefined, 'http://127.0.0.1:3000/logout/front', true],
      );

      // The detail page never shows the secret again.
      await page.goto(`${server.url}/manage/clients/${encodeURIComponent(clientId)}`);
      await check('client detail');
      assert.equal((await page.content()).includes(secret), false);

      // Every setting as JSON: the editor shows the export, saving it unchanged keeps the client as it was.
      await page.getByRole('link', { name: 'Edit all metadata (JSON)' }).click();
      await page.getByRole('heading', { name: 'Edit all metadata of Browser-registered app' }).waitFor();
      await check('client metadata as JSON');
      const document = JSON.parse(await page.getByLabel('Client metadata document (JSON)').inputValue()) as Record<string, unknown>;
      assert.equal(document.client_name, 'Browser-registered app');
      await page.getByLabel('Client metadata document (JSON)').fill(JSON.stringify({ ...document, client_name: 'Renamed in JSON' }, null, 2));
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Saved.').waitFor();
      assert.equal((await server.gatehouse.store.clients.get(clientId))?.name, 'Renamed in JSON');
      await page.goto(`${server.url}/manage/clients/import`);
      await page.getByRole('heading', { name: 'Import a client' }).waitFor();
      await check('client import');

      // Rotating a signing key, after its confirmation page.
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Signing keys' }).click();
      await page.getByRole('heading', { name: 'Signing keys' }).waitFor();
      await check('keys');
      const before = await page.locator('tbody tr').count();
      await page.getByRole('link', { name: 'Rotate the signing keys' }).click();
      await page.getByRole('heading', { name: 'Are you sure?' }).waitFor();
      await check('rotate confirmation');
      await page.getByRole('button', { name: 'Rotate the signing keys' }).click();
      await page.getByText('The signing keys were rotated.').waitFor();
      assert.equal(await page.locator('tbody tr').count(), before + 1);
      await check('keys after rotation');

      // The identity pages and the audit view, as an administrator sees them.
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
      await page.getByRole('heading', { name: 'Users' }).waitFor();
      await check('users');
      await page.getByRole('link', { name: username }).click();
      await page.getByRole('heading', { name: `User ${username}` }).waitFor();
      await check('user');
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Groups' }).click();
      await page.getByRole('heading', { name: 'Groups' }).waitFor();
      await check('groups');
      await page.getByRole('link', { name: 'Administrators', exact: true }).click();
      await check('group');
      await server.gatehouse.auditStore?.flush();
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Audit events' }).click();
      await page.getByRole('heading', { name: 'Audit events' }).waitFor();
      await page.getByLabel('Event type').fill('key.*');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.locator('tbody code', { hasText: 'key.rotated' }).first().waitFor();
      await check('audit events');

      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Policies' }).click();
      await page.getByRole('heading', { name: 'Authorization policies' }).waitFor();
      await check('policies');
      await page.getByRole('link', { name: 'Suomi' }).click();
      await page.getByRole('heading', { name: 'Pääsykäytännöt' }).waitFor();
      await check('policies in Finnish');
    } finally {
      await context.close();
    }
    for (const [name, violations] of Object.entries(found)) assert.deepEqual(violations, [], `axe on ${name}`);
    assert.deepEqual(problems, [], 'no console errors (CSP reports land there too)');
  });

  test('registration tokens, the theme page and its preview, member by username, group search, a refusal as an alert: accessible, no CSP violation', { timeout: 180_000 }, async () => {
    const context = await browser.newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.issuer).origin });
    await context.addInitScript('window.__cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI));');
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    const found: Record<string, string[]> = {};
    const check = async (name: string) => {
      found[name] = await seriousViolations(page);
      assert.deepEqual(await page.evaluate<string[]>('window.__cspViolations'), [], `CSP violations on ${name}`);
    };
    try {
      await page.goto(`${server.url}/manage/registration-tokens`);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Initial access tokens for dynamic client registration' }).waitFor();
      assert.ok((await page.textContent('main'))?.includes('GATEHOUSE_DYNAMIC_REGISTRATION=initial_access_token'), 'off, and how to turn it on');
      await check('registration tokens');
      await page.getByLabel('Uses').fill('3');
      await page.getByLabel('Description').fill('browser test');
      await page.getByRole('button', { name: 'Create a token' }).click();
      await page.getByRole('heading', { name: 'Initial access token created' }).waitFor();
      await check('token minted');
      const token = (await page.locator('#token-value').textContent())?.trim() ?? '';
      await page.getByRole('button', { name: 'Copy: Initial access token' }).click();
      await page.locator('button[data-copy="token-value"]', { hasText: 'Copied' }).waitFor();
      assert.equal(await page.evaluate<string>('navigator.clipboard.readText()'), token);
      assert.ok((await page.locator('#curl-example').textContent())?.includes(`Bearer ${token}`));
      await page.getByRole('link', { name: 'Back to the registration tokens' }).click();
      await page.getByRole('link', { name: /^Revoke/ }).first().click();
      await page.getByRole('heading', { name: 'Are you sure?' }).waitFor();
      await check('revoke confirmation');
      await page.getByRole('button', { name: 'Revoke' }).click();
      await page.getByText('The token was revoked.').waitFor();

      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Theme' }).click();
      await page.getByRole('heading', { name: 'Login-page theme' }).waitFor();
      await check('theme');
      await page.getByRole('link', { name: 'Suomi (Touch)' }).click();
      await page.locator('html[lang="fi"]').waitFor();
      await check('theme preview');
      assert.equal(await page.locator('button[type="submit"]').isDisabled(), true, 'the preview cannot sign in');
      await page.goBack();

      // Adding an unknown username: the error next to the field, announced.
      await page.goto(`${server.url}/manage/groups/Administrators`);
      await page.getByLabel('Username').fill('nobody-by-this-name');
      await page.getByRole('button', { name: 'Add a member' }).click();
      await page.getByRole('alert').filter({ hasText: 'nobody-by-this-name' }).waitFor();
      await check('group with unknown username');
      // Removing the last administrator: the API's 409 as an alert on the same page.
      await page.getByRole('button', { name: /Remove from/ }).first().click();
      await page.getByRole('alert').filter({ hasText: 'The change was not made' }).waitFor();
      assert.match(page.url(), /\/manage\/groups\/Administrators$/);
      await check('group with refusal');

      // The user page finds groups by search.
      await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
      await page.getByRole('link', { name: username }).click();
      await page.getByLabel('Find a group by name').fill('read');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.getByRole('button', { name: 'Add to Administrators (read-only)' }).waitFor();
      await check('user with group search');

      // A user's second factors (issue 24): listed, one removed after the confirmation page, then all reset.
      const holder = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      await enrolTotp(server.gatehouse.store, holder.id, Date.now() - 1000);
      await giveRecoveryCodes(server.gatehouse.store, holder.id);
      await page.goto(`${server.url}/manage/users/${holder.id}`);
      await page.getByRole('heading', { name: 'Second factors' }).waitFor();
      await check('user with second factors');
      await page.getByRole('link', { name: 'Remove phone' }).click();
      await page.getByRole('heading', { name: 'Are you sure?' }).waitFor();
      await check('remove factor confirmation');
      await page.getByRole('button', { name: 'Remove' }).click();
      await page.getByText('Removed.').waitFor();
      await page.getByRole('link', { name: 'Reset all second factors' }).click();
      await page.getByRole('heading', { name: 'Are you sure?' }).waitFor();
      await check('reset factors confirmation');
      await page.getByRole('button', { name: 'Reset all second factors' }).click();
      await page.getByText('The second factors were removed').waitFor();
      await check('user after reset');
    } finally {
      await context.close();
    }
    for (const [name, violations] of Object.entries(found)) assert.deepEqual(violations, [], `axe on ${name}`);
    assert.deepEqual(problems, [], 'no console errors (CSP reports land there too)');
  });

  test('the settings the console shows after registering run the web SSO example, which signs a user in', { timeout: 120_000 }, async () => {
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const admin = await browser.newContext();
    let app: ChildProcess | undefined;
    try {
      const page = await admin.newPage();
      await page.goto(`${server.url}/manage/clients/new`);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Register a client' }).waitFor();
      await page.getByLabel('Name', { exact: true }).fill('Web SSO example');
      await page.getByLabel('Redirect URIs', { exact: true }).fill(`${origin}/callback`);
      await page.getByLabel('Post-logout redirect URIs').fill(`${origin}/`);
      await page.getByRole('button', { name: 'Register' }).click();
      await page.getByRole('heading', { name: 'Client registered' }).waitFor();
      // The commands exactly as shown: `export NAME='value'` lines, then the command to run.
      const commands = ((await page.locator('#example-commands').textContent()) ?? '').trim().split('\n');
      assert.equal(commands.at(-1), 'node examples/web-sso/server.ts');
      const env = Object.fromEntries(commands.slice(0, -1).map((line) => /^export ([A-Z_]+)='([^']*)'$/.exec(line)!.slice(1, 3) as [string, string]));
      assert.deepEqual(Object.keys(env), ['ISSUER', 'CLIENT_ID', 'CLIENT_SECRET', 'PORT']);

      app = spawn(process.execPath, ['examples/web-sso/server.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`the example did not start: ${out}`)), 30_000);
        app!.stdout!.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (/listening on/.test(out)) {
            clearTimeout(timer);
            resolve();
          }
        });
        app!.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
        app!.on('close', () => reject(new Error(`the example exited: ${out}`)));
      });

      // A browser without the console's SSO session logs in to the example through gatehouse.
      const visitor = await browser.newContext();
      const site = await visitor.newPage();
      await site.goto(`${origin}/`);
      await site.getByRole('link', { name: 'Log in' }).click();
      await site.getByLabel('Username').fill(username);
      await site.getByLabel('Password').fill(PASSWORD);
      await Promise.all([site.waitForURL(`${origin}/`), site.getByRole('button', { name: 'Sign in', exact: true }).click()]);
      const claims = JSON.parse(await site.locator('#id-token-claims').innerText()) as Record<string, unknown>;
      assert.equal(claims.iss, server.issuer);
      assert.equal(claims.aud, env.CLIENT_ID);
      await visitor.close();
    } finally {
      app?.kill();
      await admin.close();
    }
  });
  test('list pages at phone width (375 px) break no word inside and do not widen the page (issue 22 item 11)', { timeout: 120_000 }, async () => {
    const store = server.gatehouse.store;
    for (const name of ['Customer self-service portal', 'Internationalization management']) await createTestClient(store, { name });
    await createTestUser(store, { username: 'alexandria.vanderbilt@example.com', password: 'phone width pw 1', givenName: 'Alexandria', familyName: 'Vanderbilt-Montgomery', email: 'alexandria.vanderbilt@example.com' });
    const context = await browser.newContext({ viewport: { width: 375, height: 800 } });
    const page = await context.newPage();
    try {
      await page.goto(`${server.url}/manage/`);
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.waitForURL(`${server.url}/manage/`);
      for (const path of ['clients', 'users', 'groups', 'keys', 'audit']) {
        await page.goto(`${server.url}/manage/${path}`);
        // Each word of a cell's text (between spaces and hyphens, where lines may break; ids in <code> may break anywhere) must lie on one line: a word split across lines has two boxes.
        const split = await page.evaluate<string[]>(`(() => {
          const broken = [];
          for (const cell of document.querySelectorAll('td, th')) {
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              if (node.parentElement.closest('code')) continue;
              for (const match of node.data.matchAll(/[^\\s-]+/g)) {
                const range = document.createRange();
                range.setStart(node, match.index);
                range.setEnd(node, match.index + match[0].length);
                const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top)));
                if (lines.size > 1) broken.push(match[0]);
              }
            }
          }
          return broken;
        })()`);
        assert.deepEqual(split, [], `${path}: words broken inside`);
        assert.ok(await page.evaluate<boolean>('document.documentElement.scrollWidth <= 375'), `${path}: the page is no wider than the screen`);
        assert.deepEqual(await seriousViolations(page), [], `axe on ${path} at 375 px`);
      }
    } finally {
      await context.close();
    }
  });
});
