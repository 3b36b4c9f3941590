/**
 * What the scenarios need in the store, put there directly through the store's ports (as
 * test/helpers/back-channel.ts does): clients, users, live tokens and fresh authorization codes.
 * S3's measured rounds mint their codes through the authorization endpoint instead, once the
 * front channel answers (bench/lib/front-channel.ts); `mintCodes` serves its warm-up.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parsePolicyDocument } from '../../src/domain/policy.ts';
import type { JWK } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import type { AuthorizationCode, Token } from '../../src/domain/grant.ts';
import type { User } from '../../src/domain/user.ts';
import { hashPassword } from '../../src/identity/passwords.ts';
import { systemClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { InvalidClientMetadata, registerClient, type ClientWithSecret } from '../../src/oauth/client-registration.ts';
import type { Store } from '../../src/storage/ports.ts';
import { ASSERTION_ALG } from './assertions.ts';

export const REDIRECT_URI = 'https://rp.example.com/callback';
export const SCOPE = 'openid profile email';
const DAY_MS = 86_400_000;

export interface ClientCredentials {
  clientId: string;
  /** `Basic …` for client_secret_basic (RFC 6749 §2.3.1). */
  basic: string;
}

export interface Fixture {
  /** The relying party: code exchange and refresh without rotation. */
  rp: ClientCredentials;
  /** A relying party like `rp` whose ID tokens are signed with ES256 (S3-ES). */
  rpEs: ClientCredentials;
  /** A relying party whose refresh tokens rotate on use. */
  rotating: ClientCredentials;
  /** A resource server that introspects tokens. */
  rs: ClientCredentials;
  /** A resource server registered for JWT access tokens (RFC 9068), in the rp's `aud`: S3j's audience. */
  jwtRs: ClientCredentials;
  userId: string;
  /** A user with an argon2id password, for the login scenarios. */
  login: { username: string; password: string };
  /** A live access token of the user for the rp, scope openid profile email. */
  accessToken: string;
  /** A live refresh token of the user for the rp (rotation off, reusable). */
  refreshToken: string;
  /**
   * S10: a live access token of a user with attributes, a group and an organization, for a client
   * whose authorization policy releases five claims to introspection.
   */
  policyAccessToken: string;
}

/** S10's policy: five claims, one of each kind of source (docs/authorization.md). */
export function benchPolicy(name: string): unknown {
  return {
    name,
    access: { groups: [name] },
    claims: [
      { claim: 'department', from: 'attribute:department' },
      { claim: 'groups', from: 'groups' },
      { claim: 'org', from: 'organization.technicalName' },
      { claim: 'mail', from: 'user.email' },
      { claim: 'tenant', value: 'acme' },
    ],
  };
}

export function basic(clientId: string, secret: string): string {
  const enc = (v: string) => encodeURIComponent(v).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${enc(clientId)}:${enc(secret)}`).toString('base64')}`;
}

async function addClient(store: Store, name: string, overrides: Partial<Client>): Promise<ClientCredentials> {
  const secret = randomBytes(32).toString('base64url');
  const now = Date.now();
  const client: Client = {
    clientId: randomUUID(),
    name,
    secretHash: hashSecret(secret),
    active: true,
    redirectUris: [REDIRECT_URI],
    tokenEndpointAuthMethod: 'client_secret_basic',
    grantTypes: ['authorization_code', 'refresh_token'],
    codeChallengeMethod: undefined,
    scope: undefined,
    refreshTokens: true,
    rotateRefreshTokens: false,
    idTokenSignedResponseAlg: 'RS256',
    userinfoSignedResponseAlg: undefined,
    accessTokenTtl: undefined,
    postLogoutRedirectUris: [],
    metadata: { client_name: name, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic' },
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
  await store.clients.insert(client);
  return { clientId: client.clientId, basic: basic(client.clientId, secret) };
}

export function aUser(username: string): User {
  const now = Date.now();
  return {
    id: randomUUID(),
    username,
    status: 'enabled',
    givenName: 'Ada',
    familyName: 'Lovelace',
    email: `${username}@example.com`,
    emailVerified: false,
    organizationId: undefined,
    attributes: {},
    createdAt: now,
    updatedAt: now,
  };
}

const sessionIndex = () => `_${randomBytes(20).toString('hex')}`;

function tokenRow(kind: Token['kind'], raw: string, clientId: string, userId: string, now: number): Token {
  return {
    tokenHash: hashSecret(raw),
    kind,
    clientId,
    userId,
    scope: SCOPE,
    sessionIndex: sessionIndex(),
    authTime: now - 5000,
    amr: ['pwd'],
    acr: undefined,
    codeHash: undefined,
    familyId: randomUUID(),
    createdAt: now,
    expiresAt: now + DAY_MS,
    revokedAt: undefined,
    rotatedAt: undefined,
  };
}

export async function seedFixture(store: Store): Promise<Fixture> {
  const tag = randomBytes(4).toString('hex');
  const jwtRs = await addClient(store, `bench JWT resource server ${tag}`, { grantTypes: [], refreshTokens: false, metadata: { client_name: `bench JWT resource server ${tag}`, grant_types: [], access_token_format: 'jwt' } });
  // The rp may ask for jwtRs as an audience (S3j); S3's scope names none, so its tokens stay opaque.
  const rp = await addClient(store, `bench rp ${tag}`, { metadata: { client_name: `bench rp ${tag}`, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic', aud: [jwtRs.clientId] } });
  const rotating = await addClient(store, `bench rotating rp ${tag}`, { rotateRefreshTokens: true });
  const rpEs = await addClient(store, `bench ES256 rp ${tag}`, {
    idTokenSignedResponseAlg: 'ES256',
    metadata: { client_name: `bench ES256 rp ${tag}`, redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: 'client_secret_basic', id_token_signed_response_alg: 'ES256' },
  });
  const rs = await addClient(store, `bench resource server ${tag}`, { grantTypes: [], refreshTokens: false, redirectUris: [REDIRECT_URI] });
  const user = aUser(`bench-${tag}`);
  await store.users.insert(user, undefined);
  const login = { username: `bench-login-${tag}`, password: `correct horse battery ${tag}` };
  await store.users.insert(aUser(login.username), await hashPassword(login.password));

  const now = Date.now();
  const accessToken = randomBytes(32).toString('base64url');
  const refreshToken = randomBytes(32).toString('base64url');
  await store.tokens.insertMany([tokenRow('access_token', accessToken, rp.clientId, user.id, now), tokenRow('refresh_token', refreshToken, rp.clientId, user.id, now)]);

  // S10: the policy, its client, and a user it lets in, in a group and an organization, with attributes.
  const policyName = `bench-policy-${tag}`;
  await store.policies.insert({ document: parsePolicyDocument(benchPolicy(policyName)), version: 1, createdAt: now, updatedAt: now });
  const policyRp = await addClient(store, `bench policy rp ${tag}`, { authorizationPolicy: policyName });
  const organization = { id: randomUUID(), parentId: undefined, technicalName: `bench-org-${tag}`, friendlyName: 'Bench organization', type: undefined, virtual: false, attributes: {}, createdAt: now, updatedAt: now };
  await store.organizations.insert(organization);
  const member = { ...aUser(`bench-member-${tag}`), organizationId: organization.id, attributes: { department: ['Sales', 'Legal'] } };
  await store.users.insert(member, undefined);
  const group = { id: randomUUID(), name: policyName, description: undefined, createdAt: now, administrator: false };
  await store.groups.insert(group);
  await store.groups.addMember(group.id, member.id);
  const policyAccessToken = randomBytes(32).toString('base64url');
  await store.tokens.insert(tokenRow('access_token', policyAccessToken, policyRp.clientId, member.id, now));
  return { rp, rpEs, rotating, rs, jwtRs, userId: user.id, login, accessToken, refreshToken, policyAccessToken };
}

/** `count` fresh authorization codes for the rp (or `clientId`), as the authorization endpoint would issue them. */
export async function mintCodes(store: Store, fixture: Fixture, count: number, scope = SCOPE, clientId = fixture.rp.clientId): Promise<string[]> {
  const codes: string[] = [];
  const now = Date.now();
  const rows: AuthorizationCode[] = [];
  for (let i = 0; i < count; i++) {
    const code = randomBytes(32).toString('base64url');
    codes.push(code);
    rows.push({
      codeHash: hashSecret(code),
      clientId,
      userId: fixture.userId,
      redirectUri: REDIRECT_URI,
      scope,
      nonce: randomBytes(12).toString('base64url'),
      codeChallenge: undefined,
      codeChallengeMethod: undefined,
      sessionIndex: sessionIndex(),
      authTime: now - 5000,
      amr: ['pwd'],
      acr: undefined,
      createdAt: now,
      // Long enough to outlive the round they are minted for.
      expiresAt: now + 15 * 60_000,
      consumedAt: undefined,
    });
  }
  for (let i = 0; i < rows.length; i += 64) await Promise.all(rows.slice(i, i + 64).map((row) => store.codes.insert(row)));
  return codes;
}

/** `count` live refresh tokens of the user for the rotating client, each of its own family. */
export async function mintRefreshTokens(store: Store, fixture: Fixture, count: number): Promise<string[]> {
  const now = Date.now();
  const raws: string[] = [];
  const pending: Promise<void>[] = [];
  for (let i = 0; i < count; i += 500) {
    const batch: Token[] = [];
    for (let j = i; j < Math.min(count, i + 500); j++) {
      const raw = randomBytes(32).toString('base64url');
      raws.push(raw);
      batch.push(tokenRow('refresh_token', raw, fixture.rotating.clientId, fixture.userId, now));
    }
    pending.push(store.tokens.insertMany(batch));
    if (pending.length >= 4) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  return raws;
}

/**
 * The machine clients of S7–S9, registered through gatehouse's own registration use case with
 * their RFC 7591 metadata (as `gatehouse client create --metadata-file` does), so the fixture
 * depends on the wire names only, not on how the store keeps them. A document registration
 * refuses (a gatehouse without that grant or method) leaves the reason instead of a client.
 */
export interface MachineClients {
  /** S7: client_credentials with client_secret_basic. */
  ccBasic: ClientCredentials | string;
  /** S8: client_credentials with private_key_jwt and the bench's ES256 key. */
  ccJwt: { clientId: string } | string;
  /** S9: a public client of the device authorization grant. */
  device: { clientId: string } | string;
}

export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

export async function seedMachineClients(store: Store, clientJwk: JWK): Promise<MachineClients> {
  const deps = { clients: store.clients, transaction: store.transaction, clock: systemClock, random: cryptoRandom };
  const tag = randomBytes(4).toString('hex');
  const register = async <T>(document: Record<string, unknown>, done: (registered: ClientWithSecret) => T): Promise<T | string> => {
    try {
      return done(await registerClient(deps, document));
    } catch (error) {
      if (error instanceof InvalidClientMetadata) return `registration refuses the client (${error.message})`;
      throw error;
    }
  };
  return {
    ccBasic: await register(
      { client_name: `bench service ${tag}`, grant_types: ['client_credentials'], token_endpoint_auth_method: 'client_secret_basic', redirect_uris: [] },
      ({ client, clientSecret }) => ({ clientId: client.clientId, basic: basic(client.clientId, clientSecret!) }),
    ),
    ccJwt: await register(
      {
        client_name: `bench service with a key ${tag}`,
        grant_types: ['client_credentials'],
        token_endpoint_auth_method: 'private_key_jwt',
        token_endpoint_auth_signing_alg: ASSERTION_ALG,
        jwks: { keys: [clientJwk] },
        redirect_uris: [],
      },
      ({ client }) => ({ clientId: client.clientId }),
    ),
    device: await register(
      { client_name: `bench TV ${tag}`, grant_types: [DEVICE_CODE_GRANT], token_endpoint_auth_method: 'none', redirect_uris: [] },
      ({ client }) => ({ clientId: client.clientId }),
    ),
  };
}
