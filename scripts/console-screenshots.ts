/**
 * `npm run screenshots`: the pictures of the web console in docs/console.md (docs/images/console-*.png).
 * Starts gatehouse on a fresh temporary SQLite store, puts a little sample data in it with the real
 * CLI (`gatehouse admin bootstrap`, a group, users, a policy, two clients), signs in to /manage/ in
 * Chromium (/usr/bin/chromium, or CHROMIUM=…) through the login page and saves the main pages at a
 * fixed 1280×800 viewport. The client secret on the "Client registered" page is replaced by an
 * obviously fake sample before the picture is taken. Everything is thrown away afterwards.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { createGatehouse } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const BIN = join(ROOT, 'bin', 'gatehouse.js');
const OUT = join(ROOT, 'docs', 'images');
const FAKE_TOKEN = 'EXAMPLE-not-a-real-initial-access-token';
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const VIEWPORT = { width: 1280, height: 800 };
const ADMIN = { username: 'admin', password: 'sample administrator password' };
const ALICE = { username: 'alice', password: 'correct horse battery staple' };
const FAKE_SECRET = 'EXAMPLE-not-a-real-secret-0123456789abcdef';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** `gatehouse …` on the sample store, as an operator runs it. */
async function gatehouse(env: Record<string, string>, args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`gatehouse ${args.join(' ')} exited ${code}: ${out}${err}`))));
    child.stdin.end(input);
  });
}

async function signIn(page: Page, url: string, user: { username: string; password: string }): Promise<void> {
  await page.goto(url);
  // By field name: the example theme renames the labels ("Library card number").
  await page.locator('#username').fill(user.username);
  await page.locator('#password').fill(user.password);
  await page.locator('form button[type=submit]').first().click();
  await page.waitForLoadState('load');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-screenshots-'));
  const port = await freePort();
  const env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`, GATEHOUSE_PORT: String(port), GATEHOUSE_ISSUER: `http://127.0.0.1:${port}/uas`, GATEHOUSE_THEME_DIR: join(ROOT, 'examples', 'theme'), GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token' };
  const config = loadConfig({ ...env, GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_CLEANUP_INTERVAL: '0' });
  const server = await createGatehouse(config, {}, { logger: false });
  await server.app.listen({ host: '127.0.0.1', port });
  const base = `http://127.0.0.1:${port}/manage`;
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'] });
  try {
    // Sample data, with the CLI.
    await gatehouse(env, ['admin', 'bootstrap', '--username', ADMIN.username, '--password-stdin'], `${ADMIN.password}\n`);
    await gatehouse(env, ['group', 'create', 'Staff', '--description', 'Everyone employed by Acme']);
    await gatehouse(env, ['user', 'create', '--username', ALICE.username, '--password-stdin', '--email', 'alice@example.com', '--given-name', 'Alice', '--family-name', 'Example', '--group', 'Staff'], `${ALICE.password}\n`);
    await gatehouse(env, ['user', 'create', '--username', 'bob', '--password-stdin', '--email', 'bob@example.com', '--given-name', 'Bob', '--family-name', 'Example'], 'another horse battery staple\n');
    await gatehouse(env, ['user', 'create', '--username', 'carol', '--password-stdin', '--email', 'carol@example.com', '--given-name', 'Carol', '--family-name', 'Sample', '--group', 'Staff'], 'a third horse battery staple\n');
    const policyFile = join(dir, 'staff-apps.json');
    writeFileSync(policyFile, JSON.stringify({ name: 'staff-apps', access: { groups: ['Staff'] }, claims: [{ claim: 'groups', from: 'groups', in: ['id_token', 'userinfo'] }, { claim: 'tenant', value: 'acme' }] }));
    await gatehouse(env, ['policy', 'create', '--file', policyFile]);
    const portal = JSON.parse(
      await gatehouse(env, ['client', 'create', '--name', 'Staff portal', '--redirect-uri', 'https://portal.example.com/callback', '--post-logout-redirect-uri', 'https://portal.example.com/', '--authorization-policy', 'staff-apps', '--json']),
    ) as { client_id: string };
    await gatehouse(env, ['client', 'create', '--name', 'Mobile app', '--redirect-uri', 'com.example.app:/callback', '--token-endpoint-auth-method', 'none', '--code-challenge-method', 'S256', '--json']);

    // Alice signs in once (at the console, which she may not use): her SSO session shows on her page.
    const aliceContext = await browser.newContext({ viewport: VIEWPORT });
    await signIn(await aliceContext.newPage(), `${base}/`, ALICE);
    await aliceContext.close();

    const context = await browser.newContext({ viewport: VIEWPORT, locale: 'en-GB', colorScheme: 'light' });
    const page = await context.newPage();
    mkdirSync(OUT, { recursive: true });
    const shot = async (name: string) => {
      await page.evaluate('document.activeElement && document.activeElement.blur && document.activeElement.blur()');
      await page.screenshot({ path: join(OUT, `console-${name}.png`), type: 'png' });
      console.log(`docs/images/console-${name}.png`);
    };
    const nav = (label: string) => page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: label, exact: true }).click();

    await signIn(page, `${base}/`, ADMIN);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await shot('overview');

    await nav('Clients');
    await page.getByRole('heading', { name: 'Clients' }).waitFor();
    await shot('clients');

    await page.getByRole('link', { name: 'Register a client' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Web SSO example');
    await page.getByLabel('Redirect URIs', { exact: true }).fill('http://127.0.0.1:3000/callback');
    await page.getByLabel('Post-logout redirect URIs').fill('http://127.0.0.1:3000/');
    await page.getByRole('button', { name: 'Register' }).click();
    await page.getByRole('heading', { name: 'Client registered' }).waitFor();
    // The real secret never reaches a picture: an obviously fake one takes its place.
    await page.evaluate(`(() => {
      const real = document.getElementById('client-secret').textContent;
      for (const id of ['client-secret', 'example-commands']) { const e = document.getElementById(id); if (e) e.textContent = e.textContent.split(real).join(${JSON.stringify(FAKE_SECRET)}); }
    })()`);
    await shot('client-registered');

    await page.goto(`${base}/clients/${encodeURIComponent(portal.client_id)}`);
    await page.getByRole('heading', { name: 'Client Staff portal' }).waitFor();
    await shot('client');
    await page.getByRole('link', { name: 'Edit all metadata (JSON)' }).click();
    await page.getByRole('heading', { name: 'Edit all metadata of Staff portal' }).waitFor();
    await shot('client-json');

    await nav('Users');
    await page.getByRole('heading', { name: 'Users' }).waitFor();
    await shot('users');
    await page.getByRole('link', { name: ALICE.username, exact: true }).click();
    await page.getByRole('heading', { name: 'Sessions' }).waitFor();
    // From the groups down: the sessions are what this picture is for.
    await page.locator('#groups').evaluate((heading) => heading.scrollIntoView({ block: 'start' }));
    await shot('user');

    await nav('Groups');
    await page.getByRole('heading', { name: 'Groups' }).waitFor();
    await shot('groups');

    await nav('Policies');
    await page.getByRole('link', { name: 'staff-apps' }).click();
    await page.getByRole('heading', { name: 'Policy staff-apps' }).waitFor();
    await shot('policy');

    await nav('Signing keys');
    await page.getByRole('link', { name: 'Rotate the signing keys' }).click();
    await page.getByRole('button', { name: 'Rotate the signing keys' }).click();
    await page.getByText('The signing keys were rotated.').waitFor();
    await shot('keys');

    await server.auditStore?.flush();
    await nav('Audit events');
    await page.getByRole('heading', { name: 'Audit events' }).waitFor();
    // The filter form fills the first screen: start the picture at its button, above the events.
    await page.locator('main form.filters button[type=submit]').evaluate((button) => button.scrollIntoView({ block: 'start' }));
    await shot('audit');

    await nav('Registration tokens');
    await page.getByRole('button', { name: 'Create a token' }).click();
    await page.getByRole('heading', { name: 'Initial access token created' }).waitFor();
    await page.evaluate(`(() => {
      const real = document.getElementById('token-value').textContent;
      for (const id of ['token-value', 'curl-example']) { const e = document.getElementById(id); if (e) e.textContent = e.textContent.split(real).join(${JSON.stringify(FAKE_TOKEN)}); }
    })()`);
    await shot('registration-token');

    await nav('Theme');
    await page.getByRole('heading', { name: 'Login-page theme' }).waitFor();
    await shot('theme');
    await page.goto(`${base}/theme/preview?display=page&locale=fi`);
    await shot('theme-preview-fi');

    await page.goto(`${base}/users?lang=fi`);
    await page.getByRole('heading', { name: 'Käyttäjät' }).waitFor();
    await shot('users-fi');
    await context.close();
  } finally {
    await browser.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
