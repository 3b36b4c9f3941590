/**
 * An older Node.js stops at once with one line naming the version needed, the one found and how
 * to get Node 24 — not with ERR_UNKNOWN_FILE_EXTENSION from the first .ts file it cannot load.
 * The entry points run under an older Node when the machine has one (Debian's /usr/bin/node);
 * the check itself is also tested with stubbed versions, so it is covered everywhere.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { nodeVersionProblem, REQUIRED_MAJOR } from '../../bin/require-node.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('package.json', `file://${ROOT}`), 'utf8')) as { engines: { node: string }; scripts: Record<string, string> };

/** The line an older Node at `path` reporting `version` must print, exactly. */
const lineFor = (version: string, path: string) =>
  `gatehouse: Node.js 24 or later is needed, but this is Node.js v${version} (${path}). Install Node.js 24 (\`nvm install\` reads .nvmrc; README.md, "Installing Node.js 24") and run again.\n`;

/** A node binary on the system older than 24, when there is one. */
function olderNode(): { path: string; version: string } | undefined {
  for (const path of ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']) {
    if (!existsSync(path)) continue;
    const version = execFileSync(path, ['--version'], { encoding: 'utf8' }).trim().replace(/^v/, '');
    if (Number(version.split('.')[0]) < REQUIRED_MAJOR) return { path, version };
  }
  return undefined;
}

const old = olderNode();

/** The ExecStart command of the systemd unit in docs/deployment.md. */
function systemdExecStart(): string {
  const doc = readFileSync(new URL('docs/deployment.md', `file://${ROOT}`), 'utf8');
  const lines = [...doc.matchAll(/^ExecStart=(.+)$/gm)].map((m) => m[1]!);
  assert.equal(lines.length, 1, 'one ExecStart line in docs/deployment.md');
  return lines[0]!;
}

describe('the Node.js version guard', () => {
  test('the version needed is the same in package.json engines, .nvmrc and the guard', () => {
    assert.equal(REQUIRED_MAJOR, 24);
    assert.equal(pkg.engines.node, `>=${REQUIRED_MAJOR}`);
    assert.equal(readFileSync(new URL('.nvmrc', `file://${ROOT}`), 'utf8'), `${REQUIRED_MAJOR}\n`);
    // npm ci refuses a Node outside "engines" instead of installing for it.
    assert.equal(readFileSync(new URL('.npmrc', `file://${ROOT}`), 'utf8'), 'engine-strict=true\n');
  });

  test('stubbed versions: older than 24 gets the one line, 24 and later nothing', () => {
    assert.equal(`${nodeVersionProblem('20.20.2', '/usr/bin/node')}\n`, lineFor('20.20.2', '/usr/bin/node'));
    assert.equal(`${nodeVersionProblem('v23.11.0', '/opt/node')}\n`, lineFor('23.11.0', '/opt/node'));
    assert.equal(nodeVersionProblem('24.0.0', '/x'), undefined);
    assert.equal(nodeVersionProblem('25.1.0', '/x'), undefined);
  });

  test('the systemd unit of docs/deployment.md starts through bin/gatehouse.js, which loads the guard first', () => {
    const [node, ...args] = systemdExecStart().split(/\s+/);
    assert.equal(node, '/usr/bin/node');
    assert.deepEqual(args.filter((arg) => !arg.startsWith('--')), ['bin/gatehouse.js', 'serve']);
    assert.match(readFileSync(new URL('bin/gatehouse.js', `file://${ROOT}`), 'utf8'), /^#!.*\n(\/\/.*\n)*import '\.\/require-node\.js';/);
  });

  test('npm start and npm test go through the guard first', () => {
    for (const script of ['start', 'test']) assert.match(pkg.scripts[script]!, /^node bin\/require-node\.js && node /, script);
  });

  // The entry points as users start them: `gatehouse` (bin/gatehouse.js), and the commands of
  // `npm start` and `npm test` run by a shell whose `node` is the older one.
  describe(`under ${old ? `Node.js v${old.version} (${old.path})` : 'an older Node.js (none installed: skipped)'}`, { skip: old === undefined }, () => {
    const env = { PATH: `${old?.path.replace(/\/node$/, '')}:/usr/bin:/bin`, HOME: process.env.HOME ?? '/tmp' };
    // The systemd unit of docs/deployment.md, its ExecStart word for word but for the node binary
    // (and its WorkingDirectory, /opt/gatehouse there, this checkout here).
    const [unitNode, ...unitArgs] = systemdExecStart().split(/\s+/);
    const entries: [string, string, string[]][] = [
      ['gatehouse --version', old?.path ?? '', ['bin/gatehouse.js', '--version']],
      ['gatehouse serve', old?.path ?? '', ['bin/gatehouse.js', 'serve']],
      [`the systemd unit of docs/deployment.md (${unitNode} ${unitArgs.join(' ')})`, old?.path ?? '', unitArgs],
      ['npm start', 'sh', ['-c', pkg.scripts.start!]],
      ['npm test', 'sh', ['-c', pkg.scripts.test!]],
    ];
    for (const [name, command, args] of entries) {
      test(`${name} exits non-zero with exactly the one line`, () => {
        const result = spawnSync(command, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 30_000 });
        assert.equal(result.stderr, lineFor(old!.version, old!.path));
        assert.equal(result.stdout, '');
        assert.equal(result.status, 2);
      });
    }
  });
});
