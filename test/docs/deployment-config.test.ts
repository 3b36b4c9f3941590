/**
 * The configurations docs/deployment.md, the Dockerfile and docker-compose.yml give still start a
 * server (issue 22 item 9): the image listens on every interface, so it starts only with the
 * issuer the documented `docker run` and compose give it, and stops without one; the systemd
 * unit's ExecStart, with its configuration file, starts a server that gets ready and stops on
 * SIGTERM.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { checkServingExposure, ConfigError, loadConfig, type Env } from '../../src/config.ts';
import { startAndStop } from '../faults/processes.ts';
import { freePort } from '../helpers/server.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const DEPLOYMENT = read('docs/deployment.md');
const KEY = 'k'.repeat(32);

/** The ENV of the Dockerfile's last stage, the production image. */
function imageEnv(): Env {
  const production = read('Dockerfile').split(/^FROM /m).at(-1)!;
  const env = production.match(/^ENV ((?:.*\\\n)*.*)$/m)![1]!;
  return Object.fromEntries([...env.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

/** The `-e NAME=VALUE` of a `docker run` command; a value computed by the shell becomes a key. */
function dockerRunEnv(command: string): Env {
  return Object.fromEntries([...command.matchAll(/-e (\w+)=("[^"]*"|\S+)/g)].map((m) => [m[1]!, m[2]!.includes('$(') ? KEY : m[2]!.replace(/^"|"$/g, '')]));
}

/** The `docker run` commands of a text, each joined across its `\` continuations. */
function dockerRuns(text: string): string[] {
  return [...text.replace(/\\\n\s*/g, ' ').matchAll(/docker run [^\n]*/g)].map((m) => m[0]);
}

/** What the server says of `env` at start-up: undefined when it starts, else its one line. */
function startRefusal(env: Env): string | undefined {
  try {
    checkServingExposure(loadConfig(env));
    return undefined;
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
}

describe('the container image as documented', () => {
  test('without an issuer it stops at once, naming GATEHOUSE_HOST', () => {
    assert.deepEqual(imageEnv(), { NODE_ENV: 'production', GATEHOUSE_HOST: '0.0.0.0', GATEHOUSE_PORT: '8080', GATEHOUSE_DATABASE_URL: 'sqlite:/data/gatehouse.db' });
    assert.match(startRefusal(imageEnv()) ?? '', /^GATEHOUSE_HOST: 0\.0\.0\.0 listens on every interface, but GATEHOUSE_ISSUER is unset/);
  });

  test('every `docker run` of docs/deployment.md and the Dockerfile starts', () => {
    const runs = [...dockerRuns(DEPLOYMENT), ...dockerRuns(read('Dockerfile'))];
    assert.equal(runs.length, 3);
    for (const run of runs) {
      const env = dockerRunEnv(run);
      assert.ok(env.GATEHOUSE_ISSUER, run);
      assert.equal(startRefusal({ ...imageEnv(), ...env }), undefined, run);
    }
  });

  test('docker-compose.yml: gatehouse starts with its environment', () => {
    const compose = parseYaml(read('docker-compose.yml'), { merge: true }) as { services: { gatehouse: { environment: Record<string, string> } } };
    // Compose fills `${NAME:-default}` from the environment, else the default.
    const env = Object.fromEntries(Object.entries(compose.services.gatehouse.environment).map(([name, value]) => [name, String(value).replace(/\$\{\w+:-([^}]*)\}/g, '$1')]));
    assert.equal(env.GATEHOUSE_ISSUER, 'http://127.0.0.1:8080/uas');
    assert.equal(startRefusal({ ...imageEnv(), ...env }), undefined);
  });
});

test('the systemd unit of docs/deployment.md, with its configuration file, starts a server that stops on SIGTERM', async () => {
  const unit = DEPLOYMENT.match(/```ini\n# \/etc\/systemd\/system\/gatehouse\.service\n([\s\S]*?)```/)![1]!;
  const [, ...args] = unit.match(/^ExecStart=(.+)$/m)![1]!.split(/\s+/);
  const unitEnv = Object.fromEntries([...unit.matchAll(/^Environment=(\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
  const yaml = DEPLOYMENT.match(/```yaml\n# \/etc\/gatehouse\/gatehouse\.yaml.*\n([\s\S]*?)```/)![1]!;
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-systemd-'));
  try {
    const port = await freePort();
    // The documented file, with this test's folder for /var/lib/gatehouse, a free port and a key.
    const file = join(dir, 'gatehouse.yaml');
    writeFileSync(file, yaml.replaceAll('/var/lib/gatehouse', dir).replace(/^GATEHOUSE_PORT: .*$/m, `GATEHOUSE_PORT: ${port}`).replace(/^GATEHOUSE_KEY_ENCRYPTION_KEY: .*$/m, `GATEHOUSE_KEY_ENCRYPTION_KEY: ${KEY}`) + 'GATEHOUSE_WORKERS: 1\n');
    assert.equal(unitEnv.GATEHOUSE_CONFIG, '/etc/gatehouse/gatehouse.yaml');
    const env = { PATH: process.env.PATH ?? '', ...unitEnv, GATEHOUSE_CONFIG: file };
    const started = await startAndStop(args, env, ROOT);
    assert.equal(started.stderr, '');
    assert.equal(started.code, 0);
    assert.equal(started.lines.find((line) => line.msg === 'gatehouse is ready')?.issuer, 'https://sso.example.com/uas');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
