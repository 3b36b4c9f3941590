import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ARGON2_PARAMETERS, DUMMY_HASH, dummyVerify, hashPassword, needsRehash, verifyPassword } from './passwords.ts';

describe('passwords', () => {
  test('hashes with argon2id and the published parameters', async () => {
    const hash = await hashPassword('correct horse battery staple');
    const { memoryCost, timeCost, parallelism } = ARGON2_PARAMETERS;
    assert.match(hash, new RegExp(String.raw`^\$argon2id\$v=19\$m=${memoryCost},t=${timeCost},p=${parallelism}\$`));
    assert.equal(needsRehash(hash), false);
  });

  test('salts every hash', async () => {
    assert.notEqual(await hashPassword('same password'), await hashPassword('same password'));
  });

  test('verifies the right password and refuses a wrong one', async () => {
    const hash = await hashPassword('s3cret-passw0rd');
    assert.equal(await verifyPassword(hash, 's3cret-passw0rd'), true);
    assert.equal(await verifyPassword(hash, 's3cret-passw0rD'), false);
    assert.equal(await verifyPassword(hash, ''), false);
  });

  test('compares Unicode passwords in NFKC form', async () => {
    const hash = await hashPassword('p\u00e4ssw\u00f6rd'); // composed ä, ö
    assert.equal(await verifyPassword(hash, 'pa\u0308sswo\u0308rd'), true); // decomposed
  });

  test('a malformed, foreign or missing hash is no match and never throws', async () => {
    for (const bad of ['', 'not a hash', '$argon2id$v=19$m=19456,t=2,p=1$short', '$2b$10$abcdefghijklmnopqrstuu', undefined]) {
      assert.equal(await verifyPassword(bad, 'whatever1'), false, String(bad));
    }
  });

  test('the dummy hash uses today\'s parameters, so unknown users cost the same time', async () => {
    assert.equal(needsRehash(DUMMY_HASH), false);
    await dummyVerify('anything');
  });

  test('hashes made with other parameters need a rehash', () => {
    assert.equal(needsRehash('$argon2id$v=19$m=4096,t=3,p=1$c29tZXNhbHRzb21lc2FsdA$RdescudvJCsgt3ub+b+dWRWJTmaaJObG'), true);
    assert.equal(needsRehash('garbage'), true);
  });
});
