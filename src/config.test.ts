import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { checkServingExposure, ConfigError, configurationDocs, installationFolder, loadConfig, NON_SETTING_VARIABLES, settings, storeDescription, unknownVariables, type Env } from './config.ts';

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

test('installed as a package, the installation folder is the one it was installed into, never its own folder under node_modules (issue 22 item 13)', () => {
  assert.equal(installationFolder('/home/me/gatehouse'), '/home/me/gatehouse');
  assert.equal(installationFolder('/srv/sso/node_modules/gatehouse'), '/srv/sso');
  // A nested install (a dependency of a dependency) or pnpm's store: the project, before the first node_modules.
  assert.equal(installationFolder('/srv/sso/node_modules/.pnpm/gatehouse@0.1.0/node_modules/gatehouse'), '/srv/sso');
  assert.equal(installationFolder('/node_modules/gatehouse'), '/');
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

test('GATEHOUSE_TRUSTED_PROXIES takes IP addresses and CIDR ranges, and refuses anything else by name', () => {
  assert.deepEqual(loadConfig({ GATEHOUSE_TRUSTED_PROXIES: '10.0.0.7, 10.0.0.0/8,::1, fd00::/8,192.168.1.0/32' }).trustedProxies, ['10.0.0.7', '10.0.0.0/8', '::1', 'fd00::/8', '192.168.1.0/32']);
  for (const bad of ['proxy.internal', 'loopback', '10.0.0.0/33', 'fd00::/129', '10.0.0.1:8080', '10.0.0.0/8/8', '10.0.0.0/', '10.0.0.0/x', 'fe80::1%eth0', '10.0.0.256']) {
    assert.throws(
      () => loadConfig({ GATEHOUSE_TRUSTED_PROXIES: `127.0.0.1, ${bad}` }),
      (error: unknown) => error instanceof ConfigError && error.message === `GATEHOUSE_TRUSTED_PROXIES: "${bad}" is not an IP address or a CIDR range (such as 10.0.0.7, 10.0.0.0/8 or fd00::/8)`,
      bad,
    );
  }
});

test('the issuer path: /uas by default, any routable path, none for a bare host; a path that cannot be served is refused', () => {
  assert.equal(loadConfig({}).issuerPath, '/uas');
  assert.equal(loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/auth' }).issuerPath, '/auth');
  assert.equal(loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/a/b-c_d.e~f' }).issuerPath, '/a/b-c_d.e~f');
  assert.equal(loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com' }).issuerPath, '');
  const refused: Record<string, RegExp> = {
    'https://sso.example.com/a%20b': /its path "\/a%20b" cannot be served/,
    'https://sso.example.com/a/../b': /its path "\/a\/\.\.\/b" cannot be served/,
    'https://sso.example.com/a/./b': /cannot be served/,
    'https://sso.example.com//a': /cannot be served/,
    'https://sso.example.com/:tenant': /cannot be served/,
    'https://sso.example.com/a*': /cannot be served/,
    'https://sso.example.com\\uas': /is read as "\/uas"/,
    'https://sso.example.com/customerid-rest': /starts with \/customerid-rest, which the identity API uses/,
    'https://sso.example.com/eidm2/uas': /starts with \/eidm2, which the identity API uses/,
    'https://sso.example.com/health': /starts with \/health, which the health checks use/,
    'https://sso.example.com/manage': /starts with \/manage, which the management API and console use/,
  };
  for (const [issuer, message] of Object.entries(refused)) {
    assert.throws(() => loadConfig({ GATEHOUSE_ISSUER: issuer }), (error: unknown) => error instanceof ConfigError && error.variable === 'GATEHOUSE_ISSUER' && message.test(error.message), issuer);
  }
  // A bare host serves /oauth2, /status, /assets: an identity API prefix may not be one of them.
  assert.throws(() => loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com', GATEHOUSE_IDENTITY_REST_PREFIX: 'oauth2' }), /an issuer without a path serves \/oauth2\//);
  assert.equal(loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/sso', GATEHOUSE_IDENTITY_REST_PREFIX: 'oauth2' }).issuerPath, '/sso');
});

describe('the configuration file (GATEHOUSE_CONFIG)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-config-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const refusal = (path: string, env: Record<string, string> = {}) => {
    try {
      loadConfig({ GATEHOUSE_CONFIG: path, ...env });
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.message;
    }
    assert.fail('the configuration was accepted');
  };

  test('YAML: keys are the variable names; numbers, booleans and a list as a sequence; null leaves a setting unset', () => {
    const path = file('a.yaml', ['GATEHOUSE_PORT: 9090', 'GATEHOUSE_THROTTLE: false', 'GATEHOUSE_TRUSTED_PROXIES: [10.0.0.0/8, "::1"]', 'GATEHOUSE_ISSUER: https://sso.example.com/auth', 'GATEHOUSE_ACR:', ''].join('\n'));
    const config = loadConfig({ GATEHOUSE_CONFIG: path });
    assert.deepEqual([config.port, config.throttle, config.trustedProxies, config.issuer, config.issuerPath, config.acr], [9090, false, ['10.0.0.0/8', '::1'], 'https://sso.example.com/auth', '/auth', undefined]);
  });

  test('JSON works the same; a variable set in the environment wins, an empty one does not', () => {
    const path = file('b.json', JSON.stringify({ GATEHOUSE_PORT: 9090, GATEHOUSE_HOST: '0.0.0.0' }));
    assert.deepEqual(pick(loadConfig({ GATEHOUSE_CONFIG: path })), [9090, '0.0.0.0']);
    assert.deepEqual(pick(loadConfig({ GATEHOUSE_CONFIG: path, GATEHOUSE_PORT: '7070' })), [7070, '0.0.0.0']);
    assert.deepEqual(pick(loadConfig({ GATEHOUSE_CONFIG: path, GATEHOUSE_PORT: '' })), [9090, '0.0.0.0']);
    function pick(config: ReturnType<typeof loadConfig>) {
      return [config.port, config.host];
    }
  });

  test('an unknown key is refused, naming it and the likely variable', () => {
    assert.equal(refusal(file('c.yaml', 'port: 9090\n')), `GATEHOUSE_CONFIG: ${dir}/c.yaml: unknown setting "port" (did you mean GATEHOUSE_PORT?); the keys are the variable names of docs/configuration.md`);
    assert.equal(refusal(file('d.json', '{"databaseUrl": "sqlite::memory:"}')), `GATEHOUSE_CONFIG: ${dir}/d.json: unknown setting "databaseUrl" (did you mean GATEHOUSE_DATABASE_URL?); the keys are the variable names of docs/configuration.md`);
    assert.equal(refusal(file('e2.yaml', 'GATEHOUSE_NOTHING_LIKE_IT: true\n')), `GATEHOUSE_CONFIG: ${dir}/e2.yaml: unknown setting "GATEHOUSE_NOTHING_LIKE_IT"; the keys are the variable names of docs/configuration.md`);
    assert.equal(refusal(file('e.yaml', 'GATEHOUSE_TRHOTTLE: true\n')), `GATEHOUSE_CONFIG: ${dir}/e.yaml: unknown setting "GATEHOUSE_TRHOTTLE" (did you mean GATEHOUSE_THROTTLE?); the keys are the variable names of docs/configuration.md`);
  });

  test('a bad value names its variable and the file; malformed files, nesting and GATEHOUSE_CONFIG itself are refused', () => {
    assert.equal(refusal(file('f.yaml', 'GATEHOUSE_PORT: 70000\n')), `GATEHOUSE_PORT: must be a whole number from 0 to 65535 (in ${dir}/f.yaml)`);
    assert.equal(refusal(file('g.yaml', 'GATEHOUSE_PORT: {a: 1}\n')), `GATEHOUSE_CONFIG: ${dir}/g.yaml: GATEHOUSE_PORT: must be a string, number or boolean`);
    assert.equal(refusal(file('h.yaml', 'GATEHOUSE_HOST: [a, b]\n')), `GATEHOUSE_CONFIG: ${dir}/h.yaml: GATEHOUSE_HOST: must be a string, number or boolean`);
    assert.equal(refusal(file('i.yaml', 'GATEHOUSE_CONFIG: other.yaml\n')), `GATEHOUSE_CONFIG: ${dir}/i.yaml: GATEHOUSE_CONFIG cannot be set inside the configuration file`);
    assert.equal(refusal(file('j.yaml', '- GATEHOUSE_PORT\n')), `GATEHOUSE_CONFIG: ${dir}/j.yaml: must be a mapping of setting names to values`);
    assert.match(refusal(file('k.yaml', 'GATEHOUSE_PORT: 1\nGATEHOUSE_PORT: 2\n')), /k\.yaml: is not valid YAML: .*unique/i);
    assert.match(refusal(file('l.json', '{"GATEHOUSE_PORT": ')), /l\.json: is not valid JSON: /);
    assert.equal(refusal(file('m.toml', 'x = 1\n')), `GATEHOUSE_CONFIG: ${dir}/m.toml: the file name must end in .yaml, .yml or .json`);
    assert.equal(refusal(join(dir, 'missing.yaml')), `GATEHOUSE_CONFIG: ${dir}/missing.yaml: cannot be read (ENOENT)`);
    // The environment does not rescue a bad file: it is refused as a whole.
    assert.match(refusal(file('n.yaml', 'port: 1\n'), { GATEHOUSE_PORT: '8080' }), /unknown setting "port"/);
  });
});

test('every row of the configuration table has four cells: a `|` inside a cell is escaped', () => {
  const rows = configurationDocs().split('\n').filter((line) => line.startsWith('| `GATEHOUSE_'));
  assert.equal(rows.length, Object.keys(settings).length);
  for (const row of rows) assert.equal(row.split(/(?<!\\)\|/).length, 6, row);
  assert.ok(rows.some((row) => row.includes('fatal \\| error')), 'the log level row escapes its |');
});

describe('what the server refuses to serve (issue 22 item 9, decisions D6)', () => {
  /** The line the server would print for `env`, or undefined when it starts. */
  const refusal = (env: Env) => {
    try {
      checkServingExposure(loadConfig(env));
      return undefined;
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.message;
    }
  };
  const allow = 'or set GATEHOUSE_ALLOW_INSECURE_HTTP=true for development';

  test('an http issuer on a host other machines use stops start-up, naming GATEHOUSE_ISSUER', () => {
    for (const issuer of ['http://sso.example.com/uas', 'http://10.0.0.5:8080/uas', 'http://[fd00::1]:8080/uas', 'http://127.0.0.1.example.com/uas', 'http://localhost.example.com/uas']) {
      assert.equal(refusal({ GATEHOUSE_ISSUER: issuer }), `GATEHOUSE_ISSUER: ${issuer} is plain http on a host other machines use, so passwords, codes and tokens would cross the network unencrypted: set the https URL clients use (TLS at a proxy, docs/deployment.md), ${allow}`);
    }
    // Derived from a listener address other machines use: the same refusal.
    assert.equal(refusal({ GATEHOUSE_HOST: '10.0.0.5' }), `GATEHOUSE_ISSUER: http://10.0.0.5:8080/uas is plain http on a host other machines use, so passwords, codes and tokens would cross the network unencrypted: set the https URL clients use (TLS at a proxy, docs/deployment.md), ${allow}`);
  });

  test('https anywhere, and http on this machine only, start', () => {
    for (const issuer of ['https://sso.example.com/uas', 'https://10.0.0.5/uas', 'http://localhost:8080/uas', 'http://LOCALHOST:8080/uas', 'http://sso.localhost/uas', 'http://127.0.0.1:8080/uas', 'http://127.1.2.3/uas', 'http://[::1]:8080/uas']) {
      assert.equal(refusal({ GATEHOUSE_ISSUER: issuer }), undefined, issuer);
    }
    assert.equal(refusal({}), undefined, 'the defaults: 127.0.0.1 and its derived issuer');
    assert.equal(refusal({ GATEHOUSE_HOST: '::1' }), undefined);
  });

  test('every interface with the derived issuer stops start-up, naming GATEHOUSE_HOST; with an issuer set it starts', () => {
    for (const host of ['0.0.0.0', '::', '0:0:0:0:0:0:0:0', '::0']) {
      assert.equal(refusal({ GATEHOUSE_HOST: host, GATEHOUSE_PORT: '9000' }), `GATEHOUSE_HOST: ${host} listens on every interface, but GATEHOUSE_ISSUER is unset, so the issuer is http://localhost:9000/uas, which only this machine can use: set GATEHOUSE_ISSUER to the https URL clients use (docs/deployment.md), ${allow}`);
    }
    // The container: every interface inside it, published to the host's loopback (docker-compose.yml).
    assert.equal(refusal({ GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_ISSUER: 'http://127.0.0.1:8080/uas' }), undefined);
    assert.equal(refusal({ GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_ISSUER: 'https://sso.example.com/uas' }), undefined);
    assert.equal(refusal({ GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_ISSUER: '' }), refusal({ GATEHOUSE_HOST: '0.0.0.0' }), 'an empty variable is unset');
  });

  test('an issuer set in the configuration file counts as set', () => {
    const dir = mkdtempSync(join(tmpdir(), 'gatehouse-exposure-'));
    try {
      const path = join(dir, 'g.yaml');
      writeFileSync(path, 'GATEHOUSE_HOST: 0.0.0.0\nGATEHOUSE_ISSUER: https://sso.example.com/uas\n');
      assert.equal(refusal({ GATEHOUSE_CONFIG: path }), undefined);
      writeFileSync(path, 'GATEHOUSE_HOST: 0.0.0.0\nGATEHOUSE_ALLOW_INSECURE_HTTP: true\n');
      assert.equal(refusal({ GATEHOUSE_CONFIG: path }), undefined);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('GATEHOUSE_ALLOW_INSECURE_HTTP=true lets both start; it is off by default', () => {
    assert.equal(loadConfig({}).allowInsecureHttp, false);
    assert.equal(refusal({ GATEHOUSE_ISSUER: 'http://sso.example.com/uas', GATEHOUSE_ALLOW_INSECURE_HTTP: 'true' }), undefined);
    assert.equal(refusal({ GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_ALLOW_INSECURE_HTTP: 'true' }), undefined);
    assert.equal(refusal({ GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_ALLOW_INSECURE_HTTP: 'false' })?.split(':')[0], 'GATEHOUSE_HOST');
  });
});

describe('GATEHOUSE_* variables that are no setting (issue 22 item 9, decisions D7)', () => {
  test('each is named, with the setting it is a slip away from, when there is one', () => {
    assert.deepEqual(
      unknownVariables({ GATEHOUSE_WORKRES: '2', GATEHOUSE_PROT: '1', GATEHOUSE_DATABSE_URL: 'x', GATEHOUSE_ISUSER: 'x', GATEHOUSE_THROTLE: 'x', GATEHOUSE_SOMETHING_ELSE: '1', GATEHOUSE_PORT: '1', PATH: '/bin', gatehouse_workers: '1' }),
      [
        { variable: 'GATEHOUSE_DATABSE_URL', suggestion: 'GATEHOUSE_DATABASE_URL' },
        { variable: 'GATEHOUSE_ISUSER', suggestion: 'GATEHOUSE_ISSUER' },
        { variable: 'GATEHOUSE_PROT', suggestion: 'GATEHOUSE_PORT' },
        { variable: 'GATEHOUSE_SOMETHING_ELSE', suggestion: undefined },
        { variable: 'GATEHOUSE_THROTLE', suggestion: 'GATEHOUSE_THROTTLE' },
        { variable: 'GATEHOUSE_WORKRES', suggestion: 'GATEHOUSE_WORKERS' },
      ],
    );
  });

  test('every setting and the variables of tests, benchmarks and the cluster are known', () => {
    const env = Object.fromEntries([...Object.values(settings).map((s) => s.env), ...NON_SETTING_VARIABLES].map((name) => [name, 'x']));
    assert.deepEqual(unknownVariables(env), []);
  });

  test('every GATEHOUSE_* name the repository reads is a setting or a known non-setting', () => {
    const known = new Set<string>([...Object.values(settings).map((s) => s.env), ...NON_SETTING_VARIABLES]);
    // Names written on purpose by the tests of the warning (here and test/faults/start-log.test.ts) and of the configuration file.
    const typos = new Set(['GATEHOUSE_TRHOTTLE', 'GATEHOUSE_NOTHING_LIKE_IT', 'GATEHOUSE_WORKRES', 'GATEHOUSE_PROT', 'GATEHOUSE_DATABSE_URL', 'GATEHOUSE_ISUSER', 'GATEHOUSE_THROTLE', 'GATEHOUSE_SOMETHING_ELSE', 'GATEHOUSE_UNHEARD_OF']);
    const found = new Set<string>();
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '--', '*.ts', '*.js', '*.sh', '*.yml', 'Dockerfile'], { cwd: INSTALL, encoding: 'utf8' }).split('\n').filter(Boolean);
    for (const file of files) {
      // A name followed by `_` or `{` is a prefix in prose or a template (GATEHOUSE_${name}), not a variable.
      for (const match of readFileSync(join(INSTALL, file), 'utf8').matchAll(/GATEHOUSE_[A-Z0-9_]*[A-Z0-9](?![A-Za-z0-9_{$])/g)) found.add(match[0]);
    }
    assert.deepEqual([...found].filter((name) => !known.has(name) && !typos.has(name)).sort(), []);
    assert.ok(found.has('GATEHOUSE_TEST_POSTGRES_URL') && found.has('GATEHOUSE_INTERNAL_CLEANUP_WORKER'), 'the scan sees the tests and src/main.ts');
  });
});
