// Issue 23 item 3: the import graph of src/ has no cycle. The cycles that remain are listed here
// exactly, so that a new one fails this test (with its files), and removing one means deleting it
// here. `node test/lint/import-graph.ts` prints the cycles and the arrows between the layers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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

test('the layers of src/ import each other in no circle', () => {
  assert.deepEqual(cycles(layerGraph(importGraph())), []);
});

test('no file of src/ turns the import lint off', () => {
  const hits = spawnSync('git', ['grep', '-l', 'eslint-disable.*no-restricted-imports', '--', 'src'], { cwd: ROOT, encoding: 'utf8' });
  assert.deepEqual(hits.stdout.split('\n').filter(Boolean), []);
});
