/**
 * OpenID Connect Front-Channel Logout 1.0 (issue 26 item 3; docs/logout.md; decisions LO9): the
 * signed-out page loads, in iframes, the `frontchannel_logout_uri` of each relying party that got
 * tokens in the ended session — with `iss` and the `sid` that party's ID token carries — and of no
 * other; its CSP frames exactly those origins; a post-logout redirect then follows by a refresh
 * instead of a 302. Real sign-ins through the login form and real code exchanges.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import type { Client } from '../../src/domain/client.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'fcl password 1';
const AFTER_LOGOUT = 'https://a.example.test/bye';

type Rp = { client: Client; clientSecret: string };

for (const db of DATABASES) {
  describe(`front-channel logout on ${db.name}`, () => {
    let server: RunningServer;
    let a: Rp, b: Rp, plain: Rp;

    before(async () => {
      server = await startServer(db);
      a = await createTestClient(server.gatehouse.store, { postLogoutRedirectUris: [AFTER_LOGOUT], metadata: { frontchannel_logout_uri: 'https://a.example.test/fc-logout', frontchannel_logout_session_required: true } });
      b = await createTestClient(server.gatehouse.store, { metadata: { frontchannel_logout_uri: 'https://b.example.test:8443/logout?app=b' } });
      // Registered, never signed in to in the session: no iframe.
      await createTestClient(server.gatehouse.store, { metadata: { frontchannel_logout_uri: 'https://c.example.test/logout' } });
      plain = await createTestClient(server.gatehouse.store, { postLogoutRedirectUris: [AFTER_LOGOUT] });
    });
    after(async () => server.close());

    const query = (rp: Rp) => ({ client_id: rp.client.clientId, redirect_uri: rp.client.redirectUris[0]!, response_type: 'code', scope: 'openid' });
    const exchange = async (location: string | null, rp: Rp) => {
      const code = new URL(location!).searchParams.get('code')!;
      const answer = await postForm(`${server.issuer}/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: rp.client.redirectUris[0]! }, { authorization: basic(rp.client.clientId, rp.clientSecret) });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      return answer.body.id_token as string;
    };
    const signIn = async (first: Rp, ...more: Rp[]) => {
      const user = await createTestUser(server.gatehouse.store, { password: PASSWORD });
      const jar = new CookieJar();
      const login = await loginThroughForm({ baseUrl: server.url, jar }, query(first), { username: user.username, password: PASSWORD });
      const sids = new Map<Rp, string>([[first, decodeJwt(await exchange(login.headers.get('location'), first)).sid as string]]);
      for (const rp of more) {
        const silent = await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams(query(rp))}`, jar);
        sids.set(rp, decodeJwt(await exchange(silent.headers.get('location'), rp)).sid as string);
      }
      return { jar, sids };
    };
    const frames = (html: string) => [...html.matchAll(/<iframe class="front-channel-logout" src="([^"]*)"/g)].map((m) => m[1]!.replaceAll('&amp;', '&'));

    test('discovery says front-channel logout with iss and sid is supported', async () => {
      const metadata = (await (await fetch(`${server.issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
      assert.deepEqual([metadata.frontchannel_logout_supported, metadata.frontchannel_logout_session_supported], [true, true]);
    });

    test('the signed-out page frames exactly the RPs of the session, each with iss and its own sid; the CSP frames exactly their origins', async () => {
      const { jar, sids } = await signIn(a, b, plain);
      const answer = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ client_id: a.client.clientId, logout_hint: sids.get(a)! })}`, jar);
      assert.equal(answer.status, 200);
      const iss = encodeURIComponent(server.issuer);
      assert.deepEqual(frames(await answer.text()).sort(), [
        `https://a.example.test/fc-logout?iss=${iss}&sid=${sids.get(a)}`,
        `https://b.example.test:8443/logout?app=b&iss=${iss}&sid=${sids.get(b)}`,
      ]);
      const csp = answer.headers.get('content-security-policy') ?? '';
      assert.deepEqual(csp.split('; ').filter((d) => d.startsWith('frame-src')), ['frame-src https://a.example.test https://b.example.test:8443']);
      assert.match(csp, /frame-ancestors 'none'/);
    });

    test('with a post-logout redirect: the page first (iframes, a refresh to the redirect and a link), not a 302', async () => {
      const { jar, sids } = await signIn(a);
      const answer = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ client_id: a.client.clientId, logout_hint: sids.get(a)!, post_logout_redirect_uri: AFTER_LOGOUT, state: 's1' })}`, jar);
      assert.equal(answer.status, 200);
      const html = await answer.text();
      assert.equal(frames(html).length, 1);
      assert.match(html, /<meta http-equiv="refresh" content="2;url=https:\/\/a\.example\.test\/bye\?state=s1">/);
      assert.match(html, /<a href="https:\/\/a\.example\.test\/bye\?state=s1">Continue<\/a>/);
    });

    test('a session whose RPs registered no front-channel URI: no iframe, no frame-src, and the redirect is a 302 as before', async () => {
      const { jar, sids } = await signIn(plain);
      const answer = await browse(`${server.url}/uas/oauth2/logout?${new URLSearchParams({ client_id: plain.client.clientId, logout_hint: sids.get(plain)!, post_logout_redirect_uri: AFTER_LOGOUT })}`, jar);
      assert.deepEqual([answer.status, answer.headers.get('location')], [302, AFTER_LOGOUT]);
      assert.doesNotMatch(answer.headers.get('content-security-policy') ?? '', /frame-src/);
    });
  });
}
