/**
 * WCAG 2.2 AA of the pages an end user sees, checked with axe-core in Chromium under the pages'
 * real Content-Security-Policy: no serious or critical violation on the login page (each display
 * template), the login page with an error, the error page, the logout confirmation, the
 * signed-out page, the landing page, the form_post page, the consent page of a third-party client
 * the second factor's page (each display, with an error, for a recovery code, on the device page too) and the account
 * security page (signed out, its overview, adding an app, recovery codes). Plus what axe does not measure: the focus ring's contrast
 * (WCAG 2.2 1.4.11, 2.4.13: at least 3:1 against what surrounds it), and a client's logo that
 * loads under the login page's policy.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import { DATABASES } from '../helpers/databases.ts';
import { enrolTotp, giveRecoveryCodes, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the accessibility checks`;
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];
const PASSWORD = 'accessible password 1';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
/** A 1×1 PNG, the client's logo. */
const LOGO = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYPj/HwADAgH/kNJ3ZQAAAABJRU5ErkJggg==', 'base64');

interface AxeResult {
  violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[];
}

/** axe-core's serious and critical violations of the page as it is now, as `rule: targets`. */
async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP (no script at all) does not govern.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<AxeResult>(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(TAGS)} } })`);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

/** WCAG 2.x contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (color: string) => {
    const [r, g, bl] = (color.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number).map((c) => {
      const s = c / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
  };
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

describe('WCAG 2.2 AA of the pages (axe-core in Chromium)', { skip }, () => {
  let server: RunningServer;
  let browser: Browser;
  let logoServer: Server;
  let logoUri: string;
  let loginUrl: (extra?: Record<string, string>) => string;
  let username: string;
  let deniedUrl: (extra?: Record<string, string>) => string;

  before(async () => {
    server = await startServer(sqlite);
    // The client's own server: its logo, and a callback for the browser to land on.
    logoServer = createServer((request, response) =>
      request.url === '/logo.png' ? response.writeHead(200, { 'content-type': 'image/png' }).end(LOGO) : response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'),
    );
    await new Promise<void>((resolve) => logoServer.listen(0, '127.0.0.1', resolve));
    const origin = `http://127.0.0.1:${(logoServer.address() as AddressInfo).port}`;
    logoUri = `${origin}/logo.png`;
    const { client } = await createTestClient(server.gatehouse.store, { name: 'Library', redirectUris: [`${origin}/callback`], metadata: { 'client_name#fi': 'Kirjasto', logo_uri: logoUri } });
    username = `a11y-${Date.now()}`;
    await createTestUser(server.gatehouse.store, { username, password: PASSWORD });
    // A client whose authorization policy lets nobody in: the refusal page (docs/authorization.md).
    await server.gatehouse.store.policies.insert({ document: parsePolicyDocument({ name: 'a11y-nobody', access: { groups: ['Nobody'] } }), version: 1, createdAt: 0, updatedAt: 0 });
    const { client: guarded } = await createTestClient(server.gatehouse.store, { name: 'Payroll', redirectUris: [`${origin}/callback`], authorizationPolicy: 'a11y-nobody' });
    deniedUrl = (extra = {}) => authorizationUrl(server.url, { client_id: guarded.clientId, redirect_uri: guarded.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's', ...extra });
    loginUrl = (extra = {}) => authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's', ...extra });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  after(async () => {
    await browser?.close();
    logoServer?.close();
    await server?.close();
  });

  /** A fresh page that records CSP violations and failed loads. */
  async function open(): Promise<{ page: Page; problems: string[]; close(): Promise<void> }> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      // A document's own 4xx is logged as a failed load too; subresources are checked below.
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource: the server responded with a status of 4')) problems.push(message.text());
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && response.request().resourceType() !== 'document') problems.push(`${response.status()} ${response.url()}`);
    });
    return { page, problems, close: () => context.close() };
  }

  test('no serious or critical violation on any page', { timeout: 120_000 }, async () => {
    const { page, problems, close } = await open();
    const found: Record<string, string[]> = {};
    try {
      for (const display of ['page', 'popup', 'touch']) {
        await page.goto(loginUrl({ display }));
        found[`login page, display=${display}`] = await seriousViolations(page);
      }

      await page.goto(loginUrl({ ui_locales: 'fi' }));
      await page.getByLabel('Käyttäjätunnus').fill(username);
      await page.getByLabel('Salasana').fill('wrong password');
      await page.getByRole('button').first().click();
      await page.locator('#login-message').waitFor();
      assert.equal(await page.getAttribute('#password', 'aria-invalid'), 'true');
      found['login page with an error'] = await seriousViolations(page);
      // Signed in, so that logout has a session to end and asks first.
      await page.getByLabel('Salasana').fill(PASSWORD);
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button').first().click()]);

      await page.goto(`${server.url}/uas/oauth2/authorization?client_id=no-such-client&ui_locales=sv`);
      found['error page'] = await seriousViolations(page);

      await page.goto(`${server.url}/uas/oauth2/logout`);
      found['logout confirmation'] = await seriousViolations(page);
      await page.getByRole('button').first().click();
      await page.locator('[role=status]').waitFor();
      found['signed-out page'] = await seriousViolations(page);

      await page.goto(`${server.url}/uas/oauth2/logout?post_logout_redirect_uri=https%3A%2F%2Fevil.example%2F`);
      found['logout error page'] = await seriousViolations(page);

      await page.goto(`${server.url}/`);
      found['landing page'] = await seriousViolations(page);
    } finally {
      await close();
    }
    assert.deepEqual(found, {
      'login page, display=page': [],
      'login page, display=popup': [],
      'login page, display=touch': [],
      'login page with an error': [],
      'error page': [],
      'logout confirmation': [],
      'signed-out page': [],
      'logout error page': [],
      'landing page': [],
    });
    // The error pages answer 400 (documents, not counted); nothing else failed or broke the policy.
    assert.deepEqual(problems, []);
  });

  test('no serious or critical violation on the consent page, in each display template (CN-16)', { timeout: 120_000 }, async () => {
    const { page, problems, close } = await open();
    const found: Record<string, string[]> = {};
    try {
      const callback = new URL(loginUrl()).searchParams.get('redirect_uri')!;
      const { client } = await createTestClient(server.gatehouse.store, { name: 'Partner', redirectUris: [callback], metadata: { consent_required: true } });
      const consentUrl = (display: string) => authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: callback, response_type: 'code', scope: 'openid profile email', state: 's', display });
      // Signed in first, so that each display shows the consent page at once (single sign-on).
      await page.goto(consentUrl('page'));
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button').first().click();
      await page.getByRole('heading', { name: 'Allow access?' }).waitFor();
      for (const display of ['page', 'popup', 'touch']) {
        await page.goto(consentUrl(display));
        assert.equal(await page.getAttribute('body', 'class'), `display-${display}`);
        found[`consent page, display=${display}`] = await seriousViolations(page);
      }
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('button', { name: 'Allow' }).click()]);
    } finally {
      await close();
    }
    assert.deepEqual(found, { 'consent page, display=page': [], 'consent page, display=popup': [], 'consent page, display=touch': [] });
    assert.deepEqual(problems, []);
  });

  test('no serious or critical violation on the form_post page, held on screen (RM-03)', async () => {
    const { page, problems, close } = await open();
    try {
      // Its script would leave the page at once: answered empty here, so axe sees the page the user sees meanwhile.
      await page.route('**/assets/form-post.js', (route) => route.fulfill({ status: 200, contentType: 'text/javascript', body: '' }));
      // An error the page delivers without a login: response_type=token is unsupported_response_type.
      await page.goto(loginUrl({ response_mode: 'form_post', response_type: 'token', ui_locales: 'fi' }));
      assert.equal(await page.title(), 'Palataan sovellukseen');
      assert.deepEqual(await seriousViolations(page), []);
      assert.deepEqual(problems, []);
    } finally {
      await close();
    }
  });

  test('the policy refusal page, after the login form and from an SSO session, has no serious violation; its control returns access_denied by the response mode (PO-08)', { timeout: 60_000 }, async () => {
    const { page, problems, close } = await open();
    try {
      await page.goto(deniedUrl({ ui_locales: 'sv' }));
      await page.getByLabel('Användarnamn').fill(username);
      await page.getByLabel('Lösenord').fill(PASSWORD);
      await page.getByRole('button').first().click();
      await page.getByRole('heading', { name: 'Ingen åtkomst till den här applikationen' }).waitFor();
      assert.deepEqual(await seriousViolations(page), []);
      await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole('link', { name: 'Tillbaka till applikationen' }).click()]);
      const back = new URL(page.url());
      assert.deepEqual([back.searchParams.get('error'), back.searchParams.get('state')], ['access_denied', 's']);

      // The session from that sign-in does not get past the policy; form_post: a button posts the error.
      await page.goto(deniedUrl({ response_mode: 'form_post' }));
      await page.getByRole('heading', { name: 'No access to this application' }).waitFor();
      assert.deepEqual(await seriousViolations(page), []);
      const posted = page.waitForRequest((request) => request.url().endsWith('/callback') && request.method() === 'POST');
      await page.getByRole('button', { name: 'Return to the application' }).click();
      assert.deepEqual(Object.fromEntries(new URLSearchParams((await posted).postData() ?? '')), {
        error: 'access_denied',
        error_description: 'The authorization policy of this client does not allow this user.',
        state: 's',
        iss: server.issuer,
      });
      assert.deepEqual(problems, []);
    } finally {
      await close();
    }
  });

  test('the second factor\'s page: no serious or critical violation in each display, with an error, for a recovery code and on the device page; usable by its labels, the error tied to the field (issue 24)', { timeout: 120_000 }, async () => {
    const { page, problems, close } = await open();
    const found: Record<string, string[]> = {};
    const { store } = server.gatehouse;
    const user = await createTestUser(store, { username: `a11y-2fa-${Date.now()}`, password: PASSWORD });
    const secret = await enrolTotp(store, user.id);
    const [recovery] = await giveRecoveryCodes(store, user.id);
    const signIn = async (display: string) => {
      await page.context().clearCookies();
      await page.goto(loginUrl({ display }));
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button').first().click();
      await page.getByRole('heading', { name: 'Verify it is you' }).waitFor();
    };
    try {
      for (const display of ['page', 'popup', 'touch']) {
        await signIn(display);
        assert.equal(await page.getAttribute('body', 'class'), `display-${display}`);
        found[`second factor, display=${display}`] = await seriousViolations(page);
      }
      const field = page.getByLabel('Code from your authenticator app');
      assert.deepEqual([await field.getAttribute('autocomplete'), await field.getAttribute('inputmode')], ['one-time-code', 'numeric']);
      await field.fill('000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.locator('#code-message').waitFor();
      assert.equal(await page.getAttribute('#code', 'aria-invalid'), 'true');
      assert.equal(await page.getAttribute('#code', 'aria-describedby'), 'code-hint code-message');
      found['second factor with an error'] = await seriousViolations(page);

      // The switch is a button: no script needed.
      await page.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await page.getByLabel('Recovery code').waitFor();
      found['second factor, recovery code'] = await seriousViolations(page);
      await page.getByLabel('Recovery code').fill(recovery!);
      await Promise.all([page.waitForURL(/\/callback\?code=/), page.getByRole('button', { name: 'Verify' }).click()]);

      // The device page asks the same way.
      await page.context().clearCookies();
      const tv = await createTestClient(store, { name: 'TV', tokenEndpointAuthMethod: 'none', redirectUris: [], grantTypes: ['urn:ietf:params:oauth:grant-type:device_code'] });
      const issued = (await (await fetch(`${server.url}/uas/oauth2/device_authorization`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ client_id: tv.client.clientId }) })).json()) as { user_code: string };
      await page.goto(`${server.url}/uas/oauth2/device`);
      await page.getByLabel('Code', { exact: true }).fill(issued.user_code);
      await page.getByRole('button').first().click();
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button').first().click();
      await page.getByRole('heading', { name: 'Verify it is you' }).waitFor();
      found['second factor, device page'] = await seriousViolations(page);
      await page.getByLabel('Code from your authenticator app').fill(totpAt(secret, Date.now()));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: 'Allow' }).waitFor();
    } finally {
      await close();
    }
    assert.deepEqual(found, {
      'second factor, display=page': [],
      'second factor, display=popup': [],
      'second factor, display=touch': [],
      'second factor with an error': [],
      'second factor, recovery code': [],
      'second factor, device page': [],
    });
    assert.deepEqual(problems, []);
  });

  test('the account security page: no serious or critical violation signed out, signed in, adding an app, with a wrong code, the new recovery codes; every change by its labels in Chromium, whose Origin passes the check (issue 24)', { timeout: 120_000 }, async () => {
    const { page, problems, close } = await open();
    const found: Record<string, string[]> = {};
    const user = await createTestUser(server.gatehouse.store, { username: `a11y-account-${Date.now()}`, password: PASSWORD });
    try {
      await page.goto(`${server.url}/uas/account/security`);
      found['account, signed out'] = await seriousViolations(page);
      await page.getByLabel('Username').fill(user.username);
      await page.getByLabel('Password').fill(PASSWORD);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('heading', { name: 'Your second factors' }).waitFor();
      found['account, no factors'] = await seriousViolations(page);

      await page.getByRole('button', { name: 'Add an authenticator app' }).click();
      await page.getByRole('img', { name: 'Scan this QR code with your authenticator app.' }).waitFor();
      const secret = (await page.locator('#totp-secret').textContent())!.replace(/\s/g, '');
      await page.getByLabel('Code the app shows now').fill(totpAt(secret, Date.now()) === '000000' ? '111111' : '000000');
      await page.getByRole('button', { name: 'Add the app' }).click();
      await page.locator('#account-message').waitFor();
      assert.equal(await page.getAttribute('#code', 'aria-invalid'), 'true');
      found['account, wrong code'] = await seriousViolations(page);
      await page.getByLabel('Code the app shows now').fill(totpAt(secret, Date.now()));
      await page.getByRole('button', { name: 'Add the app' }).click();
      await page.getByRole('status').filter({ hasText: 'The authenticator app was added' }).waitFor();
      found['account, with a factor'] = await seriousViolations(page);

      await page.getByRole('button', { name: 'Make new recovery codes' }).click();
      await page.getByRole('heading', { name: 'Your new recovery codes' }).waitFor();
      assert.equal(await page.locator('.recovery-codes li').count(), 10);
      found['account, recovery codes'] = await seriousViolations(page);
      await page.getByRole('link', { name: 'Back to account security' }).click();
      await page.getByRole('button', { name: 'Remove Authenticator app' }).click();
      await page.getByRole('status').filter({ hasText: 'The second factor was removed' }).waitFor();
      assert.deepEqual((await server.gatehouse.store.factors.list(user.id)).map((f) => f.kind), ['recovery_codes']);
    } finally {
      await close();
    }
    assert.deepEqual(found, { 'account, signed out': [], 'account, no factors': [], 'account, wrong code': [], 'account, with a factor': [], 'account, recovery codes': [] });
    assert.deepEqual(problems, []);
  });

  test('the focus ring has at least 3:1 against the card and the page around it', async () => {
    const { page, close } = await open();
    try {
      for (const display of ['page', 'touch', 'popup']) {
        await page.goto(loginUrl({ display }));
        for (const selector of ['#username', 'button']) {
          await page.focus(selector);
          const [outline, width, card, body] = await page.evaluate<string[]>(`(() => {
            const element = document.querySelector(${JSON.stringify(selector)});
            const style = getComputedStyle(element);
            return [style.outlineColor, style.outlineWidth, getComputedStyle(element.closest('main > div')).backgroundColor, getComputedStyle(document.body).backgroundColor];
          })()`);
          assert.ok(Number.parseFloat(width!) >= 2, `${display} ${selector}: outline ${width}`);
          // The popup's card is borderless, so the ring may also sit on the page's background.
          for (const around of [card!, body!]) assert.ok(contrast(outline!, around) >= 3, `${display} ${selector}: ring ${outline} on ${around} is ${contrast(outline!, around).toFixed(2)}:1`);
        }
      }
    } finally {
      await close();
    }
  });

  test('the client’s logo and localized name show, the logo loading under the login page’s policy', async () => {
    const { page, problems, close } = await open();
    try {
      await page.goto(loginUrl({ ui_locales: 'fi' }));
      const logo = page.locator('img.logo');
      await logo.waitFor();
      assert.equal(await logo.getAttribute('src'), logoUri);
      assert.equal(await page.evaluate<number>('document.querySelector("img.logo").complete && document.querySelector("img.logo").naturalWidth'), 1);
      assert.equal(await page.locator('.client strong').innerText(), 'Kirjasto');
      assert.deepEqual(problems, [], 'no CSP violation');
    } finally {
      await close();
    }
  });
});
