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

/** Every text of a bundle by its dotted key: `signInErrors.invalid_client`. */
function flatten(bundle: object, prefix = ''): [string, unknown][] {
  return Object.entries(bundle).flatMap(([key, value]) => (typeof value === 'object' && value !== null ? flatten(value as object, `${prefix}${key}.`) : [[`${prefix}${key}`, value] as [string, unknown]]));
}

test('every bundle has every text, error texts included, and none is empty', () => {
  const keys = flatten(en).map(([key]) => key).sort();
  assert.ok(keys.includes('signInErrors.invalid_client') && keys.includes('signOutErrors.other'));
  for (const locale of ['en', 'fi', 'sv'] as const) {
    const texts = flatten(messages(locale));
    assert.deepEqual(texts.map(([key]) => key).sort(), keys, locale);
    for (const [key, text] of texts) assert.ok(typeof text === 'string' && text.trim() !== '', `${locale}.${key}`);
    if (locale !== 'en') for (const [key, text] of texts) assert.notEqual(text, flatten(en).find(([k]) => k === key)?.[1], `${locale}.${key} is translated`);
  }
});
