/**
 * `gatehouse theme check` (docs/theming.md, docs/cli.md): the real command as a child process,
 * validating the example theme, and refusing a broken one with the file and field named and exit 2.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const EXAMPLE = fileURLToPath(new URL('../../examples/theme', import.meta.url));

function gatehouse(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', ...env }, encoding: 'utf8', timeout: 30_000 });
}

test('the example theme is valid: its files and overridden texts, as text and as JSON (--dir, or GATEHOUSE_THEME_DIR)', () => {
  const text = gatehouse(['theme', 'check', '--dir', EXAMPLE]);
  assert.equal(text.stderr, '');
  assert.equal(text.status, 0);
  assert.match(text.stdout, /^product name +Northwind Library$/m);
  assert.match(text.stdout, /^files +theme\.css \(\d+ bytes\), logo\.svg \(345 bytes\), favicon\.svg \(\d+ bytes\), custom\.css \(\d+ bytes\)$/m);
  assert.match(text.stdout, /^result +valid$/m);
  const json = gatehouse(['theme', 'check', '--json'], { GATEHOUSE_THEME_DIR: EXAMPLE });
  assert.equal(json.status, 0);
  const report = JSON.parse(json.stdout) as { valid: boolean; product_name: string; texts: Record<string, string[]>; files: { name: string; content_type: string }[] };
  assert.equal(report.valid, true);
  assert.deepEqual(report.files.map((f) => [f.name, f.content_type]), [['theme.css', 'text/css; charset=utf-8'], ['logo.svg', 'image/svg+xml'], ['favicon.svg', 'image/svg+xml'], ['custom.css', 'text/css; charset=utf-8']]);
  assert.ok(report.texts.fi!.includes('signInErrors.server_error'));
});

test('a broken theme: exit 2, one line naming the file and the field; no theme at all is said so', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-theme-cli-'));
  try {
    cpSync(EXAMPLE, dir, { recursive: true });
    const json = JSON.parse(readFileSync(join(dir, 'theme.json'), 'utf8')) as { texts: { en: Record<string, string> } };
    json.texts.en.tooManyAttempts = 'Slow down.';
    writeFileSync(join(dir, 'theme.json'), JSON.stringify(json));
    const byDir = gatehouse(['theme', 'check', '--dir', dir]);
    assert.equal(byDir.status, 2);
    assert.equal(byDir.stdout, '');
    assert.equal(byDir.stderr, `gatehouse: ${join(dir, 'theme.json')}: texts.en.tooManyAttempts: must keep the placeholder {wait}: the page fills it in\n`);
    const byEnv = gatehouse(['theme', 'check'], { GATEHOUSE_THEME_DIR: dir });
    assert.equal(byEnv.status, 2);
    assert.match(byEnv.stderr, /^gatehouse: invalid configuration: GATEHOUSE_THEME_DIR: .*theme\.json: texts\.en\.tooManyAttempts: must keep the placeholder \{wait\}/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const none = gatehouse(['theme', 'check']);
  assert.equal(none.status, 2);
  assert.equal(none.stderr, 'gatehouse: no theme to check: give --dir or set GATEHOUSE_THEME_DIR\n');
});
