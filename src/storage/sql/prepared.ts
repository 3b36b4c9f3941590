import { createHash } from 'node:crypto';
import type { CompiledQuery, Compilable, Kysely, QueryResult } from 'kysely';

/**
 * The SQL of every prepared query, with a name for it. On PostgreSQL the driver runs these as
 * named statements (src/storage/sql/database.ts), so the server parses and plans each once per
 * connection instead of on every execution. Only these few fixed texts are named: a name per
 * ad-hoc query (the identity API's filters) would pile up statements on every connection.
 */
const NAMED_STATEMENTS = new Map<string, string>();

/** The statement name for this SQL text if it is a prepared query's, else undefined. */
export function statementName(sql: string): string | undefined {
  return NAMED_STATEMENTS.get(sql);
}

/**
 * A query built and compiled once, then executed with new parameter values each time.
 *
 * Kysely rebuilds its operation tree and compiles it to SQL on every execution; on the hot paths
 * (a token looked up by hash, a client by id) that was 10–16 % of the server's CPU
 * (docs/performance.md). The query is built with a marker for each named parameter; compiling
 * it once tells where each marker landed in the parameter list, and a call swaps the real values
 * in. The SQL text stays the same, so the SQLite adapter's statement cache serves it too.
 *
 * Only for fixed shapes: each marker must become exactly one bound parameter (not part of an `in`
 * list whose length varies, not SQL text); building checks it.
 */
export function prepared<P extends object, R>(db: AnyKysely, build: (param: <K extends keyof P>(name: K) => P[K]) => Compilable<R>): Prepared<P, R> {
  const markers = new Map<unknown, keyof P>();
  const param = <K extends keyof P>(name: K): P[K] => {
    const marker = Object.freeze({ preparedParameter: name });
    markers.set(marker, name);
    return marker as P[K];
  };
  const compiled = build(param).compile();
  const slots = compiled.parameters.map((value): Slot<P> => (markers.has(value) ? { name: markers.get(value)! } : { value }));
  const bound = slots.filter((slot) => 'name' in slot).length;
  if (bound !== markers.size) throw new Error(`prepared query: every parameter must be bound exactly once: ${compiled.sql}`);
  NAMED_STATEMENTS.set(compiled.sql, `gatehouse_${createHash('sha256').update(compiled.sql).digest('hex').slice(0, 24)}`);

  const execute = (params: P, on: AnyKysely = db): Promise<QueryResult<R>> => {
    const parameters = slots.map((slot) => ('name' in slot ? params[slot.name] : slot.value));
    return on.executeQuery({ ...compiled, parameters } as CompiledQuery<R>);
  };
  return {
    execute,
    first: async (params, on) => (await execute(params, on)).rows[0],
    affected: async (params, on) => Number((await execute(params, on)).numAffectedRows ?? 0n),
  };
}

type Slot<P> = { name: keyof P } | { value: unknown };

// Stores and their transactions are Kysely instances of one schema; this module needs no more.
type AnyKysely = Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any

export interface Prepared<P, R> {
  /** Runs on the store's database, or on `on` (a transaction of it). */
  execute(params: P, on?: AnyKysely): Promise<QueryResult<R>>;
  /** The first row, if any. */
  first(params: P, on?: AnyKysely): Promise<R | undefined>;
  /** How many rows an INSERT, UPDATE or DELETE without RETURNING changed. */
  affected(params: P, on?: AnyKysely): Promise<number>;
}
