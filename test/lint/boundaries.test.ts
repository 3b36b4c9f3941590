// The import boundaries of docs/architecture.md ("Layers") as eslint.config.js enforces them: for
// each layer and each thing it must never import, a probe file placed in that layer importing it
// is refused with the rule's message; a few allowed imports are not.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import { ROOT } from './import-graph.ts';

const eslint = new ESLint({ cwd: ROOT });
const WHY = 'imports point down (docs/architecture.md, "Layers")';

/** The no-restricted-imports messages for `specifier` imported by a file at `file` (relative to the repository). */
async function refusals(file: string, specifier: string): Promise<string[]> {
  const code = `import { probe } from '${specifier}';\nexport const used = probe;\n`;
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const byPattern = (specifier: string, message: string) => `'${specifier}' import is restricted from being used by a pattern. ${message}`;
const byName = (specifier: string, message: string) => `'${specifier}' import is restricted from being used. ${message}`;

/** Each layer (a folder of src/, or src/config.ts), and every part of src/ it must never import. */
const NEVER: [layer: string, probe: string, targets: string[]][] = [
  ['src/domain', 'src/domain/probe.ts', ['crypto', 'oauth', 'http', 'identity', 'storage', 'manage', 'cli', 'adapters', 'observability', 'config.ts', 'app.ts', 'main.ts']],
  ['src/crypto', 'src/crypto/probe.ts', ['oauth', 'http', 'identity', 'manage', 'cli', 'adapters', 'app.ts', 'main.ts']],
  ['src/storage', 'src/storage/sql/probe.ts', ['oauth', 'http', 'identity', 'manage', 'cli', 'adapters', 'app.ts', 'main.ts']],
  ['src/identity', 'src/identity/probe.ts', ['oauth', 'http', 'manage', 'cli', 'adapters', 'app.ts', 'main.ts']],
  ['src/oauth', 'src/oauth/grants/probe.ts', ['http', 'manage', 'cli', 'adapters', 'app.ts', 'main.ts']],
  ['src/observability', 'src/observability/probe.ts', ['oauth', 'http', 'identity', 'manage', 'cli', 'adapters', 'app.ts', 'main.ts']],
  ['src/adapters', 'src/adapters/probe.ts', ['http', 'manage', 'cli', 'app.ts', 'main.ts']],
  ['src/manage', 'src/manage/probe.ts', ['http', 'cli', 'app.ts', 'main.ts']],
  ['src/http', 'src/http/manage-api/routes/probe.ts', ['cli', 'storage', 'adapters', 'app.ts', 'main.ts']],
  ['src/cli', 'src/cli/probe.ts', ['storage', 'adapters']],
  ['src/config.ts', 'src/config.ts', ['http', 'oauth', 'identity', 'crypto', 'storage', 'manage', 'cli', 'adapters', 'observability', 'app.ts', 'main.ts']],
];

/** The relative specifier of src/<target> from the probe file. */
function specifierOf(probe: string, target: string): string {
  const depth = probe.split('/').length - 2;
  const up = depth === 0 ? './' : '../'.repeat(depth);
  return target.endsWith('.ts') ? `${up}${target}` : `${up}${target}/module.ts`;
}

for (const [layer, probe, targets] of NEVER) {
  test(`${layer} never imports ${targets.join(', ')}`, async () => {
    for (const target of targets) {
      const specifier = specifierOf(probe, target);
      assert.deepEqual(await refusals(probe, specifier), [byPattern(specifier, `${layer} must not import src/${target}: ${WHY}.`)], `${probe} → ${specifier}`);
    }
  });
}

test('src/lib and src/protocol import nothing of src but themselves', async () => {
  assert.deepEqual(await refusals('src/lib/probe.ts', '../domain/client.ts'), [byPattern('../domain/client.ts', 'src/lib imports only the standard library and src/lib.')]);
  assert.deepEqual(await refusals('src/protocol/probe.ts', '../lib/clock.ts'), [byPattern('../lib/clock.ts', 'src/protocol imports nothing of src: every layer imports its constants.')]);
  assert.deepEqual(await refusals('src/lib/probe.ts', './clock.ts'), []);
  assert.deepEqual(await refusals('src/protocol/probe.ts', 'node:crypto'), []);
});

test('only src/crypto imports jose; only src/app.ts and src/storage import the SQL store', async () => {
  const others = ['src/probe.ts', 'src/lib/probe.ts', 'src/protocol/probe.ts', 'src/domain/probe.ts', 'src/storage/probe.ts', 'src/identity/probe.ts', 'src/oauth/probe.ts', 'src/observability/probe.ts', 'src/adapters/probe.ts', 'src/manage/probe.ts', 'src/http/probe.ts', 'src/cli/probe.ts', 'src/config.ts', 'src/app.ts'];
  for (const file of others) assert.deepEqual(await refusals(file, 'jose'), [byName('jose', 'Only src/crypto imports jose.')], file);
  assert.deepEqual(await refusals('src/crypto/probe.ts', 'jose'), []);
  // (lib, protocol, domain, config.ts, http and cli never import src/storage at all: their own rule says so.)
  for (const file of others.filter((f) => !['src/lib/', 'src/protocol/', 'src/domain/', 'src/config.ts', 'src/http/', 'src/cli/', 'src/storage/', 'src/app.ts'].some((layer) => f.startsWith(layer)))) {
    const sql = specifierOf(file, 'storage/sql');
    assert.deepEqual(await refusals(file, sql), [byPattern(sql, 'Only src/app.ts wires the concrete SQL store.')], file);
  }
  assert.deepEqual(await refusals('src/app.ts', './storage/sql/store.ts'), []);
  assert.deepEqual(await refusals('src/storage/probe.ts', './sql/store.ts'), []);
});

test('the core (lib, protocol, domain, crypto, identity, oauth) imports neither Fastify, Kysely nor pg', async () => {
  const messages: Record<string, string> = {
    fastify: 'The core must not depend on Fastify: keep HTTP in src/http.',
    kysely: 'The core must not depend on Kysely: use the ports in src/storage/ports.ts.',
    pg: 'The core must not depend on a database driver.',
  };
  for (const layer of ['lib', 'protocol', 'domain', 'crypto', 'identity', 'oauth']) {
    for (const [name, message] of Object.entries(messages)) assert.deepEqual(await refusals(`src/${layer}/probe.ts`, name), [byName(name, message)], `${layer} → ${name}`);
  }
  assert.deepEqual(await refusals('src/http/probe.ts', 'fastify'), []);
  assert.deepEqual(await refusals('src/storage/sql/probe.ts', 'kysely'), []);
});

test('imports that point down are allowed', async () => {
  const allowed: [string, string][] = [
    ['src/http/probe.ts', '../oauth/module.ts'],
    ['src/http/probe.ts', '../identity/module.ts'],
    ['src/cli/probe.ts', '../app.ts'],
    ['src/oauth/probe.ts', '../domain/module.ts'],
    ['src/oauth/probe.ts', '../crypto/module.ts'],
    ['src/oauth/probe.ts', '../storage/ports.ts'],
    ['src/crypto/probe.ts', '../domain/module.ts'],
    ['src/domain/probe.ts', '../protocol/constants.ts'],
    ['src/config.ts', './protocol/constants.ts'],
    ['src/adapters/probe.ts', '../oauth/module.ts'],
  ];
  for (const [file, specifier] of allowed) assert.deepEqual(await refusals(file, specifier), [], `${file} → ${specifier}`);
});

/** The no-restricted-syntax messages for `code` in a file at `file`. */
async function syntaxRefusals(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

test('src/http and src/cli never reach the store through a dependency object', async () => {
  const why = 'src/http and src/cli call the use cases of src/manage and src/oauth, never the store (docs/architecture.md, "Layers").';
  const reaches = [
    'export const f = (deps: { store: { ping(): void } }) => deps.store.ping();\n',
    "export const f = (deps: { store: { ping(): void } }) => deps['store'].ping();\n",
    'export const f = ({ store }: { store: { ping(): void } }) => store.ping();\n',
    'export function f(deps: { store: { ping(): void } }) {\n  const { store: s } = deps;\n  return s.ping();\n}\n',
  ];
  for (const file of ['src/http/manage-api/routes/probe.ts', 'src/http/public/probe.ts', 'src/cli/probe.ts']) {
    for (const code of reaches) assert.deepEqual(await syntaxRefusals(file, code), [why], `${file}: ${code}`);
  }
  // Passing the dependency object on to a use case, and the store elsewhere, are allowed.
  assert.deepEqual(await syntaxRefusals('src/http/public/probe.ts', 'export const f = (deps: object, useCase: (d: object) => void) => useCase(deps);\n'), []);
  assert.deepEqual(await syntaxRefusals('src/manage/probe.ts', 'export const f = (deps: { store: { ping(): void } }) => deps.store.ping();\n'), []);
});
