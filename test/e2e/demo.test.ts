/**
 * `npm run demo` as a newcomer runs it: the script in a child process on a fresh SQLite store and
 * free ports, its printed URL opened in Chromium, a login with the printed credentials, the
 * claims page; then Ctrl-C (SIGTERM) stops both processes, and a second run on the same store
 * reuses the client and the user and works again.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { freePort } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the demo in a browser`;

/** The printed block: URL, username, password, client_id. */
const BLOCK = /Open: {6}(http:\/\/\S+)\n {4}Username: {2}(\S+)\n {4}Password: {2}(\S+)\n\n {2}gatehouse: {2}(\S+) {2}\(client_id (\S+)\)/;

interface Run {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  exited: Promise<number | null>;
}

function runDemo(env: Record<string, string>): Run {
  // `npm run demo` runs exactly this (package.json, checked below); npm itself adds nothing to test.
  const child = spawn(process.execPath, ['scripts/demo.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitForBlock(run: Run, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const match = BLOCK.exec(run.output());
    if (match) return match;
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the demo printed no URL and credentials:\n${run.output()}`);
}

async function refused(url: string): Promise<boolean> {
  try {
    await fetch(url);
    return false;
  } catch {
    return true;
  }
}

describe('npm run demo', { skip }, () => {
  let dir: string;
  let browser: Browser;
  const runs: Run[] = [];

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-demo-'));
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
  });
  after(async () => {
    // SIGTERM first, so that a run a failed test left behind stops its two children too (a
    // SIGKILLed demo would leave them running); SIGKILL only if it does not exit in time.
    await Promise.all(
      runs
        .filter((run) => run.child.exitCode === null && run.child.signalCode === null)
        .map(async (run) => {
          run.child.kill('SIGTERM');
          const timer = setTimeout(() => run.child.kill('SIGKILL'), 15_000);
          await run.exited;
          clearTimeout(timer);
        }),
    );
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('package.json runs the script', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.demo, 'node bin/require-node.js && node scripts/demo.ts');
  });

  test('prints a URL and credentials; Chromium logs in with them and sees the claims; SIGTERM stops both; a second run on the same store does it again', { timeout: 180_000 }, async () => {
    const env = {
      GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'gatehouse.db')}`,
      GATEHOUSE_PORT: String(await freePort()),
      DEMO_PORT: String(await freePort()),
    };
    const clientIds: string[] = [];
    const passwords: string[] = [];
    for (const round of [1, 2]) {
      const run = runDemo(env);
      runs.push(run);
      try {
        const [, url, username, password, issuer, clientId] = await waitForBlock(run);
        assert.equal(url, `http://127.0.0.1:${env.DEMO_PORT}/`);
        assert.equal(issuer, `http://127.0.0.1:${env.GATEHOUSE_PORT}/uas`);
        assert.equal(username, 'demo');
        clientIds.push(clientId!);
        passwords.push(password!);

        const context = await browser.newContext();
        const page = await context.newPage();
        try {
          await page.goto(url!);
          await page.getByRole('link', { name: 'Log in' }).click();
          await page.getByLabel('Username').fill(username!);
          await page.getByLabel('Password').fill(password!);
          await Promise.all([page.waitForURL(url!), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);
          const userinfo = JSON.parse(await page.locator('#userinfo-claims').innerText()) as Record<string, unknown>;
          assert.equal(userinfo.preferred_username, 'demo', `round ${round}`);
          const idToken = JSON.parse(await page.locator('#id-token-claims').innerText()) as Record<string, unknown>;
          assert.equal(idToken.aud, clientId);
          assert.equal(idToken.iss, issuer);
        } finally {
          await context.close();
        }

        run.child.kill('SIGTERM');
        assert.equal(await run.exited, 0, run.output());
        assert.ok(await refused(url!), 'the example has stopped');
        assert.ok(await refused(`http://127.0.0.1:${env.GATEHOUSE_PORT}/health/live`), 'gatehouse has stopped');
      } catch (error) {
        throw new Error(`round ${round}: ${(error as Error).message}\n--- demo output\n${run.output()}`, { cause: error });
      }
    }
    assert.equal(clientIds[1], clientIds[0], 'the second run found the client of the first');
    assert.notEqual(passwords[1], passwords[0], 'and gave the demo user a new password, which worked');
  });

  test('a user named demo that the demo did not create is left alone: the demo stops with a clear message', { timeout: 60_000 }, async () => {
    const env = { GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'other.db')}`, GATEHOUSE_PORT: String(await freePort()), DEMO_PORT: String(await freePort()), GATEHOUSE_LOG_LEVEL: 'silent' };
    const gatehouse = async (args: string[], input = '') => {
      const child = spawn(process.execPath, ['bin/gatehouse.js', ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.stdin.end(input);
      assert.equal(await new Promise((resolve) => child.on('close', resolve)), 0, stderr);
    };
    // The CLI creates no store but with migrate (the demo, like the server, creates it).
    await gatehouse(['migrate']);
    await gatehouse(['user', 'create', '--username', 'demo', '--password-stdin'], 'a real user password\n');
    const run = runDemo(env);
    runs.push(run);
    assert.equal(await run.exited, 1, run.output());
    assert.match(run.output(), /^demo: a user named "demo" exists and was not created by npm run demo; it is left alone\./m);
    assert.doesNotMatch(run.output(), /Password:/);
    assert.ok(await refused(`http://127.0.0.1:${env.GATEHOUSE_PORT}/health/live`), 'no server was left running');
  });
});
