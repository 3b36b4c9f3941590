/**
 * Finding 7 of the security test (issue 10): one signed-in browser repeating authorization
 * requests minted 2,000 codes a second, each a row kept an hour past its expiry. Now silent
 * authorizations are limited per SSO session and per client address, atomically in the store,
 * and an abandoned code is deleted minutes after it expired. Time moves on an injected clock.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cleanUp } from '../../src/oauth/cleanup.ts';
import { fingerprint } from '../../src/observability/audit.ts';
import { createSession } from '../../src/oauth/sessions.ts';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { AuditCapture } from '../helpers/audit.ts';
import { DATABASES } from '../helpers/databases.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser } from '../helpers/fixtures.ts';
import { assertCodeRedirect, assertErrorRedirect } from '../helpers/front-channel.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PER_SESSION = 20;
const PER_ADDRESS = 50;
const WINDOW_S = 60;
const REQUESTS = 500;
const BATCH = 50;
const MINUTE = 60_000;

for (const db of DATABASES) {
  describe(`rate limit of silent authorizations on ${db.name}`, () => {
    const clock = new ManualClock();
    const audit = new AuditCapture();
    let server: RunningServer;
    let client: Client;
    let user: User;
    const url = () => authorizationUrl(server.url, { client_id: client.clientId, redirect_uri: client.redirectUris[0]!, response_type: 'code', scope: 'openid', state: 's' });
    const codeRows = async (sessionIndex?: string) =>
      Number(
        (
          await (server.gatehouse.store as SqlStore).database.db
            .selectFrom('authorization_codes')
            .select((eb) => eb.fn.countAll().as('n'))
            .$if(sessionIndex !== undefined, (qb) => qb.where('session_index', '=', sessionIndex!))
            .executeTakeFirstOrThrow()
        ).n,
      );
    /** A browser with a fresh SSO session of `user`. */
    const signedIn = async () => {
      const { cookieValue, session } = await createSession(server.gatehouse.deps, { userId: user.id });
      const jar = new CookieJar();
      jar.cookies.set('gatehouse_session', cookieValue);
      return { jar, session };
    };
    /** `count` silent authorizations, `BATCH` at a time concurrently: how many got a code, how many were refused. */
    const hammer = async (jars: CookieJar[], count: number) => {
      let codes = 0;
      let refused = 0;
      for (let i = 0; i < count; i += BATCH) {
        const responses = await Promise.all(Array.from({ length: Math.min(BATCH, count - i) }, (_, j) => browse(url(), jars[(i + j) % jars.length])));
        for (const response of responses) {
          const error = new URL(response.headers.get('location') ?? 'x:/').searchParams.get('error');
          if (error === null) {
            assertCodeRedirect(response, { redirectUri: client.redirectUris[0]!, state: 's', issuer: server.issuer });
            codes++;
          } else {
            assertErrorRedirect(response, { redirectUri: client.redirectUris[0]!, error: 'temporarily_unavailable', state: 's', issuer: server.issuer });
            refused++;
          }
        }
      }
      return { codes, refused };
    };

    before(async () => {
      server = await startServer(db, {
        clock,
        audit,
        env: {
          GATEHOUSE_SILENT_AUTHORIZATIONS_PER_SESSION: String(PER_SESSION),
          GATEHOUSE_SILENT_AUTHORIZATIONS_PER_ADDRESS: String(PER_ADDRESS),
          GATEHOUSE_SILENT_AUTHORIZATIONS_WINDOW: String(WINDOW_S),
        },
      });
      ({ client } = await createTestClient(server.gatehouse.store));
      user = await createTestUser(server.gatehouse.store, { password: 'limit pw 1' });
    });
    after(async () => server.close());

    test(`${REQUESTS} silent authorizations from one session, ${BATCH} at a time: exactly ${PER_SESSION} codes, the rest temporarily_unavailable; a new window allows more`, async () => {
      clock.advance(10 * MINUTE); // a window of its own
      const { jar, session } = await signedIn();
      assert.deepEqual(await hammer([jar], REQUESTS), { codes: PER_SESSION, refused: REQUESTS - PER_SESSION });
      assert.equal(await codeRows(session.sessionIndex), PER_SESSION);
      assert.deepEqual(
        audit
          .of('authorization.rate_limited')
          .filter((e) => e.by === 'session')
          .map((e) => [e.limit, e.session]),
        [[PER_SESSION, fingerprint(session.sessionIndex)]],
        'reported once, when the session filled its budget',
      );
      clock.advance(WINDOW_S * 1000);
      assert.deepEqual(await hammer([jar], 1), { codes: 1, refused: 0 });
    });

    test(`many sessions from one address: exactly ${PER_ADDRESS} codes in a window, whatever the number of sessions`, async () => {
      clock.advance(10 * MINUTE);
      const browsers = await Promise.all(Array.from({ length: 6 }, () => signedIn()));
      const before = await codeRows();
      assert.deepEqual(await hammer(browsers.map((b) => b.jar), 300), { codes: PER_ADDRESS, refused: 300 - PER_ADDRESS });
      assert.equal((await codeRows()) - before, PER_ADDRESS);
      for (const { session } of browsers) assert.ok((await codeRows(session.sessionIndex)) <= PER_SESSION);
    });

    test('the abandoned codes are deleted minutes after they expired, not an hour', async () => {
      clock.advance(10 * MINUTE);
      const { jar, session } = await signedIn();
      await hammer([jar], 100);
      assert.equal(await codeRows(session.sessionIndex), PER_SESSION);
      clock.advance(server.config.codeTtl * 1000 + 6 * MINUTE);
      await cleanUp({ store: server.gatehouse.store, clock });
      assert.equal(await codeRows(session.sessionIndex), 0);
    });
  });
}
