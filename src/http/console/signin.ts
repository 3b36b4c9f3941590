/**
 * The console signs in like any other application of gatehouse (docs/console.md, "Signing in"):
 * the authorization code flow with PKCE S256, state and nonce (OIDC Core §3.1.2, RFC 7636), as the
 * public client `gatehouse-console`, asking with `resource` (RFC 8707) for a token whose audience is
 * the management API. The code is redeemed at gatehouse's own token endpoint in-process, and the
 * access token becomes the console's session cookie. Sign-out is RP-initiated logout with the ID
 * token as id_token_hint.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { verifyOwnJwt } from '../../crypto/jwt.ts';
import { constantTimeEqual } from '../../lib/hash.ts';
import { CONSOLE_CLIENT_ID, CONSOLE_PATH, issuerOrigin, manageApiResourceUri, prepareConsoleClient } from '../../manage/management-clients.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';
import { clearConsoleCookie, readConsoleCookie, setConsoleCookie } from './cookies.ts';

/** The sign-in transaction kept in the browser between the redirect out and the callback. */
interface SignInState {
  state: string;
  nonce: string;
  verifier: string;
  returnTo: string;
}

export function callbackUri(config: HttpDeps['config']): string {
  return `${issuerOrigin(config)}${CONSOLE_PATH}/callback`;
}

export function consoleHome(config: HttpDeps['config']): string {
  return `${issuerOrigin(config)}${CONSOLE_PATH}/`;
}

/**
 * Only a console page of our own is a place to return to after signing in (no open redirect), and
 * only in printable ASCII without a backslash (a browser's request target is percent-encoded): it becomes
 * a Location header, where a control character or one above U+00FF makes Node throw.
 */
export function safeReturnTo(path: string): string {
  const valid = path.length <= 2000 && path.startsWith(`${CONSOLE_PATH}/`) && !path.startsWith(`${CONSOLE_PATH}/callback`) && /^[\x21-\x5b\x5d-\x7e]+$/.test(path) && !path.includes('//');
  return valid ? path : `${CONSOLE_PATH}/`;
}

/**
 * Whether the console's client exists and is active: without it the authorization endpoint could
 * only show an error, so the console explains `gatehouse admin bootstrap` instead. The use case
 * (prepareConsoleClient, src/manage/management-clients.ts) first puts this server's URIs into the two
 * management clients when they name another origin; that is logged here.
 */
export async function consoleClientReady(deps: HttpDeps, log?: Pick<FastifyRequest['log'], 'info' | 'warn'>): Promise<boolean> {
  const state = await prepareConsoleClient(deps, deps.config);
  if (!state.ready) return false;
  if (state.aligned.length > 0) log?.info({ clients: state.aligned, issuer: deps.config.issuer }, 'registered this issuer\'s URIs for the web console and the management API (they named another origin)');
  if (state.conflict) log?.warn({ err: state.conflict }, 'could not register this issuer\'s URIs for the web console and the management API');
  return true;
}

/** Redirects the browser to gatehouse's authorization endpoint, remembering state, nonce and verifier. */
export function startSignIn(reply: FastifyReply, deps: HttpDeps, returnTo: string, locale: string): FastifyReply {
  const transaction: SignInState = { state: deps.random.token(32), nonce: deps.random.token(32), verifier: deps.random.token(32), returnTo: safeReturnTo(returnTo) };
  setConsoleCookie(reply, deps.config, 'signIn', Buffer.from(JSON.stringify(transaction), 'utf8').toString('base64url'));
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: CONSOLE_CLIENT_ID,
    redirect_uri: callbackUri(deps.config),
    scope: 'openid',
    state: transaction.state,
    nonce: transaction.nonce,
    code_challenge: createHash('sha256').update(transaction.verifier, 'ascii').digest('base64url'),
    code_challenge_method: 'S256',
    resource: manageApiResourceUri(deps.config),
    ui_locales: locale,
  });
  return reply.code(302).header('cache-control', 'no-store').redirect(`${deps.config.issuer}${ENDPOINT_PATHS.authorization}?${query}`, 302);
}

/** `error_description` as the page may show it (escaped by the template). */
export type CallbackOutcome = { ok: true; returnTo: string } | { ok: false; reason: 'state' | 'refused' | 'exchange'; error?: string; description?: string };

/**
 * An `error_description` worth showing: RFC 6749 §4.1.2.1 and §5.2 allow only %x20-21 / %x23-5B /
 * %x5D-7E; anything else (or nothing) is left out rather than shown garbled. At most 500 characters.
 */
function describedBy(value: unknown): { description?: string } {
  return typeof value === 'string' && value !== '' && /^[\x20\x21\x23-\x5b\x5d-\x7e]+$/.test(value) ? { description: value.slice(0, 500) } : {};
}

/**
 * The redirect back (OIDC Core §3.1.2.5): the state must be the one this browser's transaction
 * holds (RFC 6749 §10.12), `iss` ours (RFC 9207 §2.4); the code is redeemed with the PKCE verifier
 * and the ID token checked (OIDC Core §3.1.3.7: signature, issuer, audience, expiry, and the nonce
 * of §3.1.2.1 against this browser's transaction). On success the access token
 * and ID token become cookies that live as long as the access token.
 */
export async function finishSignIn(app: Pick<FastifyInstance, 'inject'>, request: FastifyRequest, reply: FastifyReply, deps: HttpDeps): Promise<CallbackOutcome> {
  const query = (request.query ?? {}) as Record<string, unknown>;
  const transaction = parseTransaction(readConsoleCookie(request, deps.config, 'signIn'));
  const state = query.state;
  if (transaction === undefined || typeof state !== 'string' || !constantTimeEqual(state, transaction.state)) return { ok: false, reason: 'state' };
  // One use: whatever happens next, this transaction is spent.
  clearConsoleCookie(reply, deps.config, 'signIn');
  if (query.iss !== undefined && query.iss !== deps.config.issuer) return { ok: false, reason: 'state' };
  if (typeof query.error === 'string') return { ok: false, reason: 'refused', error: query.error.slice(0, 100), ...describedBy(query.error_description) };
  if (typeof query.code !== 'string' || query.code === '') return { ok: false, reason: 'state' };

  const response = await app.inject({
    method: 'POST',
    url: `${deps.config.issuerPath}${ENDPOINT_PATHS.token}`,
    remoteAddress: request.ip,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'authorization_code', code: query.code, redirect_uri: callbackUri(deps.config), client_id: CONSOLE_CLIENT_ID, code_verifier: transaction.verifier }).toString(),
  });
  const body = safeJson(response.body);
  if (response.statusCode !== 200 || typeof body.access_token !== 'string' || typeof body.id_token !== 'string') {
    return { ok: false, reason: 'exchange', error: typeof body.error === 'string' ? body.error : `HTTP ${response.statusCode}`, ...describedBy(body.error_description) };
  }
  let claims: Record<string, unknown>;
  try {
    // Signature, issuer, audience and expiry against our own keys: cheap, and it keeps the check
    // true even if the token ever came by another way than this in-process call.
    claims = await verifyOwnJwt(body.id_token, await deps.keyRing.jwks(), { issuer: deps.config.issuer, audience: CONSOLE_CLIENT_ID, now: deps.clock.now() });
  } catch {
    return { ok: false, reason: 'exchange', error: 'invalid id_token' };
  }
  if (typeof claims.nonce !== 'string' || !constantTimeEqual(claims.nonce, transaction.nonce)) {
    return { ok: false, reason: 'exchange', error: 'id_token does not match the request' };
  }
  const maxAge = typeof body.expires_in === 'number' && body.expires_in > 0 ? Math.floor(body.expires_in) : 300;
  setConsoleCookie(reply, deps.config, 'session', body.access_token, maxAge);
  setConsoleCookie(reply, deps.config, 'idToken', body.id_token, maxAge);
  return { ok: true, returnTo: transaction.returnTo };
}

/**
 * Signs out: the token is revoked (RFC 7009) and the cookies cleared here, then the browser goes to
 * gatehouse's end_session_endpoint, which ends the SSO session and, with a valid id_token_hint and
 * the registered post_logout_redirect_uri, comes back to the console (RP-Initiated Logout §2, §3).
 */
export async function signOut(app: Pick<FastifyInstance, 'inject'>, request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, session: string): Promise<FastifyReply> {
  const idToken = readConsoleCookie(request, deps.config, 'idToken');
  await app.inject({
    method: 'POST',
    url: `${deps.config.issuerPath}${ENDPOINT_PATHS.revocation}`,
    remoteAddress: request.ip,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ token: session, token_type_hint: 'access_token', client_id: CONSOLE_CLIENT_ID }).toString(),
  });
  clearConsoleCookie(reply, deps.config, 'session');
  clearConsoleCookie(reply, deps.config, 'idToken');
  const query = new URLSearchParams({ client_id: CONSOLE_CLIENT_ID, post_logout_redirect_uri: consoleHome(deps.config), ...(idToken === undefined ? {} : { id_token_hint: idToken }) });
  return reply.code(303).header('cache-control', 'no-store').redirect(`${deps.config.issuer}${ENDPOINT_PATHS.endSession}?${query}`, 303);
}

function parseTransaction(cookie: string | undefined): SignInState | undefined {
  if (cookie === undefined || cookie.length > 4096) return undefined;
  const value = safeJson(Buffer.from(cookie, 'base64url').toString('utf8'));
  const { state, nonce, verifier, returnTo } = value;
  if (typeof state !== 'string' || typeof nonce !== 'string' || typeof verifier !== 'string' || typeof returnTo !== 'string') return undefined;
  return { state, nonce, verifier, returnTo: safeReturnTo(returnTo) };
}

function safeJson(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
