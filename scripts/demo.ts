/**
 * `npm run demo`: see a single sign-on work in two minutes. On the store `npm start` uses (the
 * same GATEHOUSE_* environment), it registers the web SSO example (examples/web-sso) as a
 * confidential client and creates a demo user — or finds both from an earlier run — then starts
 * gatehouse and the example, prints where to go and how to sign in, and stops both on Ctrl-C
 * (SIGINT) or SIGTERM.
 *
 * Idempotent: the client is found by its name, its redirect URIs are set to this run's port and
 * its secret is replaced (gatehouse keeps only a hash, so the old one cannot be read back); the
 * user is found by its username and gets a new random password, printed below. A user named
 * `demo` that this script did not create (it has no `gatehouseDemo` attribute) is never touched.
 * Two demos started at the same moment on one store could each register a client (find, then
 * register, are separate steps); they would also fight over the ports, and the next run simply
 * uses the first client it finds, so this is left as it is.
 *
 * Settings (environment): the server's own GATEHOUSE_* variables (GATEHOUSE_PORT, GATEHOUSE_DATABASE_URL,
 * GATEHOUSE_ISSUER, …) and DEMO_PORT, the example's port (default 3000).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { keyRingFor, openStore } from '../src/app.ts';
import { ConfigError, loadConfig, type Config } from '../src/config.ts';
import { systemClock } from '../src/lib/clock.ts';
import { cryptoRandom } from '../src/lib/random.ts';
import { administratorGroups } from '../src/identity/administrators.ts';
import { IdentityError } from '../src/identity/errors.ts';
import { administration, type Acting, type Administration } from '../src/manage/administration.ts';
import { noAudit } from '../src/observability/audit.ts';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
export const DEMO_CLIENT_NAME = 'gatehouse demo: web SSO example';
export const DEMO_USERNAME = 'demo';
/** Marks the user this script created, so a real user called `demo` is never given a new password. */
const DEMO_MARK = 'gatehouseDemo';
const READY_TIMEOUT_MS = 30_000;

interface Demo {
  clientId: string;
  clientSecret: string;
  password: string;
}

/** The demo client and user on the configured store: registered or found, in a known state. */
async function prepare({ admin, acting }: { admin: Administration; acting: Acting }, origin: string): Promise<Demo> {
  // The user first: a foreign `demo` stops the demo before anything is registered.
  const user = await admin.users.get(DEMO_USERNAME).catch((error: unknown) => {
    if (error instanceof IdentityError && error.code === 'not_found') return undefined;
    throw error;
  });
  if (user && user.attributes[DEMO_MARK]?.[0] !== 'true') {
    throw new Error(`a user named "${DEMO_USERNAME}" exists and was not created by npm run demo; it is left alone. Run the demo on another store (GATEHOUSE_DATABASE_URL=sqlite:./data/demo.db npm run demo).`);
  }

  const metadata = {
    client_name: DEMO_CLIENT_NAME,
    redirect_uris: [`${origin}/callback`],
    post_logout_redirect_uris: [`${origin}/`],
    token_endpoint_auth_method: 'client_secret_basic',
  };
  const existing = (await admin.clients.list()).find((client) => client.name === DEMO_CLIENT_NAME);
  let clientId: string;
  let clientSecret: string;
  if (existing) {
    await admin.clients.update(acting, existing.clientId, metadata);
    if (!existing.active) await admin.clients.setActive(acting, existing.clientId, true);
    ({ clientSecret } = await admin.clients.rotateSecret(acting, existing.clientId));
    clientId = existing.clientId;
  } else {
    const registered = await admin.clients.create(acting, metadata);
    clientId = registered.client.clientId;
    clientSecret = registered.clientSecret!;
  }

  // Printable and easy to type: 16 characters of base64url.
  const password = randomBytes(12).toString('base64url');
  if (user) await admin.users.update(acting, user.id, { password, status: 'enabled' });
  else await admin.users.create(acting, { username: DEMO_USERNAME, password, givenName: 'Demo', familyName: 'User', email: 'demo@example.com', attributes: { [DEMO_MARK]: ['true'] } });
  return { clientId, clientSecret, password };
}

/** A child process whose output goes to ours, each line labelled with its name. */
function start(args: string[], env: NodeJS.ProcessEnv, name: string): ChildProcess {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (chunk: Buffer) => process.stdout.write(prefixed(name, chunk)));
  child.stderr!.on('data', (chunk: Buffer) => process.stderr.write(prefixed(name, chunk)));
  return child;
}

function prefixed(name: string, chunk: Buffer): string {
  return chunk
    .toString()
    .split('\n')
    .map((line) => (line === '' ? line : `[${name}] ${line}`))
    .join('\n');
}

/** Resolves when `url` answers 200; rejects when `child` exits first or on timeout. */
async function waitUntilReady(url: string, child: ChildProcess, what: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited before it was ready (see its output above)`);
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} was not ready at ${url} within ${READY_TIMEOUT_MS / 1000} s`);
}

/** Where this machine reaches the server's listener. */
function localBase(config: Config): string {
  const host = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '[::1]' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

const children: ChildProcess[] = [];
let stopping = false;

/** Stops both processes (SIGTERM: each drains and exits; SIGKILL after 10 s), then exits with `code`. */
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }),
  );
  process.exit(code);
}

process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

async function main(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) throw new Error(`invalid configuration: ${error.message}`, { cause: error });
    throw error;
  }
  if (config.sqlitePath === ':memory:') throw new Error('the demo runs two processes on one store: use a file (sqlite:./data/gatehouse.db) or PostgreSQL, not sqlite::memory:');
  if (config.port === 0) throw new Error('set GATEHOUSE_PORT to a port number: the issuer and the example must know it in advance');
  const demoPort = Number(process.env.DEMO_PORT ?? 3000);
  if (!Number.isInteger(demoPort) || demoPort < 1 || demoPort > 65535) throw new Error('DEMO_PORT must be a port number');
  // 127.0.0.1, not localhost: the registered redirect URI and the example's cookie both name it.
  const origin = `http://127.0.0.1:${demoPort}`;

  // Opened as the server opens it: created and migrated when it is not there yet (the first run
  // after `npm ci`), unlike the CLI's commands, which refuse a missing store.
  const store = await openStore(config);
  let demo: Demo;
  try {
    // As the CLI's operator, without an audit trail: the demo's own client and user on a store of its own.
    const admin = administration({ store, clock: systemClock, random: cryptoRandom, audit: noAudit, keyRing: keyRingFor(config, store), settings: config });
    demo = await prepare({ admin, acting: { actor: { via: 'cli', caller: 'npm run demo' }, authority: { groups: administratorGroups(config), administrator: true } } }, origin);
  } finally {
    await store.close();
  }

  // One process (no cluster) and quiet logs unless asked for: the block below is what matters.
  const serverEnv = { ...process.env, GATEHOUSE_WORKERS: process.env.GATEHOUSE_WORKERS ?? '1', GATEHOUSE_LOG_LEVEL: process.env.GATEHOUSE_LOG_LEVEL ?? 'warn' };
  const server = start(['--max-semi-space-size=4', 'src/main.ts'], serverEnv, 'gatehouse');
  children.push(server);
  server.once('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`gatehouse stopped unexpectedly (exit code ${code}); stopping the demo\n`);
      void stop(1);
    }
  });
  await waitUntilReady(`${localBase(config)}/health/ready`, server, 'gatehouse');

  const example = start(['examples/web-sso/server.ts'], { ...process.env, ISSUER: config.issuer, CLIENT_ID: demo.clientId, CLIENT_SECRET: demo.clientSecret, PORT: String(demoPort) }, 'web-sso');
  children.push(example);
  example.once('exit', (code) => {
    if (!stopping) {
      process.stderr.write(`the web SSO example stopped unexpectedly (exit code ${code}); stopping the demo\n`);
      void stop(1);
    }
  });
  await waitUntilReady(`${origin}/`, example, 'the web SSO example');

  const rule = '─'.repeat(64);
  process.stdout.write(
    [
      '',
      rule,
      '  gatehouse demo is running. Open the web SSO example and click "Log in":',
      '',
      `    Open:      ${origin}/`,
      `    Username:  ${DEMO_USERNAME}`,
      `    Password:  ${demo.password}`,
      '',
      `  gatehouse:  ${config.issuer}  (client_id ${demo.clientId})`,
      '  Stop both with Ctrl-C.',
      rule,
      '',
    ].join('\n'),
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`demo: ${(error as Error).message}\n`);
  void stop(1);
});
