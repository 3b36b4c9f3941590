/**
 * Test fixtures for the back channel: clients, users and authorization codes put straight into
 * the store, so the token, userinfo, introspection and revocation suites do not depend on the
 * login page.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '../../src/domain/client.ts';
import type { AuthorizationCode } from '../../src/domain/grant.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import type { Store } from '../../src/storage/ports.ts';
import { createTestClient } from './fixtures.ts';

export const REDIRECT_URI = 'https://rp.example.com/callback';

/** A confidential client with refresh tokens, registered for REDIRECT_URI (see createTestClient). */
export async function addClient(store: Store, overrides: Partial<Client> = {}): Promise<{ client: Client; secret: string }> {
  const { client, clientSecret } = await createTestClient(store, { clientId: randomUUID(), name: 'test client', redirectUris: [REDIRECT_URI], refreshTokens: true, ...overrides });
  return { client, secret: clientSecret };
}

export async function addUser(store: Store, overrides: Partial<User> = {}): Promise<User> {
  const now = Date.now();
  const user: User = {
    id: randomUUID(),
    username: `user-${randomUUID()}`,
    status: 'enabled',
    givenName: 'Ada',
    familyName: 'Lovelace',
    email: 'ada@example.com',
    emailVerified: false,
    organizationId: undefined,
    attributes: {},
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
  await store.users.insert(user, undefined);
  return user;
}

export interface MintedCode {
  code: string;
  row: AuthorizationCode;
}

/** An authorization code as the authorization endpoint would have issued it after a login. */
export async function mintCode(store: Store, client: Client, user: User, overrides: Partial<AuthorizationCode> & { now?: number } = {}): Promise<MintedCode> {
  const code = randomBytes(32).toString('base64url');
  const now = overrides.now ?? Date.now();
  const row: AuthorizationCode = {
    codeHash: hashSecret(code),
    clientId: client.clientId,
    userId: user.id,
    redirectUri: client.redirectUris[0]!,
    scope: 'openid profile email',
    nonce: undefined,
    codeChallenge: undefined,
    codeChallengeMethod: undefined,
    sessionIndex: `_${randomBytes(20).toString('hex')}`,
    authTime: now - 5000,
    amr: ['pwd'],
    acr: undefined,
    createdAt: now,
    expiresAt: now + 60_000,
    consumedAt: undefined,
    ...overrides,
  };
  await store.codes.insert(row);
  return { code, row };
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export function basic(clientId: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

export async function postForm(url: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}
