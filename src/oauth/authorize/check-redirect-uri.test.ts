import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redirectUriMatches } from './check-redirect-uri.ts';

test('exact string match only, except the port of http loopback URIs (RFC 8252 §7.3)', () => {
  assert.ok(redirectUriMatches('https://a.example/cb', 'https://a.example/cb'));
  assert.ok(!redirectUriMatches('https://a.example/cb', 'https://a.example/cb/'));
  assert.ok(!redirectUriMatches('https://a.example:8443/cb', 'https://a.example:9443/cb'), 'no port leeway for https');
  assert.ok(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:60123/cb'));
  assert.ok(redirectUriMatches('http://127.0.0.1:1/cb?x=1', 'http://127.0.0.1:2/cb?x=1'));
  assert.ok(redirectUriMatches('http://[::1]:1/cb', 'http://[::1]/cb'));
  assert.ok(redirectUriMatches('http://localhost:1', 'http://localhost:2'));
  assert.ok(!redirectUriMatches('http://127.0.0.1:1/cb?x=1', 'http://127.0.0.1:2/cb?x=2'));
  assert.ok(!redirectUriMatches('http://127.0.0.1/cb', 'http://localhost/cb'));
  assert.ok(!redirectUriMatches('http://localhost/cb', 'http://localhost.evil.test/cb'));
  assert.ok(!redirectUriMatches('http://localhost/cb', 'http://localhost:80@evil.test/cb'));
  assert.ok(!redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:65536/cb'));
  assert.ok(!redirectUriMatches('http://127.0.0.1:1', 'http://127.0.0.1:2/'));
});
