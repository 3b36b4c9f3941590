/**
 * How a channel of the outbox reaches the world (docs/decisions.md AM3): one transport per
 * channel, given to the sender by the composition root — SMTP for 'mail' (src/adapters/smtp.ts),
 * an HTTP POST for 'webhook' and 'backchannel_logout' later (issue 26). The core knows only this.
 */
import type { OutboxChannel, OutboxMessage } from '../../domain/outbox.ts';

export interface OutboxTransport {
  readonly channel: OutboxChannel;
  /**
   * Sends the message; resolves once the receiver has accepted it (SMTP: the 250 after DATA).
   * Throws a DeliveryFailure saying whether trying again can help; anything else thrown counts as
   * temporary.
   */
  deliver(message: OutboxMessage): Promise<void>;
}

/** A failed attempt, as the transport judged it. `permanent`: the receiver refused the message itself (SMTP 5xx, RFC 5321 §4.2.1). */
export class DeliveryFailure extends Error {
  readonly permanent: boolean;
  constructor(message: string, permanent: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DeliveryFailure';
    this.permanent = permanent;
  }
}
