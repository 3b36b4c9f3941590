/**
 * Back-Channel Logout 1.0 with a real relying party (issue 26, "Done when"; docs/logout.md): Apache
 * httpd with mod_auth_openidc from Debian protects two applications (two virtual hosts on two ports,
 * two gatehouse clients), each registered with `backchannel_logout_uri` = the module's redirect URI
 * with `?logout=backchannel`. Real Chromium signs in to app 1 and then, by single sign-on, to app 2;
 * it logs out of app 1 through the module (RP-initiated logout: the module sends the browser to
 * gatehouse's end_session_endpoint with its id_token_hint). Then the outbox sender runs, the module
 * receives and validates the logout tokens itself (signature against gatehouse's JWKS, iss, aud,
 * typ, events, iat, jti, sid — its own §2.6 code, not ours), and app 2's protected page sends the
 * browser back to gatehouse's sign-in page: its session ended. A third client registered a logout
 * URI but was never used: its receiver gets nothing.
 *
 * httpd runs as a foreground child of the test with a configuration of its own in a temporary
 * directory (ServerRoot, PidFile, ErrorLog, free ports); as root it serves as www-data, as any
 * other user as that user. Without /usr/sbin/apache2 and the module the suite is skipped with how
 * to install them (.ci/run installs them).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createUser } from '../../src/identity/users.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { registerClient } from '../../src/oauth/client-registration.ts';
import { AS_OPERATOR } from '../helpers/authority.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startLogoutReceiver, type LogoutReceiver } from '../helpers/logout-receiver.ts';
import { freePort, startServer, type RunningServer } from '../helpers/server.ts';

const CHROMIUM = '/usr/bin/chromium';
const APACHE = '/usr/sbin/apache2';
const MODULES = '/usr/lib/apache2/modules';
const missing = [CHROMIUM, APACHE, join(MODULES, 'mod_auth_openidc.so')].filter((path) => !existsSync(path));
const skip = missing.length === 0 ? false : `${missing.join(', ')} missing: install them with \`apt-get install -y chromium apache2 libapache2-mod-auth-openidc\``;
const PASSWORD = 'mod auth openidc password 1';

/** One protected application: a virtual host on its own port, and the gatehouse client it signs in with. */
interface App {
  name: string;
  port: number;
  origin: string;
  redirectUri: string;
  clientId: string;
  clientSecret: string;
}

/** The module's callback and control endpoint; must not be content (OIDCRedirectURI). */
const REDIRECT_PATH = '/protected/redirect_uri';

function virtualHost(app: App, issuer: string, root: string): string {
  return `
Listen 127.0.0.1:${app.port}
<VirtualHost 127.0.0.1:${app.port}>
  ServerName 127.0.0.1:${app.port}
  DocumentRoot "${root}/${app.name}"
  OIDCProviderMetadataURL ${issuer}/.well-known/openid-configuration
  OIDCClientID ${app.clientId}
  OIDCClientSecret ${app.clientSecret}
  OIDCRedirectURI ${app.redirectUri}
  OIDCCryptoPassphrase ${app.name}-passphrase-for-the-test-only
  OIDCScope "openid"
  OIDCPKCEMethod S256
  OIDCSSLValidateServer Off
  OIDCProviderTokenEndpointAuth client_secret_basic
  # Both applications are on 127.0.0.1: cookies do not tell ports apart, names do.
  OIDCCookie ${app.name}_session
  OIDCStateCookiePrefix ${app.name}_state_
  OIDCDefaultLoggedOutURL ${app.origin}/loggedout.html
  OIDCCacheType shm
  <Location /protected/>
    AuthType openid-connect
    Require valid-user
    # Every visit asks the server, never the browser's cache: the session is what is tested.
    Header always set Cache-Control no-store
  </Location>
</VirtualHost>
`;
}

/** httpd in the foreground with two applications; its error log is read on failure. */
async function startApache(dir: string, apps: App[], issuer: string): Promise<{ child: ChildProcess; log: () => string; stop: () => Promise<void> }> {
  for (const app of apps) {
    mkdirSync(join(dir, app.name, 'protected'), { recursive: true });
    writeFileSync(join(dir, app.name, 'protected', 'index.html'), `<!doctype html><html lang="en"><title>${app.name}</title><p id="app">protected page of ${app.name}</p></html>\n`);
    writeFileSync(join(dir, app.name, 'loggedout.html'), `<!doctype html><html lang="en"><title>logged out</title><p id="app">${app.name} logged out</p></html>\n`);
  }
  const load = ['mpm_event', 'authn_core', 'authz_core', 'authz_user', 'dir', 'mime', 'headers', 'auth_openidc'];
  const asRoot = process.getuid?.() === 0;
  const config = `
ServerRoot "${dir}"
DefaultRuntimeDir "${dir}"
PidFile "${dir}/httpd.pid"
ErrorLog "${dir}/error.log"
LogLevel warn auth_openidc:debug
${load.map((name) => `LoadModule ${name === 'auth_openidc' ? 'auth_openidc_module' : `${name}_module`} ${MODULES}/mod_${name}.so`).join('\n')}
${asRoot ? 'User www-data\nGroup www-data' : ''}
ServerName 127.0.0.1
StartServers 1
ServerLimit 1
ThreadsPerChild 25
MaxRequestWorkers 25
KeepAlive Off
TypesConfig /etc/mime.types
DirectoryIndex index.html
<Directory "${dir}">
  Require all granted
</Directory>
${apps.map((app) => virtualHost(app, issuer, dir)).join('\n')}
`;
  writeFileSync(join(dir, 'httpd.conf'), config);
  // As root httpd serves as www-data, which must read the documents.
  chmodSync(dir, 0o755);
  const child = spawn(APACHE, ['-f', join(dir, 'httpd.conf'), '-DFOREGROUND'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, APACHE_RUN_DIR: dir, APACHE_LOCK_DIR: dir } });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const log = () => `${output}\n${existsSync(join(dir, 'error.log')) ? readFileSync(join(dir, 'error.log'), 'utf8') : ''}`;
  // Ready when every port answers.
  for (let tries = 0; ; tries++) {
    const ready = await Promise.all(apps.map((app) => fetch(`${app.origin}/loggedout.html`).then((r) => r.ok, () => false)));
    if (ready.every(Boolean)) break;
    if (child.exitCode !== null || tries > 100) throw new Error(`httpd did not start:\n${log()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    child,
    log,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

// The module is the relying party under test; one database is enough for what gatehouse does (the other suites run both).
const db = DATABASES[0]!;

describe('mod_auth_openidc (Apache httpd) as two relying parties: back-channel logout ends the other application\'s session', { skip }, () => {
  let server: RunningServer;
  let apache: Awaited<ReturnType<typeof startApache>>;
  let browser: Browser;
  let third: LogoutReceiver;
  let dir: string;
  let apps: App[];
  let username: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-httpd-'));
    third = await startLogoutReceiver();
    // Back-channel logout URIs are http on loopback here: allowed only with GATEHOUSE_OUTBOUND_LOOPBACK (LO5).
    server = await startServer(db, { env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
    const { store } = server.gatehouse;
    const register = (metadata: Record<string, unknown>) => registerClient({ clients: store.clients, transaction: store.transaction, clock: systemClock, random: cryptoRandom }, metadata);
    apps = [];
    for (const name of ['app1', 'app2']) {
      const port = await freePort();
      const origin = `http://127.0.0.1:${port}`;
      const redirectUri = `${origin}${REDIRECT_PATH}`;
      const registered = await register({
        client_name: name,
        redirect_uris: [redirectUri],
        post_logout_redirect_uris: [`${origin}/loggedout.html`],
        backchannel_logout_uri: `${redirectUri}?logout=backchannel`,
        backchannel_logout_session_required: true,
      });
      apps.push({ name, port, origin, redirectUri, clientId: registered.client.clientId, clientSecret: registered.clientSecret! });
    }
    // The third application registered a logout URI, but the user never signs in to it.
    await register({ client_name: 'app3', redirect_uris: ['https://app3.example.com/cb'], backchannel_logout_uri: third.url('/app3') });
    username = `apache-${Date.now()}`;
    await createUser({ ...store, clock: systemClock, random: cryptoRandom }, { username, password: PASSWORD }, AS_OPERATOR);
    apache = await startApache(dir, apps, server.issuer);
    browser = await chromium.launch({ executablePath: CHROMIUM });
  });
  after(async () => {
    await browser?.close();
    await apache?.stop();
    await server?.close();
    await third?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** The protected page of `app` as the browser sees it: its text, or gatehouse's page it was sent to. */
  const visit = async (page: Page, app: App) => {
    await page.goto(`${app.origin}/protected/`);
    return page.url();
  };

  test('sign in to app 1 and (single sign-on) app 2, log out of app 1: app 2\'s session ends; app 3 hears nothing; each token is delivered once', async (t) => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const loginPage = `${server.url}/uas/`;
    try {
      // App 1: the module sends the browser to gatehouse, which asks for the password.
      assert.ok((await visit(page, apps[0]!)).startsWith(loginPage), page.url());
      await page.fill('input[name="username"]', username);
      await page.fill('input[name="password"]', PASSWORD);
      await Promise.all([page.waitForURL(`${apps[0]!.origin}/protected/`), page.click('button[type="submit"]')]);
      assert.equal(await page.textContent('#app'), 'protected page of app1');

      // App 2: single sign-on, no question.
      assert.equal(await visit(page, apps[1]!), `${apps[1]!.origin}/protected/`);
      assert.equal(await page.textContent('#app'), 'protected page of app2');

      // Log out of app 1 at the module: it ends its own session and sends the browser to
      // gatehouse's end_session_endpoint with its id_token_hint and the post-logout redirect.
      await page.goto(`${apps[0]!.redirectUri}?logout=${encodeURIComponent(`${apps[0]!.origin}/loggedout.html`)}`);
      await page.waitForURL(`${apps[0]!.origin}/loggedout.html`);
      assert.equal(await page.textContent('#app'), 'app1 logged out');

      // Until the sender runs, app 2 still has its own session: nothing was told yet.
      assert.equal(await visit(page, apps[1]!), `${apps[1]!.origin}/protected/`);

      const report = await server.gatehouse.outbox.sender.tick();
      assert.deepEqual(report, { delivered: 2, retried: 0, dead: 0, leaseLost: 0 }, apache.log());
      const messages = (await server.gatehouse.store.outbox.page({ limit: 10 })).filter((m) => m.channel === 'backchannel_logout');
      assert.deepEqual(messages.map((m) => [m.destination, m.status]).sort(), apps.map((app) => [`${app.redirectUri}?logout=backchannel`, 'delivered']).sort());
      // The module answered 2xx to both: each client's last delivery says so (LO13).
      const outcomes = await Promise.all(apps.map((app) => server.gatehouse.store.logoutDeliveries.get(app.clientId)));
      assert.deepEqual(outcomes.map((o) => [o?.status, o?.error]), [['delivered', undefined], ['delivered', undefined]]);

      // App 2's session is gone: its protected page sends the browser to gatehouse again, whose
      // own session ended too, so it asks for the password.
      assert.ok((await visit(page, apps[1]!)).startsWith(loginPage), `${page.url()}\n${apache.log()}`);
      assert.equal(await page.locator('input[name="password"]').count(), 1);
      assert.deepEqual(third.received, [], 'the application the user never used hears nothing');
      assert.deepEqual(await server.gatehouse.outbox.sender.tick(), { delivered: 0, retried: 0, dead: 0, leaseLost: 0 }, 'nothing twice');
    } catch (error) {
      t.diagnostic(apache.log());
      throw error;
    } finally {
      await context.close();
    }
  });
});
