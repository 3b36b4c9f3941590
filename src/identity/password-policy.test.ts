import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkPassword, COMMON_PASSWORD_COUNT, DEFAULT_PASSWORD_MIN_LENGTH, PasswordRefused, passwordPolicyOf, type PasswordRefusal } from './password-policy.ts';

/** The rule that refused `password`, or 'accepted'. */
function verdict(password: unknown, ...rest: Parameters<typeof checkPassword> extends [unknown, ...infer R] ? R : never): PasswordRefusal | 'accepted' | 'not a string' {
  try {
    checkPassword(password, ...rest);
    return 'accepted';
  } catch (error) {
    if (error instanceof PasswordRefused) return error.reason;
    assert.equal((error as Error).message, 'password must be a string');
    return 'not a string';
  }
}

describe('password policy (NIST SP 800-63B-4 §3.1.1.2)', () => {
  test('the shipped list is loaded once, a few thousand entries', () => {
    assert.equal(COMMON_PASSWORD_COUNT, 4279);
  });

  test('length: at least the minimum, in code points after NFKC, at most 1024', () => {
    assert.equal(DEFAULT_PASSWORD_MIN_LENGTH, 8);
    assert.deepEqual(['sea otr', 'sea otr7', 'x'.repeat(1024) + 'y', 'ä'.repeat(7), '🦦🦦🦦🦦🦦🦦🦦🦦'].map((p) => verdict(p)), ['too_short', 'accepted', 'too_long', 'too_short', 'accepted']);
    // The setting: 11 characters pass the default and not a minimum of 12.
    assert.deepEqual([verdict('sea otter 7'), verdict('sea otter 7', {}, passwordPolicyOf({ passwordMinLength: 12 }))], ['accepted', 'too_short']);
    assert.equal(passwordPolicyOf({}).minLength, 8);
  });

  test('no composition rules: lower-case letters and spaces alone are enough', () => {
    assert.equal(verdict('violet hedgehogs juggle'), 'accepted');
  });

  test('the blocklist: case-insensitive, after NFKC (full-width letters are the same password)', () => {
    assert.deepEqual(['password', 'PASSWORD1', 'Qwerty123456', 'ｐａｓｓｗｏｒｄ', 'baseball1'].map((p) => verdict(p)), ['common', 'common', 'common', 'common', 'accepted']);
  });

  test('context-specific words: the username, the address and its local part, whatever the case', () => {
    const context = { username: 'Maija.Meikalainen', email: 'sea.otter.fan@example.fi' };
    assert.deepEqual(['maija.meikalainen', 'SEA.OTTER.FAN@EXAMPLE.FI', 'sea.otter.fan', 'sea.otter.fan and more'].map((p) => verdict(p, context)), ['context', 'context', 'context', 'accepted']);
  });

  test('refusals are invalid_argument on the password field, naming the rule', () => {
    assert.throws(() => checkPassword('short'), { name: 'PasswordRefused', code: 'invalid_argument', field: 'password', message: 'password must be at least 8 characters' });
    assert.equal(verdict(42), 'not a string');
  });
});
