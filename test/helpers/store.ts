import { after, before } from 'node:test';
/**
 * A store on a fresh test database, and builders for valid domain objects. Builders take
 * overrides and fill everything else with unique random values, so tests sharing one database
 * never collide: `aUser({ username: 'alice' })`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '../../src/domain/client.ts';
import type { AuthorizationCode, ClientToken, UserToken } from '../../src/domain/grant.ts';
import type { Group } from '../../src/domain/group.ts';
import type { Organization } from '../../src/domain/organization.ts';
import type { SsoSession } from '../../src/domain/session.ts';
import type { SigningKey } from '../../src/domain/signing-key.ts';
import type { User } from '../../src/domain/user.ts';
import type { Store } from '../../src/storage/ports.ts';
import type { OpenOptions } from '../../src/storage/sql/database.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import type { TestDatabase, TestDatabaseKind } from './databases.ts';

/** A fixed "now" for stored times: 2026-01-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 0, 1);

export interface TestStore {
  store: SqlStore;
  database: TestDatabase;
  /** Opens one more store on the same database (another instance's connections); `close` closes it too. */
  open(options?: OpenOptions): Promise<SqlStore>;
  /** Closes every store opened here, then drops the database. */
  close(): Promise<void>;
}

/** Opens a store (migrations run) on a fresh, empty database of `kind`. */
export async function openTestStore(kind: TestDatabaseKind, options: OpenOptions = {}): Promise<TestStore> {
  const database = await kind.create();
  const opened: SqlStore[] = [];
  const open = async (more: OpenOptions = options) => {
    const store = await openSqlStore(database.url, more);
    opened.push(store);
    return store;
  };
  try {
    const store = await open(options);
    return {
      store,
      database,
      open,
      async close() {
        await Promise.all(opened.map((s) => s.close()));
        await database.drop();
      },
    };
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Runs `work` on a store over its own fresh database, which is dropped afterwards. */
export async function withTestStore<T>(kind: TestDatabaseKind, work: (store: SqlStore, test: TestStore) => Promise<T>, options: OpenOptions = {}): Promise<T> {
  const test = await openTestStore(kind, options);
  try {
    return await work(test.store, test);
  } finally {
    await test.close();
  }
}

/**
 * Opens `connections` connections in the store's pool (PostgreSQL) by running that many queries at
 * once, so that a race run next really runs side by side instead of queueing on connection setup.
 */
export async function warmUp(store: Store, connections: number): Promise<void> {
  await Promise.all(Array.from({ length: connections }, () => store.ping()));
}

/**
 * For a describe block whose tests race two instances: registers the hooks that open a fresh test
 * store and another instance's store on the same database, each warmed to `racers / 2`
 * connections, and closes them after. Read `store` and `other` inside the tests.
 */
export function twoInstances(kind: TestDatabaseKind, racers: number): { readonly store: Store; readonly other: Store } {
  let harness: TestStore | undefined;
  const instances = {} as { store: Store; other: Store };
  before(async () => {
    harness = await openTestStore(kind, { poolSize: racers / 2 });
    instances.store = harness.store;
    instances.other = await harness.open({ poolSize: racers / 2 });
    await Promise.all([warmUp(instances.store, racers / 2), warmUp(instances.other, racers / 2)]);
  });
  after(async () => harness?.close());
  return instances;
}

/** A short random name part, to make usernames, group names and filter prefixes unique. */
export function unique(prefix = 'x'): string {
  return `${prefix}${randomBytes(5).toString('hex')}`;
}

/** A random 256-bit value in base64url, as the stored SHA-256 of a token, code or session id looks. */
export function aHash(): string {
  return randomBytes(32).toString('base64url');
}

/** `_` followed by 40 hex characters, like a session_index. */
export function aSessionIndex(): string {
  return `_${randomBytes(20).toString('hex')}`;
}

export function aClient(overrides: Partial<Client> = {}): Client {
  return {
    clientId: unique('client-'),
    name: 'Test client',
    secretHash: aHash(),
    active: true,
    redirectUris: ['https://rp.example/callback', 'https://rp.example/other'],
    tokenEndpointAuthMethod: 'client_secret_basic',
    grantTypes: ['authorization_code', 'refresh_token'],
    codeChallengeMethod: 'S256',
    scope: 'openid profile email',
    refreshTokens: true,
    rotateRefreshTokens: false,
    idTokenSignedResponseAlg: 'RS256',
    userinfoSignedResponseAlg: undefined,
    accessTokenTtl: 600,
    postLogoutRedirectUris: ['https://rp.example/bye'],
    metadata: { client_name: 'Test client', contacts: ['ops@rp.example'], nested: { n: 1, flag: true, none: null } },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function aUser(overrides: Partial<User> = {}): User {
  return {
    id: randomUUID(),
    username: unique('user-'),
    status: 'enabled',
    givenName: 'Test',
    familyName: 'User',
    email: `${unique('mail-')}@example.com`,
    emailVerified: false,
    organizationId: undefined,
    attributes: {},
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function anOrganization(overrides: Partial<Organization> = {}): Organization {
  return {
    id: randomUUID(),
    parentId: undefined,
    technicalName: unique('org-'),
    friendlyName: 'Test organization',
    type: 'company',
    virtual: false,
    attributes: {},
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

export function aGroup(overrides: Partial<Group> = {}): Group {
  return {
    id: randomUUID(),
    name: unique('group-'),
    description: 'A test group',
    createdAt: T0,
    administrator: false,
    ...overrides,
  };
}

/** A live session from T0: 30 minutes of inactivity, 8 hours at most. Pass the `userId` of a stored user. */
export function aSession(overrides: Partial<SsoSession> & { userId: string }): SsoSession {
  return {
    idHash: aHash(),
    sessionIndex: aSessionIndex(),
    authTime: T0,
    amr: ['pwd'],
    acr: 'urn:example:password',
    createdAt: T0,
    expiresAt: T0 + 30 * 60_000,
    maxExpiresAt: T0 + 8 * 3_600_000,
    ...overrides,
  };
}

/** An unconsumed authorization code issued at T0, valid for 60 s. */
export function aCode(overrides: Partial<AuthorizationCode> = {}): AuthorizationCode {
  return {
    codeHash: aHash(),
    clientId: unique('client-'),
    userId: randomUUID(),
    redirectUri: 'https://rp.example/callback',
    scope: 'openid profile',
    nonce: unique('nonce-'),
    codeChallenge: aHash(),
    codeChallengeMethod: 'S256',
    sessionIndex: aSessionIndex(),
    authTime: T0,
    amr: ['pwd', 'mfa'],
    acr: 'urn:example:strong',
    createdAt: T0,
    expiresAt: T0 + 60_000,
    consumedAt: undefined,
    ...overrides,
  };
}

/** A live access token issued at T0 for an hour; pass `kind: 'refresh_token'` for a refresh token. */
/** A token; like gatehouse's own, one that descends from a code is in the family named by its hash. */
/** A user's token (the subject a user). */
export function aToken(overrides: Partial<UserToken> = {}): UserToken {
  const codeHash = 'codeHash' in overrides ? overrides.codeHash : aHash();
  return {
    tokenHash: aHash(),
    kind: 'access_token',
    clientId: unique('client-'),
    userId: randomUUID(),
    scope: 'openid profile',
    sessionIndex: aSessionIndex(),
    authTime: T0,
    amr: ['pwd'],
    acr: undefined,
    codeHash,
    familyId: codeHash ?? randomUUID(),
    createdAt: T0,
    expiresAt: T0 + 3_600_000,
    revokedAt: undefined,
    rotatedAt: undefined,
    ...overrides,
  };
}

/** A token whose subject is its client (client_credentials): no user, no session, a family of its own. */
export function aClientToken(overrides: Partial<ClientToken> = {}): ClientToken {
  const tokenHash = overrides.tokenHash ?? aHash();
  return {
    tokenHash,
    kind: 'access_token',
    clientId: unique('client-'),
    userId: undefined,
    sessionIndex: undefined,
    authTime: undefined,
    amr: undefined,
    acr: undefined,
    scope: '',
    codeHash: undefined,
    familyId: tokenHash,
    createdAt: T0,
    expiresAt: T0 + 3_600_000,
    revokedAt: undefined,
    rotatedAt: undefined,
    ...overrides,
  };
}

/** An active signing key row. The JWKs are stand-ins: the store never looks inside them. */
export function aSigningKey(overrides: Partial<SigningKey> = {}): SigningKey {
  const kid = overrides.kid ?? aHash().slice(0, 43);
  return {
    kid,
    alg: 'RS256',
    publicJwk: { kty: 'RSA', n: aHash(), e: 'AQAB', kid, use: 'sig', alg: 'RS256' },
    privateJwk: JSON.stringify({ kty: 'RSA', n: 'n', e: 'AQAB', d: aHash(), kid }),
    encrypted: false,
    createdAt: T0,
    retiredAt: undefined,
    publishUntil: undefined,
    ...overrides,
  };
}

/** Inserts a user (with no password unless given) and returns it. */
export async function aStoredUser(store: Store, overrides: Partial<User> = {}, passwordHash?: string): Promise<User> {
  const user = aUser(overrides);
  await store.users.insert(user, passwordHash);
  return user;
}

/** Inserts a live session of a new stored user (or of `overrides.userId`) and returns it. */
export async function aStoredSession(store: Store, overrides: Partial<SsoSession> = {}): Promise<SsoSession> {
  const userId = overrides.userId ?? (await aStoredUser(store)).id;
  const session = aSession({ ...overrides, userId });
  await store.sessions.insert(session);
  return session;
}

/** Only the items whose key is in `keys`, in the order they came: for lists over a shared database. */
export function only<T>(items: T[], key: (item: T) => string, keys: Iterable<string>): T[] {
  const wanted = new Set(keys);
  return items.filter((item) => wanted.has(key(item)));
}
