import assert from 'node:assert/strict';
import { test } from 'node:test';
import { withParams } from './authorization.ts';

test('response parameters are appended to the redirect URI, keeping its query byte for byte (RFC 6749 §3.1.2)', () => {
  assert.equal(withParams('https://a.example/cb', { code: 'c', state: undefined }), 'https://a.example/cb?code=c');
  assert.equal(withParams('https://a.example/cb?x=%2F', { code: 'c' }), 'https://a.example/cb?x=%2F&code=c');
  assert.equal(withParams('https://a.example/cb?', { code: 'c' }), 'https://a.example/cb?code=c');
  assert.equal(withParams('com.example.app:/cb', { state: '-._~ &=' }), 'com.example.app:/cb?state=-._~%20%26%3D');
  assert.equal(withParams('https://a.example/cb?x=1', {}), 'https://a.example/cb?x=1');
});
