/**
 * The Dockerfile's recipe, performed without a container runtime so it cannot rot silently: the
 * files its production stage copies (the tracked files under each COPY source) go into a clean
 * directory outside the repository, the deps stage's `npm ci --omit=dev` runs there, and the
 * image's CMD starts gatehouse with the image's ENV (only the port, the listen address and the
 * store's path differ). Then: its HEALTHCHECK, discovery, a user and a client created with the
 * installed CLI, one login through the login form and a code redeemed at the token endpoint —
 * proving nothing from devDependencies is needed at run time. The Dockerfile is parsed, so a
 * renamed entry point, a moved file or a dropped `--omit=dev` fails here.
 */
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { basic, postForm } from '../helpers/back-channel.ts';
import { browse, CookieJar, formAction, formFields, pkce, redirectParams, submit } from '../helpers/fixtures.ts';
import { untilReady } from '../helpers/ready.ts';
import { freePort } from '../helpers/server.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  name: string | undefined;
  instructions: Instruction[];
}

/** The Dockerfile's stages and instructions (line continuations joined, comments dropped). */
export function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') stages.push({ name: /\bAS\s+(\S+)$/i.exec(args)?.[1], instructions: [] });
    else stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
  }
  return stages;
}

/** `COPY [--from=x] src... dest`: the sources and the stage copied from, if any. */
function copySources(args: string): { from: string | undefined; sources: string[] } {
  const words = args.split(/\s+/);
  const from = words.find((w) => w.startsWith('--from='))?.slice('--from='.length);
  const plain = words.filter((w) => !w.startsWith('--'));
  return { from, sources: plain.slice(0, -1) };
}

/** An exec-form (JSON array) CMD or HEALTHCHECK CMD. */
function execForm(args: string): string[] {
  const json = args.slice(args.indexOf('['));
  const argv = JSON.parse(json) as unknown;
  assert.ok(Array.isArray(argv) && argv.every((a) => typeof a === 'string'), `not an exec-form command: ${args}`);
  return argv as string[];
}

/** The argv entries that name files of the application (relative paths with an extension). */
function fileArguments(argv: string[]): string[] {
  return argv.filter((arg) => !arg.startsWith('-') && /^[\w./-]+\.(ts|js|mjs|sh)$/.test(arg));
}

const dockerfile = parseDockerfile(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
const production = dockerfile.at(-1)!;
const depsStage = dockerfile.find((stage) => stage.name === 'deps');
const tracked = (await run('git', ['ls-files', '-z'], { cwd: ROOT })).stdout.split('\0').filter((f) => f !== '');

/** The tracked files a COPY source stands for: the file itself, or every file under the directory. */
function trackedUnder(source: string): string[] {
  const path = source.replace(/^\.\//, '').replace(/\/$/, '');
  return tracked.filter((file) => file === path || file.startsWith(`${path}/`));
}

describe('the Dockerfile names what exists', () => {
  test('its stages: deps, the web SSO example, and the production image last', () => {
    assert.deepEqual(
      dockerfile.map((s) => s.name),
      ['deps', 'web-sso-example', undefined],
    );
  });

  test('every COPY source of every stage is a tracked file or directory', () => {
    for (const stage of dockerfile) {
      for (const { args } of stage.instructions.filter((i) => i.keyword === 'COPY')) {
        const { from, sources } = copySources(args);
        if (from !== undefined) {
          assert.ok(
            dockerfile.some((s) => s.name === from),
            `COPY --from=${from} names no stage`,
          );
          continue;
        }
        for (const source of sources) assert.ok(trackedUnder(source).length > 0, `COPY ${source} (stage ${stage.name ?? 'production'}) names nothing tracked`);
      }
    }
  });

  test('.dockerignore keeps out no file a COPY needs', () => {
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    const copied = dockerfile.flatMap((stage) => stage.instructions.filter((i) => i.keyword === 'COPY' && copySources(i.args).from === undefined).flatMap((i) => copySources(i.args).sources.flatMap(trackedUnder)));
    // Each pattern as .dockerignore reads it: from the context's root, `*` within a segment, `**`
    // across segments, and a match of a directory excludes what is under it.
    const glob = (pattern: string) => pattern.replace(/^\//, '').replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*\*/g, '\0').replace(/\*/g, '[^/]*').replace(/\0/g, '.*');
    const matchers = ignored.map((pattern) => new RegExp(`^${glob(pattern)}(/.*)?$`));
    for (const file of copied) assert.deepEqual(ignored.filter((_, i) => matchers[i]!.test(file)), [], `${file} is copied but .dockerignore excludes it`);
  });

  test('the CMD and HEALTHCHECK of each stage name files that stage copied', () => {
    for (const stage of dockerfile) {
      const copied = stage.instructions.filter((i) => i.keyword === 'COPY' && copySources(i.args).from === undefined).flatMap((i) => copySources(i.args).sources.flatMap(trackedUnder));
      const commands = stage.instructions.filter((i) => i.keyword === 'CMD' || (i.keyword === 'HEALTHCHECK' && / CMD /.test(` ${i.args} `)));
      for (const { keyword, args } of commands) {
        const files = fileArguments(execForm(args));
        assert.ok(files.length > 0, `${keyword} of stage ${stage.name ?? 'production'} names no file: ${args}`);
        for (const file of files) assert.ok(copied.includes(file), `${keyword} of stage ${stage.name ?? 'production'} runs ${file}, which the stage does not copy`);
      }
    }
    assert.ok(
      production.instructions.some((i) => i.keyword === 'HEALTHCHECK'),
      'the production image has a HEALTHCHECK',
    );
    assert.ok(
      production.instructions.some((i) => i.keyword === 'USER' && i.args !== 'root' && i.args !== '0'),
      'the production image runs as a non-root user',
    );
  });

  test('the deps stage installs production dependencies only, from the lockfile', () => {
    assert.ok(depsStage, 'a stage named deps');
    const install = depsStage.instructions.find((i) => i.keyword === 'RUN' && i.args.includes('npm ci'));
    assert.equal(install?.args.split('&&')[0]!.trim(), 'npm ci --omit=dev --ignore-scripts');
    assert.deepEqual(
      production.instructions.filter((i) => i.keyword === 'COPY' && copySources(i.args).from !== undefined).map((i) => i.args),
      ['--from=deps /app/node_modules ./node_modules'],
    );
  });
});

describe('a production install, as the Dockerfile makes it, serves a login', { timeout: 180_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-production-'));
  const app = join(dir, 'app');
  let server: ChildProcess | undefined;
  let output = '';
  let port: number;
  let env: NodeJS.ProcessEnv;
  let baseUrl: string;

  const node = (argv: string[]) => argv.map((arg, i) => (i === 0 && arg === 'node' ? process.execPath : arg));
  const cli = async (args: string[], input?: string): Promise<Record<string, unknown>> => {
    const child = execFile(process.execPath, ['bin/gatehouse.js', ...args], { cwd: app, env });
    if (input !== undefined) child.stdin!.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, `gatehouse ${args.join(' ')}: ${stderr}`);
    return JSON.parse(stdout) as Record<string, unknown>;
  };

  before(async () => {
    // The production stage's COPY lines, in order; node_modules comes from the deps stage's install.
    for (const { args } of production.instructions.filter((i) => i.keyword === 'COPY')) {
      const { from, sources } = copySources(args);
      if (from !== undefined) continue;
      for (const file of sources.flatMap(trackedUnder)) {
        mkdirSync(dirname(join(app, file)), { recursive: true });
        cpSync(join(ROOT, file), join(app, file));
      }
    }
    // The deps stage's command, against the npm cache when it can (`npm cache clean` is left out:
    // it is the image's business, not this machine's).
    const install = depsStage!.instructions.find((i) => i.keyword === 'RUN' && i.args.includes('npm ci'))!.args.split('&&')[0]!.trim().split(/\s+/);
    await run('npm', [...install.slice(1), '--prefer-offline', '--no-audit', '--no-fund'], { cwd: app, env: { ...process.env, NODE_ENV: 'production' } });

    port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const imageEnv = Object.fromEntries(
      production.instructions
        .filter((i) => i.keyword === 'ENV')
        .flatMap((i) => [...i.args.matchAll(/(\w+)=(\S+)/g)])
        .map((m) => [m[1]!, m[2]!]),
    );
    mkdirSync(join(dir, 'data'));
    env = {
      PATH: process.env.PATH,
      HOME: dir,
      ...imageEnv,
      GATEHOUSE_HOST: '127.0.0.1',
      GATEHOUSE_PORT: String(port),
      GATEHOUSE_DATABASE_URL: `sqlite:${join(dir, 'data', 'gatehouse.db')}`,
      GATEHOUSE_WORKERS: '1',
      GATEHOUSE_LOG_LEVEL: 'info',
    };
    // Node looks for modules in every parent's node_modules: nothing above the clean directory may have one.
    for (let parent = dirname(app); parent !== dirname(parent); parent = dirname(parent)) assert.equal(existsSync(join(parent, 'node_modules')), false, `${parent}/node_modules would leak into the install`);
  });

  after(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGKILL');
      await new Promise((resolve) => server!.once('exit', resolve));
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test('no devDependency is installed', () => {
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };
    for (const name of Object.keys(manifest.devDependencies)) assert.equal(existsSync(join(app, 'node_modules', name)), false, `${name} is a devDependency`);
    for (const name of Object.keys(manifest.dependencies)) assert.ok(statSync(join(app, 'node_modules', name)).isDirectory(), `${name} is installed`);
  });

  test('the HEALTHCHECK fails while nothing listens; the CMD starts gatehouse and the HEALTHCHECK passes', async () => {
    const healthcheck = node(execForm(production.instructions.find((i) => i.keyword === 'HEALTHCHECK')!.args));
    await assert.rejects(run(healthcheck[0]!, healthcheck.slice(1), { cwd: app, env }), 'the health check fails before the server runs');

    const cmd = node(execForm(production.instructions.findLast((i) => i.keyword === 'CMD')!.args));
    server = spawn(cmd[0]!, cmd.slice(1), { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await untilReady(server, () => output);
    await run(healthcheck[0]!, healthcheck.slice(1), { cwd: app, env });
  });

  test('discovery, a user and a client made with the installed CLI, a login through the form and a code redeemed', async () => {
    const discovery = (await (await fetch(`${baseUrl}/uas/.well-known/openid-configuration`)).json()) as Record<string, string>;
    assert.equal(discovery.issuer, `http://127.0.0.1:${port}/uas`);

    const password = 'correct horse battery staple';
    await cli(['user', 'create', '--username', 'alice', '--password-stdin', '--json'], `${password}\n`);
    const client = await cli(['client', 'create', '--name', 'Production check', '--redirect-uri', 'https://app.example.com/callback', '--json']);

    const jar = new CookieJar();
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({ client_id: client.client_id as string, redirect_uri: 'https://app.example.com/callback', response_type: 'code', scope: 'openid', state: 'st', code_challenge: challenge, code_challenge_method: 'S256' });
    const page = await browse(`${discovery.authorization_endpoint}?${query}`, jar);
    assert.equal(page.status, 200);
    const html = await page.text();
    const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? 'alice' : name === 'password' ? password : value]);
    const done = await submit(new URL(formAction(html), baseUrl).toString(), fields, jar);
    assert.equal(done.status, 303);
    const token = await postForm(discovery.token_endpoint!, { grant_type: 'authorization_code', code: redirectParams(done).get('code')!, redirect_uri: 'https://app.example.com/callback', code_verifier: verifier }, { authorization: basic(client.client_id as string, client.client_secret as string) });
    assert.equal(token.status, 200, JSON.stringify(token.body));
    assert.equal(typeof token.body.id_token, 'string');
  });

  test('SIGTERM stops it cleanly', async () => {
    assert.ok(server && server.exitCode === null && server.signalCode === null, `the server is running:\n${output}`);
    const exited = new Promise<number | null>((resolve) => server!.once('exit', resolve));
    server.kill('SIGTERM');
    assert.equal(await exited, 0, output);
  });
});
