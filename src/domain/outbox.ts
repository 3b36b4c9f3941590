/**
 * A message in the durable outbox (issue 25, item 1; docs/mail.md, docs/decisions.md AM1–AM30):
 * something to send to another system — a mail now, a webhook or a back-channel logout token
 * later (issue 26) — written in the same unit of work as the change that causes it, then sent by
 * one instance at a time under a lease, retried with back-off, and finally `delivered` or `dead`.
 *
 * The payload is what is sent, decided when the message is written (a mail is rendered then, so
 * a later change of templates or theme never changes a queued message). It may hold secrets (a
 * reset link), so no front end shows it: administrators see the envelope only.
 */

/** Where a message goes. 'mail' is sent now; the others are reserved for issue 26 (AM3). */
export const OUTBOX_CHANNELS = ['mail', 'webhook', 'backchannel_logout'] as const;
export type OutboxChannel = (typeof OUTBOX_CHANNELS)[number];

/** pending: to be sent (now or at nextAttemptAt); delivered: the receiver accepted it; dead: given up, an administrator may redeliver. */
export const OUTBOX_STATUSES = ['pending', 'delivered', 'dead'] as const;
export type OutboxStatus = (typeof OUTBOX_STATUSES)[number];

/** What the caller writes: the rest (status, attempts, lease) the store sets. */
export interface NewOutboxMessage {
  /** Unique, and the source of the Message-ID of a mail (AM9): a random UUID. */
  id: string;
  channel: OutboxChannel;
  /** What caused it, for administrators and metrics: `mail.test`, later `password_reset`, `backchannel_logout`… */
  kind: string;
  /** The address (mail), URL (webhook, back-channel logout). */
  destination: string;
  /** What is sent, as the channel's transport reads it (MailPayload for 'mail'). */
  payload: Record<string, unknown>;
  /**
   * Idempotency key, unique across the outbox: writing a message whose key exists writes nothing
   * (the unit of work run twice, or the same event reported twice, sends one message).
   */
  dedupeKey: string;
  createdAt: number;
  /** When it may first be sent; usually createdAt. */
  nextAttemptAt: number;
  /** A webhook's endpoint (its delivery log); absent for the other channels. */
  endpointId?: string;
  /**
   * Messages with the same key are sent in (createdAt, id) order: one is not claimed while an
   * earlier pending one exists (webhooks: endpoint and subject; decisions WH15). Absent: no order.
   */
  orderingKey?: string;
}

export interface OutboxMessage extends NewOutboxMessage {
  status: OutboxStatus;
  /** Attempts started (a claim counts one, even if the sender then crashed). */
  attempts: number;
  /** Who holds the lease (one claim of one instance), until when; both undefined when nobody does. */
  leaseOwner: string | undefined;
  leaseUntil: number | undefined;
  /** The last failure, short (at most OUTBOX_ERROR_LENGTH characters), never a secret. */
  lastError: string | undefined;
  updatedAt: number;
  deliveredAt: number | undefined;
  /** The receiver's HTTP status at the last attempt that got an answer (webhooks); absent when none did or for mail. */
  responseStatus?: number;
}

export const OUTBOX_ERROR_LENGTH = 500;

/** A mail as the outbox keeps it (channel 'mail'): rendered, ready to send. */
export interface MailPayload {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The language it was written in (BCP 47), for Content-Language. */
  locale: string;
}

/** A mail feature was asked for while GATEHOUSE_SMTP_URL is unset: mail is off, and says so (AM12). */
export class MailNotConfiguredError extends Error {
  constructor(message = 'mail is not configured: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)') {
    super(message);
    this.name = 'MailNotConfiguredError';
  }
}

/** A redelivery of a message that is not dead (it is pending or already delivered). */
export class OutboxStateError extends Error {
  readonly status: OutboxStatus;
  constructor(status: OutboxStatus, message: string) {
    super(message);
    this.name = 'OutboxStateError';
    this.status = status;
  }
}
