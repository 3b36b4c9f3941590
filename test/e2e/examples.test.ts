/**
 * The examples in examples/, run as their READMEs say against a real gatehouse: the clients and
 * users are registered with the README's CLI commands (run as child processes; each command is
 * also checked to appear verbatim in its README), the examples run as child processes with the
 * README's environment (only the issuer and the ports differ), and they are driven end to end —
 * the web application in Chromium, the native app's login over HTTP like a browser without
 * JavaScript.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, loginThroughForm } from '../helpers/fixtures.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';
import { bash, NPX_GATEHOUSE } from '../helpers/shell.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/gatehouse.js');
const CHROMIUM = '/usr/bin/chromium';
const noBrowser = existsSync(CHROMIUM) ? false : `${CHROMIUM} is missing: install it with \`apt-get install -y chromium\` to run the web SSO example in a browser`;
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

// The README's commands, as argument lists; the README's own origins are the defaults.
const ALICE = { username: 'alice', password: 'correct horse battery staple' };
const BOB = { username: 'bob', password: 'another horse battery staple' };
const aliceArgs = ['user', 'create', '--username', 'alice', '--password-stdin', '--email', 'alice@example.com', '--given-name', 'Alice', '--family-name', 'Example'];
const bobArgs = ['user', 'create', '--username', 'bob', '--password-stdin', '--email', 'bob@example.com', '--given-name', 'Bob', '--family-name', 'Example'];
const webClientArgs = (origin = 'http://127.0.0.1:3000') => ['client', 'create', '--name', 'Web SSO example', '--redirect-uri', `${origin}/callback`, '--post-logout-redirect-uri', `${origin}/`, '--json'];
const resourceServerArgs = ['client', 'create', '--name', 'Resource server example', '--resource-server', '--json'];
const nativeClientArgs = (aud: string) => ['client', 'create', '--name', 'Native app example', '--redirect-uri', 'http://127.0.0.1/callback', '--application-type', 'native', '--token-endpoint-auth-method', 'none', '--code-challenge-method', 'S256', '--aud', aud, '--json'];

/** The command line as a README writes it: arguments with spaces in double quotes. */
function shell(args: string[]): string {
  return args.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `"${arg}"`)).join(' ');
}

function assertInReadme(example: string, line: string): void {
  const readme = readFileSync(join(ROOT, 'examples', example, 'README.md'), 'utf8');
  assert.ok(readme.includes(line), `examples/${example}/README.md should contain:\n${line}`);
}

const userCommand = (args: string[], password: string) => `printf '%s\\n' '${password}' | npx gatehouse ${shell(args)}`;
const clientCommand = (args: string[]) => `client=$(npx gatehouse ${shell(args)})`;

/** A child process with its output kept for assertions and diagnostics. */
interface Child {
  process: ChildProcessWithoutNullStreams;
  stdout(): string;
  /** stdout and stderr, labelled, for failure messages. */
  output(): string;
  /** Resolves with the first match of `pattern` in stdout; rejects if the process exits first or on timeout. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

const children = new Set<ChildProcessWithoutNullStreams>();

function spawnChild(args: string[], env: Record<string, string>, input?: string): Child {
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  children.add(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(input ?? '');
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const output = () => `--- stdout\n${stdout}--- stderr\n${stderr}`;
  return {
    process: child,
    stdout: () => stdout,
    output,
    exited,
    waitFor(pattern, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const match = pattern.exec(stdout);
          if (match) {
            done();
            resolve(match);
          }
        };
        const fail = (why: string) => {
          done();
          reject(new Error(`${why} while waiting for ${pattern}\n${output()}`));
        };
        const onExit = () => setImmediate(() => (pattern.exec(stdout) ? check() : fail('the process exited')));
        const timer = setTimeout(() => fail('timed out'), timeoutMs);
        const done = () => {
          clearTimeout(timer);
          child.stdout.off('data', check);
          child.off('close', onExit);
        };
        child.stdout.on('data', check);
        child.on('close', onExit);
        check();
      });
    },
  };
}

async function stopAll(): Promise<void> {
  await Promise.all(
    [...children].map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
      await exited;
      clearTimeout(timer);
    }),
  );
}

describe('the examples against a real gatehouse on sqlite', () => {
  let server: RunningServer;
  let browser: Browser | undefined;
  const users: Record<string, string> = {};

  /** Runs `gatehouse …` (what `npx gatehouse` runs) on the test server's store; returns its JSON (`--json` is added to the README's `user create`, which prints text). */
  async function gatehouse(args: string[], input?: string): Promise<Record<string, unknown>> {
    const run = spawnChild([BIN, ...args, ...(args.includes('--json') ? [] : ['--json'])], { GATEHOUSE_DATABASE_URL: server.database.url, GATEHOUSE_LOG_LEVEL: 'silent' }, input);
    const code = await run.exited;
    assert.equal(code, 0, `gatehouse ${args.join(' ')}\n${run.output()}`);
    return JSON.parse(run.stdout()) as Record<string, unknown>;
  }

  before(async () => {
    server = await startServer(sqlite);
    // The users of the READMEs, created with their commands (password on stdin, as printf gives it).
    assertInReadme('web-sso', userCommand(aliceArgs, ALICE.password));
    assertInReadme('native-app', userCommand(bobArgs, BOB.password));
    const [alice, bob] = await Promise.all([gatehouse(aliceArgs, `${ALICE.password}\n`), gatehouse(bobArgs, `${BOB.password}\n`)]);
    users.alice = alice!.id as string;
    users.bob = bob!.id as string;
  });

  after(async () => {
    await stopAll();
    await browser?.close();
    await server?.close();
  });

  test('web-sso: log in through the real login form in Chromium, see the ID token and UserInfo claims, log out', { skip: noBrowser, timeout: 90_000 }, async () => {
    assertInReadme('web-sso', clientCommand(webClientArgs()));
    assertInReadme('web-sso', 'node examples/web-sso/server.ts');
    const port = await freePort();
    const origin = `http://127.0.0.1:${port}`;
    const client = await gatehouse(webClientArgs(origin));
    const app = spawnChild(['examples/web-sso/server.ts'], { ISSUER: server.issuer, CLIENT_ID: client.client_id as string, CLIENT_SECRET: client.client_secret as string, PORT: String(port) });
    await app.waitFor(/listening on/);

    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('response', (response) => {
      if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${response.url()}`);
    });
    try {
      await page.goto(`${origin}/`);
      await page.getByRole('link', { name: 'Log in' }).click();
      await page.getByLabel('Username').fill(ALICE.username);
      await page.getByLabel('Password').fill(ALICE.password);
      await Promise.all([page.waitForURL(`${origin}/`), page.getByRole('button', { name: 'Sign in', exact: true }).click()]);

      const authorization = new URL(requests.find((url) => url.startsWith(`${server.issuer}/oauth2/authorization?`))!);
      assert.equal(authorization.searchParams.get('redirect_uri'), `${origin}/callback`);
      assert.equal(authorization.searchParams.get('code_challenge_method'), 'S256');
      assert.ok(authorization.searchParams.get('state') && authorization.searchParams.get('nonce'), 'state and nonce are sent');

      const idToken = JSON.parse(await page.locator('#id-token-claims').innerText()) as Record<string, unknown>;
      assert.equal(idToken.iss, server.issuer);
      assert.equal(idToken.aud, client.client_id);
      assert.equal(idToken.sub, users.alice);
      assert.deepEqual(idToken.amr, ['pwd']);
      assert.equal(typeof idToken.auth_time, 'number');
      assert.ok(Math.abs((idToken.auth_time as number) - Date.now() / 1000) < 120, 'auth_time is in seconds, about now');
      assert.match(idToken.session_index as string, /.+/);
      assert.equal(idToken.nonce, authorization.searchParams.get('nonce'));
      assert.equal(await page.locator('#claim-session_index').innerText(), idToken.session_index);
      assert.equal(await page.locator('#claim-amr').innerText(), '["pwd"]');

      const userinfo = JSON.parse(await page.locator('#userinfo-claims').innerText()) as Record<string, unknown>;
      assert.equal(userinfo.sub, users.alice);
      assert.equal(userinfo.session_index, idToken.session_index);
      assert.equal(userinfo.preferred_username, 'alice');
      assert.equal(userinfo.email, 'alice@example.com');
      assert.equal(userinfo.name, 'Alice Example');

      // The same access token fetches UserInfo again while the SSO session lives.
      await page.getByRole('button', { name: 'Fetch UserInfo again' }).click();
      await page.locator('#userinfo-claims').waitFor();
      assert.equal(await page.locator('#userinfo-error').count(), 0, 'the token is still accepted');
      assert.equal((JSON.parse(await page.locator('#userinfo-claims').innerText()) as Record<string, unknown>).sub, users.alice);

      await page.getByRole('button', { name: 'Log out' }).click();
      await page.getByText('You are not signed in.').waitFor();
      assert.equal(page.url(), `${origin}/`);
      const logout = new URL(requests.find((url) => url.startsWith(`${server.issuer}/oauth2/logout?`))!);
      assert.equal(logout.searchParams.get('post_logout_redirect_uri'), `${origin}/`);
      assert.ok(logout.searchParams.get('id_token_hint'), 'the ID token is sent as id_token_hint');

      // The SSO session ended: logging in again asks for the password instead of signing in silently.
      await page.getByRole('link', { name: 'Log in' }).click();
      await page.getByLabel('Password').waitFor();
      assert.ok(page.url().startsWith(server.url), 'the login form of gatehouse is shown again');
      assert.deepEqual(problems, [], 'no failed requests along the way');
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${app.output()}`, { cause: error });
    } finally {
      await context.close();
    }
  });

  test('native-app and resource-server: loopback login with PKCE, the API greets by introspection, refuses a garbage token and a token meant for another API', { timeout: 60_000 }, async () => {
    assertInReadme('resource-server', clientCommand(resourceServerArgs));
    assertInReadme('native-app', clientCommand(resourceServerArgs));
    assertInReadme('native-app', clientCommand(nativeClientArgs('$RESOURCE_SERVER_CLIENT_ID')));
    assertInReadme('resource-server', 'node examples/resource-server/server.ts');
    assertInReadme('native-app', 'node examples/native-app/app.ts');

    const rsPort = await freePort();
    const resourceServerUrl = `http://127.0.0.1:${rsPort}/hello`;
    const rsClient = await gatehouse(resourceServerArgs);
    const resourceServer = spawnChild(['examples/resource-server/server.ts'], { ISSUER: server.issuer, CLIENT_ID: rsClient.client_id as string, CLIENT_SECRET: rsClient.client_secret as string, PORT: String(rsPort) });
    await resourceServer.waitFor(/listening on/);

    // The README's line that finds the resource server's client_id, run as written (`npx gatehouse` is this checkout's command).
    const lookup = /^export RESOURCE_SERVER_CLIENT_ID=.*$/m.exec(readFileSync(join(ROOT, 'examples/native-app/README.md'), 'utf8'))?.[0];
    assert.ok(lookup, 'the native app README exports RESOURCE_SERVER_CLIENT_ID');
    const found = await bash(`${NPX_GATEHOUSE}${lookup}\nprintf '%s' "$RESOURCE_SERVER_CLIENT_ID"`, ROOT, { GATEHOUSE_DATABASE_URL: server.database.url, GATEHOUSE_LOG_LEVEL: 'silent' });
    assert.equal(found.code, 0, found.stderr);
    assert.equal(found.stdout, rsClient.client_id, 'the README finds the resource server it registered');

    const nativeClient = await gatehouse(nativeClientArgs(rsClient.client_id as string));
    assert.equal(nativeClient.client_secret, undefined, 'a public client has no secret');
    const app = spawnChild(['examples/native-app/app.ts'], { ISSUER: server.issuer, CLIENT_ID: nativeClient.client_id as string, RESOURCE_SERVER_CLIENT_ID: rsClient.client_id as string, RESOURCE_SERVER_URL: resourceServerUrl, NO_BROWSER: '1' });
    try {
      const [, printed] = await app.waitFor(/^ {2}(http:\/\/\S+)$/m);
      const authorizationUrl = new URL(printed!);
      assert.equal(`${authorizationUrl.origin}${authorizationUrl.pathname}`, `${server.issuer}/oauth2/authorization`);
      const redirectUri = authorizationUrl.searchParams.get('redirect_uri')!;
      assert.match(redirectUri, /^http:\/\/127\.0\.0\.1:\d+\/callback$/, 'a loopback redirect URI with an ephemeral port');
      assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');

      // The browser's part, over HTTP: the login form, then the redirect to the app's loopback listener.
      const done = await loginThroughForm({ baseUrl: server.url, jar: new CookieJar() }, Object.fromEntries(authorizationUrl.searchParams), BOB);
      const location = done.headers.get('location') ?? '';
      assert.ok(location.startsWith(`${redirectUri}?`), `redirected to the loopback listener, got ${done.status} ${location}`);
      const landed = await fetch(location);
      assert.equal(landed.status, 200);
      assert.match(await landed.text(), /^Signed in\./);

      assert.equal(await app.exited, 0, app.output());
      const [, greetingJson] = /Resource server answered 200:\n(.+)\n/.exec(app.stdout()) ?? [];
      assert.ok(greetingJson, `the app prints the resource server's answer\n${app.output()}`);
      const greeting = JSON.parse(greetingJson) as Record<string, unknown>;
      assert.equal(greeting.message, 'Hello, bob!');
      assert.equal(greeting.sub, users.bob);
      assert.equal(greeting.client_id, nativeClient.client_id);
      assert.deepEqual((greeting.scope as string).split(' ').sort(), ['openid', 'profile', rsClient.client_id as string].sort());
      assert.match(greeting.session_index as string, /.+/);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${app.output()}\n--- resource server\n${resourceServer.output()}`, { cause: error });
    }

    const garbage = await fetch(resourceServerUrl, { headers: { authorization: 'Bearer this-is-not-a-token' } });
    assert.equal(garbage.status, 401);
    assert.match(garbage.headers.get('www-authenticate') ?? '', /^Bearer error="invalid_token"/);
    assert.deepEqual(await garbage.json(), { error: 'invalid_token' });

    const missing = await fetch(resourceServerUrl);
    assert.equal(missing.status, 401);
    assert.equal(missing.headers.get('www-authenticate'), 'Bearer realm="resource-server-example"');

    // Active tokens meant for another resource server, or for none, are refused: the audience is checked (issue 22 item 11).
    const otherApi = await gatehouse(['client', 'create', '--name', 'Another API', '--resource-server', '--json']);
    const caller = await gatehouse(['client', 'create', '--name', 'Machine caller', '--grant-type', 'client_credentials', '--aud', otherApi.client_id as string, '--json']);
    const tokenFor = async (scope: string) => {
      const body = new URLSearchParams({ grant_type: 'client_credentials', ...(scope === '' ? {} : { scope }) });
      const auth = `Basic ${Buffer.from(`${caller.client_id as string}:${caller.client_secret as string}`).toString('base64')}`;
      const answer = await fetch(`${server.issuer}/oauth2/token`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' }, body });
      assert.equal(answer.status, 200);
      return ((await answer.json()) as { access_token: string }).access_token;
    };
    for (const scope of [otherApi.client_id as string, '']) {
      const refused = await fetch(resourceServerUrl, { headers: { authorization: `Bearer ${await tokenFor(scope)}` } });
      assert.equal(refused.status, 401, `a token for ${scope || 'no resource server'}`);
      assert.equal(refused.headers.get('www-authenticate'), 'Bearer error="invalid_token", error_description="The access token is not active or not meant for this resource server"');
    }
  });
});
