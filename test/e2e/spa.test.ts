/**
 * examples/spa in real Chromium against gatehouse started as `npm start` starts it (the command of
 * package.json's start script, in a child process, on a fresh SQLite store), with the app served
 * from another origin (another port): log in (code + PKCE, the code redeemed by the browser),
 * UserInfo, silent renewal with the refresh token, logout — every call to gatehouse made by the
 * browser across origins through CORS. A page on an origin no client registered is refused by the
 * browser (CORS), with real tokens in hand. The README's commands are run as written (checked to
 * appear verbatim in examples/spa/README.md), only the ports differ.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { freePort } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/gatehouse.js');
const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the single-page app in a browser`;

const ALICE = { username: 'alice', password: 'correct horse battery staple' };
const aliceArgs = ['user', 'create', '--username', 'alice', '--password-stdin', '--email', 'alice@example.com', '--given-name', 'Alice', '--family-name', 'Example'];
const spaClientArgs = (origin = 'http://127.0.0.1:5173') => [
  'client',
  'create',
  '--name',
  'SPA example',
  '--redirect-uri',
  `${origin}/callback`,
  '--post-logout-redirect-uri',
  `${origin}/`,
  '--token-endpoint-auth-method',
  'none',
  '--code-challenge-method',
  'S256',
  '--grant-type',
  'authorization_code',
  '--grant-type',
  'refresh_token',
  '--json',
];

function shell(args: string[]): string {
  return args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg}"`)).join(' ');
}

function assertInReadme(line: string): void {
  const readme = readFileSync(join(ROOT, 'examples/spa/README.md'), 'utf8');
  assert.ok(readme.includes(line), `examples/spa/README.md should contain:\n${line}`);
}

interface Child {
  process: ChildProcessWithoutNullStreams;
  output(): string;
  stdout(): string;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<void>;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcessWithoutNullStreams>();

function spawnChild(args: string[], env: Record<string, string>, input?: string): Child {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stdin.end(input ?? '');
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    process: child,
    output: () => out,
    stdout: () => stdout,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out)) {
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${pattern} from ${args.join(' ')}:\n${out}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

/** `npm start`'s command (package.json), without npm: the Node version guard, then the server. */
function startCommand(): string[] {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const start = manifest.scripts.start!;
  assert.equal(start, 'node bin/require-node.js && node --max-semi-space-size=4 src/main.ts', 'the command this test runs is npm start\'s');
  return start.split(' && ').at(-1)!.split(' ').slice(1);
}

/** What a fetch() from the page gives: the status and body, or the browser's refusal. */
async function fetchFrom(page: Page, url: string, init: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string } | { refused: string }> {
  return page.evaluate(
    async ({ url, init }) => {
      try {
        const response = await fetch(url, init);
        return { status: response.status, body: await response.text() };
      } catch (error) {
        return { refused: String(error) };
      }
    },
    { url, init },
  );
}

describe('examples/spa in Chromium against npm start', { skip }, () => {
  let dir: string;
  let issuer: string;
  let gatehouseUrl: string;
  let storeEnv: Record<string, string>;
  let browser: Browser;
  let gatehouse: Child;
  let aliceId: string;

  async function cli(args: string[], input?: string): Promise<Record<string, unknown>> {
    const run = spawnChild([BIN, ...args, ...(args.includes('--json') ? [] : ['--json'])], { ...storeEnv, GATEHOUSE_LOG_LEVEL: 'silent' }, input);
    assert.equal(await run.exited, 0, `gatehouse ${args.join(' ')}\n${run.output()}`);
    return JSON.parse(run.stdout()) as Record<string, unknown>;
  }

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-spa-'));
    const port = await freePort();
    storeEnv = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}` };
    gatehouseUrl = `http://127.0.0.1:${port}`;
    issuer = `${gatehouseUrl}/uas`;
    gatehouse = spawnChild(startCommand(), { ...storeEnv, GATEHOUSE_PORT: String(port), GATEHOUSE_LOG_LEVEL: 'info' });
    await gatehouse.waitFor(/gatehouse is ready/);
    assertInReadme(`printf '%s\\n' '${ALICE.password}' | npx gatehouse ${shell(aliceArgs)}`);
    aliceId = (await cli(aliceArgs, `${ALICE.password}\n`)).id as string;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });

  after(async () => {
    await browser?.close();
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    await Promise.all([...children].map((child) => new Promise((resolve) => (child.exitCode === null && child.signalCode === null ? child.once('close', resolve) : resolve(undefined)))));
    rmSync(dir, { recursive: true, force: true });
  });

  test('log in, UserInfo, silent refresh and logout across origins; an unregistered origin is refused by CORS', { timeout: 120_000 }, async () => {
    assertInReadme(`client=$(npx gatehouse ${shell(spaClientArgs())})`);
    assertInReadme('node examples/spa/server.ts');
    const spaPort = await freePort();
    const origin = `http://127.0.0.1:${spaPort}`;
    const client = await cli(spaClientArgs(origin));
    assert.equal(client.client_secret, undefined, 'a public client: no secret in the browser');
    const app = spawnChild(['examples/spa/server.ts'], { ISSUER: issuer, CLIENT_ID: client.client_id as string, PORT: String(spaPort) });
    await app.waitFor(/listening on/);
    // The same app on an origin no client registered.
    const strangerPort = await freePort();
    const stranger = `http://127.0.0.1:${strangerPort}`;
    const strangerApp = spawnChild(['examples/spa/server.ts'], { ISSUER: issuer, CLIENT_ID: client.client_id as string, PORT: String(strangerPort) });
    await strangerApp.waitFor(/listening on/);

    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    const consoleErrors: string[] = [];
    const calls: { method: string; url: string; origin: Promise<string | undefined> }[] = [];
    page.on('request', (request) => {
      // The Origin header is added by the network stack: only allHeaders() shows it. A request
      // still in flight when the page closes (the login page's scripts, say) rejects: never read.
      if (request.url().startsWith(gatehouseUrl)) {
        calls.push({ method: request.method(), url: request.url().split('?')[0]!, origin: request.allHeaders().then((headers) => headers.origin, () => undefined) });
      }
    });
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${response.url()}`);
    });
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    const tokens = async () =>
      page.evaluate(() => {
        const key = Object.keys(sessionStorage).find((name) => name.startsWith('oidc.user:'));
        return key ? (JSON.parse(sessionStorage.getItem(key)!) as { access_token: string; refresh_token: string; id_token: string }) : undefined;
      });
    try {
      // Log in: the authorization request is a navigation; the code is redeemed by the browser.
      await page.goto(`${origin}/`);
      await page.getByText('You are not signed in.').waitFor();
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByLabel('Username').fill(ALICE.username);
      await page.getByLabel('Password').fill(ALICE.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      // The ID token carries the subject; the profile claims come from UserInfo (OIDC Core §5.4).
      await page.getByText(`Signed in as ${aliceId}.`).waitFor();
      assert.equal(page.url(), `${origin}/`);
      const authorization = calls.find((call) => call.url === `${issuer}/oauth2/authorization`);
      assert.ok(authorization, 'the authorization request went to gatehouse');
      const tokenCall = calls.find((call) => call.url === `${issuer}/oauth2/token` && call.method === 'POST');
      assert.equal(await tokenCall?.origin, origin, 'the code was redeemed by the browser, cross-origin');
      const idToken = JSON.parse(await page.locator('#id-token-claims').innerText()) as Record<string, unknown>;
      assert.equal(idToken.iss, issuer);
      assert.equal(idToken.aud, client.client_id);
      assert.equal(idToken.sub, aliceId);
      assert.deepEqual(idToken.amr, ['pwd']);
      assert.ok(idToken.nonce === undefined || typeof idToken.nonce === 'string');
      const first = (await tokens())!;
      assert.ok(first.refresh_token, 'a refresh token was issued to the SPA');

      // UserInfo with the access token: a preflighted cross-origin GET.
      await page.getByRole('button', { name: 'Call UserInfo' }).click();
      await page.locator('#userinfo-claims', { hasText: '"preferred_username": "alice"' }).waitFor();
      const userinfo = JSON.parse(await page.locator('#userinfo-claims').innerText()) as Record<string, unknown>;
      assert.equal(userinfo.sub, idToken.sub);
      assert.equal(userinfo.email, 'alice@example.com');

      // Silent refresh: signinSilent with the refresh token; the refresh token rotates (public client).
      await page.getByRole('button', { name: 'Refresh tokens' }).click();
      await page.locator('#renewals', { hasText: '1' }).waitFor();
      const second = (await tokens())!;
      assert.notEqual(second.access_token, first.access_token, 'a new access token');
      assert.notEqual(second.refresh_token, first.refresh_token, 'the refresh token was rotated');
      assert.equal(await page.locator('#access-token-end').innerText(), second.access_token.slice(-8));
      await page.getByRole('button', { name: 'Call UserInfo' }).click();
      await page.locator('#error').waitFor({ state: 'hidden' });
      assert.equal(calls.filter((call) => call.url === `${issuer}/oauth2/token` && call.method === 'POST').length, 2, 'code redemption and one refresh');

      // The origin no client registered: the browser refuses to hand it gatehouse's answers, even
      // with the SPA's real tokens in hand. The same calls from the SPA's origin succeed.
      const strangerPage = await context.newPage();
      await strangerPage.goto(`${stranger}/`);
      await strangerPage.getByText('You are not signed in.').waitFor();
      const refreshForm = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: second.refresh_token, client_id: client.client_id as string }).toString();
      const formHeaders = { 'content-type': 'application/x-www-form-urlencoded' };
      const strangerRefresh = await fetchFrom(strangerPage, `${issuer}/oauth2/token`, { method: 'POST', headers: formHeaders, body: refreshForm });
      assert.ok('refused' in strangerRefresh, `the token answer was readable from ${stranger}: ${JSON.stringify(strangerRefresh)}`);
      const strangerUserinfo = await fetchFrom(strangerPage, `${issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${second.access_token}` } });
      assert.ok('refused' in strangerUserinfo, `UserInfo was readable from ${stranger}: ${JSON.stringify(strangerUserinfo)}`);
      await strangerPage.close();

      // CORS keeps answers from a page, not requests from a server: the stranger's refresh (a
      // CORS-safelisted POST, not preflighted) was executed and rotated the token. From the SPA's
      // own origin, presenting that refresh token again is reuse: invalid_grant, readable, and the
      // whole family — the access token with it — is revoked (RFC 9700 §4.14.2).
      const reuse = await fetchFrom(page, `${issuer}/oauth2/token`, { method: 'POST', headers: formHeaders, body: refreshForm });
      assert.ok('status' in reuse, `the SPA's origin reads the answer: ${JSON.stringify(reuse)}`);
      assert.equal(reuse.status, 400);
      assert.equal((JSON.parse(reuse.body) as Record<string, unknown>).error, 'invalid_grant');
      const revoked = await fetchFrom(page, `${issuer}/oauth2/userinfo`, { headers: { authorization: `Bearer ${second.access_token}` } });
      assert.ok('status' in revoked && revoked.status === 401, `the family's access token is revoked: ${JSON.stringify(revoked)}`);

      // Logout: end_session with id_token_hint, back to the app, signed out.
      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByText('You are not signed in.').waitFor();
      assert.equal(page.url(), `${origin}/`);
      assert.ok(calls.some((call) => call.url === `${issuer}/oauth2/logout`), 'the browser went to the end_session_endpoint');
      assert.equal(await tokens(), undefined, 'the app dropped its tokens');

      // Logging in again asks for the password: the SSO session has ended.
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByLabel('Password').waitFor();
      assert.ok(page.url().startsWith(issuer), 'the login form of gatehouse is shown again');

      assert.deepEqual(problems, [`400 ${issuer}/oauth2/token`, `401 ${issuer}/oauth2/userinfo`], 'no failed request but the reuse and the revoked token, both made on purpose');
      assert.deepEqual(consoleErrors.filter((text) => !text.startsWith('Failed to load resource')), [], 'the app logged no error');
    } catch (error) {
      const shown = await page.locator('body').innerText().catch(() => '(no page)');
      throw new Error(`${(error as Error).message}\n--- page\n${shown}\n--- console errors\n${consoleErrors.join('\n')}\n--- gatehouse\n${gatehouse.output()}\n--- app\n${app.output()}`, { cause: error });
    } finally {
      await context.close();
    }
  });
});
