// Issue 23 item 3: the import graph of src/ has no cycle. The cycles that remain are listed here
// exactly, so that a new one fails this test (with its files), and removing one means deleting it
// here. `node test/lint/import-graph.ts` prints the cycles and the arrows between the layers.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { cycles, importGraph, layerGraph, ROOT } from './import-graph.ts';

test('the only cycle of files in src/ is the known one in src/oauth (scope → discovery → grants/registry → grants → scope)', () => {
  assert.deepEqual(cycles(importGraph()), [
    [
      'src/oauth/client-metadata.ts',
      'src/oauth/discovery.ts',
      'src/oauth/grants/authorization-code.ts',
      'src/oauth/grants/client-credentials.ts',
      'src/oauth/grants/device-code.ts',
      'src/oauth/grants/grant.ts',
      'src/oauth/grants/password.ts',
      'src/oauth/grants/refresh-token.ts',
      'src/oauth/grants/registry.ts',
      'src/oauth/issue-tokens.ts',
      'src/oauth/jwt-access-token.ts',
      'src/oauth/resource.ts',
      'src/oauth/scope.ts',
    ],
  ]);
});

test('between the layers of src/, the only circle runs through config.ts → http (the login theme config.ts still loads)', () => {
  // http, manage, oauth and observability read settings from config.ts; config.ts → http closes
  // each of those circles. No other circle: crypto and domain no longer import each other.
  assert.deepEqual(cycles(layerGraph(importGraph())), [['config.ts', 'http', 'manage', 'oauth', 'observability']]);
});

test('the one exception to the import lint is config.ts loading the theme', () => {
  const hits = execFileSync('git', ['grep', '-l', 'eslint-disable.*no-restricted-imports', '--', 'src'], { cwd: ROOT, encoding: 'utf8' });
  assert.deepEqual(hits.trim().split('\n'), ['src/config.ts']);
});
