/**
 * The bench's own parts that decide what a figure means (issue 27 §4): R5 answers from its SQLite
 * row (an unknown token is inactive), and the peer oidc-provider's login interaction checks the
 * password and leads, through its one extra redirect, to a code — so the peer's S5/S6 measure a
 * real login, not a form that lets anyone in; and better-auth's the same, whose sign-in API hands
 * back the client's redirect itself (skipped where its dev dependency is not installed). Real processes, started as
 * `npm run bench` starts them.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateClientKey } from '../../bench/lib/assertions.ts';
import { REDIRECT_URI, SCOPE } from '../../bench/lib/fixtures.ts';
import { probeFrontChannel } from '../../bench/lib/front-channel.ts';
import { makePeerFixture } from '../../bench/lib/peer.ts';
import { freePort, killAll, startNode, waitUntilReady } from '../../bench/lib/processes.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'gatehouse-bench-test-'));
after(() => {
  killAll();
  rmSync(dir, { recursive: true, force: true });
});

test('R5 answers active for its token and inactive for any other, from one SQLite read', async () => {
  const token = randomBytes(32).toString('base64url');
  const port = await freePort();
  const server = startNode([join(ROOT, 'bench/ceilings/stateful-http.ts')], { env: { PORT: String(port), BENCH_R5_DATABASE: join(dir, 'r5.db'), BENCH_R5_TOKEN: token }, onStdout: () => {} });
  try {
    await waitUntilReady(`http://127.0.0.1:${port}/`, server);
    const introspect = async (value: string) => {
      const response = await fetch(`http://127.0.0.1:${port}/introspect`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ token: value }) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const known = await introspect(token);
    assert.equal(known.status, 200);
    assert.deepEqual({ active: known.body.active, sub: known.body.sub, scope: known.body.scope }, { active: true, sub: '6f1c1f53-7c4e-4a55-9d0b-3c3f4c1c2b1a', scope: 'openid profile email' });
    assert.deepEqual((await introspect('not-a-token')).body, { active: false });
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test("oidc-provider's login interaction refuses a wrong password and, with the right one, ends in a code after one more redirect", async () => {
  const fixture = makePeerFixture((await generateClientKey()).publicJwk);
  const port = await freePort();
  const peer = startNode([join(ROOT, 'bench/peers/oidc-provider.ts')], { env: { PORT: String(port), BENCH_PEER_FIXTURE: JSON.stringify(fixture.config), NODE_ENV: 'production' } });
  try {
    const base = `http://127.0.0.1:${port}`;
    await waitUntilReady(`${base}/.well-known/openid-configuration`, peer);
    const authorize = `/auth?${new URLSearchParams({ response_type: 'code', client_id: fixture.rp.clientId, redirect_uri: REDIRECT_URI, scope: SCOPE, state: 's', nonce: 'n' })}`;
    const wrong = await probeFrontChannel(base, authorize, { ...fixture.login, password: `${fixture.login.password}!` });
    assert.deepEqual(wrong, { available: false, reason: 'the login POST answered 200 without a redirect, not a redirect to the client with a code' });
    const right = await probeFrontChannel(base, authorize, fixture.login);
    assert.equal(right.available, true);
    if (!right.available) return;
    assert.deepEqual({ hops: right.hops, afterLoginHops: right.afterLoginHops, loginStatus: right.loginStatus, ssoStatus: right.ssoStatus }, { hops: 1, afterLoginHops: 1, loginStatus: 303, ssoStatus: 303 });
  } finally {
    assert.equal(await peer.stop(), 0);
  }
});

test(
  "better-auth's login page refuses a wrong password and, with the right one, answers the client's redirect with a code; its clients come from the peer",
  { skip: !existsSync(join(ROOT, 'node_modules/@better-auth/oauth-provider')) && 'better-auth is not installed (npm ci)' },
  async () => {
    const fixture = makePeerFixture((await generateClientKey()).publicJwk);
    const port = await freePort();
    let stdout = '';
    const peer = startNode([join(ROOT, 'bench/peers/better-auth.ts')], {
      env: { PORT: String(port), BENCH_PEER_FIXTURE: JSON.stringify(fixture.config), BENCH_PEER_DIR: dir, NODE_ENV: 'production' },
      onStdout: (chunk) => (stdout += chunk),
    });
    try {
      const base = `http://127.0.0.1:${port}`;
      await waitUntilReady(`${base}/.well-known/openid-configuration`, peer);
      const told = JSON.parse(stdout.trim().split('\n').pop()!) as { clients: Record<string, { clientId: string }>; authorizeScope: string; notOffered: Record<string, string> };
      assert.deepEqual(Object.keys(told.clients).sort(), ['ccBasic', 'ccJwt', 'device', 'rp', 'rs']);
      assert.deepEqual(Object.keys(told.notOffered), ['S3-ES']);
      const authorize = `/api/auth/oauth2/authorize?${new URLSearchParams({ response_type: 'code', client_id: told.clients.rp!.clientId, redirect_uri: REDIRECT_URI, scope: told.authorizeScope, state: 's', nonce: 'n' })}`;
      const wrong = await probeFrontChannel(base, authorize, { ...fixture.login, password: `${fixture.login.password}!` });
      assert.deepEqual(wrong, { available: false, reason: 'the login POST answered 200 without a redirect, not a redirect to the client with a code' });
      const right = await probeFrontChannel(base, authorize, fixture.login);
      assert.equal(right.available, true, right.available ? '' : right.reason);
      if (!right.available) return;
      assert.deepEqual({ hops: right.hops, afterLoginHops: right.afterLoginHops, loginStatus: right.loginStatus, ssoStatus: right.ssoStatus }, { hops: 1, afterLoginHops: 0, loginStatus: 303, ssoStatus: 302 });
    } finally {
      assert.equal(await peer.stop(), 0);
    }
  },
);
