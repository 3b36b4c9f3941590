/**
 * Web single sign-on with gatehouse (use case 1): a confidential web application that signs the
 * user in with the authorization code grant (PKCE S256, state, nonce), shows the ID token and
 * UserInfo claims (fetched again with the same access token on demand, so a token the provider has
 * revoked — its session ended by an administrator, say — is seen refused), and signs out through
 * the OpenID Provider's end_session_endpoint.
 *
 * Plain node:http and openid-client v6; run from the repository root with `node examples/web-sso/server.ts`.
 * Settings (environment): CLIENT_ID and CLIENT_SECRET (required, from `gatehouse client create`),
 * ISSUER (default http://127.0.0.1:8080/uas), PORT (default 3000), HOST (listen address, default 127.0.0.1).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import * as oidc from 'openid-client';

const ISSUER = new URL(process.env.ISSUER ?? 'http://127.0.0.1:8080/uas');
const PORT = Number(process.env.PORT ?? 3000);
const CLIENT_ID = process.env.CLIENT_ID;
const CLIENT_SECRET = process.env.CLIENT_SECRET;
if (!CLIENT_ID || !CLIENT_SECRET) {
  console.error('Set CLIENT_ID and CLIENT_SECRET (see examples/web-sso/README.md).');
  process.exit(1);
}

// The redirect and post-logout URIs must be registered exactly so (see the README).
const BASE_URL = `http://127.0.0.1:${PORT}`;
const REDIRECT_URI = `${BASE_URL}/callback`;
const POST_LOGOUT_REDIRECT_URI = `${BASE_URL}/`;
const SCOPE = 'openid profile email';

// Discovery reads <issuer>/.well-known/openid-configuration and checks its `issuer`. openid-client
// refuses plain-http endpoints by default; allowInsecureRequests lifts that, and only because the
// local development issuer is http://127.0.0.1. Never do this for an https issuer in production.
const config = await oidc.discovery(ISSUER, CLIENT_ID, CLIENT_SECRET, oidc.ClientSecretBasic(CLIENT_SECRET), {
  execute: ISSUER.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
});

/** What the application remembers about one browser. In memory: a restart signs everyone out. */
interface Session {
  /** Between /login and /callback: the secrets that bind the authorization response to this browser. */
  pending?: { codeVerifier: string; state: string; nonce: string };
  /** After a successful login. */
  login?: { idToken: string; idTokenClaims: Record<string, unknown>; userinfo: Record<string, unknown>; accessToken: string; userinfoError?: string };
}

const SESSION_COOKIE = 'web_sso_example_sid';
const sessions = new Map<string, Session>();

function sessionOf(request: IncomingMessage): { id: string; session: Session } | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, value = ''] = part.trim().split('=');
    const session = name === SESSION_COOKIE ? sessions.get(value) : undefined;
    if (session) return { id: value, session };
  }
  return undefined;
}

/** Starts a new session (a new id, so an id known before login is worthless after it). */
function newSession(response: ServerResponse, session: Session, oldId?: string): void {
  if (oldId) sessions.delete(oldId);
  const id = randomBytes(32).toString('base64url');
  sessions.set(id, session);
  // SameSite=Lax: the cookie is sent on the top-level redirect back from the OpenID Provider.
  response.setHeader('set-cookie', `${SESSION_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Lax`);
}

function endSession(response: ServerResponse, id: string): void {
  sessions.delete(id);
  response.setHeader('set-cookie', `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0`);
}

function redirect(response: ServerResponse, location: string): void {
  response.writeHead(303, { location, 'cache-control': 'no-store' }).end();
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

function page(response: ServerResponse, status: number, title: string, body: string): void {
  response
    .writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
    })
    .end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem}pre{background:#f4f4f4;padding:1rem;overflow:auto}th{text-align:left;padding-right:1rem}</style>
</head><body><h1>${escapeHtml(title)}</h1>
${body}
</body></html>`);
}

function claimsPage(response: ServerResponse, login: NonNullable<Session['login']>): void {
  const claims = login.idTokenClaims;
  const authTime = typeof claims.auth_time === 'number' ? new Date(claims.auth_time * 1000).toISOString() : 'unknown';
  const row = (name: string, value: string) => `<tr><th>${escapeHtml(name)}</th><td id="claim-${escapeHtml(name)}">${escapeHtml(value)}</td></tr>`;
  page(
    response,
    200,
    'Signed in',
    `<table>
${row('sub', String(claims.sub))}
${row('session_index', String(claims.session_index))}
${row('amr', JSON.stringify(claims.amr))}
${row('auth_time', authTime)}
</table>
<h2>ID token claims</h2>
<pre id="id-token-claims">${escapeHtml(JSON.stringify(claims, null, 2))}</pre>
<h2>UserInfo claims</h2>
<pre id="userinfo-claims">${escapeHtml(JSON.stringify(login.userinfo, null, 2))}</pre>
${login.userinfoError === undefined ? '' : `<p id="userinfo-error" role="alert">The access token was refused: ${escapeHtml(login.userinfoError)}</p>`}
<form method="post" action="/userinfo"><button type="submit">Fetch UserInfo again</button></form>
<form method="post" action="/logout"><button type="submit">Log out</button></form>`,
  );
}

/** GET /login: a fresh PKCE verifier, state and nonce for this browser, then off to the OpenID Provider. */
async function login(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const current = sessionOf(request);
  newSession(response, { ...current?.session, pending: { codeVerifier, state, nonce } }, current?.id);
  const authorizationUrl = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  redirect(response, authorizationUrl.href);
}

/** GET /callback: check the response against this browser's pending login, redeem the code, fetch UserInfo. */
async function callback(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const current = sessionOf(request);
  const pending = current?.session.pending;
  if (!current || !pending) {
    page(response, 400, 'No login in progress', '<p>This browser did not start a login. <a href="/">Start again</a>.</p>');
    return;
  }
  delete current.session.pending; // one attempt per login: the code and the secrets are single-use
  try {
    // The redirect_uri sent to the token endpoint is this URL without its query: REDIRECT_URI.
    const tokens = await oidc.authorizationCodeGrant(config, new URL(request.url ?? '/', BASE_URL), {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce, // also makes an ID token mandatory
    });
    const idTokenClaims = tokens.claims()!;
    const userinfo = await oidc.fetchUserInfo(config, tokens.access_token, idTokenClaims.sub);
    newSession(response, { login: { idToken: tokens.id_token!, idTokenClaims: { ...idTokenClaims }, userinfo: { ...userinfo }, accessToken: tokens.access_token } }, current.id);
    redirect(response, '/');
  } catch (error) {
    const detail = error instanceof oidc.AuthorizationResponseError ? `${error.error}: ${error.error_description ?? ''}` : String(error);
    console.error('login failed:', error);
    page(response, 400, 'Login failed', `<p>${escapeHtml(detail)}</p><p><a href="/">Start again</a>.</p>`);
  }
}

/**
 * POST /userinfo: UserInfo again with the access token from the login. A revoked or expired token
 * is answered 401 with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1), shown as is.
 */
async function refreshUserinfo(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const login = sessionOf(request)?.session.login;
  if (!login) {
    redirect(response, '/');
    return;
  }
  try {
    login.userinfo = { ...(await oidc.fetchUserInfo(config, login.accessToken, String(login.idTokenClaims.sub))) };
    delete login.userinfoError;
  } catch (error) {
    const challenge = error instanceof oidc.WWWAuthenticateChallengeError ? error.cause[0] : undefined;
    login.userinfoError = challenge ? `${challenge.parameters.error ?? challenge.scheme}${challenge.parameters.error_description ? ` (${challenge.parameters.error_description})` : ''}` : String(error);
  }
  redirect(response, '/');
}

/** POST /logout: forget the local session, then let the OpenID Provider end its SSO session and send the browser back. */
function logout(request: IncomingMessage, response: ServerResponse): void {
  const current = sessionOf(request);
  if (!current?.session.login) {
    redirect(response, '/');
    return;
  }
  const { idToken } = current.session.login;
  endSession(response, current.id);
  redirect(response, oidc.buildEndSessionUrl(config, { id_token_hint: idToken, post_logout_redirect_uri: POST_LOGOUT_REDIRECT_URI }).href);
}

const server = createServer((request, response) => {
  const { pathname } = new URL(request.url ?? '/', BASE_URL);
  const route = `${request.method} ${pathname}`;
  const handle = async () => {
    switch (route) {
      case 'GET /': {
        const login = sessionOf(request)?.session.login;
        if (login) claimsPage(response, login);
        else page(response, 200, 'Web SSO example', '<p>You are not signed in.</p><p><a href="/login">Log in</a></p>');
        return;
      }
      case 'GET /login':
        return login(request, response);
      case 'GET /callback':
        return callback(request, response);
      case 'POST /userinfo':
        return refreshUserinfo(request, response);
      case 'POST /logout':
        return logout(request, response);
      default:
        page(response, 404, 'Not found', '<p><a href="/">Home</a></p>');
    }
  };
  handle().catch((error: unknown) => {
    console.error(error);
    if (!response.headersSent) page(response, 500, 'Error', '<p>Something went wrong.</p>');
  });
});

// HOST=0.0.0.0 only in a container (docker-compose.yml), where the browser still calls it 127.0.0.1.
server.listen(PORT, process.env.HOST ?? '127.0.0.1', () => console.log(`Web SSO example listening on ${BASE_URL} (issuer ${ISSUER.href})`));
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
