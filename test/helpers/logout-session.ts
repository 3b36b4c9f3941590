/**
 * A user signed in to two relying parties over HTTP in one browser session, then logged out at the
 * first with its id_token_hint (RP-initiated logout): what the back-channel logout fault tests
 * start from. Works against any gatehouse base URL, in-process or a child process.
 */
import assert from 'node:assert/strict';
import { createLocalJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import { basic, postForm } from './back-channel.ts';
import { browse, CookieJar, loginThroughForm } from './fixtures.ts';

export interface LoggedInRp {
  client: Client;
  secret: string;
}

const query = (rp: LoggedInRp) => ({ client_id: rp.client.clientId, redirect_uri: rp.client.redirectUris[0]!, response_type: 'code', scope: 'openid' });

async function exchange(baseUrl: string, location: string | null, rp: LoggedInRp): Promise<string> {
  assert.ok(location, 'a redirect with a code');
  const code = new URL(location).searchParams.get('code')!;
  const answer = await postForm(`${baseUrl}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: rp.client.redirectUris[0]! }, { authorization: basic(rp.client.clientId, rp.secret) });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.id_token as string;
}

/** Signs `username` in to each of `rps` in order (the first with the password, the others by single sign-on); their ID tokens. */
export async function signInTo(baseUrl: string, rps: readonly LoggedInRp[], credentials: { username: string; password: string }): Promise<{ jar: CookieJar; idTokens: string[] }> {
  const jar = new CookieJar();
  const login = await loginThroughForm({ baseUrl, jar }, query(rps[0]!), credentials);
  const idTokens = [await exchange(baseUrl, login.headers.get('location'), rps[0]!)];
  for (const rp of rps.slice(1)) {
    const silent = await browse(`${baseUrl}/uas/oauth2/authorization?${new URLSearchParams(query(rp))}`, jar);
    idTokens.push(await exchange(baseUrl, silent.headers.get('location'), rp));
  }
  return { jar, idTokens };
}

/** RP-initiated logout with an id_token_hint (no question asked); `baseUrl` may be another instance than the sign-in's. */
export async function logOutWith(baseUrl: string, jar: CookieJar, idToken: string): Promise<void> {
  const answer = await browse(`${baseUrl}/uas/oauth2/logout?${new URLSearchParams({ id_token_hint: idToken })}`, jar);
  assert.equal(answer.status, 200);
}

/** A logout token validated as a relying party does (Back-Channel Logout 1.0 §2.6) against the issuer's JWKS; its claims. */
export async function validLogoutToken(issuer: string, token: string, clientId: string, now = Date.now()): Promise<JWTPayload> {
  const jwks = (await (await fetch(`${issuer}/oauth2/metadata.jwks`)).json()) as JSONWebKeySet;
  const { payload } = await jwtVerify(token, createLocalJWKSet(jwks), { issuer, audience: clientId, typ: 'logout+jwt', currentDate: new Date(now) });
  assert.deepEqual(payload.events, { 'http://schemas.openid.net/event/backchannel-logout': {} });
  assert.equal(payload.nonce, undefined);
  return payload;
}
