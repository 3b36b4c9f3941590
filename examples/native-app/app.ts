/**
 * A native application (use case 2), run from the terminal: a public client (no secret) that signs
 * the user in through the system browser with the authorization code grant and PKCE S256, receives
 * the redirect on a loopback listener with an ephemeral port (RFC 8252 §7.3: the redirect URI is
 * registered as http://127.0.0.1/callback, without a port, with application_type native, and any
 * port is accepted), then calls the resource server with the access token.
 *
 * openid-client v6; run from the repository root with `node examples/native-app/app.ts`.
 * Settings (environment): CLIENT_ID (required), RESOURCE_SERVER_CLIENT_ID (required: the resource
 * server's client_id, asked for as a scope value so the access token is meant for it — the resource
 * server refuses tokens meant for anyone else), ISSUER (default http://127.0.0.1:8080/uas),
 * RESOURCE_SERVER_URL (default http://127.0.0.1:4000/hello), NO_BROWSER=1 to only print the URL.
 */
import { spawn } from 'node:child_process';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oidc from 'openid-client';

const ISSUER = new URL(process.env.ISSUER ?? 'http://127.0.0.1:8080/uas');
const RESOURCE_SERVER_URL = process.env.RESOURCE_SERVER_URL ?? 'http://127.0.0.1:4000/hello';
const CLIENT_ID = process.env.CLIENT_ID;
const RESOURCE_SERVER_CLIENT_ID = process.env.RESOURCE_SERVER_CLIENT_ID;
const LOGIN_TIMEOUT_MS = 5 * 60 * 1000;
if (!CLIENT_ID || !RESOURCE_SERVER_CLIENT_ID) {
  console.error('Set CLIENT_ID and RESOURCE_SERVER_CLIENT_ID (see examples/native-app/README.md).');
  process.exit(1);
}

// A public client authenticates with nothing but its client_id (token_endpoint_auth_method "none");
// PKCE is what binds the code to this process. allowInsecureRequests: openid-client refuses plain
// http unless told otherwise, and the local development issuer is http://127.0.0.1.
const config = await oidc.discovery(ISSUER, CLIENT_ID, undefined, oidc.None(), {
  execute: ISSUER.protocol === 'http:' ? [oidc.allowInsecureRequests] : [],
});

// The loopback listener: 127.0.0.1 (not "localhost", RFC 8252 §8.3) on a port the OS picks.
const listener = createServer();
await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;

const codeVerifier = oidc.randomPKCECodeVerifier();
const state = oidc.randomState();
const nonce = oidc.randomNonce();
const authorizationUrl = oidc.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  // The resource server's client_id as a scope value: the token's audience (gatehouse grants it when
  // this client's `aud` lists it), which the resource server checks.
  scope: `openid profile ${RESOURCE_SERVER_CLIENT_ID}`,
  code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
  code_challenge_method: 'S256',
  state,
  nonce,
});

console.log(`Open this URL in a browser to sign in:\n\n  ${authorizationUrl.href}\n`);
console.log(`Waiting for the redirect to ${redirectUri} …`);
openBrowser(authorizationUrl.href);

function browserPage(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', connection: 'close' }).end(`${text}\n`);
}

/** Resolves with the tokens once the browser comes back with a code for *this* login. */
const tokens = await new Promise<Awaited<ReturnType<typeof oidc.authorizationCodeGrant>>>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error('no sign-in within 5 minutes')), LOGIN_TIMEOUT_MS);
  listener.on('request', (request, response) => {
    const currentUrl = new URL(request.url ?? '/', redirectUri);
    // Anything but our callback with our state (a favicon request, a stale tab) is answered and ignored.
    if (request.method !== 'GET' || currentUrl.pathname !== '/callback' || currentUrl.searchParams.get('state') !== state) {
      browserPage(response, 404, 'Not the sign-in this application is waiting for.');
      return;
    }
    clearTimeout(timer);
    oidc
      .authorizationCodeGrant(config, currentUrl, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce })
      .then((result) => {
        browserPage(response, 200, 'Signed in. You can close this window and return to the terminal.');
        resolve(result);
      })
      .catch((error: unknown) => {
        browserPage(response, 400, 'Sign-in failed. See the terminal.');
        reject(error instanceof Error ? error : new Error(String(error)));
      });
  });
}).finally(() => listener.close());

const claims = tokens.claims()!;
console.log(`Signed in: sub ${claims.sub}, session_index ${String(claims.session_index)}, access token valid for ${tokens.expiresIn()} s.`);

console.log(`Calling the resource server: GET ${RESOURCE_SERVER_URL}`);
const answer = await fetch(RESOURCE_SERVER_URL, { headers: { authorization: `Bearer ${tokens.access_token}` } });
const body = await answer.text();
console.log(`Resource server answered ${answer.status}${answer.headers.has('www-authenticate') ? ` (WWW-Authenticate: ${answer.headers.get('www-authenticate')})` : ''}:`);
console.log(body);
process.exit(answer.ok ? 0 : 1);

/** Tries to open the system browser when run in a terminal; printing the URL is enough otherwise. */
function openBrowser(url: string): void {
  if (!process.stdout.isTTY || process.env.NO_BROWSER) return;
  const child = spawn(process.platform === 'darwin' ? 'open' : 'xdg-open', [url], { stdio: 'ignore', detached: true });
  child.on('error', () => {}); // no opener installed: the printed URL will do
  child.unref();
}
