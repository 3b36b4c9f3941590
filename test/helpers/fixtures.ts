/**
 * Front-channel fixtures: clients and users (with a real argon2id password) put straight into the
 * store, a tiny cookie jar, and helpers that drive the authorization endpoint and the login form
 * over real HTTP the way a browser without JavaScript would.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { signJwt } from '../../src/crypto/jwt.ts';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashPassword } from '../../src/identity/passwords.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import type { OAuthDeps } from '../../src/oauth/deps.ts';
import type { Store } from '../../src/storage/ports.ts';

export const RP_REDIRECT_URI = 'https://rp.example.test/cb';

export async function createTestClient(store: Store, overrides: Partial<Client> = {}): Promise<{ client: Client; clientSecret: string }> {
  const clientSecret = randomBytes(32).toString('base64url');
  const now = Date.now();
  const client: Client = {
    clientId: `client-${randomUUID()}`,
    name: 'Test RP',
    secretHash: overrides.tokenEndpointAuthMethod === 'none' ? undefined : hashSecret(clientSecret),
    active: true,
    redirectUris: [RP_REDIRECT_URI],
    tokenEndpointAuthMethod: undefined,
    grantTypes: ['authorization_code', 'refresh_token'],
    codeChallengeMethod: undefined,
    scope: undefined,
    refreshTokens: false,
    rotateRefreshTokens: false,
    idTokenSignedResponseAlg: 'RS256',
    userinfoSignedResponseAlg: undefined,
    accessTokenTtl: undefined,
    postLogoutRedirectUris: [],
    metadata: {},
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
  await store.clients.insert(client);
  return { client, clientSecret };
}

export async function createTestUser(store: Store, options: { username?: string; password: string } & Partial<User>): Promise<User> {
  const { password, ...overrides } = options;
  const now = Date.now();
  const user: User = {
    id: randomUUID(),
    username: `user-${randomUUID()}`,
    status: 'enabled',
    givenName: undefined,
    familyName: undefined,
    email: undefined,
    emailVerified: false,
    organizationId: undefined,
    attributes: {},
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
  await store.users.insert(user, await hashPassword(password));
  return user;
}

export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** Cookies by name, as a browser on one host would keep them (enough for one test server). */
export class CookieJar {
  readonly cookies = new Map<string, string>();

  store(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = ''] = line.split(';');
      const index = pair.indexOf('=');
      const name = pair.slice(0, index).trim();
      const value = pair.slice(index + 1).trim();
      const expired = /max-age=0|expires=thu, 01 jan 1970/i.test(line);
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  header(): Record<string, string> {
    return this.cookies.size === 0 ? {} : { cookie: [...this.cookies].map(([n, v]) => `${n}=${v}`).join('; ') };
  }
}

/** A GET without following redirects, keeping cookies. */
export async function browse(url: string, jar?: CookieJar, headers: Record<string, string> = {}): Promise<Response> {
  const response = await fetch(url, { redirect: 'manual', headers: { ...jar?.header(), ...headers } });
  jar?.store(response);
  return response;
}

/** A form POST without following redirects, keeping cookies. */
export async function submit(url: string, form: Record<string, string> | [string, string][], jar?: CookieJar, headers: Record<string, string> = {}): Promise<Response> {
  const response = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...jar?.header(), ...headers },
    body: new URLSearchParams(form).toString(),
  });
  jar?.store(response);
  return response;
}

/**
 * The hidden and visible fields of the page's forms, in document order, as the browser would post
 * the login form; a passkey form (class="passkey", driven by script, issue 24) is left out.
 */
export function formFields(html: string): [string, string][] {
  const fields: [string, string][] = [];
  const form = html.replace(/<form\b[^>]*\bclass="passkey"[\s\S]*?<\/form>/g, '');
  for (const match of form.matchAll(/<input\b([^>]*)>/g)) {
    const attributes = match[1] ?? '';
    const name = /\bname="([^"]*)"/.exec(attributes)?.[1];
    if (name === undefined) continue;
    fields.push([unescapeHtml(name), unescapeHtml(/\bvalue="([^"]*)"/.exec(attributes)?.[1] ?? '')]);
  }
  return fields;
}

export function formAction(html: string): string {
  const action = /<form\b[^>]*\baction="([^"]*)"/.exec(html)?.[1];
  if (action === undefined) throw new Error('no form on the page');
  return unescapeHtml(action);
}

function unescapeHtml(text: string): string {
  return text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The query parameters of a redirect's Location, or throws when the response is no redirect. */
export function redirectParams(response: Response): URLSearchParams {
  const location = response.headers.get('location');
  if (location === null) throw new Error(`expected a redirect, got ${response.status}`);
  return new URL(location).searchParams;
}

export interface Flow {
  baseUrl: string;
  jar: CookieJar;
}

/**
 * Opens the authorization URL, fills in the login form and submits it, as a browser would:
 * returns the final response (a redirect to the client on success, the form again on failure).
 */
export async function loginThroughForm(flow: Flow, authorizationQuery: Record<string, string>, credentials: { username: string; password: string }): Promise<Response> {
  const page = await browse(`${flow.baseUrl}/uas/oauth2/authorization?${new URLSearchParams(authorizationQuery)}`, flow.jar);
  if (page.status !== 200) throw new Error(`expected the login page, got ${page.status}`);
  const html = await page.text();
  const fields = formFields(html).map(([name, value]): [string, string] => [name, name === 'username' ? credentials.username : name === 'password' ? credentials.password : value]);
  return submit(new URL(formAction(html), flow.baseUrl).toString(), fields, flow.jar);
}

/** The authorization endpoint's URL with these query parameters (repeated names allowed). */
export function authorizationUrl(baseUrl: string, params: Record<string, string> | [string, string][]): string {
  return `${baseUrl}/uas/oauth2/authorization?${new URLSearchParams(params)}`;
}

/** error_description's allowed characters (RFC 6749 §4.1.2.1): %x20-21 / %x23-5B / %x5D-7E. */
export const ERROR_TEXT = /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/;

/**
 * Signs an ID token with the server's active key, as the token endpoint would (for id_token_hint):
 * `azp` is the audience unless given (our ID tokens always carry it; an id_token_hint needs it).
 */
export async function signTestIdToken(deps: Pick<OAuthDeps, 'config' | 'keyRing' | 'clock'>, claims: { sub: string; aud: string | string[]; session_index?: string; azp?: string; expiresIn?: number }): Promise<string> {
  const { expiresIn = 3600, ...rest } = claims;
  const iat = Math.floor(deps.clock.now() / 1000);
  const azp = typeof claims.aud === 'string' ? claims.aud : undefined;
  return signJwt({ iss: deps.config.issuer, iat, exp: iat + expiresIn, auth_time: iat, ...(azp === undefined ? {} : { azp }), ...rest }, await deps.keyRing.activeKey());
}

/**
 * RP-initiated logout without an id_token_hint, as a browser does it: opens the logout URL, which
 * asks the user first, and posts the confirmation form back (with its CSRF token). Returns the
 * final response (the signed-out page).
 */
export async function logoutConfirmed(baseUrl: string, jar: CookieJar, params: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Response> {
  const query = new URLSearchParams(params).toString();
  const page = await browse(`${baseUrl}/uas/oauth2/logout${query === '' ? '' : `?${query}`}`, jar, headers);
  if (page.status !== 200) throw new Error(`expected the logout confirmation page, got ${page.status}`);
  const html = await page.text();
  return submit(new URL(formAction(html), baseUrl).toString(), formFields(html), jar, headers);
}
