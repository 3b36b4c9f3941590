import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addressGroup, counterKey } from './keys.ts';
import { delaySeconds, retryAfterSeconds, waitMs } from './policy.ts';

test('no delay below the threshold, then 1, 2, 4 … seconds, capped at the maximum', () => {
  assert.deepEqual(
    [0, 4, 5, 6, 7, 14, 15, 16, 40, 5000].map((n) => delaySeconds(n, 5, 900)),
    [0, 0, 1, 2, 4, 512, 900, 900, 900, 900],
  );
  assert.equal(delaySeconds(1, 1, 60), 1);
});

test('the wait runs from the last failure; Retry-After rounds up', () => {
  const counter = { key: 'k', failures: 7, pending: 0, lastFailureAt: 10_000, reservedAt: 0 };
  assert.equal(waitMs(counter, 5, 900, 10_000), 4000);
  assert.equal(waitMs(counter, 5, 900, 13_500), 500);
  assert.equal(waitMs(counter, 5, 900, 14_000), 0);
  assert.equal(waitMs(undefined, 5, 900, 0), 0);
  assert.equal(retryAfterSeconds(500), 1);
  assert.equal(retryAfterSeconds(4000), 4);
});

test('attempts in flight count as failures, and the wait also runs from the latest reservation while one is', () => {
  // 4 failures and 1 pending reach a threshold of 5: 1 s from the reservation, the later time.
  assert.equal(waitMs({ key: 'k', failures: 4, pending: 1, lastFailureAt: 10_000, reservedAt: 12_000 }, 5, 900, 12_500), 500);
  // Once none is pending, the reservation time no longer matters.
  assert.equal(waitMs({ key: 'k', failures: 5, pending: 0, lastFailureAt: 10_000, reservedAt: 12_000 }, 5, 900, 11_000), 0);
  assert.equal(waitMs({ key: 'k', failures: 2, pending: 2, lastFailureAt: 10_000, reservedAt: 9_000 }, 5, 900, 10_000), 0);
});

test('addresses: IPv4 as is, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
  assert.equal(addressGroup('203.0.113.7'), '203.0.113.7');
  assert.equal(addressGroup('::ffff:203.0.113.7'), '203.0.113.7');
  assert.equal(addressGroup('::ffff:cb00:7107'), '203.0.113.7');
  assert.equal(addressGroup('2001:db8:1:2::1'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('2001:0DB8:0001:0002:ffff:ffff:ffff:ffff'), '2001:db8:1:2::/64');
  assert.equal(addressGroup('fe80::1%eth0'), 'fe80:0:0:0::/64');
  assert.equal(addressGroup('::1'), '0:0:0:0::/64');
  assert.notEqual(addressGroup('2001:db8:1:3::1'), addressGroup('2001:db8:1:2::1'));
  assert.equal(addressGroup('not an address'), '?not an address');
});

test('counter keys have a fixed length whatever the value, and differ by scope', () => {
  const long = counterKey('login-user', 'x'.repeat(100_000));
  assert.equal(long.length, counterKey('login-user', 'a').length);
  assert.ok(long.length < 64);
  assert.notEqual(counterKey('login-user', 'alice'), counterKey('api-user', 'alice'));
  assert.doesNotMatch(counterKey('login-user', 'alice'), /alice/);
});
