import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '../../domain/client.ts';
import { InvalidRedirectUri } from '../errors.ts';
import { checkRedirectUri, redirectUriMatches } from './check-redirect-uri.ts';

test('exact string match only, except the port of a native client\'s http loopback URIs (RFC 8252 §7.3)', () => {
  assert.ok(redirectUriMatches('https://a.example/cb', 'https://a.example/cb', true));
  assert.ok(!redirectUriMatches('https://a.example/cb', 'https://a.example/cb/', true));
  assert.ok(!redirectUriMatches('https://a.example:8443/cb', 'https://a.example:9443/cb', true), 'no port leeway for https');
  assert.ok(redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:60123/cb', true));
  assert.ok(redirectUriMatches('http://127.0.0.1:1/cb?x=1', 'http://127.0.0.1:2/cb?x=1', true));
  assert.ok(redirectUriMatches('http://[::1]:1/cb', 'http://[::1]/cb', true));
  assert.ok(redirectUriMatches('http://localhost:1', 'http://localhost:2', true));
  assert.ok(!redirectUriMatches('http://127.0.0.1:1/cb?x=1', 'http://127.0.0.1:2/cb?x=2', true));
  assert.ok(!redirectUriMatches('http://127.0.0.1/cb', 'http://localhost/cb', true));
  assert.ok(!redirectUriMatches('http://localhost/cb', 'http://localhost.evil.test/cb', true));
  assert.ok(!redirectUriMatches('http://localhost/cb', 'http://localhost:80@evil.test/cb', true));
  assert.ok(!redirectUriMatches('http://127.0.0.1/cb', 'http://127.0.0.1:65536/cb', true));
  assert.ok(!redirectUriMatches('http://127.0.0.1:1', 'http://127.0.0.1:2/', true));
});

test('a web client compares loopback URIs exactly: no other port (RFC 8252 §7.3 is for native apps)', () => {
  for (const [registered, requested] of [['http://127.0.0.1/cb', 'http://127.0.0.1:60123/cb'], ['http://127.0.0.1:8080/manage/callback', 'http://127.0.0.1:8081/manage/callback'], ['http://[::1]:1/cb', 'http://[::1]/cb'], ['http://localhost:1', 'http://localhost:2']] as const) {
    assert.equal(redirectUriMatches(registered, requested, false), false, requested);
    assert.equal(redirectUriMatches(registered, requested, true), true, requested);
  }
  assert.equal(redirectUriMatches('http://127.0.0.1:8080/cb', 'http://127.0.0.1:8080/cb', false), true, 'an exact match');
  const web = { clientId: 'w', redirectUris: ['http://127.0.0.1:8080/cb'], metadata: {} } as unknown as Client;
  const native = { ...web, metadata: { application_type: 'native' } } as Client;
  assert.throws(() => checkRedirectUri(web, { redirect_uri: 'http://127.0.0.1:9090/cb' }), (error: unknown) => error instanceof InvalidRedirectUri && error.description === 'The redirect_uri is not registered for this client.');
  assert.equal(checkRedirectUri(native, { redirect_uri: 'http://127.0.0.1:9090/cb' }), 'http://127.0.0.1:9090/cb');
});

test('a loopback port is 1 to 65535 without leading zeros: 0, 009 and 00080 match no registered URI', () => {
  for (const port of ['0', '00', '009', '00080', '065535', '65536']) {
    assert.ok(!redirectUriMatches('http://127.0.0.1/cb', `http://127.0.0.1:${port}/cb`, true), port);
    assert.ok(!redirectUriMatches('http://[::1]:8080/cb', `http://[::1]:${port}/cb`, true), port);
  }
  for (const port of ['1', '9', '80', '65535']) assert.ok(redirectUriMatches('http://localhost/cb', `http://localhost:${port}/cb`, true), port);
});

test('checkRedirectUri refuses a non-canonical port with a clear error, even one registered exactly', () => {
  const client = { clientId: 'c', redirectUris: ['http://127.0.0.1/cb', 'http://127.0.0.1:0/cb', 'https://rp.example:0443/cb'], metadata: { application_type: 'native' } } as unknown as Client;
  const rule = 'The redirect_uri is not acceptable: a port must be a number from 1 to 65535 without leading zeros (RFC 8252 section 7.3).';
  for (const uri of ['http://127.0.0.1:0/cb', 'http://127.0.0.1:009/cb', 'https://rp.example:0443/cb', 'http://[::1]:0/cb', 'http://127.0.0.1:/cb']) {
    assert.throws(() => checkRedirectUri(client, { redirect_uri: uri }), (error: unknown) => error instanceof InvalidRedirectUri && error.description === rule, uri);
  }
  assert.equal(checkRedirectUri(client, { redirect_uri: 'http://127.0.0.1:9/cb' }), 'http://127.0.0.1:9/cb');
});
