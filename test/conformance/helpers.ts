/**
 * Helpers of the conformance suite (docs/conformance.md): a relying party that drives the real
 * authorization endpoint and login form over HTTP, redeems codes, and checks ID tokens the way
 * the OpenID Foundation suite does — independently of gatehouse's own code (node:crypto only, no
 * import from src/ except types and the clock).
 */
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { authorizationUrl, browse, CookieJar, formAction, formFields, submit } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertLoginPage } from '../helpers/front-channel.ts';
import type { RunningServer } from '../helpers/server.ts';

export { CookieJar };

export interface Credentials {
  username: string;
  password: string;
}

/** A manual clock at the current whole second, so that ID tokens verify against real time too and second arithmetic is exact. */
export function clockAtNow(): ManualClock {
  return new ManualClock(Math.floor(Date.now() / 1000) * 1000);
}

/** The authorization request of the Basic OP plan: response_type=code, scope openid, a state. */
export function codeRequest(client: Client, extra: Record<string, string> = {}): Record<string, string> {
  return { response_type: 'code', client_id: client.clientId, redirect_uri: client.redirectUris[0]!, scope: 'openid', state: 'conformance-state', ...extra };
}

/** Fills in and posts the login form of `page` (a 200 login page), returning the response to the post. */
export async function submitLogin(server: RunningServer, jar: CookieJar, page: Response, credentials: Credentials): Promise<Response> {
  const html = await assertLoginPage(page);
  const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? credentials.username : name === 'password' ? credentials.password : value]);
  return submit(new URL(formAction(html), server.url).toString(), fields, jar);
}

/**
 * Sends the authorization request from the browser `jar` (GET, or a form POST with `post`), logs
 * in when the login page comes, and returns the code with whether a login was needed. The
 * redirect is checked: code, the state as sent, iss, and nothing else (no tokens in the URL).
 */
export async function authorize(
  server: RunningServer,
  jar: CookieJar,
  params: Record<string, string> | [string, string][],
  credentials: Credentials,
  options: { post?: boolean; expectLogin?: boolean } = {},
): Promise<{ code: string; loggedIn: boolean; redirect: URL }> {
  const first = options.post ? await submit(`${server.url}/uas/oauth2/authorization`, params, jar) : await browse(authorizationUrl(server.url, params), jar);
  const loggedIn = first.status === 200;
  if (options.expectLogin !== undefined) assert.equal(loggedIn, options.expectLogin, options.expectLogin ? 'expected the login page' : `expected a silent code, got ${first.status}`);
  const response = loggedIn ? await submitLogin(server, jar, first, credentials) : first;
  const entries = Array.isArray(params) ? params : Object.entries(params);
  const get = (name: string) => entries.find(([n]) => n === name)?.[1];
  const redirectUri = get('redirect_uri')!;
  const code = assertCodeRedirect(response, { redirectUri, state: get('state') || undefined, issuer: server.issuer, status: loggedIn ? 303 : 302 });
  const redirect = new URL(response.headers.get('location')!);
  const registered = new URL(redirectUri).searchParams;
  for (const name of redirect.searchParams.keys()) assert.ok(['code', 'state', 'iss'].includes(name) || registered.has(name), `unexpected parameter ${name} in the success redirect`);
  return { code, loggedIn, redirect };
}

export interface TokenResult {
  status: number;
  headers: Headers;
  body: Record<string, unknown>;
}

/** The token request of the code flow with client_secret_basic (default) or client_secret_post. */
export function redeem(server: RunningServer, client: Client, secret: string, code: string, options: { method?: 'basic' | 'post'; redirectUri?: string; extra?: Record<string, string> } = {}): Promise<TokenResult> {
  const form = { grant_type: 'authorization_code', code, redirect_uri: options.redirectUri ?? client.redirectUris[0]!, ...options.extra };
  if (options.method === 'post') return postForm(`${server.url}/uas/oauth2/token`, { ...form, client_id: client.clientId, client_secret: secret });
  return postForm(`${server.url}/uas/oauth2/token`, form, { authorization: basic(client.clientId, secret) });
}

/** A successful token response as RFC 6749 §5.1 and OIDC Core §3.1.3.3 describe it (AC-01..05). */
export function assertTokenResponse(response: TokenResult): Record<string, unknown> {
  assert.equal(response.status, 200, JSON.stringify(response.body));
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.equal(response.headers.get('pragma'), 'no-cache');
  assert.equal(response.body.token_type, 'Bearer');
  assert.equal(typeof response.body.expires_in, 'number');
  assert.ok((response.body.expires_in as number) > 0 && (response.body.expires_in as number) <= 31_536_000);
  assert.match(response.body.access_token as string, /^[A-Za-z0-9_-]{43}$/, '256 bits of printable ASCII');
  return response.body;
}

export interface VerifiedIdToken {
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/**
 * Verifies an ID token as a relying party would, without jose: three base64url parts, an RS256
 * header whose kid names exactly one key of the JWKS fetched over HTTP, and a signature that
 * verifies with that key (JWKS-06, IDT-01).
 */
export async function verifyIdToken(server: RunningServer, idToken: string): Promise<VerifiedIdToken> {
  const parts = idToken.split('.');
  assert.equal(parts.length, 3, 'a compact JWS');
  const [h, p, s] = parts as [string, string, string];
  const header = JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>;
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>;
  assert.equal(header.alg, 'RS256');
  assert.equal(typeof header.kid, 'string');
  const { keys } = (await (await fetch(`${server.url}/uas/oauth2/metadata.jwks`)).json()) as { keys: (JsonWebKey & { kid?: string })[] };
  const matching = keys.filter((k) => k.kid === header.kid);
  assert.equal(matching.length, 1, 'the header kid names exactly one JWKS key');
  const key = createPublicKey({ key: matching[0]!, format: 'jwk' });
  assert.ok(verify('sha256', Buffer.from(`${h}.${p}`), key, Buffer.from(s, 'base64url')), 'the signature verifies with that key');
  return { header, payload };
}

/** at_hash as OIDC Core §3.1.3.6 defines it for RS256, computed here and not by gatehouse. */
export function expectedAtHash(accessToken: string): string {
  return createHash('sha256').update(Buffer.from(accessToken, 'ascii')).digest().subarray(0, 16).toString('base64url');
}

/** GET UserInfo with the bearer token. */
export async function userInfo(server: RunningServer, accessToken: string): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const response = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

/** Seconds since the epoch of the clock (JWT NumericDate). */
export function seconds(clock: { now(): number }): number {
  return Math.floor(clock.now() / 1000);
}
