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
