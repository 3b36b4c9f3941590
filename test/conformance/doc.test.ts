/**
 * Keeps docs/conformance.md honest: a row for every checklist ID and Basic OP module, every cited
 * `file › test name` names a test that exists, and every conformance test is cited somewhere.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(import.meta.dirname, '..', '..');
const DOC = readFileSync(join(ROOT, 'docs', 'conformance.md'), 'utf8');

/** The IDs of research/conformance.md §2, section by section: prefix and how many. */
const CHECKLIST: [string, number][] = [
  ['DISC', 13],
  ['JWKS', 7],
  ['AZ', 45],
  ['PK', 10],
  ['TOK', 12],
  ['AC', 16],
  ['IDT', 13],
  ['RT', 11],
  ['UI', 11],
  ['INT', 9],
  ['SEC', 3],
  ['CC', 14],
  ['PW', 10],
  ['RM', 10],
  ['JW', 11],
  ['SP', 12],
  ['AL', 8],
  ['DV', 17],
  ['CN', 18],
  ['RI', 14],
  ['JA', 11],
  // Authorization policies (issue 13, item 1).
  ['PO', 22],
  // Dynamic client registration (issue 14, item 3).
  ['DR', 13],
  ['RS', 6],
  // amr and acr exactly, for every sign-in that exists (issue 24, item 4).
  ['AM', 5],
];
/** Modules 0 (common set-up) to 38 of the Basic OP plan (research/conformance.md §1). */
const MODULES = 39;

const CITATION = /`((?:test|src)\/[^`]*?\.test\.ts) › ([^`]+)`/g;

/** The names of the tests in a file; a template literal becomes a pattern matching any rendering. */
function testNames(file: string): RegExp[] {
  const source = readFileSync(join(ROOT, file), 'utf8');
  const names: RegExp[] = [];
  for (const match of source.matchAll(/\btest\((['"`])((?:\\.|(?!\1)[^\\])*)\1/g)) {
    const raw = match[2]!.replace(/\\(['"`\\])/g, '$1');
    const pattern = raw.split(/\$\{[^}]*\}/).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    names.push(new RegExp(`^${pattern.join('.*')}$`, 's'));
  }
  return names;
}

test('docs/conformance.md has one row for every checklist ID and every Basic OP module', () => {
  for (const [prefix, count] of CHECKLIST) {
    for (let n = 1; n <= count; n += 1) {
      const id = `${prefix}-${String(n).padStart(2, '0')}`;
      const rows = DOC.split('\n').filter((line) => line.startsWith(`| ${id} |`));
      assert.equal(rows.length, 1, `${id}: ${rows.length} rows`);
      assert.match(rows[0]!, /\| (yes|n\/a)\b[^|]*\|[^|]*`(test|src)\//, `${id} needs an applicability and a cited test`);
    }
  }
  for (let n = 0; n < MODULES; n += 1) {
    const rows = DOC.split('\n').filter((line) => line.startsWith(`| ${n} |`));
    assert.equal(rows.length, 1, `module ${n}: ${rows.length} rows`);
    assert.match(rows[0]!, /`(test|src)\//, `module ${n} needs a cited test`);
  }
});

test('every `file › test name` cited in docs/conformance.md names an existing test', () => {
  const cache = new Map<string, RegExp[]>();
  const citations = [...DOC.matchAll(CITATION)];
  assert.ok(citations.length > 150);
  for (const [, file, name] of citations) {
    assert.ok(existsSync(join(ROOT, file!)), `${file} does not exist`);
    if (!cache.has(file!)) cache.set(file!, testNames(file!));
    assert.ok(cache.get(file!)!.some((pattern) => pattern.test(name!)), `${file} has no test named "${name}"`);
  }
});

test('every test of test/conformance/ is cited in docs/conformance.md', () => {
  const cited = new Set([...DOC.matchAll(CITATION)].map(([, file, name]) => `${file} › ${name}`));
  for (const entry of readdirSync(join(ROOT, 'test', 'conformance'))) {
    if (!entry.endsWith('.test.ts') || entry === 'doc.test.ts') continue;
    const file = `test/conformance/${entry}`;
    const source = readFileSync(join(ROOT, file), 'utf8');
    for (const match of source.matchAll(/\btest\((['"])((?:\\.|(?!\1)[^\\])*)\1/g)) {
      const name = match[2]!.replace(/\\(['"\\])/g, '$1');
      assert.ok(cited.has(`${file} › ${name}`), `${file} › ${name} is not cited`);
    }
  }
});
