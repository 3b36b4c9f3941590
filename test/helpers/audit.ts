/**
 * Audit events captured as the server would write them: through the real pino sink, into memory.
 * Tests look at the parsed events, and search the raw lines for secrets that must not be there.
 */
import { pino } from 'pino';
import { auditLogger, loggerAuditSink, type AuditEvent, type AuditSink } from '../../src/observability/audit.ts';

export type Captured<E extends AuditEvent['event']> = Extract<AuditEvent, { event: E }> & { audit: true };

export class AuditCapture implements AuditSink {
  /** Every line written, as written. */
  readonly lines: string[] = [];
  readonly #sink: AuditSink;

  constructor() {
    const logger = pino({ level: 'info' }, { write: (line: string) => this.lines.push(line) });
    this.#sink = loggerAuditSink(auditLogger(logger, 'info'));
  }

  emit(event: AuditEvent): void {
    this.#sink.emit(event);
  }

  /** The parsed lines. */
  all(): (AuditEvent & { audit: true })[] {
    return this.lines.map((line) => JSON.parse(line) as AuditEvent & { audit: true });
  }

  /** The events of one kind, in order. */
  of<E extends AuditEvent['event']>(event: E): Captured<E>[] {
    return this.all().filter((e): e is Captured<E> => e.event === event);
  }

  clear(): void {
    this.lines.length = 0;
  }
}

/**
 * The audit events, and a wait for them: for work that ends after its answer (a password reset
 * ask's, docs/decisions.md AM40), whose audit event says it is done. Waiting on the events
 * themselves, not on a number of turns of the event loop, which a busy database outlasts.
 */
export class AwaitedAudit extends AuditCapture {
  #waiters: (() => void)[] = [];

  override emit(event: AuditEvent): void {
    super.emit(event);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Resolves once `done(all events)` holds; rejects after 10 s of real time without it (a test that hangs says why). */
  async until(done: (events: AuditEvent[]) => boolean): Promise<void> {
    const deadline = Date.now() + 10_000;
    while (!done(this.all())) {
      if (Date.now() > deadline) throw new Error('the awaited audit events did not come');
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 100).unref();
      });
    }
  }
}
