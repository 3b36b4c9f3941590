/**
 * Login-page theming (issue 14 item 5, docs/theming.md): the example theme (examples/theme) on
 * the pages in their three displays and three languages, its files served under
 * `<issuer>/theme/` with the right types, headers and caching and nothing else of the disk
 * reachable; invalid themes stopping start-up with the file and field named; the client's logo
 * and localized name; the console's preview; and, without a theme, pages byte for byte as before
 * (test/http/theming-baseline/, rendered before theming existed).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import type { Client } from '../../src/domain/client.ts';
import { renderThemePreview } from '../../src/http/interaction/theme-preview.ts';
import { configuredTheme, loadTheme, parseCssColor } from '../../src/http/interaction/theme.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, createTestClient } from '../helpers/fixtures.ts';
import { send } from '../helpers/raw-http.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'theme');
const BASELINE = join(import.meta.dirname, 'theming-baseline');
const file = (name: string) => readFileSync(join(EXAMPLE, name));

/** The page with its per-request CSRF token replaced, as the baseline files were written. */
const normalized = (html: string) => html.replace(/name="csrf_token" value="[^"]*"/g, 'name="csrf_token" value="CSRF"');

/** A copy of the example theme to break, in a temporary folder. */
function brokenTheme(change: (dir: string, json: Record<string, unknown>) => void): string {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-theme-'));
  cpSync(EXAMPLE, dir, { recursive: true });
  const json = JSON.parse(readFileSync(join(dir, 'theme.json'), 'utf8')) as Record<string, unknown>;
  change(dir, json);
  writeFileSync(join(dir, 'theme.json'), JSON.stringify(json));
  return dir;
}

/** The ConfigError configuredTheme (what the server and `gatehouse theme check` call) throws for the theme in `dir`. */
function refusal(dir: string): string {
  try {
    configuredTheme(loadConfig({ GATEHOUSE_THEME_DIR: dir }));
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    assert.equal(error.variable, 'GATEHOUSE_THEME_DIR');
    return error.message;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.fail('the theme was accepted');
}

for (const db of DATABASES) {
  describe(`a themed gatehouse on ${db.name}`, () => {
    let server: RunningServer;
    let client: Client;
    const login = async (extra: Record<string, string> = {}) => {
      const response = await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's', ...extra }));
      assert.equal(response.status, 200);
      return { html: await response.text(), csp: response.headers.get('content-security-policy') ?? '' };
    };

    before(async () => {
      server = await startServer(db, { env: { GATEHOUSE_THEME_DIR: EXAMPLE } });
      ({ client } = await createTestClient(server.gatehouse.store, {
        name: 'Library <&> "app"',
        metadata: { 'client_name#fi': 'Kirjasto', 'client_name#sv': 'Biblioteket', logo_uri: 'https://cdn.example.test/logo.png', 'logo_uri#fi': 'https://cdn.example.test/logo-fi.png' },
      }));
    });
    after(async () => server.close());

    test('each display shows the product name, its logo and the theme stylesheets after login.css, under the strict policy', async () => {
      for (const display of ['page', 'popup', 'touch']) {
        const { html, csp } = await login({ display });
        assert.match(html, new RegExp(`<body class="display-${display}">`));
        assert.match(html, /<title>Sign in with your library card – Northwind Library<\/title>/);
        assert.match(html, /<p class="brand-name">Northwind Library<\/p>/);
        assert.match(html, /<img class="brand-logo" src="\/uas\/theme\/logo.svg" alt="">/);
        const sheets = [...html.matchAll(/<link rel="stylesheet" href="([^"]+)">/g)].map((m) => m[1]);
        assert.deepEqual(sheets, ['/uas/assets/login.css', '/uas/theme/theme.css', '/uas/theme/custom.css'], display);
        assert.match(html, /<link rel="icon" href="\/uas\/theme\/favicon.svg">/);
        // No inline style or script; the only scripts are the passkey ceremonies' files (issue 24), under script-src 'self'.
        assert.doesNotMatch(html, /<style|style=|<script\b[^>]*>[^<]/);
        assert.match(csp, /style-src 'self'(;|$)/);
        assert.match(csp, /script-src 'self';/);
        assert.doesNotMatch(csp, /unsafe-inline/);
      }
    });

    test('the theme’s texts win in en, fi (texts/fi.json) and sv; the catalogue fills in the rest', async () => {
      const en = (await login({ ui_locales: 'en' })).html;
      assert.match(en, /<label for="username">Library card number<\/label>/);
      assert.match(en, /<label for="password">PIN<\/label>/);
      assert.match(en, /<h1>Sign in with your library card<\/h1>/);
      assert.match(en, /<button type="submit">Sign in<\/button>/, 'not overridden: the built-in text');
      const fi = (await login({ ui_locales: 'fi' })).html;
      assert.match(fi, /<label for="username">Kirjastokortin numero<\/label>/);
      assert.match(fi, /<h1>Kirjaudu kirjastokortilla<\/h1>/);
      assert.match(fi, /<button type="submit">Kirjaudu<\/button>/);
      const sv = (await login({ ui_locales: 'sv' })).html;
      assert.match(sv, /<label for="username">Bibliotekskortets nummer<\/label>/);
      assert.match(sv, /<label for="password">PIN-kod<\/label>/);
      assert.match(sv, /<title>Logga in med ditt bibliotekskort – Northwind Library<\/title>/);
      // A group text (signInErrors) from texts/fi.json, on the error page.
      const error = await browse(`${server.url}/uas/oauth2/authorization?client_id=unknown&ui_locales=fi`);
      const errorHtml = await error.text();
      assert.equal(error.status, 400);
      assert.match(errorHtml, /<p class="brand-name">Northwind Library<\/p>/);
      assert.match(errorHtml, /<link rel="stylesheet" href="\/uas\/theme\/theme.css">/);
    });

    test('the client’s logo (logo_uri#<tag> first) and name (client_name#<tag>) in the page’s language, escaped', async () => {
      const en = await login({ ui_locales: 'en' });
      assert.match(en.html, /<img class="logo" src="https:\/\/cdn.example.test\/logo.png" alt="Library &lt;&amp;&gt; &quot;app&quot;" referrerpolicy="no-referrer">/);
      assert.match(en.html, /<strong>Library &lt;&amp;&gt; &quot;app&quot;<\/strong>/);
      assert.match(en.csp, /img-src 'self' https:\/\/cdn.example.test(;|$)/);
      const fi = await login({ ui_locales: 'fi', display: 'touch' });
      assert.match(fi.html, /<img class="logo" src="https:\/\/cdn.example.test\/logo-fi.png" alt="Kirjasto" referrerpolicy="no-referrer">/);
      assert.match(fi.html, /<strong>Kirjasto<\/strong>/);
      const sv = await login({ ui_locales: 'sv' });
      assert.match(sv.html, /src="https:\/\/cdn.example.test\/logo.png" alt="Biblioteket"/, 'no logo_uri#sv: the untagged logo');
      assert.match(sv.html, /<strong>Biblioteket<\/strong>/);
    });

    test('the files are served with their types, nosniff, an ETag and a cache lifetime; 304 on a match', async () => {
      const expected = [
        ['theme.css', 'text/css; charset=utf-8', undefined],
        ['custom.css', 'text/css; charset=utf-8', file('custom.css')],
        ['logo.svg', 'image/svg+xml', file('logo.svg')],
        ['favicon.svg', 'image/svg+xml', file('favicon.svg')],
      ] as const;
      for (const [name, type, body] of expected) {
        const response = await fetch(`${server.url}/uas/theme/${name}`);
        assert.equal(response.status, 200, name);
        assert.equal(response.headers.get('content-type'), type, name);
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
        assert.equal(response.headers.get('cache-control'), 'public, max-age=300');
        const etag = response.headers.get('etag')!;
        assert.match(etag, /^"[A-Za-z0-9_-]{27}"$/);
        const bytes = Buffer.from(await response.arrayBuffer());
        if (body !== undefined) assert.ok(bytes.equals(body), `${name} is the file as it is`);
        if (type === 'image/svg+xml') assert.equal(response.headers.get('content-security-policy'), "default-src 'none'; style-src 'unsafe-inline'");
        const again = await fetch(`${server.url}/uas/theme/${name}`, { headers: { 'if-none-match': `W/"x", ${etag}` } });
        assert.equal(again.status, 304, name);
        assert.equal((await again.arrayBuffer()).byteLength, 0);
        assert.equal((await fetch(`${server.url}/uas/theme/${name}`, { method: 'HEAD' })).headers.get('etag'), etag);
      }
      const css = await (await fetch(`${server.url}/uas/theme/theme.css`)).text();
      assert.match(css, /--gh-primary: #0b6e4f;/);
      assert.match(css, /--gh-error: #9b1c1c;/, 'rgb() written back as hex');
      // Only custom properties whose values are canonical colours or color-mix() of them.
      const declarations = css.slice(css.indexOf('{') + 1, css.lastIndexOf('}')).trim().split('\n');
      for (const line of declarations) assert.match(line.trim(), /^--gh-[a-z-]+: (#[0-9a-f]{6,8}|color-mix\(in srgb, #[0-9a-f]{6,8} \d+%, #[0-9a-f]{3,8}\));$/);
      assert.equal(css.split('{').length, 2);
    });

    test('nothing but the named files: traversal and other names of the folder are 404', async () => {
      const port = Number(new URL(server.url).port);
      const targets = [
        '/uas/theme/../config',
        '/uas/theme/../../package.json',
        '/uas/theme/..%2f..%2fpackage.json',
        '/uas/theme/%2e%2e%2fconfig',
        '/uas/theme/%2E%2E/%2E%2E/package.json',
        '/uas/theme/..%5c..%5cpackage.json',
        '/uas/theme/theme.json',
        '/uas/theme/texts%2ffi.json',
        '/uas/theme/texts/fi.json',
        '/uas/theme/logo.svg%00',
        '/uas/theme/LOGO.SVG',
        '/uas/theme/',
        '/uas/theme/constructor',
        '/uas/theme/__proto__',
      ];
      for (const target of targets) {
        const response = await send(port, { method: 'GET', target });
        assert.ok(response.status === 404 || response.status === 400, `${target}: ${response.status}`);
        assert.doesNotMatch(response.body, /product_name|"name": "gatehouse"|Kirjastokortin/, target);
      }
    });
  });
}

describe('without a theme', () => {
  let server: RunningServer;
  let client: Client;
  before(async () => {
    server = await startServer(DATABASES[0]!);
    ({ client } = await createTestClient(server.gatehouse.store, { clientId: 'theming-baseline', name: 'Kirjasto & <Library>' }));
  });
  after(async () => server.close());

  test('the pages are byte for byte what they were before theming (three displays, en and fi, error and landing pages)', async () => {
    for (const display of ['page', 'popup', 'touch']) {
      for (const locale of ['en', 'fi']) {
        const response = await browse(authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's1', display, ui_locales: locale }));
        const html = normalized(await response.text());
        assert.equal(html, readFileSync(join(BASELINE, `login-${display}-${locale}.html`), 'utf8'), `login ${display} ${locale}`);
      }
    }
    assert.equal(normalized(await (await browse(`${server.url}/uas/oauth2/authorization?client_id=unknown&ui_locales=sv`)).text()), readFileSync(join(BASELINE, 'error-sv.html'), 'utf8'));
    assert.equal(await (await browse(`${server.url}/uas`)).text(), readFileSync(join(BASELINE, 'landing-en.html'), 'utf8'));
  });

  test('no theme route exists', async () => {
    assert.equal((await fetch(`${server.url}/uas/theme/theme.css`)).status, 404);
  });
});

describe('an invalid theme stops start-up, naming the file and the field', () => {
  test('a theme folder named in the config file is reported with that file, as any setting from it is', () => {
    const dir = brokenTheme((_dir, json) => (json.colors = { link: 'red' }));
    const file = join(dir, 'gatehouse.json');
    writeFileSync(file, JSON.stringify({ GATEHOUSE_THEME_DIR: dir }));
    try {
      const config = loadConfig({ GATEHOUSE_CONFIG: file });
      assert.throws(() => configuredTheme(config), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.equal(error.message, `GATEHOUSE_THEME_DIR: ${join(dir, 'theme.json')}: colors.link: "red" is not a colour gatehouse accepts: #rgb, #rrggbb, #rrggbbaa, rgb(…) or hsl(…) (in ${file})`);
        return true;
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a colour that could break out of its declaration, or that is not a colour', () => {
    assert.match(refusal(brokenTheme((_dir, json) => (json.colors = { primary: 'red;}body{background:url(//evil)' }))), /^GATEHOUSE_THEME_DIR: .*theme\.json: colors\.primary: "red;}body\{background:url\(\/\/evil\)" is not a colour/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.colors = { link: 'red' }))), /theme\.json: colors\.link: "red" is not a colour/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.colors = { text: 'rgb(1,2,3) !important' }))), /colors\.text: .* is not a colour/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.colors = { shadow: '#000' }))), /colors\.shadow: is not a theme colour/);
    for (const bad of ['red;}body{', '#abc;}body{', '#abcdef }', 'rgb(1,2,3) }', 'rgb(1,2,3);x', 'rgb(300,0,0)', 'url(x)', 'var(--x)', 'rgb(1,2,3)/**/', 'hsl(1,2,3)', '#abcd', '#12345', 'expression(alert(1))']) assert.equal(parseCssColor(bad), undefined, bad);
    for (const good of ['#abc', '#a1b2c3', '#a1b2c3d4', 'rgb(1, 2, 3)', 'rgb(1 2 3 / 50%)', 'rgba(1,2,3,0.5)', 'hsl(120deg 50% 40%)', 'HSL(120, 50%, 40%)']) assert.ok(parseCssColor(good), good);
  });

  test('colours whose text would be unreadable (WCAG 2.2 §1.4.3, 4.5:1)', () => {
    assert.match(refusal(brokenTheme((_dir, json) => (json.colors = { primary: '#0b6e4f', primary_text: '#2a8f6f' }))), /colors\.primary_text: its contrast with colors\.primary is \d\.\d\d:1; text needs at least 4\.5:1/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.colors = { text: '#bbbbbb' }))), /colors\.text: its contrast with colors\.surface/);
  });

  test('a missing, misnamed, oversized or mislabelled file', () => {
    assert.match(refusal(brokenTheme((dir) => rmSync(join(dir, 'logo.svg')))), /theme\.json: logo: the file .*logo\.svg does not exist/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.logo = '../logo.svg'))), /theme\.json: logo: must be the name of a file in the theme folder/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.css = '/etc/passwd'))), /theme\.json: css: must be the name of a file/);
    assert.match(refusal(brokenTheme((dir) => writeFileSync(join(dir, 'custom.css'), 'a{}'.repeat(90_000)))), /theme\.json: css: custom\.css is 270000 bytes; at most 262144 \(256 KiB\)/);
    assert.match(refusal(brokenTheme((dir) => writeFileSync(join(dir, 'logo.svg'), Buffer.alloc(600 * 1024, 0x20)))), /logo: logo\.svg is 614400 bytes; at most 524288/);
    assert.match(refusal(brokenTheme((dir, json) => { writeFileSync(join(dir, 'logo.png'), '<svg></svg>'); json.logo = 'logo.png'; })), /logo\.png: logo: is not a png file/);
    assert.match(refusal(brokenTheme((dir, json) => { writeFileSync(join(dir, 'logo.gif'), 'GIF89a'); json.logo = 'logo.gif'; })), /theme\.json: logo: logo\.gif: must be one of png, jpg, jpeg, webp, svg/);
    const noJson = brokenTheme(() => {});
    rmSync(join(noJson, 'theme.json'));
    assert.match(refusal(noJson), /theme\.json: file: is missing/);
    assert.match(refusal(join(tmpdir(), 'gatehouse-no-such-theme')), /gatehouse-no-such-theme: folder: is not a folder/);
  });

  test('an unknown text key, a lost or foreign placeholder, texts given twice, an unknown setting', () => {
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { en: { signInTitel: 'x' } }))), /theme\.json: texts\.en\.signInTitel: is not a text of the pages/);
    assert.match(refusal(brokenTheme((dir) => writeFileSync(join(dir, 'texts', 'fi.json'), JSON.stringify({ signInErrors: { nope: 'x' } })))), /fi\.json: signInErrors\.nope: is not a text of the pages/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { en: { tooManyAttempts: 'Slow down.' } }))), /texts\.en\.tooManyAttempts: must keep the placeholder \{wait\}/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { en: { username: 'Card {number}' } }))), /texts\.en\.username: has the placeholder \{number\}/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { fi: { username: 'Kortti' } }))), /theme\.json: texts\.fi: is also given by .*texts\/fi\.json/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { de: { username: 'Karte' } }))), /texts\.de: is not a locale/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { en: { username: 'Card\u0007' } }))), /texts\.en\.username: must be at most 2000 characters, without control characters/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.texts = { en: JSON.parse('{"__proto__": "x"}') as unknown }))), /texts\.en\.__proto__: is not a text/);
    assert.match(refusal(brokenTheme((_dir, json) => (json.logo_url = 'x'))), /theme\.json: logo_url: is not a theme setting/);
    assert.match(refusal(brokenTheme((_dir, json) => delete json.product_name)), /theme\.json: product_name: is required/);
  });

  test('the server process refuses to start and says why', () => {
    const dir = brokenTheme((_dir, json) => (json.colors = { primary: 'red;}body{' }));
    try {
      const run = spawnSync(process.execPath, [join(ROOT, 'src', 'main.ts')], { env: { ...process.env, GATEHOUSE_THEME_DIR: dir, GATEHOUSE_DATABASE_URL: 'sqlite::memory:', GATEHOUSE_PORT: '0', GATEHOUSE_WORKERS: '1' }, encoding: 'utf8', timeout: 30_000 });
      assert.notEqual(run.status, 0);
      assert.match(run.stderr, /invalid configuration: GATEHOUSE_THEME_DIR: .*theme\.json: colors\.primary: /);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the console’s theme preview', () => {
  test('renders the themed login page with a sample client, in each display and language, that cannot sign in', () => {
    const config = { issuerPath: '/uas', theme: loadTheme(EXAMPLE) };
    for (const display of ['page', 'popup', 'touch'] as const) {
      const { html, contentSecurityPolicy } = renderThemePreview({ config }, { display, locale: 'fi' });
      assert.match(html, /<p class="brand-name">Northwind Library<\/p>/);
      assert.match(html, /src="\/uas\/theme\/logo.svg"/);
      assert.match(html, /<link rel="stylesheet" href="\/uas\/theme\/theme.css">\n<link rel="stylesheet" href="\/uas\/theme\/custom.css">/);
      assert.match(html, /Kirjastokortin numero/);
      if (display !== 'popup') assert.match(html, /<strong>Esimerkkisovellus<\/strong>/);
      assert.match(html, /<button type="submit" disabled>/);
      assert.equal([...html.matchAll(/ disabled[ >]/g)].length, 3, 'both fields and the button are disabled');
      assert.doesNotMatch(html, /name="(client_id|redirect_uri|state)"/);
      assert.match(html, /action="#"/);
      assert.match(contentSecurityPolicy, /^default-src 'none'; style-src 'self'; img-src 'self'/);
    }
    const withError = renderThemePreview({ config }, { locale: 'sv', withError: true }).html;
    assert.match(withError, /<p class="message" role="alert" id="login-message">/);
    assert.match(withError, /Exempelapplikationen/);
    // Without a theme the preview is the built-in page.
    const plain = renderThemePreview({ config: { issuerPath: '/uas', theme: undefined } }).html;
    assert.doesNotMatch(plain, /brand|\/theme\//);
    assert.match(plain, /<title>Sign in<\/title>/);
  });

  test('a theme’s texts and product name are shown as text, never as markup', () => {
    const dir = brokenTheme((_dir, json) => {
      json.product_name = '<b>Acme</b> & "Co"';
      json.texts = { en: { signInTitle: '<script>alert(1)</script>', signInTo: '<img src=x onerror=alert(1)>' } };
    });
    try {
      const { html } = renderThemePreview({ config: { issuerPath: '/uas', theme: loadTheme(dir) } });
      assert.match(html, /<title>&lt;script&gt;alert\(1\)&lt;\/script&gt; – &lt;b&gt;Acme&lt;\/b&gt; &amp; &quot;Co&quot;<\/title>/);
      assert.match(html, /<h1>&lt;script&gt;alert\(1\)&lt;\/script&gt;<\/h1>/);
      assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
      assert.doesNotMatch(html, /<script|<b>|<img src=x/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
