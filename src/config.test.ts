import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { ConfigError, configurationDocs, loadConfig, storeDescription } from './config.ts';

/** The installation folder: where package.json is. */
const INSTALL = resolve(import.meta.dirname, '..');

test('defaults: SQLite file in the data folder of the installation, issuer derived from host and port', () => {
  const config = loadConfig({});
  assert.equal(config.host, '127.0.0.1');
  assert.equal(config.port, 8080);
  assert.equal(config.issuer, 'http://127.0.0.1:8080/uas');
  assert.equal(config.home, join(INSTALL, 'data'));
  assert.equal(config.databaseUrl, `sqlite:${join(INSTALL, 'data', 'gatehouse.db')}`);
  assert.equal(config.sqlitePath, join(INSTALL, 'data', 'gatehouse.db'));
  assert.equal(config.identityRestPrefix, 'customerid-rest');
  assert.equal(config.legacyRestPrefix, 'eidm2');
  assert.equal(config.secureCookies, false);
  assert.equal(config.apiUsername, undefined);
});

test('the default store does not depend on the current directory (issue 11 item 3)', () => {
  const here = process.cwd();
  try {
    process.chdir('/tmp');
    assert.equal(loadConfig({}).sqlitePath, join(INSTALL, 'data', 'gatehouse.db'));
    // GATEHOUSE_HOME moves it; a relative home counts from the current directory, as any relative path.
    assert.equal(loadConfig({ GATEHOUSE_HOME: '/var/lib/gatehouse' }).sqlitePath, '/var/lib/gatehouse/gatehouse.db');
    assert.equal(loadConfig({ GATEHOUSE_HOME: 'gh' }).sqlitePath, '/tmp/gh/gatehouse.db');
    // An explicit URL wins over the home.
    assert.equal(loadConfig({ GATEHOUSE_HOME: '/var/lib/gatehouse', GATEHOUSE_DATABASE_URL: 'sqlite:/srv/x.db' }).sqlitePath, '/srv/x.db');
  } finally {
    process.chdir(here);
  }
});

test('storeDescription names the store without a password', () => {
  assert.equal(storeDescription(loadConfig({ GATEHOUSE_DATABASE_URL: 'sqlite:/srv/gatehouse.db' })), 'SQLite /srv/gatehouse.db');
  assert.equal(
    storeDescription(loadConfig({ GATEHOUSE_DATABASE_URL: 'postgres://gatehouse:s3cret@db.example:5432/gatehouse?sslmode=require&sslpassword=x&options=-c%20search_path%3Dgh' })),
    'PostgreSQL postgres://gatehouse@db.example:5432/gatehouse?sslmode=require&options=-c+search_path%3Dgh',
  );
});

test('an https issuer makes cookies Secure', () => {
  assert.equal(loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas' }).secureCookies, true);
});

test('an invalid value names its variable', () => {
  const cases: Record<string, string> = {
    GATEHOUSE_PORT: '70000',
    GATEHOUSE_ISSUER: 'https://sso.example.com/uas/',
    GATEHOUSE_DATABASE_URL: 'mysql://x',
    GATEHOUSE_LOG_LEVEL: 'loud',
    GATEHOUSE_CODE_TTL: '-1',
    GATEHOUSE_KEY_ENCRYPTION_KEY: 'short',
    GATEHOUSE_IDENTITY_REST_PREFIX: 'a/b',
  };
  for (const [variable, value] of Object.entries(cases)) {
    assert.throws(() => loadConfig({ [variable]: value }), (error: unknown) => error instanceof ConfigError && error.variable === variable && error.message.startsWith(variable), variable);
  }
});

test('client timeouts: the documented defaults (docs/http-hardening.md), and headers within the request', () => {
  const config = loadConfig({});
  assert.deepEqual([config.headersTimeout, config.bodyTimeout, config.requestTimeout, config.shutdownTimeout], [60, 60, 300, 10]);
  assert.throws(
    () => loadConfig({ GATEHOUSE_HEADERS_TIMEOUT: '120', GATEHOUSE_REQUEST_TIMEOUT: '60' }),
    (error: unknown) => error instanceof ConfigError && error.variable === 'GATEHOUSE_HEADERS_TIMEOUT',
  );
});

test('the API account needs both username and password', () => {
  assert.throws(() => loadConfig({ GATEHOUSE_API_USERNAME: 'api' }), /GATEHOUSE_API_PASSWORD/);
  const config = loadConfig({ GATEHOUSE_API_USERNAME: 'api', GATEHOUSE_API_PASSWORD: 'secret' });
  assert.equal(config.apiUsername, 'api');
});

test('docs/configuration.md is up to date with src/config.ts (run `npm run docs:config`)', () => {
  const onDisk = readFileSync(new URL('../docs/configuration.md', import.meta.url), 'utf8');
  assert.equal(onDisk, configurationDocs());
});
