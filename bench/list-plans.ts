/**
 * `node bench/list-plans.ts --database-url URL`: the query plans and times of the management API's
 * list queries on a store filled with 10 000 users and 100 000 audit events (issue 14): the pages
 * must be index range scans that stop after `limit` rows, never a scan and sort of the whole table.
 * Prints, for each query, the plan the database chose (SQLite: EXPLAIN QUERY PLAN; PostgreSQL:
 * EXPLAIN ANALYZE) and the median time of the store call over 20 runs. Use a fresh database: the
 * rows are added to whatever is there.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { CompiledQuery, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { normalizeUsername } from '../src/domain/user.ts';
import { AuditIds } from '../src/observability/audit-store-sink.ts';
import type { AuditQuery, AuditRecord } from '../src/storage/ports.ts';
import { SqlAuditStore } from '../src/storage/sql/audit-store.ts';
import { openSqlStore } from '../src/storage/sql/store.ts';
import { SqlUserStore } from '../src/storage/sql/user-store.ts';

const { values } = parseArgs({ options: { 'database-url': { type: 'string', default: 'sqlite:bench/results/list-plans.db' }, users: { type: 'string', default: '10000' }, events: { type: 'string', default: '100000' } } });
const url = values['database-url'];
const store = await openSqlStore(url, { poolSize: 4 });
const { db, dialect } = store.database;

// Captures the last query a store method sends, to EXPLAIN exactly that.
let last: RootOperationNode | undefined;
const capture: KyselyPlugin = {
  transformQuery: ({ node }) => (last = node),
  transformResult: async ({ result }) => result,
};
const captured = db.withPlugin(capture);
const audit = new SqlAuditStore(captured);
const users = new SqlUserStore(captured);

const userCount = Number(values.users);
const eventCount = Number(values.events);
const now = Date.now();
const userIds: string[] = [];
const userRows = [];
for (let i = 0; i < userCount; i++) {
  const id = randomUUID();
  userIds.push(id);
  const username = `user${String(i).padStart(6, '0')}`;
  userRows.push({ id, username, username_key: normalizeUsername(username), status: 'enabled', given_name: 'Given', family_name: `Family${i}`, email: `${username}@example.org`, organization_id: null, password_hash: null, created_at: now, updated_at: now });
}
for (let i = 0; i < userRows.length; i += 500) await db.insertInto('users').values(userRows.slice(i, i + 500) as never).execute();

// Events over 30 days: mostly token.issued for 1 000 active users; one "busy" user (user 0) has
// 10 % of all events; admin actions by user 1 now and then.
const ids = new AuditIds();
const names = ['token.issued', 'token.issued', 'token.issued', 'token.refreshed', 'login.succeeded', 'login.failed', 'session.ended', 'token.issued'];
let batch: AuditRecord[] = [];
for (let i = 0; i < eventCount; i++) {
  const at = now - 30 * 86_400_000 + Math.floor((i * 30 * 86_400_000) / eventCount);
  // 1 % are an administrator's changes (user 1 the actor); a tenth of the grants are
  // client_credentials (no user).
  const admin = i % 100 === 1;
  const event = admin ? 'user.updated' : names[i % names.length]!;
  const userId = i % 10 === 0 ? userIds[0] : i % 10 === 9 && event === 'token.issued' ? undefined : userIds[2 + ((i * 7919) % Math.min(1000, userCount - 2))];
  const actorId = admin ? userIds[1] : undefined;
  batch.push({ id: ids.next(at), at, event, userId, clientId: `client-${i % 20}`, actorId, data: { scope: 'openid profile', grantType: 'authorization_code' } });
  if (batch.length === 1000) {
    await audit.insertMany(batch);
    batch = [];
  }
}
await audit.insertMany(batch);
if (dialect === 'postgres') await db.executeQuery(CompiledQuery.raw('ANALYZE'));
else await db.executeQuery(CompiledQuery.raw('ANALYZE'));

async function measure(label: string, call: () => Promise<unknown[]>): Promise<void> {
  const rows = await call();
  const node = last!;
  const compiled = db.getExecutor().compileQuery(node, { queryId: 'plan' } as never);
  const explain = dialect === 'sqlite' ? 'EXPLAIN QUERY PLAN ' : 'EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) ';
  const plan = await db.executeQuery(CompiledQuery.raw(explain + compiled.sql, [...compiled.parameters]));
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  const lines = (plan.rows as Record<string, unknown>[]).map((r) => String(r.detail ?? r['QUERY PLAN']));
  process.stdout.write(`\n## ${label} (${rows.length} rows, median ${times[10]!.toFixed(2)} ms)\n${compiled.sql}\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
}

const newest = (query: Omit<AuditQuery, 'limit'>) => () => audit.page({ limit: 51, ...query });
const middle = (await audit.page({ limit: 1, before: { at: now - 15 * 86_400_000, id: 'f' } }))[0]!;
process.stdout.write(`${dialect}: ${userCount} users, ${eventCount} audit events\n`);
await measure('users, first page', () => users.page({ limit: 51 }));
await measure('users, a page after user005000', () => users.page({ limit: 51, after: 'user005000' }));
await measure('audit events, newest first', newest({}));
await measure('audit events, a middle page', newest({ before: { at: middle.at, id: middle.id } }));
await measure('audit events, type login.failed', newest({ types: ['login.failed'] }));
await measure('audit events, types login.failed + session.ended, middle page', newest({ types: ['login.failed', 'session.ended'], before: { at: middle.at, id: middle.id } }));
await measure('audit events, busy user (subject of 10 %)', newest({ userId: userIds[0] }));
await measure('audit events, busy user, middle page', newest({ userId: userIds[0], before: { at: middle.at, id: middle.id } }));
await measure('audit events, a quiet user', newest({ userId: userIds[500] }));
await measure('audit events, a user with no events', newest({ userId: userIds[9999] }));
await measure('audit events, type and quiet user', newest({ types: ['token.issued'], userId: userIds[500] }));
await measure('audit events, administrator (actor of user.updated)', newest({ userId: userIds[1] }));
await measure('audit events, client', newest({ clientId: 'client-3' }));
await measure('audit events, type and user', newest({ types: ['token.issued'], userId: userIds[0] }));
await store.close();
