/* global window, document */
// The single-page app: oidc-client-ts's browser build (window.oidc, loaded by index.html) does
// the protocol; this file wires it to the page. Plain browser JavaScript, no build step.
const { UserManager, WebStorageStateStore } = window.oidc;

const $ = (id) => document.getElementById(id);
const config = await (await fetch('/config.json')).json();
const origin = window.location.origin;

const manager = new UserManager({
  authority: config.issuer,
  client_id: config.client_id,
  // Registered exactly so with `gatehouse client create` (README.md).
  redirect_uri: `${origin}/callback`,
  post_logout_redirect_uri: `${origin}/`,
  response_type: 'code', // the authorization code grant; oidc-client-ts always adds PKCE (S256)
  scope: 'openid profile email',
  // Tokens in sessionStorage: gone when the tab closes, readable by any script of this origin —
  // which is why the page's Content-Security-Policy allows scripts from this origin only.
  userStore: new WebStorageStateStore({ store: window.sessionStorage }),
  // Before the access token expires, renew it with the refresh token (a token request, no iframe).
  automaticSilentRenew: true,
  // Show every ID token claim (amr, auth_time, session_index, …), as the web-sso example does.
  filterProtocolClaims: false,
});

let renewals = 0;
let userinfo;

function fail(error) {
  $('error').hidden = false;
  $('error').textContent = `Error: ${error?.message ?? error}`;
}

async function render() {
  const user = await manager.getUser();
  const signedIn = user !== null && !user.expired;
  $('status').textContent = signedIn ? `Signed in as ${user.profile.preferred_username ?? user.profile.sub}.` : 'You are not signed in.';
  $('login').hidden = signedIn;
  for (const id of ['userinfo', 'refresh', 'logout', 'signed-in']) $(id).hidden = !signedIn;
  if (!signedIn) return;
  $('access-token-end').textContent = user.access_token.slice(-8);
  $('access-token-expires').textContent = new Date(user.expires_at * 1000).toISOString();
  $('renewals').textContent = String(renewals);
  $('id-token-claims').textContent = JSON.stringify(user.profile, null, 2);
  $('userinfo-claims').textContent = userinfo === undefined ? '(not called yet)' : JSON.stringify(userinfo, null, 2);
}

manager.events.addUserLoaded(() => render().catch(fail));
manager.events.addSilentRenewError(fail);

$('login').addEventListener('click', () => manager.signinRedirect().catch(fail));

$('userinfo').addEventListener('click', async () => {
  try {
    const user = await manager.getUser();
    const endpoint = await manager.metadataService.getUserInfoEndpoint();
    // A cross-origin GET with Authorization: the browser sends a CORS preflight first.
    const response = await fetch(endpoint, { headers: { authorization: `Bearer ${user.access_token}` } });
    if (!response.ok) throw new Error(`UserInfo answered ${response.status}`);
    userinfo = await response.json();
    await render();
  } catch (error) {
    fail(error);
  }
});

$('refresh').addEventListener('click', async () => {
  try {
    // With a refresh token, signinSilent is a refresh_token grant at the token endpoint.
    await manager.signinSilent();
    renewals += 1;
    await render();
  } catch (error) {
    fail(error);
  }
});

// RP-initiated logout: gatehouse ends its session (revoking this app's tokens) and sends the browser back.
$('logout').addEventListener('click', () => manager.signoutRedirect().catch(fail));

try {
  const url = new URL(window.location.href);
  if (url.pathname === '/callback') {
    await manager.signinRedirectCallback();
    window.history.replaceState(null, '', '/');
  } else if (url.searchParams.has('state')) {
    await manager.signoutRedirectCallback();
    window.history.replaceState(null, '', '/');
  }
} catch (error) {
  fail(error);
}
await render().catch(fail);
