/**
 * The identity API's three authentication methods (spec "Authentication"; CustomerID "REST API
 * authentication"), each allowed and refused, and switched off in configuration.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createGatehouse } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { createGroup, addMember } from '../../../src/identity/groups.ts';
import { cryptoRandom } from '../../../src/lib/random.ts';
import { systemClock } from '../../../src/lib/clock.ts';
import { addUser } from '../../helpers/back-channel.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { capturedLogger } from '../../helpers/log.ts';
import { freePort, startServer, type RunningServer } from '../../helpers/server.ts';
import { accessToken, API_PASSWORD, API_USERNAME, assertCleanError, basicAuth, call, startApiServer } from './helpers.ts';
import { AS_OPERATOR } from '../../helpers/authority.ts';

const LIST = '/2.0/users/';
const credentials = `username=${encodeURIComponent(API_USERNAME)}&password=${encodeURIComponent(API_PASSWORD)}`;

function assertChallenges(response: { headers: Headers }, schemes: string[]): void {
  const header = response.headers.get('www-authenticate') ?? '';
  for (const scheme of schemes) assert.match(header, new RegExp(`(^|, )${scheme} realm="gatehouse identity API"`), header);
}

for (const db of DATABASES) {
  describe(`identity API authentication on ${db.name}`, () => {
    let server: RunningServer & { apiClientId: string };
    before(async () => {
      server = await startApiServer(db);
      const deps = { ...server.gatehouse.store, clock: systemClock, random: cryptoRandom };
      await createGroup(deps, { name: 'Identity API Users' }, AS_OPERATOR);
    });
    after(async () => server.close());

    async function member() {
      const user = await addUser(server.gatehouse.store);
      await addMember(server.gatehouse.store, 'Identity API Users', user.id, AS_OPERATOR);
      return user;
    }

    test('no credentials: 401 Authentication failed with both Bearer and Basic challenges', async () => {
      const response = await call(server, 'GET', LIST, { authorization: null });
      assertCleanError(response, 401, 'Authentication failed');
      assertChallenges(response, ['Bearer', 'Basic']);
      const xml = await call(server, 'GET', LIST, { authorization: null, accept: 'application/xml' });
      assert.equal(xml.status, 401);
      assert.match(xml.text, /<error><code>Authentication failed<\/code><message>[^<]+<\/message><\/error>/);
    });

    test('HTTP Basic with the configured account is allowed; a wrong password or username is refused', async () => {
      assert.equal((await call(server, 'GET', LIST)).status, 200);
      const wrong = await call(server, 'GET', LIST, { authorization: basicAuth(API_USERNAME, `${API_PASSWORD}x`) });
      assertCleanError(wrong, 401, 'Authentication failed');
      assertChallenges(wrong, ['Bearer', 'Basic']);
      assertCleanError(await call(server, 'GET', LIST, { authorization: basicAuth('someone-else', API_PASSWORD) }), 401);
      assertCleanError(await call(server, 'GET', LIST, { authorization: basicAuth(API_USERNAME, '') }), 401);
    });

    test('malformed Basic headers are refused with 401, never a 5xx', async () => {
      for (const header of ['Basic', 'Basic !!!', 'Basic bm9jb2xvbg==', `Basic ${Buffer.from(API_USERNAME + API_PASSWORD).toString('base64')}`, 'Basic YWJj', 'Digest username="x"', 'Basic a b c', `Basic ${'A'.repeat(5000)}`]) {
        const response = await call(server, 'GET', LIST, { authorization: header });
        assertCleanError(response, 401, 'Authentication failed');
      }
    });

    test('URL parameters username and password in the query string are allowed', async () => {
      const response = await call(server, 'GET', `${LIST}?${credentials}`, { authorization: null });
      assert.equal(response.status, 200, response.text);
      assertCleanError(await call(server, 'GET', `${LIST}?username=${API_USERNAME}&password=wrong-password`, { authorization: null }), 401);
      assertCleanError(await call(server, 'GET', `${LIST}?username=${API_USERNAME}`, { authorization: null }), 401);
      assertCleanError(await call(server, 'GET', `${LIST}?${credentials}&password=again`, { authorization: null }), 401);
    });

    test('URL parameters sent in a form body are refused: only the query string counts', async () => {
      const response = await call(server, 'POST', '/2.0/organizations/', { authorization: null, contentType: 'application/x-www-form-urlencoded', body: credentials });
      assertCleanError(response, 401, 'Authentication failed');
      const asJson = await call(server, 'POST', '/2.0/organizations/', { authorization: null, contentType: 'application/json', body: JSON.stringify({ username: API_USERNAME, password: API_PASSWORD }) });
      assertCleanError(asJson, 401, 'Authentication failed');
    });

    test('credentials sent two ways at once are refused', async () => {
      assertCleanError(await call(server, 'GET', `${LIST}?${credentials}`), 400, 'Invalid arguments');
    });

    test('bearer: a member of the API group with a token issued for the API is allowed', async () => {
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, await member());
      const response = await call(server, 'GET', LIST, { authorization: `Bearer ${token}` });
      assert.equal(response.status, 200, response.text);
      assert.equal((await call(server, 'GET', LIST, { authorization: `bearer ${token}` })).status, 200, 'the scheme is case-insensitive');
    });

    test("bearer: a valid token of a user the API's policy refuses (outside the API group) is 403 Unauthorized naming the policy", async () => {
      const { token } = await accessToken(server, `openid ${server.apiClientId}`);
      const response = await call(server, 'GET', LIST, { authorization: `Bearer ${token}` });
      assertCleanError(response, 403, 'Unauthorized');
      assert.equal(response.json.error!.message, 'The identity API\'s authorization policy "identity-api" does not allow the token\'s user.');
    });

    test('bearer: a token not issued for the API is 403 with error="insufficient_scope" (RFC 6750 §3.1)', async () => {
      const { token } = await accessToken(server, 'openid profile', await member());
      const response = await call(server, 'GET', LIST, { authorization: `Bearer ${token}` });
      assertCleanError(response, 403, 'Unauthorized');
      const challenge = response.headers.get('www-authenticate') ?? '';
      assert.match(challenge, /^Bearer realm="gatehouse identity API", error="insufficient_scope"/);
      assert.match(challenge, new RegExp(`scope="openid ${server.apiClientId}"`));
    });

    test('bearer: an unknown or altered token is 401 with error="invalid_token"', async () => {
      const unknown = await call(server, 'GET', LIST, { authorization: 'Bearer not-a-token-at-all' });
      assertCleanError(unknown, 401, 'Authentication failed');
      assert.match(unknown.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
      assertChallenges(unknown, ['Bearer', 'Basic']);
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, await member());
      assert.equal((await call(server, 'GET', LIST, { authorization: `Bearer ${token}` })).status, 200);
      assertCleanError(await call(server, 'GET', LIST, { authorization: `Bearer ${token}x` }), 401);
    });

    test('bearer: a token of a user who may no longer sign in is refused, even while it is live', async () => {
      const user = await member();
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, user);
      // Straight in the store, so the token is not revoked as setStatus would: the API checks by itself.
      await server.gatehouse.store.users.update({ ...user, status: 'locked' });
      const response = await call(server, 'GET', LIST, { authorization: `Bearer ${token}` });
      assertCleanError(response, 401, 'Authentication failed');
      assert.match(response.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
    });

    test("bearer: a token whose user left the API group (the identity-api policy's rule) is refused from then on", async () => {
      const user = await member();
      const { token } = await accessToken(server, `openid ${server.apiClientId}`, user);
      assert.equal((await call(server, 'GET', LIST, { authorization: `Bearer ${token}` })).status, 200);
      await server.gatehouse.store.groups.removeMember((await server.gatehouse.store.groups.getByName('Identity API Users'))!.id, user.id);
      assertCleanError(await call(server, 'GET', LIST, { authorization: `Bearer ${token}` }), 403, 'Unauthorized');
    });
  });

  describe(`identity API authentication switched off, on ${db.name}`, () => {
    let noBearerNoUrl: RunningServer & { apiClientId: string };
    let noBasic: RunningServer & { apiClientId: string };
    let noAccount: RunningServer;
    before(async () => {
      [noBearerNoUrl, noBasic, noAccount] = await Promise.all([
        startApiServer(db, { GATEHOUSE_API_AUTH_BEARER: 'false', GATEHOUSE_API_AUTH_URL_PARAMS: 'false' }),
        startApiServer(db, { GATEHOUSE_API_AUTH_BASIC: 'false' }),
        startServer(db),
      ]);
      for (const server of [noBearerNoUrl, noAccount]) await createGroup({ ...server.gatehouse.store, clock: systemClock, random: cryptoRandom }, { name: 'Identity API Users' }, AS_OPERATOR);
    });
    after(async () => Promise.all([noBearerNoUrl.close(), noBasic.close(), noAccount.close()]));

    test('GATEHOUSE_API_AUTH_BEARER=false refuses even a good token; the challenge offers Basic only', async () => {
      const user = await addUser(noBearerNoUrl.gatehouse.store);
      await addMember(noBearerNoUrl.gatehouse.store, 'Identity API Users', user.id, AS_OPERATOR);
      const { token } = await accessToken(noBearerNoUrl, `openid ${noBearerNoUrl.apiClientId}`, user);
      const response = await call(noBearerNoUrl, 'GET', LIST, { authorization: `Bearer ${token}` });
      assertCleanError(response, 401, 'Authentication failed');
      assert.doesNotMatch(response.headers.get('www-authenticate') ?? '', /Bearer/);
      assert.equal((await call(noBearerNoUrl, 'GET', LIST)).status, 200, 'Basic still works');
    });

    test('GATEHOUSE_API_AUTH_URL_PARAMS=false refuses the right URL parameters', async () => {
      assertCleanError(await call(noBearerNoUrl, 'GET', `${LIST}?${credentials}`, { authorization: null }), 401, 'Authentication failed');
    });

    test('GATEHOUSE_API_AUTH_BASIC=false refuses the right Basic credentials; URL parameters still work', async () => {
      assertCleanError(await call(noBasic, 'GET', LIST), 401, 'Authentication failed');
      assert.equal((await call(noBasic, 'GET', `${LIST}?${credentials}`, { authorization: null })).status, 200);
    });

    test('with no API account configured, Basic and URL parameters refuse everything', async () => {
      assertCleanError(await call(noAccount, 'GET', LIST), 401);
      assertCleanError(await call(noAccount, 'GET', `${LIST}?${credentials}`, { authorization: null }), 401);
      assertCleanError(await call(noAccount, 'GET', LIST, { authorization: basicAuth('', '') }), 401);
    });

    test('with GATEHOUSE_API_CLIENT_ID unset, the bearer method refuses every token', async () => {
      const user = await addUser(noAccount.gatehouse.store);
      await addMember(noAccount.gatehouse.store, 'Identity API Users', user.id, AS_OPERATOR);
      const { token } = await accessToken(noAccount, 'openid profile', user);
      const response = await call(noAccount, 'GET', LIST, { authorization: `Bearer ${token}` });
      assertCleanError(response, 401, 'Authentication failed');
    });
  });
}

describe('identity API logging', () => {
  test('a request with URL-parameter credentials logs its URL with the password redacted', async () => {
    const captured = capturedLogger('debug');
    const db = await DATABASES[0]!.create();
    const port = await freePort();
    const config = loadConfig({ GATEHOUSE_PORT: String(port), GATEHOUSE_DATABASE_URL: db.url, GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD });
    const gatehouse = await createGatehouse(config, {}, { logger: captured.logger });
    try {
      await gatehouse.app.listen({ host: '127.0.0.1', port });
      const secret = 'Sup3r-Secret-Passw0rd';
      const response = await fetch(`http://127.0.0.1:${port}/customerid-rest/services/2.0/users/?username=${API_USERNAME}&password=${secret}&email=ada`);
      assert.equal(response.status, 401);
      const ok = await fetch(`http://127.0.0.1:${port}/eidm2/services/users/?${credentials}&recursive=true`, { headers: { authorization: 'x' } });
      assert.equal(ok.status, 400);
      const good = await fetch(`http://127.0.0.1:${port}/eidm2/services/users/?${credentials}&recursive=true`);
      assert.equal(good.status, 200);
      const write = await fetch(`http://127.0.0.1:${port}/customerid-rest/services/2.0/organizations/?technicalName=logged`, { method: 'POST', headers: { authorization: basicAuth() } });
      assert.equal(write.status, 201);
      const log = captured.text();
      assert.match(log, /"apiCaller":\{"method":"basic"\},"msg":"identity API change"/);
      assert.ok(!log.includes(`"${API_USERNAME}"`), 'the API account name is not logged either');
      // A listing filter identifies a user: its value is redacted too (decision X4).
      assert.match(log, /customerid-rest\/services\/2\.0\/users\/\?username=\[redacted\]&password=\[redacted\]&email=\[redacted\]"/);
      assert.match(log, /eidm2\/services\/users\/\?username=\[redacted\]&password=\[redacted\]&recursive=true/);
      assert.ok(!log.includes(secret), 'the password never reaches the log');
      assert.ok(!log.includes(encodeURIComponent(API_PASSWORD)) && !log.includes(API_PASSWORD), 'nor the configured one');
      assert.ok(!log.includes(basicAuth().slice(6)), 'nor Basic credentials');
    } finally {
      await gatehouse.close();
      await db.drop();
    }
  });
});
