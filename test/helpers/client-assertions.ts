/**
 * Client assertions (RFC 7523 §2.2) built by hand, for the error paths of JWT client
 * authentication and for probing the endpoints: a key pair, clients registered for
 * private_key_jwt and client_secret_jwt, and assertions with any claims and header.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import { sealClientSecret } from '../../src/crypto/key-encryption.ts';
import type { Store } from '../../src/storage/ports.ts';
import { createTestClient } from './fixtures.ts';

export const JWT_BEARER = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** The key-encryption key the suites that use client_secret_jwt run with. */
export const TEST_KEK = 'test key-encryption key, 40 characters..';

export interface SigningKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  alg: string;
  kid: string;
}

export async function signingKey(alg = 'ES256', kid: string = randomUUID()): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  return { privateKey, publicJwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }, alg, kid };
}

/** A client registered for private_key_jwt with `keys` inline (jwks) or, with `jwksUri`, at that URI. */
export async function addKeyClient(store: Store, options: { keys?: SigningKey[]; jwksUri?: string; metadata?: Record<string, unknown>; overrides?: Partial<Client> } = {}): Promise<Client> {
  const keys = options.jwksUri === undefined ? { jwks: { keys: (options.keys ?? []).map((key) => key.publicJwk) } } : { jwks_uri: options.jwksUri };
  const { client } = await createTestClient(store, { tokenEndpointAuthMethod: 'private_key_jwt', secretHash: undefined, refreshTokens: true, metadata: { ...keys, ...options.metadata }, ...options.overrides });
  return client;
}

/** A client registered for client_secret_jwt, its secret sealed with TEST_KEK as registration does. */
export async function addSecretJwtClient(store: Store, overrides: Partial<Client> = {}): Promise<{ client: Client; secret: string }> {
  const { client, clientSecret } = await createTestClient(store, { tokenEndpointAuthMethod: 'client_secret_jwt', refreshTokens: true, ...overrides });
  const sealed: Client = { ...client, secretSealed: sealClientSecret(clientSecret, TEST_KEK) };
  await store.clients.update(sealed);
  return { client: sealed, secret: clientSecret };
}

export interface AssertionOptions {
  /** Claims replacing (undefined: removing) the defaults iss = sub = clientId, aud, jti, iat, exp = now + 60 s. */
  claims?: Record<string, unknown>;
  /** Seconds since the epoch the default iat and exp count from. */
  now?: number;
  header?: Record<string, unknown>;
}

function claimsFor(clientId: string, audience: string | string[], options: AssertionOptions): Record<string, unknown> {
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = { iss: clientId, sub: clientId, aud: audience, jti: randomUUID(), iat: now, exp: now + 60, ...options.claims };
  return Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined));
}

/** An assertion signed with `key` (private_key_jwt). */
export async function keyAssertion(key: SigningKey, clientId: string, audience: string | string[], options: AssertionOptions = {}): Promise<string> {
  return new SignJWT(claimsFor(clientId, audience, options)).setProtectedHeader({ alg: key.alg, kid: key.kid, typ: 'JWT', ...options.header }).sign(key.privateKey);
}

/** An assertion MACed with `secret` (client_secret_jwt). */
export async function secretAssertion(secret: string, clientId: string, audience: string | string[], options: AssertionOptions = {}): Promise<string> {
  return new SignJWT(claimsFor(clientId, audience, options)).setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...options.header }).sign(new TextEncoder().encode(secret));
}

/** An unsecured JWT (alg none, RFC 7519 §6): never to be accepted. */
export function unsecuredAssertion(clientId: string, audience: string, options: AssertionOptions = {}): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(claimsFor(clientId, audience, options))}.`;
}

/** The form fields of an assertion. */
export const assertionFields = (assertion: string, extra: Record<string, string> = {}): Record<string, string> => ({ client_assertion_type: JWT_BEARER, client_assertion: assertion, ...extra });
