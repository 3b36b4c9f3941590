// Issue 23 item 3: the import graph of src/ has no cycle. A new one fails this test, naming its files.
// `node test/lint/import-graph.ts` prints the cycles and the arrows between the layers.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { cycles, importGraph, layerGraph, ROOT } from './import-graph.ts';

test('the files of src/ import each other in no circle', () => {
  assert.deepEqual(cycles(importGraph()), []);
});

test('the layers of src/ import each other in no circle', () => {
  assert.deepEqual(cycles(layerGraph(importGraph())), []);
});

test('no file of src/ turns the import lint off', () => {
  const hits = spawnSync('git', ['grep', '-l', 'eslint-disable.*no-restricted-imports', '--', 'src'], { cwd: ROOT, encoding: 'utf8' });
  assert.deepEqual(hits.stdout.split('\n').filter(Boolean), []);
});
