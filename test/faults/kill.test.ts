/**
 * `kill -9` of a gatehouse process in the middle of token traffic, then a restart on the same
 * database: everything a client was given a 200 for is still valid, and nothing is half-written
 * (tokens without their redeemed code, a grant issued twice, an access token without its refresh
 * token, a refresh chain with two heads). On every database; on SQLite the traffic runs under
 * group commit (src/storage/sql/sqlite-group-commit.ts), and the process's metrics, read just
 * before the kill, show that grants did share commits.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '../../src/domain/client.ts';
import type { User } from '../../src/domain/user.ts';
import { hashSecret } from '../../src/lib/hash.ts';
import { openSqlStore, type SqlStore } from '../../src/storage/sql/store.ts';
import { addClient, addUser, basic, mintCode, postForm, REDIRECT_URI, type MintedCode } from '../helpers/back-channel.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';
import { parseExposition, scrape } from '../helpers/metrics.ts';
import { freePort } from '../helpers/server.ts';
import { startGatehouse, type GatehouseProcess } from './processes.ts';

const WORKERS = 8;
/** Answers received before the kill; the kill comes while WORKERS more are in flight. */
const ANSWERS_BEFORE_KILL = 120;

interface Family {
  /** The refresh token of the last 200 for this family. */
  refreshToken: string;
  /** A refresh with that token was sent and its answer never came (the kill): its fate is unknown. */
  inFlight: boolean;
  busy: boolean;
}

for (const kind of DATABASES) {
  describe(`kill -9 under load, then a restart, on ${kind.name}`, () => {
    let database: TestDatabase;
    let store: SqlStore;
    let server: GatehouseProcess | undefined;
    let client: Client;
    let secret: string;
    let user: User;

    before(async () => {
      database = await kind.create();
      store = await openSqlStore(database.url);
      // Rotating: every refresh writes a new pair and marks the old token, the most that can be torn.
      ({ client, secret } = await addClient(store, { rotateRefreshTokens: true }));
      user = await addUser(store);
    });
    after(async () => {
      await server?.kill();
      await store?.close();
      await database?.drop();
    });

    test('every token answered with 200 before the kill is valid after the restart, and every row is whole', async () => {
      const codes: MintedCode[] = [];
      while (codes.length < 400) codes.push(...(await Promise.all(Array.from({ length: 20 }, () => mintCode(store, client, user)))));
      const metricsPort = await freePort();
      server = await startGatehouse({ databaseUrl: database.url, env: { GATEHOUSE_METRICS_PORT: String(metricsPort) } });
      const first = server;
      const auth = { authorization: basic(client.clientId, secret) };

      /** Every access token and live refresh token a 200 handed out. */
      const accessTokens: string[] = [];
      const families: Family[] = [];
      let answers = 0;
      let lost = 0;
      let killed = false;
      let nextCode = 0;

      const exchange = async () => {
        const { code } = codes[nextCode++]!;
        const response = await postForm(`${first.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI }, auth);
        assert.equal(response.status, 200, JSON.stringify(response.body));
        accessTokens.push(response.body.access_token as string);
        families.push({ refreshToken: response.body.refresh_token as string, inFlight: false, busy: false });
      };
      const refresh = async (family: Family) => {
        family.busy = true;
        family.inFlight = true;
        const response = await postForm(`${first.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: family.refreshToken }, auth);
        assert.equal(response.status, 200, JSON.stringify(response.body));
        accessTokens.push(response.body.access_token as string);
        family.refreshToken = response.body.refresh_token as string;
        family.inFlight = false;
        family.busy = false;
      };
      const worker = async (id: number) => {
        for (let round = 0; !killed && nextCode < codes.length; round++) {
          const idle = families.find((f) => !f.busy && !f.inFlight);
          try {
            if ((round + id) % 2 === 1 && idle) await refresh(idle);
            else await exchange();
            answers++;
          } catch (error) {
            if (!killed) throw error;
            lost++; // The connection died with the process: this request's fate is unknown.
          }
        }
      };

      const traffic = Promise.all(Array.from({ length: WORKERS }, (_, id) => worker(id)));
      while (answers < ANSWERS_BEFORE_KILL) await new Promise((resolve) => setTimeout(resolve, 5));
      const metrics = parseExposition((await scrape(`http://127.0.0.1:${metricsPort}/metrics`)).text);
      killed = true;
      first.child.kill('SIGKILL');
      assert.equal(await first.exited, 'SIGKILL');
      await traffic;
      assert.ok(lost > 0, 'the kill came while requests were in flight');
      if (kind.name === 'sqlite') {
        const commits = metrics.get('gatehouse_store_group_commit_turns_count') ?? 0;
        const turns = metrics.get('gatehouse_store_group_commit_turns_sum') ?? 0;
        assert.ok(commits > 0 && turns > commits, `grants shared commits before the kill (${turns} turns in ${commits} commits)`);
      }

      server = await startGatehouse({ databaseUrl: database.url });
      const introspect = async (token: string) => (await postForm(`${server!.url}/uas/oauth2/introspection`, { token }, auth)).body.active;
      const settled = families.filter((f) => !f.inFlight);
      const all = [...accessTokens.map((token) => ({ token, what: 'access token' })), ...settled.map((f) => ({ token: f.refreshToken, what: 'refresh token' }))];
      for (let i = 0; i < all.length; i += 16) {
        const batch = all.slice(i, i + 16);
        const active = await Promise.all(batch.map(({ token }) => introspect(token)));
        batch.forEach(({ what }, j) => assert.equal(active[j], true, `an ${what} answered with 200 before the kill is no longer active`));
      }

      await assertWholeRows(store, new Set(families.filter((f) => f.inFlight).map((f) => hashSecret(f.refreshToken))));

      // And the restarted process serves: a new grant, and a refresh of a token from before the kill.
      const fresh = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'authorization_code', code: codes[nextCode]!.code, redirect_uri: REDIRECT_URI }, auth);
      assert.equal(fresh.status, 200);
      const refreshed = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'refresh_token', refresh_token: settled[0]!.refreshToken }, auth);
      assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    });
  });
}

/**
 * The invariants of the token tables after a crash:
 * - every token issued from a code names a code that exists and is marked redeemed;
 * - no code issued two grants (two token families);
 * - every issue is whole: each (family, issue time) has exactly one access and one refresh token,
 *   written by one statement;
 * - each refresh chain has at most one head (unrotated, unrevoked token), and it has none only
 *   where a refresh was cut short by the kill after it marked the old token used (the client saw
 *   no answer; the family fails closed).
 */
async function assertWholeRows(store: SqlStore, cutShort: Set<string>): Promise<void> {
  const { db } = store.database;
  const tokens = await db.selectFrom('tokens').select(['token_hash', 'kind', 'family_id', 'code_hash', 'created_at', 'rotated_at', 'revoked_at']).execute();
  const codes = new Map((await db.selectFrom('authorization_codes').select(['code_hash', 'consumed_at']).execute()).map((c) => [c.code_hash, c]));
  const familiesOfCode = new Map<string, Set<string>>();
  const issues = new Map<string, { access: number; refresh: number }>();
  const chains = new Map<string, { heads: number; cutShort: boolean }>();
  for (const t of tokens) {
    assert.ok(t.code_hash, 'a token from a code grant names its code');
    const code = codes.get(t.code_hash);
    assert.ok(code, 'a token whose code is missing');
    assert.notEqual(code.consumed_at, null, 'a token whose code is not marked redeemed');
    familiesOfCode.set(t.code_hash, (familiesOfCode.get(t.code_hash) ?? new Set()).add(t.family_id));
    const issue = issues.get(`${t.family_id}/${t.created_at}`) ?? { access: 0, refresh: 0 };
    issue[t.kind === 'access_token' ? 'access' : 'refresh']++;
    issues.set(`${t.family_id}/${t.created_at}`, issue);
    assert.equal(t.revoked_at, null, 'nothing was revoked in this test');
    if (t.kind === 'refresh_token') {
      const chain = chains.get(t.family_id) ?? { heads: 0, cutShort: false };
      if (t.rotated_at === null) chain.heads++;
      if (cutShort.has(t.token_hash)) chain.cutShort = true;
      chains.set(t.family_id, chain);
    }
  }
  for (const [code, families] of familiesOfCode) assert.equal(families.size, 1, `code ${code} issued ${families.size} grants`);
  for (const [key, issue] of issues) assert.deepEqual(issue, { access: 1, refresh: 1 }, `issue ${key} is torn`);
  for (const [family, chain] of chains) {
    assert.ok(chain.heads <= 1, `family ${family} has ${chain.heads} live refresh tokens`);
    if (chain.heads === 0) assert.ok(chain.cutShort, `family ${family} lost its live refresh token without a refresh in flight`);
  }
}
