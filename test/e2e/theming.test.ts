/**
 * The example theme (examples/theme, docs/theming.md) in Chromium: the themed login page in its
 * three displays, with an error, and the themed consent page have no serious or critical axe-core
 * violation (WCAG 2.2 AA); the theme's stylesheets, logo and favicon load under the pages' strict
 * Content-Security-Policy with no violation reported; and the colours really apply.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the theming checks`;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'theme');
const PASSWORD = 'themed password 1';
/** A 1×1 PNG, the client's logo. */
const LOGO = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/kNJ3ZQAAAABJRU5ErkJggg==', 'base64');

interface AxeResult {
  violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[];
}

async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (no script at all) does not govern.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<AxeResult>(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(TAGS)} } })`);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

describe('the example theme in Chromium: accessible, and within the strict CSP', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let clientServer: Server;
  let loginUrl: (extra?: Record<string, string>) => string;
  let consentUrl: (extra?: Record<string, string>) => string;
  let username: string;

  before(async () => {
    server = await startServer(DATABASES.find((db) => db.name === 'sqlite')!, { env: { GATEHOUSE_THEME_DIR: EXAMPLE } });
    // The client's own server: its logo, and a callback for the browser to land on.
    clientServer = createServer((request, response) =>
      request.url === '/logo.png' ? response.writeHead(200, { 'content-type': 'image/png' }).end(LOGO) : response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'),
    );
    await new Promise<void>((resolve) => clientServer.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(clientServer.address() as AddressInfo).port}`;
    const { client } = await createTestClient(server.gatehouse.store, { name: 'Library', redirectUris: [`${origin}/callback`], metadata: { 'client_name#fi': 'Kirjasto', 'client_name#sv': 'Biblioteket', logo_uri: `${origin}/logo.png` } });
    const { client: partner } = await createTestClient(server.gatehouse.store, { name: 'Partner', redirectUris: [`${origin}/callback`], metadata: { consent_required: true } });
    username = `themed-${Date.now()}`;
    await createTestUser(server.gatehouse.store, { username, password: PASSWORD });
    const params = (clientId: string, extra: Record<string, string>) => ({ client_id: clientId, redirect_uri: `${origin}/callback`, response_type: 'code', scope: 'openid profile', state: 's', ...extra });
    loginUrl = (extra = {}) => authorizationUrl(server.url, params(client.clientId, extra));
    consentUrl = (extra = {}) => authorizationUrl(server.url, params(partner.clientId, extra));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
    clientServer?.close();
    await server?.close();
  });

  /** A fresh page that records CSP violations (the event and the console), failed loads and console errors. */
  async function open(): Promise<{ page: Page; problems: string[]; violations: () => Promise<string[]>; close(): Promise<void> }> {
    const context = await browser.newContext();
    // Injected by the DevTools protocol, which the page's CSP does not govern; it only listens.
    await context.addInitScript(`
      globalThis.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (event) => globalThis.cspViolations.push(event.violatedDirective + ' ' + event.blockedURI));
    `);
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && response.request().resourceType() !== 'document') problems.push(`${response.status()} ${response.url()}`);
    });
    return { page, problems, violations: () => page.evaluate<string[]>('globalThis.cspViolations ?? []'), close: () => context.close() };
  }

  test('login page in each display and language, with an error, and the consent page: no serious violation, no CSP violation, the theme applied', { timeout: 120_000 }, async () => {
    const { page, problems, violations, close } = await open();
    const found: Record<string, string[]> = {};
    const csp: string[] = [];
    try {
      for (const [display, locale] of [['page', 'en'], ['popup', 'fi'], ['touch', 'sv']] as const) {
        await page.goto(loginUrl({ display, ui_locales: locale }));
        await page.waitForLoadState('load');
        // The theme's files loaded and drew: the logo has pixels, the button the theme's colour.
        assert.ok(await page.evaluate<boolean>('document.querySelector(".brand-logo").complete && document.querySelector(".brand-logo").naturalWidth > 0'), `logo on ${display}`);
        assert.equal(await page.evaluate<string>('getComputedStyle(document.querySelector("button")).backgroundColor'), 'rgb(11, 110, 79)');
        assert.equal(await page.evaluate<string>('getComputedStyle(document.body).backgroundColor'), 'rgb(238, 243, 241)');
        // custom.css applied too (its rounded cards).
        assert.equal(await page.evaluate<string>('getComputedStyle(document.querySelector("main > div")).borderTopLeftRadius'), '14px');
        found[`login ${display} ${locale}`] = await seriousViolations(page);
        csp.push(...(await violations()));
      }
      assert.equal(await page.title(), 'Logga in med ditt bibliotekskort – Northwind Library');

      await page.goto(loginUrl({ ui_locales: 'fi' }));
      await page.getByLabel('Kirjastokortin numero').fill(username);
      await page.getByLabel('PIN-koodi').fill('wrong password');
      await page.getByRole('button').first().click();
      await page.locator('#login-message').waitFor();
      found['login with an error'] = await seriousViolations(page);
      csp.push(...(await violations()));
      await page.getByLabel('PIN-koodi').fill(PASSWORD);
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button').first().click()]);

      for (const display of ['page', 'popup', 'touch']) {
        await page.goto(consentUrl({ display }));
        await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
        found[`consent ${display}`] = await seriousViolations(page);
        csp.push(...(await violations()));
      }

      await page.goto(`${server.url}/uas/oauth2/authorization?client_id=no-such-client`);
      found['error page'] = await seriousViolations(page);
      csp.push(...(await violations()));

      // The SVG logo opened on its own: its own policy, nothing to run.
      const svg = await page.goto(`${server.url}/uas/theme/logo.svg`);
      assert.equal(svg?.headers()['content-security-policy'], "default-src 'none'; style-src 'unsafe-inline'");
    } finally {
      await close();
    }
    assert.deepEqual(found, {
      'login page en': [],
      'login popup fi': [],
      'login touch sv': [],
      'login with an error': [],
      'consent page': [],
      'consent popup': [],
      'consent touch': [],
      'error page': [],
    });
    assert.deepEqual(csp, []);
    assert.deepEqual(problems, []);
  });
});
