/**
 * Audit events kept in the store, for the management API (`GET /manage/api/v1/audit-events`;
 * docs/operations.md, "Audit events in the store"). The sink never makes its caller wait: `emit`
 * stamps the event with the clock, gives it a time-ordered id and buffers it; a batch is written
 * with one multi-row insert every FLUSH_MS or as soon as MAX_BATCH events wait, whichever comes
 * first. So the token endpoint's hot path costs a clock read and one array push (the stored form
 * and the id are made when the batch is written, off the request's path), and a busy server writes
 * one statement per batch instead of one per event (docs/decisions.md AU1, AU9).
 *
 * What it costs: events still buffered when the process dies are lost from the store (at most one
 * batch, FLUSH_MS of events); the file or log copy, written synchronously by the sink it is teed
 * with, has them. A failed insert is logged at error with the number of events lost and never
 * reaches the caller. `flush()` writes what waits (close, CLI exit, tests).
 */
import { randomFillSync } from 'node:crypto';
import type { Clock } from '../lib/clock.ts';
import type { AuditRecord, AuditStore } from '../storage/ports.ts';
import { fingerprint, type Actor, type AuditEvent, type AuditSink } from './audit.ts';

/** Longest an event waits in the buffer (ms). */
export const FLUSH_MS = 100;
/**
 * Events per write: a full buffer is written at once. Large, so that under load a batch is what
 * FLUSH_MS gathers (400 events at 4 000 tokens/s): each write's cost per event falls with its size,
 * mostly the index pages it touches (one page of the user index per user in the batch, written
 * once per commit; docs/performance.md, "Audit events in the store (issue 14)").
 */
export const MAX_BATCH = 1000;
/**
 * Most events buffered while the store is slow or down; beyond it new events are dropped from the
 * store (counted in the error log line), so an outage cannot exhaust the memory. The file or log
 * copy keeps them.
 */
export const MAX_BUFFERED = 10_000;

export interface AuditStoreLog {
  error(fields: object, message: string): void;
}

export interface StoredAuditSink extends AuditSink {
  /** Writes every event emitted so far; resolves once they are stored (or their failure logged). Never rejects. */
  flush(): Promise<void>;
}

export interface StoreAuditSinkOptions {
  flushMs?: number;
  maxBatch?: number;
  maxBuffered?: number;
}

export function storeAuditSink(store: Pick<AuditStore, 'insertMany'>, clock: Clock, log: AuditStoreLog, options: StoreAuditSinkOptions = {}): StoredAuditSink {
  const flushMs = options.flushMs ?? FLUSH_MS;
  const maxBatch = options.maxBatch ?? MAX_BATCH;
  const maxBuffered = options.maxBuffered ?? MAX_BUFFERED;
  const ids = new AuditIds();
  // The events as emitted with their time; made into records (id, fingerprints) only when written.
  let buffer: Stamped[] = [];
  /** Events emitted and not yet written (buffered, or in a batch waiting for its insert). */
  let pending = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  // One insert at a time, in emit order: a slow store holds events back instead of piling up connections.
  let writing: Promise<void> = Promise.resolve();

  const write = async (batch: AuditRecord[]): Promise<void> => {
    try {
      await store.insertMany(batch);
    } catch (error) {
      log.error({ err: error, count: batch.length }, `could not store ${batch.length} audit event(s); the audit file or log has them`);
    } finally {
      pending -= batch.length;
    }
  };

  const flushNow = (): Promise<void> => {
    clearTimeout(timer);
    timer = undefined;
    if (dropped > 0) {
      log.error({ count: dropped }, `dropped ${dropped} audit event(s) from the store: more than ${maxBuffered} were waiting; the audit file or log has them`);
      dropped = 0;
    }
    if (buffer.length > 0) {
      // Ids in emit order, now: AuditIds orders events of one ms by the order it is asked in.
      const records = buffer.map(({ event, at }) => toRecord(event, at, ids.next(at)));
      buffer = [];
      for (let i = 0; i < records.length; i += maxBatch) {
        const batch = records.length <= maxBatch ? records : records.slice(i, i + maxBatch);
        writing = writing.then(() => write(batch));
      }
    }
    return writing;
  };

  return {
    emit(event) {
      if (pending >= maxBuffered) {
        dropped++;
        return;
      }
      buffer.push({ event, at: clock.now() });
      pending++;
      if (buffer.length >= maxBatch) void flushNow();
      else if (timer === undefined) {
        timer = setTimeout(() => void flushNow(), flushMs);
        // Waiting events never keep the process alive; close() flushes them.
        timer.unref();
      }
    },
    flush: flushNow,
  };
}

interface Stamped {
  event: AuditEvent;
  at: number;
}

/** Emits every event to each sink in turn (the file or log copy first, then the store). */
export function teeAuditSink(...sinks: AuditSink[]): AuditSink {
  return { emit: (event) => sinks.forEach((sink) => sink.emit(event)) };
}

/**
 * A field whose name says it holds a credential (`password`, `accessToken`, `userCode`, …). Events
 * carry fingerprints there (src/observability/audit.ts); a longer string would be a raw value that
 * slipped into a new event, and is stored as its fingerprint instead: the store is readable through
 * the management API, so it never keeps one (docs/decisions.md AU4).
 */
const CREDENTIAL_FIELD = /^(?:password|secret|token|code|cookie)$|[a-z](?:Password|Secret|Token|Code|Cookie)$/;
const FINGERPRINT_LENGTH = 12;

/** The stored form of an event: subject user, client and acting administrator as columns, the rest as data. */
export function toRecord(event: AuditEvent, at: number, id: string): AuditRecord {
  const { event: name, userId, clientId, ...rest } = event as AuditEvent & { userId?: string; clientId?: string };
  const data: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(rest)) {
    data[key] = typeof value === 'string' && value.length > FINGERPRINT_LENGTH && CREDENTIAL_FIELD.test(key) ? fingerprint(value) : value;
  }
  const actor = (rest as { actor?: Actor }).actor;
  return { id, at, event: name, userId, clientId, actorId: actor?.caller, data };
}

/**
 * UUIDv7 ids (RFC 9562 §5.7): the event's ms time in the first 48 bits, then a 12-bit counter of
 * the events this process stamped in that ms (§6.2, method 1), then 62 random bits. Unique across
 * processes, and in one process ordered like the events, so (at, id) sorts events of one ms in
 * the order they happened.
 */
export class AuditIds {
  #lastMs = -1;
  #counter = 0;
  // Random bytes drawn POOL_IDS ids at a time: one randomFillSync per 16 bytes was the sink's
  // largest cost per event on the token endpoint (docs/performance.md, issue 14).
  readonly #pool = Buffer.alloc(8 * POOL_IDS);
  #used = POOL_IDS;

  next(at: number): string {
    const ms = Math.max(0, Math.floor(at));
    if (ms === this.#lastMs) this.#counter = Math.min(this.#counter + 1, 0xfff);
    else {
      this.#lastMs = ms;
      this.#counter = 0;
    }
    if (this.#used === POOL_IDS) {
      randomFillSync(this.#pool);
      this.#used = 0;
    }
    const offset = 8 * this.#used++;
    // 62 random bits after the variant (0b10): bytes 8..15 of the UUID.
    this.#pool[offset] = 0x80 | (this.#pool[offset]! & 0x3f);
    const random = this.#pool.toString('hex', offset, offset + 8);
    const time = (ms % 2 ** 48).toString(16).padStart(12, '0');
    const version = (0x7000 | this.#counter).toString(16);
    return `${time.slice(0, 8)}-${time.slice(8)}-${version}-${random.slice(0, 4)}-${random.slice(4)}`;
  }
}

/** Ids per draw of random bytes (8 bytes each). */
const POOL_IDS = 256;
