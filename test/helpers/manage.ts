/**
 * The management API from a test's side: the bootstrap's clients and groups on a running server,
 * bearer tokens for each kind of caller, and a small JSON client for `/manage/api/v1`.
 *
 *   const tokens = await manageTokens(server);
 *   const answer = await manageCall(server, 'GET', '/clients', { token: tokens.admin });
 *
 * Tokens are put straight into the store (as the token endpoint would store them, valid for an
 * hour of the server's clock), so suites do not depend on the login page; test/http/manage-api
 * also obtains them over HTTP, through the token endpoint, to prove the whole path.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { CONSOLE_CLIENT_ID, ensureManagementClients, MANAGE_API_CLIENT_ID, MANAGE_API_PATH } from '../../src/manage/management-clients.ts';
import { addUser } from './back-channel.ts';
import { createTestClient } from './fixtures.ts';
import type { RunningServer } from './server.ts';

export interface ManageTokens {
  /** A member of GATEHOUSE_ADMIN_GROUP, through the console client. */
  admin: string;
  /** A member of GATEHOUSE_ADMIN_READONLY_GROUP, through the console client. */
  reader: string;
  /** An enabled user in neither group, with a token for the API: 403. */
  nobody: string;
  /** The administrator's token without the API's audience (a plain sign-in token): 401. */
  otherAudience: string;
  /** A client_credentials token of `automationClient`, whose `aud` allows the API: an administrator. */
  automation: string;
  adminUser: User;
  readerUser: User;
  nobodyUser: User;
  automationClient: Client;
}

/** The scope of a console sign-in for the API: the audience is recorded as a scope value. */
export const MANAGE_SCOPE = `openid profile ${MANAGE_API_CLIENT_ID}`;

/** The two management clients and the two administrator groups (as `gatehouse admin bootstrap` makes them). */
export async function ensureManagementSetup(server: RunningServer): Promise<void> {
  const { store, deps } = server.gatehouse;
  await ensureManagementClients({ store, clock: deps.clock }, server.config);
  for (const name of [server.config.manageAdminGroup, server.config.manageReadonlyGroup]) {
    await store.groups.insertIfAbsent({ id: randomUUID(), name, description: undefined, createdAt: deps.clock.now(), administrator: true });
  }
}

/** An access token stored as the token endpoint would: `userId` undefined makes it a client's own token. */
export async function issueManageToken(server: RunningServer, options: { userId?: string | undefined; clientId?: string; scope?: string; ttlSeconds?: number } = {}): Promise<string> {
  const raw = randomBytes(32).toString('base64url');
  const now = server.gatehouse.deps.clock.now();
  const common = {
    tokenHash: hashSecret(raw),
    kind: 'access_token' as const,
    clientId: options.clientId ?? CONSOLE_CLIENT_ID,
    scope: options.scope ?? MANAGE_SCOPE,
    codeHash: undefined,
    familyId: randomUUID(),
    createdAt: now,
    expiresAt: now + (options.ttlSeconds ?? 3600) * 1000,
    revokedAt: undefined,
    rotatedAt: undefined,
  };
  await server.gatehouse.store.tokens.insert(
    options.userId === undefined
      ? { ...common, userId: undefined, sessionIndex: undefined, authTime: undefined, amr: undefined, acr: undefined }
      : { ...common, userId: options.userId, sessionIndex: `_${randomBytes(20).toString('hex')}`, authTime: now - 5000, amr: ['pwd'], acr: undefined },
  );
  return raw;
}

/** A new enabled user in the group `group` (none: in no group). */
export async function addManager(server: RunningServer, group: string | undefined, overrides: Partial<User> = {}): Promise<User> {
  const store = server.gatehouse.store;
  const user = await addUser(store, overrides);
  if (group !== undefined) {
    const found = await store.groups.getByName(group);
    if (!found) throw new Error(`no group ${group}: call ensureManagementSetup first`);
    await store.groups.addMember(found.id, user.id);
  }
  return user;
}

/** Every kind of caller, each with a fresh user (or client), on a server set up for the API. */
export async function manageTokens(server: RunningServer): Promise<ManageTokens> {
  await ensureManagementSetup(server);
  const adminUser = await addManager(server, server.config.manageAdminGroup);
  const readerUser = await addManager(server, server.config.manageReadonlyGroup);
  const nobodyUser = await addManager(server, undefined);
  const { client: automationClient } = await createTestClient(server.gatehouse.store, { name: 'automation', grantTypes: ['client_credentials'], redirectUris: [], metadata: { aud: [MANAGE_API_CLIENT_ID] } });
  return {
    admin: await issueManageToken(server, { userId: adminUser.id }),
    reader: await issueManageToken(server, { userId: readerUser.id }),
    nobody: await issueManageToken(server, { userId: nobodyUser.id }),
    otherAudience: await issueManageToken(server, { userId: adminUser.id, scope: 'openid profile' }),
    automation: await issueManageToken(server, { userId: undefined, clientId: automationClient.clientId, scope: MANAGE_API_CLIENT_ID }),
    adminUser,
    readerUser,
    nobodyUser,
    automationClient,
  };
}

export interface ManageResponse {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed JSON body (problem details for errors); {} when there is none. */
  json: Record<string, unknown> & { items?: Record<string, unknown>[]; next_cursor?: string | null; errors?: { field: string; message: string }[] };
}

export interface ManageCallOptions {
  /** The bearer token; omitted: no Authorization header. */
  token?: string;
  /** A JSON value to send (serialized), or a raw string with `contentType`. */
  body?: unknown;
  /** Default application/json when there is a body. */
  contentType?: string;
  headers?: Record<string, string>;
}

/** One request to `/manage/api/v1<path>` over HTTP. */
export async function manageCall(server: RunningServer, method: string, path: string, options: ManageCallOptions = {}): Promise<ManageResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' && options.contentType !== undefined ? options.body : JSON.stringify(options.body);
    headers['content-type'] = options.contentType ?? 'application/json';
  }
  const response = await fetch(`${server.url}${MANAGE_API_PATH}${path}`, { method, headers, body });
  const text = await response.text();
  let json = {};
  if (/json/.test(response.headers.get('content-type') ?? '') && text !== '') json = JSON.parse(text) as Record<string, unknown>;
  return { status: response.status, headers: response.headers, text, json };
}
