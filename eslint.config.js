// Lint: typescript-eslint's recommended rules plus the import boundaries of docs/architecture.md
// ("Layers"). Each file of src/ falls in exactly one layer below, and that layer's one
// no-restricted-imports setting lists everything it must never import (flat config does not merge
// two settings of one rule: the last would win). test/lint/boundaries.test.ts proves each one bites.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const WHY = 'imports point down (docs/architecture.md, "Layers")';

/** A relative import of src/<target> (a folder, or a file such as config.ts) from anywhere in src/. */
const never = (layer, target) => ({
  regex: target.endsWith('.ts') ? `^(?:\\.{1,2}/)+${target.replace('.', '\\.')}$` : `^(?:\\.{1,2}/)+${target}/`,
  message: `${layer} must not import src/${target}: ${WHY}.`,
});

const FRAMEWORKS = [
  { name: 'fastify', message: 'The core must not depend on Fastify: keep HTTP in src/http.' },
  { name: 'kysely', message: 'The core must not depend on Kysely: use the ports in src/storage/ports.ts.' },
  { name: 'pg', message: 'The core must not depend on a database driver.' },
];
const JOSE = { name: 'jose', message: 'Only src/crypto imports jose.' };
const SQL = { regex: '(?:^|/)storage/sql/', message: 'Only src/app.ts wires the concrete SQL store.' };

/**
 * One layer: its files, what it must never import from src/, and whether it is framework-free
 * (no Fastify, Kysely or pg), may import jose (only src/crypto) or the SQL store (only src/app.ts
 * and src/storage).
 */
const layer = ({ name, files, ignores = [], never: targets = [], patterns = [], frameworkFree = false, jose = false, sql = false }) => ({
  files,
  ignores,
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: [...(frameworkFree ? FRAMEWORKS : []), ...(jose ? [] : [JOSE])],
        patterns: [...(sql ? [] : [SQL]), ...patterns, ...targets.map((target) => never(name, target))],
      },
    ],
  },
});

const TOP = ['app.ts', 'main.ts'];
const STORE_WHY = 'src/http and src/cli call the use cases of src/manage and src/oauth, never the store (docs/architecture.md, "Layers").';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'bench/results/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly', URLSearchParams: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', fetch: 'readonly', structuredClone: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', crypto: 'readonly', performance: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  // Every other file of src/ (main.ts, healthcheck.ts, version.ts, config-file.ts): no jose, no SQL store.
  layer({ name: 'src', files: ['src/**'] }),
  layer({ name: 'src/lib', files: ['src/lib/**'], frameworkFree: true, patterns: [{ regex: '^\\.\\./', message: 'src/lib imports only the standard library and src/lib.' }] }),
  layer({ name: 'src/protocol', files: ['src/protocol/**'], frameworkFree: true, patterns: [{ regex: '^\\.\\./', message: 'src/protocol imports nothing of src: every layer imports its constants.' }] }),
  layer({ name: 'src/domain', files: ['src/domain/**'], frameworkFree: true, never: ['crypto', 'oauth', 'http', 'identity', 'storage', 'manage', 'cli', 'adapters', 'observability', 'config.ts', ...TOP] }),
  layer({ name: 'src/crypto', files: ['src/crypto/**'], frameworkFree: true, jose: true, never: ['oauth', 'http', 'identity', 'manage', 'cli', 'adapters', ...TOP] }),
  layer({ name: 'src/storage', files: ['src/storage/**'], sql: true, never: ['oauth', 'http', 'identity', 'manage', 'cli', 'adapters', ...TOP] }),
  layer({ name: 'src/identity', files: ['src/identity/**'], frameworkFree: true, never: ['oauth', 'http', 'manage', 'cli', 'adapters', ...TOP] }),
  layer({ name: 'src/oauth', files: ['src/oauth/**'], frameworkFree: true, never: ['http', 'manage', 'cli', 'adapters', ...TOP] }),
  layer({ name: 'src/observability', files: ['src/observability/**'], never: ['oauth', 'http', 'identity', 'manage', 'cli', 'adapters', ...TOP] }),
  layer({ name: 'src/adapters', files: ['src/adapters/**'], never: ['http', 'manage', 'cli', ...TOP] }),
  layer({ name: 'src/manage', files: ['src/manage/**'], never: ['http', 'cli', ...TOP] }),
  layer({ name: 'src/http', files: ['src/http/**'], never: ['cli', 'storage', 'adapters', ...TOP] }),
  layer({ name: 'src/cli', files: ['src/cli/**'], never: ['storage', 'adapters'] }),
  layer({ name: 'src/config.ts', files: ['src/config.ts', 'src/config.test.ts'], never: ['http', 'oauth', 'identity', 'crypto', 'storage', 'manage', 'cli', 'adapters', 'observability', ...TOP] }),
  // HTTP and the CLI call use cases, never the store (docs/architecture.md, "Layers"): the import
  // rule above keeps src/storage out of them; this keeps the store object out too, whatever
  // dependency object might carry it (HttpDeps does, for the protocol core it is passed on to).
  {
    files: ['src/http/**', 'src/cli/**'],
    rules: {
      'no-restricted-syntax': [
        'error',
        { selector: "MemberExpression[property.name='store']", message: STORE_WHY },
        { selector: "MemberExpression[computed=true][property.value='store']", message: STORE_WHY },
        { selector: "ObjectPattern > Property[key.name='store']", message: STORE_WHY },
      ],
    },
  },
  // The composition root wires everything.
  layer({ name: 'src/app.ts', files: ['src/app.ts'], jose: false, sql: true }),
);
