/**
 * The figure of issue 24, item 5, over real HTTP: 10,000 concurrent guesses of one user's TOTP
 * code, sent to the login page's second-factor step of three gatehouse processes on one PostgreSQL
 * store, never succeed, and lock nothing but the attacker out (decisions SA6, SA103).
 *
 * The attacker knows the user's password (the only way to reach the code step) and sends codes
 * known to be wrong from one address. What "nothing but the attacker" means, as asserted here:
 * - the attacker's address: the threshold's guesses are checked at once (the reservation is taken
 *   before the check, in the shared store, on every instance), then one per wait as the waits
 *   double (the processes run on the real clock); every other one is 429 unchecked, and while the
 *   wait lasts even the RIGHT code from that address is refused without a check;
 * - the user, from another address, while that wait lasts: the password step (its counters are not
 *   the codes') and then the right code sign in, and the code is spent only then.
 * The wait's end and what it gives the attacker (one more check per wait) need an injected clock:
 * test/contract/factor-guesses.test.ts proves those on both databases.
 *
 * PostgreSQL only: several instances of SQLite share one file on one host, which the store
 * contract already covers; this is the deployment the issue asks about.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Agent, request } from 'node:http';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { enrolTotp, totpAt } from '../helpers/factors.ts';
import { authorizationUrl, browse, CookieJar, createTestClient, createTestUser, formAction, formFields, RP_REDIRECT_URI, submit } from '../helpers/fixtures.ts';
import { freePort } from '../helpers/server.ts';
import { startGatehouse, type GatehouseProcess } from '../faults/processes.ts';

const PASSWORD = 'the attacker has this one';
const INSTANCES = 3;
const GUESSES = 10_000;
/** GATEHOUSE_THROTTLE_USER_FAILURES's default: the checks the pair of user and address gets. */
const THRESHOLD = 5;
const ATTACKER = '203.0.113.66';
const USER_ADDRESS = '198.51.100.20';

const postgres = DATABASES.find((kind) => kind.name === 'postgres');

describe(`${GUESSES} concurrent second-factor guesses on ${INSTANCES} instances over PostgreSQL`, { skip: postgres === undefined ? 'needs GATEHOUSE_TEST_POSTGRES_URL' : false }, () => {
  let database: TestDatabase;
  let store: SqlStore;
  let instances: GatehouseProcess[] = [];
  let client: Client;
  let user: User;
  let secret: string;
  /** Sockets enough to keep every instance busy; the 10,000 requests are all issued at once and queue here. */
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });

  const dir = mkdtempSync(join(tmpdir(), 'gatehouse-guesses-'));
  /** Each instance's audit file: the checks are counted by their events (a checked failure may answer 429, SA26). */
  const auditLog = (i: number) => join(dir, `audit-${i}.log`);

  before(async () => {
    database = await postgres!.create();
    store = await openSqlStore(database.url);
    ({ client } = await createTestClient(store));
    user = await createTestUser(store, { username: `guessed-${Date.now()}`, password: PASSWORD });
    secret = await enrolTotp(store, user.id);
    const ports = await Promise.all(Array.from({ length: INSTANCES }, () => freePort()));
    const issuer = `http://127.0.0.1:${ports[0]}/uas`;
    instances = await Promise.all(
      ports.map((port, i) => startGatehouse({ databaseUrl: database.url, port, env: { GATEHOUSE_ISSUER: issuer, GATEHOUSE_TRUSTED_PROXIES: '127.0.0.1', GATEHOUSE_AUDIT_LOG: auditLog(i) } })),
    );
  });

  after(async () => {
    await Promise.all(instances.map((instance) => instance.kill()));
    agent.destroy();
    await store?.close();
    await database?.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A form POST through the test's agent (its sockets, not one per request); the status. */
  function postStatus(url: string, body: string, headers: Record<string, string>): Promise<number> {
    return new Promise((resolve, reject) => {
      const sent = request(url, { method: 'POST', agent, headers: { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(Buffer.byteLength(body)), ...headers } }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      sent.on('error', reject);
      sent.end(body);
    });
  }

  /** The password step on `instance` from `address`, in a new browser: the code page's action and fields, and the browser. */
  async function passwordStep(instance: GatehouseProcess, address: string): Promise<{ jar: CookieJar; action: string; fields: Record<string, string> }> {
    const jar = new CookieJar();
    const from = { 'x-forwarded-for': address };
    const query = { client_id: client.clientId, redirect_uri: RP_REDIRECT_URI, response_type: 'code', scope: 'openid', state: address };
    const login = await (await browse(authorizationUrl(instance.url, query), jar, from)).text();
    const fields = formFields(login).map(([name, value]): [string, string] => [name, name === 'username' ? user.username : name === 'password' ? PASSWORD : value]);
    const answer = await submit(`${instance.url}${formAction(login)}`, fields, jar, from);
    assert.equal(answer.status, 200, 'the right password leads to the code page');
    const page = await answer.text();
    assert.match(page, /name="code"/);
    return { jar, action: formAction(page), fields: Object.fromEntries(formFields(page)) };
  }

  test(`none of ${GUESSES} wrong codes from one address succeeds; the threshold's are checked, then one per doubling wait; the right code is refused there while the user, from another address, signs in`, { timeout: 300_000 }, async () => {
    const attacker = await passwordStep(instances[0]!, ATTACKER);
    // Codes known to be wrong: none is valid at any step the run can reach (one drift step each
    // side of every step from a minute before to three minutes after now).
    const now = Date.now();
    const reachable = new Set(Array.from({ length: 10 }, (_, i) => totpAt(secret, now + (i - 2) * 30_000)));
    const guesses: string[] = [];
    for (let n = 0; guesses.length < GUESSES; n++) {
      const guess = String((n * 7919) % 1_000_000).padStart(6, '0');
      if (!reachable.has(guess)) guesses.push(guess);
    }
    const cookie = attacker.jar.header();
    const started = Date.now();
    const statuses = await Promise.all(guesses.map((code, i) => postStatus(`${instances[i % INSTANCES]!.url}${attacker.action}`, new URLSearchParams({ ...attacker.fields, code }).toString(), { 'x-forwarded-for': ATTACKER, ...cookie })));
    assert.equal(statuses.filter((status) => status === 303).length, 0, 'no guess succeeded');
    // 401: checked and wrong; 429: refused unchecked, or checked and wrong as the wait starts (SA26),
    // which is why the checks are counted by their audit events below.
    assert.equal(statuses.filter((status) => status === 401 || status === 429).length, GUESSES);
    assert.ok(statuses.filter((status) => status === 401).length < THRESHOLD);

    // The user's right code from the attacker's address: refused unchecked (the wait of the pair).
    const right = await submit(`${instances[1]!.url}${attacker.action}`, { ...attacker.fields, code: totpAt(secret, Date.now()) }, attacker.jar, { 'x-forwarded-for': ATTACKER });
    assert.equal(right.status, 429);
    assert.ok(Number(right.headers.get('retry-after')) >= 1, 'with Retry-After');
    const elapsed = (Date.now() - started) / 1000;

    // The user, from their own address, on another instance: password, then the right code.
    const own = await passwordStep(instances[2]!, USER_ADDRESS);
    const signedIn = await submit(`${instances[1]!.url}${own.action}`, { ...own.fields, code: totpAt(secret, Date.now()) }, own.jar, { 'x-forwarded-for': USER_ADDRESS });
    assert.equal(signedIn.status, 303, 'the user signs in');
    const back = new URL(signedIn.headers.get('location') ?? '');
    assert.deepEqual([back.origin + back.pathname, back.searchParams.get('state'), back.searchParams.has('code')], [RP_REDIRECT_URI, USER_ADDRESS, true]);
    assert.equal(own.jar.cookies.has('gatehouse_session'), true);

    // Stopped (SIGTERM) so that every event is written: what each instance checked.
    await Promise.all(instances.map((instance) => instance.stop()));
    const events = instances
      .flatMap((_, i) => readFileSync(auditLog(i), 'utf8').trim().split('\n'))
      .map((line) => JSON.parse(line) as { event: string; userId?: string; ip?: string })
      .filter((e) => e.event.startsWith('factor.') && e.userId === user.id);
    const count = (event: string, ip: string) => events.filter((e) => e.event === event && e.ip === ip).length;
    // Checked: the threshold at once, then one per wait, the waits doubling from 1 s (real
    // processes run on the real clock): the k-th extra check comes 2^k - 1 s after the threshold's
    // at the earliest, so a run of `elapsed` seconds allows at most log2(elapsed + 1) of them.
    const failed = count('factor.failed', ATTACKER);
    const extra = Math.floor(Math.log2(elapsed + 1));
    assert.ok(failed >= THRESHOLD && failed <= THRESHOLD + extra, `checked ${failed}: the threshold ${THRESHOLD}, plus at most ${extra} in ${elapsed.toFixed(1)} s`);
    assert.deepEqual(
      { throttled: count('factor.throttled', ATTACKER), verifiedForAttacker: count('factor.verified', ATTACKER), verifiedForUser: count('factor.verified', USER_ADDRESS), failedForUser: count('factor.failed', USER_ADDRESS) },
      { throttled: GUESSES + 1 - failed, verifiedForAttacker: 0, verifiedForUser: 1, failedForUser: 0 },
    );
    const perInstance = instances.map((_, i) => readFileSync(auditLog(i), 'utf8').split('"factor.throttled"').length - 1);
    assert.ok(perInstance.every((n) => n > 0), `every instance refused guesses: ${perInstance.join(', ')}`);
  });
});
