/**
 * A listening gatehouse with the identity API's account configured, and a small client for it:
 * `call(server, 'GET', '/2.0/users/')` with Basic credentials unless told otherwise, answering
 * the status, headers, raw text and parsed JSON.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Env } from '../../../src/config.ts';
import { addClient, addUser, basic as clientBasic, mintCode, postForm } from '../../helpers/back-channel.ts';
import type { TestDatabaseKind } from '../../helpers/databases.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import type { Client } from '../../../src/domain/client.ts';
import type { User } from '../../../src/domain/user.ts';

export const API_USERNAME = 'api-caller';
export const API_PASSWORD = 'correct horse battery staple';

/**
 * A server whose API account is API_USERNAME / API_PASSWORD and whose API client_id is returned:
 * the client_id of a registered resource-server client, as audiences must be.
 */
export async function startApiServer(db: TestDatabaseKind, env: Env = {}): Promise<RunningServer & { apiClientId: string }> {
  const apiClientId = `identity-api-${randomUUID()}`;
  const server = await startServer(db, { env: { GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD, GATEHOUSE_API_CLIENT_ID: apiClientId, ...env } });
  await addClient(server.gatehouse.store, { clientId: apiClientId, name: 'Identity API', grantTypes: [], redirectUris: [], refreshTokens: false, metadata: { resource_server: true } });
  return Object.assign(server, { apiClientId });
}

export function basicAuth(username = API_USERNAME, password = API_PASSWORD): string {
  return `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> & { error?: { code: string; message: string } };
}

export interface CallOptions {
  /** The Authorization header; default: Basic with the API account. null: none. */
  authorization?: string | null;
  accept?: string;
  contentType?: string;
  body?: string;
  /** Under which path prefix; default `/customerid-rest/services`. */
  base?: string;
}

export async function call(server: RunningServer, method: string, path: string, options: CallOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = {};
  const authorization = options.authorization === undefined ? basicAuth() : options.authorization;
  if (authorization !== null) headers.authorization = authorization;
  if (options.accept) headers.accept = options.accept;
  if (options.contentType) headers['content-type'] = options.contentType;
  const response = await fetch(`${server.url}${options.base ?? '/customerid-rest/services'}${path}`, { method, headers, body: options.body });
  const text = await response.text();
  let json = {};
  if ((response.headers.get('content-type') ?? '').includes('json') && text !== '') json = JSON.parse(text) as Record<string, unknown>;
  return { status: response.status, headers: response.headers, text, json };
}

/** POSTs a JSON entity body and returns the new id. */
export async function create(server: RunningServer, collection: 'users' | 'organizations', attributes: Record<string, string | string[]>, version = '2.0'): Promise<string> {
  const response = await call(server, 'POST', `/${version}/${collection}/`, { contentType: 'application/json', body: JSON.stringify({ attributes }) });
  assert.equal(response.status, 201, response.text);
  const ids = response.json[collection] as string[];
  assert.equal(ids.length, 1);
  return ids[0]!;
}

export async function ids(server: RunningServer, path: string, options: CallOptions = {}): Promise<string[]> {
  const response = await call(server, 'GET', path, options);
  assert.equal(response.status, 200, response.text);
  return (response.json.users ?? response.json.organizations ?? response.json.groups) as string[];
}

/**
 * An access token as the token endpoint issues it after a login with `scope`: minted as a code
 * straight into the store and exchanged over HTTP, so these tests do not depend on the login page.
 * The client's `aud` allows the identity API (the server's GATEHOUSE_API_CLIENT_ID, if any) unless
 * `clientOverrides` say otherwise.
 */
export async function accessToken(server: RunningServer & { apiClientId?: string }, scope: string, user?: User, clientOverrides: Partial<Client> = {}): Promise<{ token: string; user: User; client: Client }> {
  const store = server.gatehouse.store;
  const { client, secret } = await addClient(store, { metadata: server.apiClientId === undefined ? {} : { aud: [server.apiClientId] }, ...clientOverrides });
  const owner = user ?? (await addUser(store));
  const { code } = await mintCode(store, client, owner, { scope });
  const response = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: client.redirectUris[0]! }, { authorization: clientBasic(client.clientId, secret) });
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.equal(response.body.scope, scope, 'the token endpoint keeps the audience scope value');
  return { token: response.body.access_token as string, user: owner, client };
}

/** The body of an error answer must be the API's error shape and nothing more: no stack, no SQL. */
export function assertCleanError(response: ApiResponse, status: number, code?: string): void {
  assert.equal(response.status, status, response.text);
  assert.ok(!/\bat .+:\d+:\d+|stack|node_modules|SQLITE|syntax error|relation "/i.test(response.text), `no internals in ${response.text}`);
  if ((response.headers.get('content-type') ?? '').includes('json')) {
    assert.deepEqual(Object.keys(response.json), ['error']);
    assert.deepEqual(Object.keys(response.json.error!).sort(), ['code', 'message']);
    if (code) assert.equal(response.json.error!.code, code);
  }
}
