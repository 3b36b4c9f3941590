/**
 * docs/operations.md, "Backup and restore": the SQLite backup commands run as written (the store
 * and the backup folder swapped for temporary ones, from a shell whose umask is the usual 022) and
 * each copy is 0600 and opens with the store's rows; the PostgreSQL block sets the same umask
 * before pg_dump (issue 22 item 11: the documented backup was 0644).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
const STORE = '/var/lib/gatehouse/gatehouse.db';
const FOLDER = '/backups/';

/** The commands of the console block after `<!-- backup: NAME -->`: `$ ` lines with their continuation lines, comments left out. */
function commands(name: string): string[] {
  const match = new RegExp(`<!-- backup: ${name} -->\\n\`\`\`console\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(DOC);
  assert.ok(match, `docs/operations.md has no backup block "${name}"`);
  const joined = match[1]!.replace(/\\\n\s+/g, '');
  return joined
    .split('\n')
    .map((line) => line.replace(/^\$ /, ''))
    .filter((line) => !line.startsWith('#'));
}

function sh(script: string): { status: number | null; stderr: string } {
  const run = spawnSync('bash', ['-euo', 'pipefail', '-c', script], { env: { PATH: process.env.PATH ?? '' }, encoding: 'utf8' });
  return { status: run.status, stderr: run.stderr };
}

describe('docs/operations.md: backups are made 0600', () => {
  let dir: string;
  let store: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-backup-'));
    store = join(dir, 'gatehouse.db');
    const db = new DatabaseSync(store);
    db.exec("CREATE TABLE users (id TEXT PRIMARY KEY); INSERT INTO users VALUES ('u1')");
    db.close();
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the SQLite block: umask 077, then either copy command, gives a 0600 copy that opens', () => {
    const [umask, ...copies] = commands('sqlite');
    assert.equal(umask, 'umask 077');
    assert.equal(copies.length, 2, 'the sqlite3 command and the one with Node');
    for (const copy of copies) {
      const folder = mkdtempSync(join(dir, 'backups-'));
      const script = `umask 022\n${umask}\n${copy.replaceAll(STORE, store).replaceAll(FOLDER, `${folder}/`)}`;
      const run = sh(script);
      assert.equal(run.status, 0, `${copy}: ${run.stderr}`);
      const [file] = readdirSync(folder);
      assert.match(file ?? '', /^gatehouse-\d{4}-\d{2}-\d{2}\.db$/);
      assert.equal((statSync(join(folder, file!)).mode & 0o777).toString(8), '600', copy);
      const copied = new DatabaseSync(join(folder, file!), { readOnly: true });
      assert.deepEqual(copied.prepare('SELECT id FROM users').all().map((row) => row.id), ['u1']);
      copied.close();
    }
  });

  test('the PostgreSQL block sets the same umask before pg_dump writes the file', () => {
    const [umask, dump] = commands('postgres');
    assert.equal(umask, 'umask 077');
    assert.match(dump ?? '', /^pg_dump --format=custom --file=\/backups\//);
  });
});
