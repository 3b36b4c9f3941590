/**
 * What the Chromium tests of the web console share (test/e2e/console*.test.ts): the real
 * `gatehouse admin bootstrap`, Chromium as the project launches it, axe-core's serious and critical
 * violations, the CSP violations a page reported, and the web SSO example run as a child process.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** `false` when Chromium is installed, else the reason to skip a browser test. */
export const noChromium: false | string = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the browser test`;
export const ROOT = join(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'gatehouse.js');
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

interface AxeResult {
  violations: { id: string; impact: string | null; nodes: { target: unknown[] }[] }[];
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

/** `gatehouse admin bootstrap --username … --password-stdin` against a store, as an operator runs it; its output. */
export async function bootstrap(target: { databaseUrl: string; issuer: string }, username: string, password: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'admin', 'bootstrap', '--username', username, '--password-stdin'], {
      env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', GATEHOUSE_DATABASE_URL: target.databaseUrl, GATEHOUSE_ISSUER: target.issuer },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 60_000,
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`bootstrap exited ${code}: ${out}`))));
    child.stdin.end(`${password}\n`);
  });
}

/** Records every CSP violation of every document of the context in `window.__cspViolations` (the DevTools protocol is not subject to the page's CSP). */
export async function recordCspViolations(context: BrowserContext): Promise<void> {
  await context.addInitScript('window.__cspViolations = []; document.addEventListener("securitypolicyviolation", (e) => window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI));');
}

export async function cspViolations(page: Page): Promise<string[]> {
  return page.evaluate<string[]>('window.__cspViolations');
}

/** axe-core's serious and critical violations of the page as it is now. */
export async function seriousViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern.
  await page.evaluate(AXE_SOURCE);
  const result = await page.evaluate<AxeResult>(`axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(TAGS)} } })`);
  return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}

/** A running examples/web-sso/server.ts. */
export interface WebSsoApp {
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `node examples/web-sso/server.ts` from the repository root with exactly `env` (and PATH),
 * as the console's commands say; resolves once it listens.
 */
export async function startWebSso(env: Record<string, string>): Promise<WebSsoApp> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['examples/web-sso/server.ts'], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin.end();
  let out = '';
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the example did not start: ${out}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (/listening on/.test(out)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`the example exited: ${out}`));
    });
  });
  return {
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    },
  };
}
