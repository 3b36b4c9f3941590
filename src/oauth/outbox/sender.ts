/**
 * The outbox's sender (docs/mail.md, "The outbox"; docs/decisions.md AM4–AM11): every instance
 * may run one. A tick claims the due messages of the channels it has a transport for (one atomic
 * conditional write: each message goes to one claimer, under a lease), sends them, and marks each
 * delivered, for another try later, or dead — every mark conditional on still holding the lease.
 *
 * What this guarantees: a message is sent by one instance at a time, and once marked delivered
 * it is never sent again; a sender that crashes leaves its lease to expire, and then another
 * takes the message over. At one point only can a message be sent twice: the receiver accepted
 * it (SMTP's 250 after DATA) and the sender died, or lost the store, before its mark committed.
 * The next sender cannot know the first one's send succeeded, so it sends again: at-least-once
 * at that point, exactly-once everywhere else. The copy carries the same Message-ID (AM9), so a
 * receiver can tell.
 *
 * The clock is injected and `tick()` is callable: tests drive it without timers or sleeps.
 */
import { OUTBOX_ERROR_LENGTH, type OutboxChannel, type OutboxMessage } from '../../domain/outbox.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Random } from '../../lib/random.ts';
import type { AuditSink } from '../../observability/audit.ts';
import type { OutboxStore } from '../../storage/ports.ts';
import { nextAttemptAt, type RetryPolicy } from './retry.ts';
import { DeliveryFailure, type OutboxTransport } from './transport.ts';

export type DeliveryOutcome = 'delivered' | 'retry' | 'dead' | 'lease_lost';

export interface SenderLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

export interface OutboxSenderDeps {
  outbox: OutboxStore;
  clock: Clock;
  random: Random;
  audit: AuditSink;
  transports: readonly OutboxTransport[];
  policy: RetryPolicy;
  /** A lease lasts this long (ms): longer than the slowest send (every timeout of the transport in a row). */
  leaseMs: number;
  /** Messages per claim. */
  batch?: number;
  /** This instance, in lease owners (logs and the store show who holds what). */
  instance: string;
  /** [0, 1): the jitter of the back-off (Math.random by default; tests fix it). */
  jitter?: () => number;
  /** Each attempt's outcome, for the metrics. */
  observe?: (channel: OutboxChannel, outcome: DeliveryOutcome) => void;
  log?: SenderLog;
}

export interface TickReport {
  delivered: number;
  retried: number;
  dead: number;
  leaseLost: number;
}

const DEFAULT_BATCH = 20;
/** Claims per tick at most: a tick drains a backlog a batch at a time, but ends. */
const MAX_CLAIMS_PER_TICK = 10;

export class OutboxSender {
  readonly #deps: OutboxSenderDeps;
  readonly #byChannel: ReadonlyMap<OutboxChannel, OutboxTransport>;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(deps: OutboxSenderDeps) {
    this.#deps = deps;
    this.#byChannel = new Map(deps.transports.map((t) => [t.channel, t]));
  }

  /** The channels this sender can send. */
  get channels(): OutboxChannel[] {
    return [...this.#byChannel.keys()];
  }

  /** Claims and sends what is due now, a batch at a time, until nothing is due (or MAX_CLAIMS_PER_TICK batches). */
  async tick(): Promise<TickReport> {
    const report: TickReport = { delivered: 0, retried: 0, dead: 0, leaseLost: 0 };
    const batch = this.#deps.batch ?? DEFAULT_BATCH;
    for (let round = 0; round < MAX_CLAIMS_PER_TICK && !this.#stopped; round++) {
      const claimed = await this.#claim(batch);
      await this.#sendAll(claimed, report);
      if (claimed.length < batch) break;
    }
    return report;
  }

  /**
   * Sends this one message now if it is due and nobody holds it (`gatehouse mail test`); the
   * message as it then is (undefined: unknown). Another instance holding it is no error: the
   * caller sees it pending and may look again.
   */
  async deliverNow(id: string): Promise<OutboxMessage | undefined> {
    const claimed = await this.#claim(1, id);
    await this.#sendAll(claimed, { delivered: 0, retried: 0, dead: 0, leaseLost: 0 });
    return this.#deps.outbox.get(id);
  }

  /** Runs a tick every `intervalMs` (the first soon after start); a failed tick is logged, the next comes on time. */
  start(intervalMs: number): void {
    const schedule = (delay: number) => {
      if (this.#stopped) return;
      this.#timer = setTimeout(() => {
        this.#running = this.tick()
          .catch((error: unknown) => this.#deps.log?.error({ err: error }, 'outbox tick failed; trying again at the next'))
          .finally(() => schedule(intervalMs));
      }, delay);
      // The sender never keeps the process alive by itself.
      this.#timer.unref();
    };
    schedule(Math.min(intervalMs, 1000));
  }

  /** Stops the timer and waits for a tick in progress (its sends finish and are marked). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  async #claim(limit: number, id?: string): Promise<OutboxMessage[]> {
    if (this.#byChannel.size === 0) return [];
    // A fresh owner per claim: a mark made under an expired lease can never pass for a later one.
    const owner = `${this.#deps.instance}/${this.#deps.random.hex(8)}`;
    return this.#deps.outbox.claim({ owner, now: this.#deps.clock.now(), leaseMs: this.#deps.leaseMs, limit, channels: this.channels, id });
  }

  async #sendAll(messages: readonly OutboxMessage[], report: TickReport): Promise<void> {
    // In parallel: the lease covers one send, not a batch of them in a row.
    const outcomes = await Promise.all(messages.map((m) => this.#send(m)));
    for (const outcome of outcomes) {
      if (outcome === 'delivered') report.delivered++;
      else if (outcome === 'retry') report.retried++;
      else if (outcome === 'dead') report.dead++;
      else report.leaseLost++;
    }
  }

  async #send(message: OutboxMessage): Promise<DeliveryOutcome> {
    const { outbox, clock } = this.#deps;
    const owner = message.leaseOwner!;
    let outcome: DeliveryOutcome;
    let failure: unknown;
    let sent = false;
    let responseStatus: number | undefined;
    try {
      responseStatus = (await this.#byChannel.get(message.channel)!.deliver(message))?.responseStatus;
      sent = true;
    } catch (error) {
      failure = error;
    }
    // The marks are outside the try: a store that fails here is not a failed send (the message
    // was sent; its lease expires and it is sent again — the at-least-once point).
    if (sent) {
      outcome = (await outbox.markDelivered(message.id, owner, clock.now(), responseStatus)) ? 'delivered' : 'lease_lost';
      // Sent, but the lease was gone: another sender may send it again (the at-least-once point).
      if (outcome === 'lease_lost') this.#deps.log?.warn({ messageId: message.id, channel: message.channel }, 'outbox message sent after its lease expired: another instance may send it again (same Message-ID)');
    } else {
      const permanent = failure instanceof DeliveryFailure && failure.permanent;
      const text = describe(failure);
      const now = clock.now();
      const retryAt = nextAttemptAt(this.#deps.policy, message.attempts, permanent, now, (this.#deps.jitter ?? Math.random)());
      const marked = await outbox.markFailed(message.id, owner, { now, error: text, retryAt, responseStatus: failure instanceof DeliveryFailure ? failure.responseStatus : undefined });
      outcome = !marked ? 'lease_lost' : retryAt === undefined ? 'dead' : 'retry';
      const fields = { messageId: message.id, channel: message.channel, kind: message.kind, attempts: message.attempts, permanent, error: text };
      if (outcome === 'dead') {
        this.#deps.log?.error(fields, 'outbox message is dead: it will not be tried again unless an administrator redelivers it');
        this.#deps.audit.emit({ event: 'outbox.dead', messageId: message.id, channel: message.channel, kind: message.kind, attempts: message.attempts, error: text });
      } else if (outcome === 'retry') {
        this.#deps.log?.warn({ ...fields, retryAt: new Date(retryAt!).toISOString() }, 'outbox message not delivered; it will be tried again');
      }
    }
    this.#deps.observe?.(message.channel, outcome);
    return outcome;
  }
}

/** A failure in one short line, for the message's last_error: never more than the store keeps. */
function describe(error: unknown): string {
  const text = error instanceof Error ? error.message || error.name : String(error);
  return text.replace(/\s+/g, ' ').trim().slice(0, OUTBOX_ERROR_LENGTH);
}
