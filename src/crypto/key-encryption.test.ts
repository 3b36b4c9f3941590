import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decryptPrivateKey, encryptPrivateKey } from './key-encryption.ts';

const SECRET = 'correct horse battery staple';
const PLAINTEXT = JSON.stringify({ kty: 'RSA', n: 'bW9kdWx1cw', e: 'AQAB', d: 'c2VjcmV0LWV4cG9uZW50', note: 'ääkköset ✓' });

/** The sealed value with one character of part `index` (0 version, 1 iv, 2 body, 3 tag) changed. */
function tampered(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const part = parts[index]!;
  parts[index] = (part[0] === 'A' ? 'B' : 'A') + part.slice(1);
  return parts.join('.');
}

describe('private key encryption', () => {
  test('decrypting with the same secret gives back the plaintext', () => {
    assert.equal(decryptPrivateKey(encryptPrivateKey(PLAINTEXT, SECRET), SECRET), PLAINTEXT);
  });

  test('the sealed form is v1.<iv>.<ciphertext>.<tag> and shows nothing of the plaintext', () => {
    const sealed = encryptPrivateKey(PLAINTEXT, SECRET);
    const [version, iv, body, tag, ...rest] = sealed.split('.');
    assert.equal(version, 'v1');
    assert.deepEqual(rest, []);
    assert.equal(Buffer.from(iv!, 'base64url').length, 12);
    assert.equal(Buffer.from(tag!, 'base64url').length, 16);
    assert.equal(Buffer.from(body!, 'base64url').length, Buffer.byteLength(PLAINTEXT));
    for (const piece of ['"d"', 'c2VjcmV0LWV4cG9uZW50', 'RSA', SECRET]) assert.ok(!sealed.includes(piece), piece);
  });

  test('each encryption uses a fresh IV, so equal plaintexts seal differently', () => {
    const a = encryptPrivateKey(PLAINTEXT, SECRET);
    const b = encryptPrivateKey(PLAINTEXT, SECRET);
    assert.notEqual(a, b);
    assert.notEqual(a.split('.')[1], b.split('.')[1]);
  });

  for (const [index, part] of [
    [1, 'IV'],
    [2, 'ciphertext'],
    [3, 'tag'],
  ] as const) {
    test(`a tampered ${part} is rejected`, () => {
      const sealed = encryptPrivateKey(PLAINTEXT, SECRET);
      assert.throws(() => decryptPrivateKey(tampered(sealed, index), SECRET), Error);
    });
  }

  test('a wrong secret is rejected with an error naming GATEHOUSE_KEY_ENCRYPTION_KEY', () => {
    const sealed = encryptPrivateKey(PLAINTEXT, SECRET);
    assert.throws(() => decryptPrivateKey(sealed, 'another secret'), /GATEHOUSE_KEY_ENCRYPTION_KEY/);
    assert.throws(() => decryptPrivateKey(sealed, `${SECRET} `), /GATEHOUSE_KEY_ENCRYPTION_KEY/);
  });

  test('something that is not a sealed key is rejected as such', () => {
    for (const bad of [PLAINTEXT, '', 'v1.a.b', 'v2.aaaa.bbbb.cccc', 'v1..bbbb.cccc']) {
      assert.throws(() => decryptPrivateKey(bad, SECRET), /unrecognised encrypted key format/, bad);
    }
  });
});
