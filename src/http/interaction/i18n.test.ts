import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chooseLocale, messages } from './i18n.ts';
import { en } from './i18n/en.ts';

test('ui_locales first, then Accept-Language by weight, then English', () => {
  assert.equal(chooseLocale('de fi', 'sv'), 'fi');
  assert.equal(chooseLocale('SV-se', undefined), 'sv');
  assert.equal(chooseLocale(undefined, 'de, fi;q=0.5, sv;q=0.7'), 'sv');
  assert.equal(chooseLocale('', 'fi-FI,fi;q=0.9'), 'fi');
  assert.equal(chooseLocale(undefined, 'fi;q=0'), 'en');
  assert.equal(chooseLocale(undefined, ';;;,,q=,'), 'en');
  assert.equal(chooseLocale(undefined, undefined), 'en');
});

test('every bundle has every text, and none is empty', () => {
  for (const locale of ['en', 'fi', 'sv'] as const) {
    const bundle = messages(locale);
    assert.deepEqual(Object.keys(bundle).sort(), Object.keys(en).sort());
    for (const [key, text] of Object.entries(bundle)) assert.ok(text.trim() !== '', `${locale}.${key}`);
  }
});
