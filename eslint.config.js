// Lint: typescript-eslint's recommended rules plus the import boundaries of docs/architecture.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const noFrameworks = (what) => ({
  paths: [
    { name: 'fastify', message: `${what} must not depend on Fastify: keep HTTP in src/http.` },
    { name: 'kysely', message: `${what} must not depend on Kysely: use the ports in src/storage/ports.ts.` },
    { name: 'pg', message: `${what} must not depend on a database driver.` },
  ],
  patterns: [
    { group: ['**/http/**', '**/http/*'], message: `${what} must not import the HTTP layer.` },
    { group: ['**/storage/sql/**', '**/storage/sql/*'], message: 'Only src/app.ts wires the concrete SQL store.' },
  ],
});

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
  // The protocol core, the domain, crypto, the identity use cases and lib are framework-free.
  { files: ['src/oauth/**', 'src/domain/**', 'src/identity/**', 'src/crypto/**', 'src/lib/**'], rules: { 'no-restricted-imports': ['error', noFrameworks('The core')] } },
  // jose is imported only by src/crypto.
  {
    files: ['src/**'],
    ignores: ['src/crypto/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'jose', message: 'Only src/crypto imports jose.' }], patterns: [{ group: ['**/storage/sql/**', '**/storage/sql/*'], message: 'Only src/app.ts wires the concrete SQL store.' }] }] },
  },
  { files: ['src/oauth/**', 'src/domain/**', 'src/identity/**', 'src/lib/**'], rules: { 'no-restricted-imports': ['error', { ...noFrameworks('The core'), paths: [...noFrameworks('The core').paths, { name: 'jose', message: 'Only src/crypto imports jose.' }] }] } },
  { files: ['src/app.ts', 'src/storage/**'], rules: { 'no-restricted-imports': 'off' } },
);
