// Discovery's authorization-endpoint lists come from the code that implements them: the response
// modes from this registry, the response types from the response-type check, the PKCE methods
// from the list the PKCE check accepts. Equality, both ways: what is advertised is served and
// what is served is advertised (test/http/discovery.test.ts checks the same over HTTP).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Client } from '../../../domain/client.ts';
import { PKCE_METHODS } from '../../../domain/client.ts';
import { discoveryDocument } from '../../discovery.ts';
import { InvalidRequest, UnsupportedResponseType } from '../../errors.ts';
import { checkPkceRequest } from '../../pkce.ts';
import { checkResponseMode } from '../check-response-mode.ts';
import { checkResponseType, RESPONSE_TYPES } from '../check-response-type.ts';
import { DEFAULT_RESPONSE_MODE, RESPONSE_MODES } from './registry.ts';

/** Registered values (IANA OAuth Authorization Endpoint Response Types / Response Modes, RFC 7636), implemented or not. */
const KNOWN_RESPONSE_MODES = ['query', 'fragment', 'form_post', 'query.jwt', 'fragment.jwt', 'form_post.jwt', 'jwt', 'web_message'];
const KNOWN_RESPONSE_TYPES = ['code', 'token', 'id_token', 'code id_token', 'code token', 'id_token token', 'code id_token token', 'none'];
const KNOWN_PKCE_METHODS = ['S256', 'plain', 'S512'];

const metadata = discoveryDocument({ issuer: 'https://sso.example', clientAuth: { keyEncryptionKey: true } });
const client = { grantTypes: ['authorization_code'], redirectUris: [], codeChallengeMethod: undefined, tokenEndpointAuthMethod: 'client_secret_basic' } as unknown as Client;
const accepted = (values: readonly string[], check: (value: string) => unknown) =>
  values.filter((value) => {
    try {
      check(value);
      return true;
    } catch (error) {
      if (error instanceof InvalidRequest || error instanceof UnsupportedResponseType) return false;
      throw error;
    }
  });

test('response_modes_supported is exactly the registry, and the check accepts exactly those (RM-08)', () => {
  assert.deepEqual(metadata.response_modes_supported, RESPONSE_MODES.map((mode) => mode.name));
  assert.deepEqual(accepted(KNOWN_RESPONSE_MODES, (value) => checkResponseMode({ response_mode: value }, 'https://rp.example/cb')), metadata.response_modes_supported);
  assert.equal(new Set(RESPONSE_MODES.map((mode) => mode.name)).size, RESPONSE_MODES.length, 'each name once');
  assert.equal(checkResponseMode({}, 'https://rp.example/cb'), DEFAULT_RESPONSE_MODE);
  assert.equal(DEFAULT_RESPONSE_MODE.name, 'query', 'the default for response_type=code (Multiple Response Types §2.1)');
});

test('response_types_supported and code_challenge_methods_supported are exactly what the checks accept (RM-08)', () => {
  assert.deepEqual(metadata.response_types_supported, [...RESPONSE_TYPES]);
  assert.deepEqual(accepted(KNOWN_RESPONSE_TYPES, (value) => checkResponseType(value, client)), metadata.response_types_supported);
  assert.deepEqual(metadata.code_challenge_methods_supported, [...PKCE_METHODS]);
  assert.deepEqual(accepted(KNOWN_PKCE_METHODS, (value) => checkPkceRequest(client, 'A'.repeat(43), value)), metadata.code_challenge_methods_supported);
});
