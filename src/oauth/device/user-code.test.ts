import assert from 'node:assert/strict';
import { test } from 'node:test';
import { formatUserCode, generateUserCode, normaliseUserCode, USER_CODE_ALPHABET } from './user-code.ts';

test('generated user codes are 8 characters of the alphabet, every character used, shown as XXXX-XXXX', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const code = generateUserCode();
    assert.match(code, new RegExp(`^[${USER_CODE_ALPHABET}]{8}$`));
    for (const char of code) seen.add(char);
    assert.equal(formatUserCode(code), `${code.slice(0, 4)}-${code.slice(4)}`);
  }
  assert.deepEqual([...seen].sort().join(''), USER_CODE_ALPHABET);
});

test('the alphabet has no vowels and no look-alike characters (RFC 8628 §6.1)', () => {
  assert.equal(USER_CODE_ALPHABET, 'BCDFGHJKLMNPQRSTVWXZ');
  for (const ambiguous of 'AEIOUY0123456789') assert.equal(USER_CODE_ALPHABET.includes(ambiguous), false, ambiguous);
});

test('typed codes are normalised: any case, with or without the dash and spaces; anything else is no code', () => {
  for (const typed of ['WDJB-MJHT', 'wdjb-mjht', 'WDJBMJHT', ' wdjb mjht ', 'Wd-Jb-Mj-Ht', 'wdjb\tmjht']) assert.equal(normaliseUserCode(typed), 'WDJBMJHT', typed);
  for (const typed of ['', 'WDJB-MJH', 'WDJB-MJHTX', 'WDJB-MJH0', 'AEIO-UBCD', 'WDJB_MJHT', 'WDJB-MJHT'.padEnd(65, ' ')]) assert.equal(normaliseUserCode(typed), undefined, JSON.stringify(typed));
});
