/**
 * A password set by an operator (`gatehouse user set-password`) or through the identity API ends
 * the user's SSO sessions and revokes their tokens (issue 10, finding 3): a reset is the answer
 * to a stolen password, and the thief's sessions must not outlive it.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, CookieJar, createTestClient, createTestUser, loginThroughForm, redirectParams, RP_REDIRECT_URI } from '../helpers/fixtures.ts';
import type { RunningServer } from '../helpers/server.ts';
import { call, startApiServer } from './identity-api/helpers.ts';

const BIN = fileURLToPath(new URL('../../bin/gatehouse.js', import.meta.url));
const OLD = 'correct horse battery staple';
const NEW = 'a wholly different passphrase';

function cli(args: string[], env: Record<string, string>, input: string): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', GATEHOUSE_LOG_LEVEL: 'silent', ...env }, stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
    child.stdin.end(input);
  });
}

for (const db of DATABASES) {
  describe(`a password set by an operator or the API ends the user's access, on ${db.name}`, () => {
    let server: RunningServer;
    before(async () => {
      server = await startApiServer(db);
    });
    after(async () => server.close());

    /** A user signed in through the login form, with the tokens of one code. */
    async function signedIn() {
      const store = server.gatehouse.store;
      const { client, clientSecret } = await createTestClient(store, { refreshTokens: true });
      const user = await createTestUser(store, { password: OLD });
      const jar = new CookieJar();
      const query = { response_type: 'code', client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, scope: 'openid' };
      const login = await loginThroughForm({ baseUrl: server.url, jar }, query, { username: user.username, password: OLD });
      const auth = { authorization: basic(client.clientId, clientSecret) };
      const tokens = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code: redirectParams(login).get('code')!, redirect_uri: RP_REDIRECT_URI }, auth);
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return { user, jar, query, auth, tokens: tokens.body };
    }

    /** Whether the access token, the refresh token and the SSO session still work. */
    async function access(signed: Awaited<ReturnType<typeof signedIn>>) {
      const userinfo = await fetch(`${server.url}/uas/oauth2/userinfo`, { headers: { authorization: `Bearer ${signed.tokens.access_token as string}` } });
      const refresh = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: signed.tokens.refresh_token as string }, signed.auth);
      const sso = await browse(`${server.url}/uas/oauth2/authorization?${new URLSearchParams({ ...signed.query, prompt: 'none' })}`, signed.jar);
      return { userinfo: userinfo.status, refresh: refresh.status, sso: redirectParams(sso).has('code') ? 'code' : redirectParams(sso).get('error') };
    }

    test('before any change the user has access (the control)', async () => {
      const signed = await signedIn();
      assert.deepEqual(await access(signed), { userinfo: 200, refresh: 200, sso: 'code' });
    });

    test('the identity API setting a password ends the sessions and revokes the tokens', async () => {
      const signed = await signedIn();
      const response = await call(server, 'PUT', `/2.0/users/${signed.user.id}`, { contentType: 'application/json', body: JSON.stringify({ attributes: { password: [NEW] } }) });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(await access(signed), { userinfo: 401, refresh: 400, sso: 'login_required' });
    });

    test('the identity API changing another field leaves the access alone', async () => {
      const signed = await signedIn();
      const response = await call(server, 'PUT', `/2.0/users/${signed.user.id}`, { contentType: 'application/json', body: JSON.stringify({ attributes: { firstname: ['Renamed'] } }) });
      assert.equal(response.status, 200, response.text);
      assert.deepEqual(await access(signed), { userinfo: 200, refresh: 200, sso: 'code' });
    });

    test('the CLI (gatehouse user set-password) ends the sessions and revokes the tokens', async () => {
      const signed = await signedIn();
      const result = await cli(['user', 'set-password', signed.user.username, '--password-stdin'], { GATEHOUSE_DATABASE_URL: server.database.url }, `${NEW}\n`);
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(await access(signed), { userinfo: 401, refresh: 400, sso: 'login_required' });
    });
  });
}
