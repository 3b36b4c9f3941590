/**
 * The package (issue 22 item 13; README, "Install as a package"), made and used as README says so
 * it cannot rot: `npm pack` in the checkout, the tarball installed into an empty folder outside it,
 * then `npx gatehouse migrate`, `npx gatehouse serve` and the CLI there with the store under
 * GATEHOUSE_HOME. Node strips types only outside node_modules, so the installed package must run
 * the JavaScript built at pack time (scripts/build-package.ts), and find beside it every other file
 * the pages read. SQLite only: the store is not what differs between the checkout and the package.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { untilReady } from '../helpers/ready.ts';
import { freePort } from '../helpers/server.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

describe('the package that npm pack makes installs into an empty folder and runs there', { timeout: 240_000 }, () => {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'gatehouse-package-')));
  const app = join(dir, 'app');
  const home = join(dir, 'home');
  let packedFiles: string[];
  let tarball: string;
  let port: number;
  let issuer: string;
  let server: ChildProcess | undefined;
  let output = '';

  // A clean environment: nothing of the checkout's npm run or of this machine's GATEHOUSE_* settings.
  const environment = (extra: Record<string, string>): NodeJS.ProcessEnv => ({ PATH: process.env.PATH, HOME: dir, GATEHOUSE_LOG_LEVEL: 'info', ...extra });
  const serverEnvironment = (): Record<string, string> => ({ GATEHOUSE_HOME: home, GATEHOUSE_PORT: String(port), GATEHOUSE_ISSUER: issuer, GATEHOUSE_WORKERS: '1' });

  /** `npx gatehouse …` in the install folder; `--no`: never fetch a package of that name from the registry. */
  const npx = async (args: string[], extra: Record<string, string>, input?: string): Promise<Outcome> => {
    const child = execFile('npx', ['--no', 'gatehouse', ...args], { cwd: app, env: environment(extra) });
    child.stdin!.end(input ?? '');
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    return { code, stdout, stderr };
  };
  const json = async (args: string[], input?: string): Promise<unknown> => {
    const outcome = await npx([...args, '--json'], serverEnvironment(), input);
    assert.equal(outcome.code, 0, `npx gatehouse ${args.join(' ')}: ${outcome.stderr}`);
    return JSON.parse(outcome.stdout);
  };

  before(async () => {
    // Node looks for modules in every parent's node_modules: nothing above the install folder may have one.
    for (let parent = dir; parent !== dirname(parent); parent = dirname(parent)) assert.equal(existsSync(join(parent, 'node_modules')), false, `${parent}/node_modules would leak into the install`);
    const packed = await run('npm', ['pack', '--json', '--pack-destination', dir], { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 });
    const [report] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
    packedFiles = report.files.map((file) => file.path).sort();
    tarball = report.filename;
    // An empty folder, and the dependencies from the npm cache where it has them.
    mkdirSync(app);
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(dir, report.filename)], { cwd: app });
    port = await freePort();
    issuer = `http://127.0.0.1:${port}/uas`;
  });

  after(() => {
    // Whatever is left of npx and the server it runs (a failed test), so no pipe holds this process.
    if (server && groupAlive(server.pid!)) process.kill(-server.pid!, 'SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('the tarball holds bin/, the JavaScript built from src/ and every other file of src/, no TypeScript; the checkout has no dist/ left', () => {
    const sources = readdirSync(join(ROOT, 'src'), { recursive: true, withFileTypes: true })
      .filter((entry) => entry.isFile() && !entry.name.endsWith('.test.ts'))
      .map((entry) => join(entry.parentPath, entry.name).slice(join(ROOT, 'src').length + 1));
    const built = sources.map((path) => `dist/${path.replace(/\.ts$/, '.js')}`);
    assert.deepEqual(packedFiles, ['LICENSE', 'README.md', 'bin/gatehouse.js', 'bin/require-node.js', ...built, 'package.json'].sort());
    assert.equal(existsSync(join(ROOT, 'dist')), false, 'postpack removes dist/');
  });

  test('README and docs/deployment.md install the tarball that npm pack makes, by its name', () => {
    for (const doc of ['README.md', 'docs/deployment.md']) {
      const named = new Set(readFileSync(join(ROOT, doc), 'utf8').match(/gatehouse-[\w.-]+\.tgz/g));
      assert.deepEqual([...named], [tarball], doc);
    }
  });

  test('the install runs no install script: nothing is compiled', () => {
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    assert.deepEqual(
      Object.entries(lock.packages).filter(([, entry]) => entry.hasInstallScript === true).map(([path]) => path),
      [],
    );
  });

  test('without GATEHOUSE_HOME the store is data/ in the folder it was installed into, not inside node_modules', async () => {
    const outcome = await npx(['user', 'list'], {});
    assert.equal(outcome.code, 2, outcome.stderr);
    assert.equal(outcome.stderr.split('\n')[0], `store: SQLite ${join(app, 'data', 'gatehouse.db')}`);
  });

  test('npx gatehouse migrate makes the store under GATEHOUSE_HOME; a second run has nothing to do', async () => {
    const first = await npx(['migrate', '--json'], { GATEHOUSE_HOME: home });
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stderr, `store: SQLite ${join(home, 'gatehouse.db')}\n`);
    assert.ok(((JSON.parse(first.stdout) as { migrations_run: string[] }).migrations_run).length > 0, first.stdout);
    assert.ok(existsSync(join(home, 'gatehouse.db')));
    assert.deepEqual(await json(['migrate']), { migrations_run: [] });
  });

  test('npx gatehouse serve answers discovery and the JWKS, the CLI works beside it, the pages render with their stylesheets', async () => {
    server = spawn('npx', ['--no', 'gatehouse', 'serve'], { cwd: app, env: environment(serverEnvironment()), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await untilReady(server, () => output);

    const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, string>;
    assert.equal(discovery.issuer, issuer);
    const jwks = await fetch(discovery.jwks_uri!);
    assert.equal(jwks.status, 200);
    const published = ((await jwks.json()) as { keys: { kid: string }[] }).keys.map((key) => key.kid).sort();
    const active = ((await json(['keys', 'list'])) as { kid: string }[]).map((key) => key.kid).sort();
    assert.deepEqual(published, active);

    const client = (await json(['client', 'create', '--name', 'Package check', '--redirect-uri', 'https://app.example.com/callback'])) as { client_id: string };
    await json(['user', 'create', '--username', 'alice', '--password-stdin'], 'correct horse battery staple\n');
    assert.deepEqual(((await json(['user', 'list'])) as { username: string }[]).map((user) => user.username), ['alice']);

    // The templates and the stylesheets are files beside the built modules (dist/http/…).
    const query = new URLSearchParams({ client_id: client.client_id, redirect_uri: 'https://app.example.com/callback', response_type: 'code', scope: 'openid', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' });
    const page = await fetch(`${discovery.authorization_endpoint}?${query}`, { redirect: 'manual' });
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /<input[^>]+name="password"/);
    const stylesheet = /<link rel="stylesheet" href="([^"]+)"/.exec(html)?.[1];
    assert.ok(stylesheet, html);
    assert.equal(await (await fetch(new URL(stylesheet, issuer))).text(), readFileSync(join(ROOT, 'src/http/interaction/assets/login.css'), 'utf8'));
    const consolePage = await fetch(`http://127.0.0.1:${port}/manage/`, { redirect: 'manual' });
    assert.equal(consolePage.status, 200);
    assert.match(await consolePage.text(), /<link rel="stylesheet" href="\/manage\/assets\/console\.css"/);
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/manage/assets/console.css`)).text(), readFileSync(join(ROOT, 'src/http/console/assets/console.css'), 'utf8'));
  });

  test('SIGTERM, as Ctrl-C or a service manager sends it to npx and the server it runs, stops the server after it drains', async () => {
    assert.ok(server && server.exitCode === null && server.signalCode === null, `the server is running:\n${output}`);
    const npxExited = new Promise((resolve) => server!.once('exit', resolve));
    const logged = output.length;
    // npx passes no signal on: a terminal's Ctrl-C and systemd signal the whole process group.
    process.kill(-server.pid!, 'SIGTERM');
    await npxExited;
    for (let waited = 0; groupAlive(server.pid!); waited += 100) {
      assert.ok(waited < 20_000, `the server still runs 20 s after SIGTERM:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const messages = output.slice(logged).split('\n').filter((line) => line !== '').map((line) => (JSON.parse(line) as { msg: string }).msg);
    assert.deepEqual(messages, ['shutting down: finishing in-flight requests']);
  });
});

/** Whether any process of the group that `leader` started (spawn's `detached`) is still running. */
function groupAlive(leader: number): boolean {
  try {
    process.kill(-leader, 0);
    return true;
  } catch {
    return false;
  }
}
