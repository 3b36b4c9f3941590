import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cryptoRandom } from './random.ts';

test('random secrets drawn from the pool are the right size and never repeat, across refills', () => {
  // 4 KiB pools: 1,000 tokens of 32 bytes cross several refills, and one request larger than a pool.
  const tokens = Array.from({ length: 1000 }, () => cryptoRandom.token());
  for (const token of tokens) assert.match(token, /^[A-Za-z0-9_-]{43}$/);
  assert.equal(new Set(tokens).size, tokens.length);
  const big = cryptoRandom.hex(5000);
  assert.match(big, /^[0-9a-f]{10000}$/);
  assert.notEqual(cryptoRandom.hex(16), cryptoRandom.hex(16));
});
