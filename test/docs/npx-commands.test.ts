/**
 * Every command in README.md, docs/ and the examples' READMEs runs verbatim from a checkout, where
 * `gatehouse` is not on PATH: the CLI is `npx gatehouse` (issue 22 item 11). This fails on a bare
 * `gatehouse …` at the start of a shell command in a fenced code block — at the start of a line
 * (after `$ ` and `NAME=value` assignments), or after `$(`, `|`, `;` or `&`. In `console` blocks
 * only the `$ ` lines are commands; the rest is output, which may well start with `gatehouse:`.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BARE = /(?:^|\$\(|[|;&]\s*)(?:[A-Z_][A-Z0-9_]*=\S*\s+)*gatehouse\s+[a-z-]/;

function markdownFiles(): string[] {
  const examples = readdirSync(join(ROOT, 'examples'), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => `examples/${e.name}/README.md`);
  const docs = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
  return ['README.md', 'examples/README.md', ...docs, ...examples].filter((file) => {
    try {
      readFileSync(join(ROOT, file));
      return true;
    } catch {
      return false;
    }
  });
}

/** `file:line: text` of each shell command in a fenced block that starts a bare `gatehouse`. */
function bareCommands(file: string, text: string): string[] {
  const found: string[] = [];
  let language: string | undefined;
  text.split('\n').forEach((line, index) => {
    const fence = /^```(\S*)/.exec(line);
    if (fence) {
      language = language === undefined ? fence[1]! : undefined;
      return;
    }
    if (language === undefined) return;
    const prompt = /^\s*\$\s+(.*)$/.exec(line);
    if (language === 'console' && !prompt) return;
    if (!['', 'console', 'sh', 'bash', 'shell'].includes(language)) return;
    if (BARE.test(prompt ? prompt[1]! : line)) found.push(`${file}:${index + 1}: ${line}`);
  });
  return found;
}

test('the checker finds bare commands and leaves npx, output and prose alone', () => {
  const sample = ['```console', '$ gatehouse user list', '$ X=1 gatehouse migrate', '$ id=$(gatehouse org create --json)', '$ npx gatehouse user list', 'gatehouse: no store', '```', 'gatehouse serves', '```sh', 'printf x | gatehouse user create', '```'].join('\n');
  assert.deepEqual(bareCommands('x.md', sample), ['x.md:2: $ gatehouse user list', 'x.md:3: $ X=1 gatehouse migrate', 'x.md:4: $ id=$(gatehouse org create --json)', 'x.md:10: printf x | gatehouse user create']);
});

test('README.md, docs/ and the examples call the CLI as npx gatehouse', () => {
  const files = markdownFiles();
  assert.ok(files.length > 20, files.join(' '));
  assert.deepEqual(files.flatMap((file) => bareCommands(file, readFileSync(join(ROOT, file), 'utf8'))), []);
});
