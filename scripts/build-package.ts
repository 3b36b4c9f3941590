/**
 * The JavaScript the package carries (issue 22 item 13; docs/decisions.md PK1–PK4). Node strips
 * types only outside node_modules (ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING), so the checkout
 * runs src/*.ts directly while the tarball of `npm pack` holds dist/: src/ compiled by
 * tsconfig.build.json, its `.ts` imports rewritten to `.js`, and beside it every other file of
 * src/ (templates, stylesheets, scripts and images the pages read through import.meta.dirname), at
 * the same relative paths. dist/ sits where src/ does, so `../package.json` and `../data` resolve alike.
 *
 * `npm pack` runs it as prepack and again with `--clean` as postpack: dist/ exists only while the
 * tarball is made, and bin/gatehouse.js runs src/ whenever src/ is there.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const DIST = fileURLToPath(new URL('../dist/', import.meta.url));
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

rmSync(DIST, { recursive: true, force: true });
if (process.argv[2] !== '--clean') {
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(process.execPath, [tsc, '--project', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'inherit' });
  cpSync(SRC, DIST, { recursive: true, filter: (source) => !source.endsWith('.ts') });
}
