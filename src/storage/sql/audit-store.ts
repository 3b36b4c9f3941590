import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import type { AuditQuery, AuditRecord, AuditStore } from '../ports.ts';
import type { NewOutboxMessage } from '../../domain/outbox.ts';
import { insertOutboxMessages } from './outbox-store.ts';
import type { AuditEventsTable, Database } from './schema.ts';

/**
 * Rows per INSERT statement: 7 parameters each stays far below SQLite's 32766 and PostgreSQL's
 * 65535 bind parameters. The batching sink sends at most this many (MAX_BATCH), as one statement:
 * measured, one statement of n rows costs less per row than n/100 prepared statements of 100 in a
 * transaction (docs/performance.md, "Audit events in the store (issue 14)"). A larger call is split
 * inside one transaction, so it still stores all or none.
 */
const ROWS_PER_STATEMENT = 1000;

/** Audit events kept in the store (migration 015, `audit_events`). */
export class SqlAuditStore implements AuditStore {
  readonly #db: Kysely<Database>;
  readonly #insert: InsertText;

  constructor(db: Kysely<Database>) {
    this.#db = db;
    this.#insert = insertText(db);
  }

  async insertMany(events: readonly AuditRecord[]): Promise<void> {
    if (events.length === 0) return;
    const rows = events.map(toRow);
    if (rows.length <= ROWS_PER_STATEMENT) {
      await this.#db.executeQuery(this.#insert(rows));
      return;
    }
    await this.#db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) await trx.executeQuery(this.#insert(rows.slice(i, i + ROWS_PER_STATEMENT)));
    });
  }

  async insertManyWithMessages(events: readonly AuditRecord[], messages: readonly NewOutboxMessage[]): Promise<void> {
    const rows = events.map(toRow);
    await this.#db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) await trx.executeQuery(this.#insert(rows.slice(i, i + ROWS_PER_STATEMENT)));
      await insertOutboxMessages(trx, messages);
    });
  }

  async page(query: AuditQuery): Promise<AuditRecord[]> {
    // A filter that matches any of several values (several types; the user as subject OR as acting
    // administrator) is read as one arm per value, each a range of its own (…, at, id) index that
    // stops after `limit` rows, merged and cut to `limit`. Written as one WHERE with OR / IN, both
    // databases can only walk audit_events_at and test every row, so a user or type with few events
    // read the whole table (100 000 events: 45 ms on SQLite for a user with none; docs/performance.md,
    // "Audit events in the store (issue 14)"). UNION, not UNION ALL: an event whose subject and
    // actor are the same user is in both arms once.
    const types = query.types !== undefined && query.types.length > 0 ? [...new Set(query.types)] : [undefined];
    const people = query.userId !== undefined ? (['user_id', 'actor_id'] as const) : [undefined];
    const arms = types.flatMap((type) => people.map((column) => this.#arm(query, type, column)));
    if (arms.length === 1) return (await arms[0]!.execute()).map(fromRow);
    const [first, ...rest] = arms.map((arm, i) => this.#db.selectFrom(arm.as(`a${i}`)).selectAll());
    const merged = rest.reduce((union, arm) => union.union(arm), first!);
    const rows = await merged.orderBy('at', 'desc').orderBy('id', 'desc').limit(query.limit).execute();
    return rows.map(fromRow);
  }

  /** One arm of `page`: at most one event type and one user column, newest first, `limit` rows. */
  #arm(query: AuditQuery, type: string | undefined, userColumn: 'user_id' | 'actor_id' | undefined) {
    let select = this.#db.selectFrom('audit_events').selectAll();
    if (query.since !== undefined) select = select.where('at', '>=', query.since);
    if (query.until !== undefined) select = select.where('at', '<', query.until);
    if (type !== undefined) select = select.where('event', '=', type);
    if (userColumn !== undefined) select = select.where(userColumn, '=', query.userId!);
    if (query.clientId !== undefined) select = select.where('client_id', '=', query.clientId);
    const before = query.before;
    // A row-value comparison: both databases read it as one range of the (…, at, id) indexes.
    if (before !== undefined) select = select.where((eb) => eb(eb.refTuple('at', 'id'), '<', eb.tuple(before.at, before.id)));
    return select.orderBy('at', 'desc').orderBy('id', 'desc').limit(query.limit);
  }

  async deleteOlderThan(before: number, limit: number): Promise<number> {
    // The oldest first, `limit` at a time, so one statement never holds locks for long.
    const oldest = this.#db.selectFrom('audit_events').select('id').where('at', '<', before).orderBy('at').limit(limit);
    const result = await this.#db.deleteFrom('audit_events').where('id', 'in', oldest).where('at', '<', before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

type InsertText = (rows: readonly Selectable<AuditEventsTable>[]) => CompiledQuery;

/**
 * The multi-row INSERT of `rows`, its text written here: Kysely's building and compiling of a
 * batch's 7 000 values cost about half as much as SQLite's executing it (docs/performance.md,
 * "Audit events in the store (issue 14)"). Kysely compiles one row once, which gives the table's
 * quoting and the dialect's placeholder (`?` on SQLite, `$n` on PostgreSQL); the values are bound
 * parameters as always, never text.
 */
function insertText(db: Kysely<Database>): InsertText {
  const one = db.insertInto('audit_events').values(toRow({ id: '', at: 0, event: '', data: {} })).compile();
  const head = one.sql.slice(0, one.sql.search(/ values \(/i) + ' values '.length);
  const numbered = one.sql.includes('$1');
  if (one.parameters.length !== COLUMNS.length || !/^insert into "audit_events" \("id", "at", "event", "user_id", "client_id", "actor_id", "data"\) values $/.test(head))
    throw new Error(`unexpected INSERT shape: ${one.sql}`);
  return (rows) => {
    const tuples: string[] = [];
    const parameters: unknown[] = [];
    for (const row of rows) {
      const base = parameters.length;
      for (const column of COLUMNS) parameters.push(row[column]);
      tuples.push(numbered ? `(${COLUMNS.map((_, i) => `$${base + i + 1}`).join(', ')})` : SQLITE_TUPLE);
    }
    return CompiledQuery.raw(head + tuples.join(', '), parameters);
  };
}

const COLUMNS = ['id', 'at', 'event', 'user_id', 'client_id', 'actor_id', 'data'] as const satisfies readonly (keyof AuditEventsTable)[];
const SQLITE_TUPLE = `(${COLUMNS.map(() => '?').join(', ')})`;

function toRow(event: AuditRecord): Selectable<AuditEventsTable> {
  return {
    id: event.id,
    at: event.at,
    event: event.event,
    user_id: event.userId ?? null,
    client_id: event.clientId ?? null,
    actor_id: event.actorId ?? null,
    data: JSON.stringify(event.data),
  };
}

function fromRow(row: Selectable<AuditEventsTable>): AuditRecord {
  return {
    id: row.id,
    at: Number(row.at),
    event: row.event,
    ...(row.user_id === null ? {} : { userId: row.user_id }),
    ...(row.client_id === null ? {} : { clientId: row.client_id }),
    ...(row.actor_id === null ? {} : { actorId: row.actor_id }),
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}
