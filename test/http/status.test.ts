/**
 * `GET /uas/status` (research/ubisecure.md §5): whether the session behind a session_index lives,
 * as JSON or XML, times in epoch milliseconds, and nothing about the user.
 */
import assert from 'node:assert/strict';
import { XMLParser } from 'fast-xml-parser';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { DATABASES } from '../helpers/databases.ts';
import { CookieJar, createTestClient, createTestUser, loginThroughForm } from '../helpers/fixtures.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`session status on ${db.name}`, () => {
    const clock = new ManualClock();
    let server: RunningServer;
    let client: Client;
    let sessionIndex: string;
    let authTime: number;
    const status = async (params: Record<string, string>) => {
      const response = await fetch(`${server.url}/uas/status?${new URLSearchParams(params)}`);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cache-control'), 'no-store');
      return response;
    };
    const json = async (params: Record<string, string>) => (await (await status(params)).json()) as Record<string, unknown>;

    before(async () => {
      server = await startServer(db, { clock });
      ({ client } = await createTestClient(server.gatehouse.store));
      const user = await createTestUser(server.gatehouse.store, { password: 'status pw' });
      const jar = new CookieJar();
      await loginThroughForm({ baseUrl: server.url, jar }, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid' }, { username: user.username, password: 'status pw' });
      const session = (await server.gatehouse.store.sessions.findLive(hashSecret(jar.cookies.get('gatehouse_session')!), clock.now()))!;
      sessionIndex = session.sessionIndex;
      authTime = session.authTime;
    });
    after(async () => server.close());

    test('a live session asked about by a known client: valid, with the session’s times in milliseconds', async () => {
      clock.advance(1000);
      const body = await json({ entityID: client.clientId, sessionIndex });
      assert.deepEqual(Object.keys(body).sort(), ['authnInstant', 'entityID', 'issueInstant', 'refresh', 'sessionIndex', 'sessionNotOnOrAfter', 'valid']);
      assert.equal(body.valid, true);
      assert.equal(body.issueInstant, clock.now());
      assert.equal(body.refresh, false);
      assert.equal(body.entityID, client.clientId);
      assert.equal(body.sessionIndex, sessionIndex);
      assert.equal(body.authnInstant, authTime);
      assert.equal(body.sessionNotOnOrAfter, authTime + server.config.sessionIdleTtl * 1000);
    });

    test('refresh=true extends the session and reports the new deadline', async () => {
      clock.advance(10 * 60_000);
      const body = await json({ entityID: client.clientId, sessionIndex, refresh: 'true' });
      assert.equal(body.refresh, true);
      assert.equal(body.sessionNotOnOrAfter, clock.now() + server.config.sessionIdleTtl * 1000);
      assert.equal((await json({ entityID: client.clientId, sessionIndex })).sessionNotOnOrAfter, body.sessionNotOnOrAfter);
    });

    test('unknown session, unknown or inactive client, or missing parameters: only valid=false and issueInstant', async () => {
      const { client: inactive } = await createTestClient(server.gatehouse.store, { active: false });
      const cases: Record<string, string>[] = [
        { entityID: client.clientId, sessionIndex: `_${'0'.repeat(40)}` },
        { entityID: 'unknown', sessionIndex },
        { entityID: inactive.clientId, sessionIndex },
        { sessionIndex },
        { entityID: client.clientId },
        { entityID: client.clientId, sessionIndex: 'garbage' },
        { entityID: 'a\u0000b', sessionIndex },
      ];
      for (const params of cases) {
        assert.deepEqual(await json(params), { valid: false, issueInstant: clock.now() });
      }
    });

    test('type=application/xml answers the same in XML', async () => {
      const response = await status({ entityID: client.clientId, sessionIndex, type: 'application/xml' });
      assert.match(response.headers.get('content-type') ?? '', /^application\/xml/);
      const text = await response.text();
      assert.match(text, /^<\?xml version="1.0" encoding="UTF-8"\?>/);
      const parsed = new XMLParser({ parseTagValue: false }).parse(text) as { status: Record<string, string> };
      assert.equal(parsed.status.valid, 'true');
      assert.equal(parsed.status.sessionIndex, sessionIndex);
      assert.equal(parsed.status.authnInstant, String(authTime));
      const invalid = await (await status({ entityID: 'x', sessionIndex, type: 'application/xml' })).text();
      assert.match(invalid, /<status><valid>false<\/valid><issueInstant>\d+<\/issueInstant><\/status>/);
    });

    test('an expired session is not valid', async () => {
      clock.advance(server.config.sessionMaxTtl * 1000);
      assert.equal((await json({ entityID: client.clientId, sessionIndex })).valid, false);
    });
  });
}
