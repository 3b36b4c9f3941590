/**
 * On PostgreSQL the hot queries (src/storage/sql/prepared.ts) run as named statements, parsed and
 * planned once per connection; other queries stay unnamed, so ad-hoc ones (the identity API's
 * filters) do not pile up statements on the server. GATEHOUSE_DATABASE_NAMED_STATEMENTS=false turns
 * them off, for a connection pooler that cannot track them.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { DATABASES } from '../helpers/databases.ts';
import { aStoredUser, aToken, openTestStore, type TestStore } from '../helpers/store.ts';

for (const kind of DATABASES.filter((k) => k.name === 'postgres')) {
  describe(`named statements on ${kind.name}`, () => {
    let harness: TestStore;
    before(async () => {
      // One connection, so the statements this test runs and the view it reads share it.
      harness = await openTestStore(kind, { poolSize: 1 });
    });
    after(async () => harness.close());

    const named = async () => {
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(harness.store.database.db);
      return rows.map((r) => r.statement).sort();
    };

    test('a hot query runs as a named statement, prepared once per connection; an ad-hoc one does not', async () => {
      const { store } = harness;
      const user = await aStoredUser(store);
      const token = aToken({ userId: user.id });
      await store.tokens.insert(token);
      for (let i = 0; i < 3; i++) assert.equal((await store.tokens.findWithUser(token.tokenHash))?.user?.id, user.id);
      const statements = await named();
      assert.equal(statements.filter((s) => s.includes('left join "users"')).length, 1, 'the joined token read, once');
      assert.ok(statements.some((s) => s.startsWith('insert into "tokens"')), 'the token insert');
      await store.users.list({ filters: { email: 'someone' } });
      assert.deepEqual(await named(), statements, 'the filtered user list adds no named statement');
    });

    test('with namedStatements off (a pooler that cannot track them), nothing is named', async () => {
      const plain = await harness.open({ poolSize: 1, namedStatements: false });
      const user = await aStoredUser(plain);
      const token = aToken({ userId: user.id });
      await plain.tokens.insert(token);
      assert.equal((await plain.tokens.findWithUser(token.tokenHash))?.user?.id, user.id);
      const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(plain.database.db);
      assert.deepEqual(rows, []);
    });
  });
}
