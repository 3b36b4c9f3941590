import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closest, editDistance } from './similar.ts';

test('editDistance counts insertions, deletions, substitutions, and a swap of neighbours as one edit', () => {
  assert.equal(editDistance('WORKERS', 'WORKERS'), 0);
  assert.equal(editDistance('WORKRES', 'WORKERS'), 1, 'a swap');
  assert.equal(editDistance('WORKER', 'WORKERS'), 1, 'an insertion');
  assert.equal(editDistance('WORKERSS', 'WORKERS'), 1, 'a deletion');
  assert.equal(editDistance('WORKEES', 'WORKERS'), 1, 'a substitution');
  assert.equal(editDistance('', 'PORT'), 4);
  assert.equal(editDistance('CA', 'ABC'), 3, 'optimal string alignment: a swapped pair is not edited again');
});

test('closest: the nearest candidate within a third of the name, ties to the first; none when nothing is close', () => {
  assert.equal(closest('WORKRES', ['PORT', 'WORKERS', 'HOST']), 'WORKERS');
  assert.equal(closest('PROT', ['HOST', 'PORT']), 'PORT');
  assert.equal(closest('HOSTS', ['HOST', 'POSTS']), 'HOST', 'a tie goes to the first');
  assert.equal(closest('FOO', ['ACR', 'HOST']), undefined);
  assert.equal(closest('DATABSE_URL_X', ['DATABASE_URL']), 'DATABASE_URL', 'two edits in thirteen characters');
  assert.equal(closest('XXXX_URL', ['DATABASE_URL']), undefined);
  assert.equal(closest('AB', ['CD'], 2), 'CD', 'an explicit bound');
});
