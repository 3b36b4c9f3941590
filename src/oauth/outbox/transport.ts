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
  deliver(message: OutboxMessage): Promise<void | DeliveryReceipt>;
}

/** What a transport may say of a delivery, for the delivery log. */
export interface DeliveryReceipt {
  /** The receiver's HTTP status (webhooks). */
  responseStatus?: number;
}

/** A failed attempt, as the transport judged it. `permanent`: the receiver refused the message itself (SMTP 5xx, RFC 5321 §4.2.1). */
export class DeliveryFailure extends Error {
  readonly permanent: boolean;
  /** The receiver's HTTP status, when it answered. */
  readonly responseStatus: number | undefined;
  constructor(message: string, permanent: boolean, options?: { cause?: unknown; responseStatus?: number }) {
    super(message, options);
    this.name = 'DeliveryFailure';
    this.permanent = permanent;
    this.responseStatus = options?.responseStatus;
  }
}
