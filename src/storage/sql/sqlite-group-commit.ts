/**
 * Group commit on SQLite (issue 27 item 3; docs/decisions.md PR36–PR39).
 *
 * A process has one connection to its SQLite file, and node:sqlite runs each statement to its end
 * on the main thread. Without grouping, every unit of work was a transaction of its own and every
 * lone write an implicit one: each paid its BEGIN and COMMIT and appended its pages to the WAL,
 * though the grants of one burst touch the same table and index pages. With grouping, the first
 * write (or unit of work) opens a transaction, BEGIN IMMEDIATE, and leaves it open when it is done;
 * every statement and unit of work of this connection that comes before its commit runs inside it,
 * each unit under a savepoint of its own; the commit comes once the event loop has run the I/O
 * callbacks that were ready (setImmediate), so the requests that arrived together join one group,
 * and one COMMIT makes all of them durable. (Waiting only for turns already queued formed no
 * groups under HTTP load: a statement never yields the thread, so nothing queues behind it.)
 *
 * What stays true:
 * - **Nothing is answered before it is durable.** A turn that ran inside a group does not return
 *   (Kysely waits for `releaseConnection` before it answers the caller) until the group's COMMIT
 *   succeeded; if the COMMIT fails, every turn of the group fails with its error, so no caller is
 *   told of a write that was not kept, and `kill -9` loses only unanswered work
 *   (test/faults/kill.test.ts). Reads made inside a group are answered after its commit too: they
 *   may have seen its writes.
 * - **A unit of work is still all or nothing.** Its savepoint is released when it succeeds and
 *   rolled back when it fails, so a failed unit leaves no trace and the others in the group are
 *   untouched. The unit that opens a group runs in the transaction itself (no savepoint): it is
 *   first, so rolling the transaction back undoes only it.
 * - **One winner per race.** The turns of a group still run one after the other on one
 *   connection, so the outcome is that of running them in that order: serializable by
 *   construction, as before. Every conditional write keeps its condition.
 * - **Bounded.** A group commits at the end of its `MAX_UNITS`th turn, of the first turn that ends
 *   `MAX_OPEN_MS` after it opened, and of any turn while another connection to the file in this
 *   process waits (that one cannot run inside this transaction).
 * - **Only the sole writer spans rounds** (`acrossRounds`, PR38). Where several processes write
 *   the file (cluster workers), a group forms only from turns already waiting and commits when
 *   none waits: the write lock is held no longer than before grouping, since a worker holding it
 *   for a round made the other wait.
 * - **Waiting for another process does not stop this one** (PR39). Every write takes SQLite's
 *   write lock through a group's BEGIN IMMEDIATE, tried with busy_timeout 0 and, while another
 *   process holds the lock, tried again on a timer: SQLite's busy handler would sleep on the
 *   thread that serves every request of this process.
 */
import { CompiledQuery, type DatabaseConnection, type Driver, type QueryResult } from 'kysely';

/** The most turns in one group, and the longest a group stays open (ms), before it commits. */
export const MAX_UNITS = 64;
export const MAX_OPEN_MS = 10;

/** What the driver needs of a node:sqlite database. */
export interface SqliteHandle {
  prepare(sqlText: string): SqliteStatementHandle;
  /** How long a statement waits for another process's lock (PRAGMA busy_timeout), ms. */
  readonly busyTimeoutMs: number;
  setBusyTimeout(ms: number): void;
  /** Whether a transaction is open on the connection (SQLite may roll one back on its own). */
  inTransaction(): boolean;
  close(): void;
}

export interface SqliteStatementHandle {
  reader: boolean;
  all(parameters: ReadonlyArray<unknown>): unknown[];
  run(parameters: ReadonlyArray<unknown>): { changes: number | bigint; lastInsertRowid: number | bigint };
}

/**
 * A queue of turns, one holder at a time.
 *
 * Per file: connections to one file in one process take turns, each for a statement or a whole
 * group. SQLite makes a connection that finds the file locked wait in its busy handler, and
 * node:sqlite is synchronous, so that wait blocks the thread: a second store on the same file in
 * the same process (tests run two server instances so) that waited for a transaction of the first
 * would stop the very thread that has to finish that transaction, until busy_timeout ran out.
 * Processes still exclude each other through SQLite's own locks and busy_timeout.
 *
 * Per connection: its statements and units of work, one at a time.
 */
export class Turns {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  /** Resolves when it is the caller's turn; the turn lasts until `end()`. */
  take(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((start) => this.#waiting.push(start));
  }

  end(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }

  get waiting(): boolean {
    return this.#waiting.length > 0;
  }
}

export interface GroupingOptions {
  /** Told how many turns each COMMIT made durable (metrics). */
  onCommit?: ((turns: number) => void) | undefined;
  /**
   * true: a group commits once the event loop has run the callbacks that were ready, so requests
   * arriving together join it; for the one server process writing the file. false (default): it
   * commits as soon as no turn of this connection waits, which holds SQLite's write lock no longer
   * than a transaction of its own would: for several processes writing one file (cluster
   * workers), which would otherwise wait on each other's open groups (PR38).
   */
  acrossRounds?: boolean;
}

interface Group {
  turns: number;
  openedAt: number;
  commitScheduled: boolean;
  committed: Promise<void>;
  settle(error?: unknown): void;
}

const BEGIN = 'begin immediate';
const COMMIT = 'commit';
const ROLLBACK = 'rollback';
const SAVEPOINT = 'savepoint unit';
const RELEASE = 'release unit';
const ROLLBACK_TO = 'rollback to unit';

/** Statements that open no group: a plain read changes nothing to share. */
const READ = /^\s*select\b/i;

export class GroupCommitDriver implements Driver {
  readonly #handle: SqliteHandle;
  /** The file's turns, shared by every connection to it in this process. */
  readonly #file: Turns;
  /** This connection's own turns: Kysely's statements and units of work, one at a time. */
  readonly #local = new Turns();
  readonly #onCommit: ((turns: number) => void) | undefined;
  readonly #acrossRounds: boolean;
  readonly #connection: DatabaseConnection;
  /** This connection holds the file's turn: a statement or unit runs, or a group is open. */
  #holdsFile = false;
  /** The open group: a transaction left open for the turns that come before its commit. */
  #group: Group | undefined;
  /** The group the current turn ran something in: the turn returns only once that group commits. */
  #joined: Group | undefined;
  /** The current unit of work runs under a savepoint (it did not open the group). */
  #underSavepoint = false;
  #inUnit = false;

  constructor(handle: SqliteHandle, file: Turns, grouping: GroupingOptions = {}) {
    this.#handle = handle;
    this.#file = file;
    this.#onCommit = grouping.onCommit;
    this.#acrossRounds = grouping.acrossRounds ?? false;
    this.#connection = {
      executeQuery: <R>(query: CompiledQuery) => this.#execute(query) as Promise<QueryResult<R>>,
      streamQuery: () => {
        throw new Error('streaming is not used on SQLite');
      },
    };
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#local.take();
    if (!this.#holdsFile) {
      await this.#file.take();
      this.#holdsFile = true;
    }
    return this.#connection;
  }

  async beginTransaction(connection: DatabaseConnection): Promise<void> {
    if (this.#group) {
      await control(connection, SAVEPOINT);
      this.#underSavepoint = true;
    } else {
      await this.#begin(connection);
      this.#group = newGroup();
      this.#underSavepoint = false;
    }
    this.#inUnit = true;
    this.#join();
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    this.#inUnit = false;
    // The group's own transaction commits when the group ends.
    if (this.#underSavepoint && this.#groupAlive()) await control(connection, RELEASE);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    this.#inUnit = false;
    if (!this.#groupAlive()) return;
    if (this.#underSavepoint) {
      await control(connection, ROLLBACK_TO);
      await control(connection, RELEASE);
      return;
    }
    // This unit opened the group and is its only turn so far: rolling back undoes only it.
    const group = this.#group!;
    this.#group = undefined;
    this.#joined = undefined;
    await control(connection, ROLLBACK);
    group.settle();
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const joined = this.#joined;
    this.#joined = undefined;
    const group = this.#group;
    if (group) {
      // Commit now when another connection waits for the file (it cannot run in this
      // transaction), when the group is full, or, where groups do not span rounds, when no turn
      // of this connection waits; else once the event loop has run what is ready (setImmediate:
      // after this round's I/O callbacks), so the requests that arrived together join it.
      const full = this.#file.waiting || group.turns >= MAX_UNITS || performance.now() - group.openedAt >= MAX_OPEN_MS;
      if (full || (!this.#acrossRounds && !this.#local.waiting)) await this.#commit(connection, group);
      else this.#commitSoon(group);
    }
    this.#releaseFile();
    this.#local.end();
    // No answer before the commit (or the loss) of the group this turn ran in.
    if (joined) await joined.committed;
  }

  async destroy(): Promise<void> {
    await this.#local.take();
    if (this.#group) await this.#commit(this.#connection, this.#group);
    this.#releaseFile();
    this.#handle.close();
  }

  #commitSoon(group: Group): void {
    if (group.commitScheduled) return;
    group.commitScheduled = true;
    setImmediate(() => void this.#commitLater(group));
  }

  /** The group's commit once the turns already waiting for this connection have joined it. */
  async #commitLater(group: Group): Promise<void> {
    await this.#local.take();
    try {
      if (this.#group === group) await this.#commit(this.#connection, group);
      this.#releaseFile();
    } finally {
      this.#local.end();
    }
  }

  async #commit(connection: DatabaseConnection, group: Group): Promise<void> {
    this.#group = undefined;
    try {
      await control(connection, COMMIT);
      group.settle();
      this.#onCommit?.(group.turns);
    } catch (error) {
      if (this.#handle.inTransaction()) await control(connection, ROLLBACK).catch(() => {});
      group.settle(error);
    }
  }

  /** Lets other connections to the file have their turn, unless a group still holds it. */
  #releaseFile(): void {
    if (!this.#holdsFile || this.#group) return;
    this.#holdsFile = false;
    this.#file.end();
  }

  /** A statement of the current turn, outside BEGIN/COMMIT handling. */
  async #execute(query: CompiledQuery): Promise<QueryResult<unknown>> {
    const text = query.sql;
    if (!CONTROL.has(text)) {
      // A write outside a unit of work opens a group too, for the writes that follow it soon
      // (within the round, or, when groups do not span rounds, those already waiting); and its
      // BEGIN waits for another process's lock without blocking the thread (#begin).
      if (!this.#group && !this.#inUnit && !READ.test(text)) {
        await this.#begin(this.#connection);
        this.#group = newGroup();
      }
      if (this.#group) this.#join();
    }
    try {
      return this.#run(text, query.parameters);
    } catch (error) {
      // Some errors (a full disk, an I/O error) make SQLite roll the whole transaction back:
      // the group is lost, and every turn that ran in it is told so.
      if (this.#group && !this.#handle.inTransaction()) {
        const group = this.#group;
        this.#group = undefined;
        group.settle(error);
      }
      throw error;
    }
  }

  /**
   * BEGIN IMMEDIATE, waiting for another process's write lock on a timer rather than in SQLite's
   * busy handler, which would block this process's thread (every request it serves) while it
   * sleeps. Tried with busy_timeout 0; refused with SQLITE_BUSY, tried again after a growing,
   * jittered pause, up to the busy_timeout the connection has otherwise. IMMEDIATE, because a
   * deferred transaction that later writes can fail with SQLITE_BUSY at that write, with no
   * retry possible, when another process holds the write lock.
   */
  async #begin(connection: DatabaseConnection): Promise<void> {
    const deadline = performance.now() + this.#handle.busyTimeoutMs;
    for (let pause = 0.5; ; pause = Math.min(pause * 2, 8)) {
      this.#handle.setBusyTimeout(0);
      try {
        await control(connection, BEGIN);
        return;
      } catch (error) {
        if (!isBusy(error) || performance.now() > deadline) throw error;
      } finally {
        this.#handle.setBusyTimeout(this.#handle.busyTimeoutMs);
      }
      await new Promise((resolve) => setTimeout(resolve, pause * (0.5 + Math.random())));
    }
  }

  #run(text: string, parameters: ReadonlyArray<unknown>): QueryResult<unknown> {
    const statement = this.#handle.prepare(text);
    if (statement.reader) return { rows: statement.all(parameters) };
    const { changes, lastInsertRowid } = statement.run(parameters);
    return { insertId: BigInt(lastInsertRowid), numAffectedRows: BigInt(changes), rows: [] };
  }

  #join(): void {
    if (this.#joined) return;
    this.#joined = this.#group!;
    this.#joined.turns++;
  }

  #groupAlive(): boolean {
    return this.#group !== undefined && this.#handle.inTransaction();
  }
}

const CONTROL = new Set([BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE, ROLLBACK_TO]);

/** SQLITE_BUSY (5) and its extended codes: another connection holds the lock. */
export function isBusy(error: unknown): boolean {
  const code = (error as { errcode?: unknown } | undefined)?.errcode;
  return typeof code === 'number' && (code & 0xff) === 5;
}

/** A refusal the driver waits out and tries again (`#begin`): not a failed query to report. */
export function isRetriedBegin(sqlText: string, error: unknown): boolean {
  return sqlText === BEGIN && isBusy(error);
}

/** Runs a transaction-control statement through the connection Kysely logs (metrics, counts). */
async function control(connection: DatabaseConnection, text: string): Promise<void> {
  await connection.executeQuery(CompiledQuery.raw(text));
}

function newGroup(): Group {
  let settle!: (error?: unknown) => void;
  const committed = new Promise<void>((resolve, reject) => {
    settle = (error) => (error === undefined ? resolve() : reject(error));
  });
  // Turns that read nothing from the group (none joined) never await it.
  committed.catch(() => {});
  return { turns: 0, openedAt: performance.now(), commitScheduled: false, committed, settle };
}
