/**
 * The administrators' mail use cases (docs/mail.md): a test message through the outbox
 * (`gatehouse mail test ADDRESS`), and waiting for its outcome. Mail off (GATEHOUSE_SMTP_URL
 * unset) is a MailNotConfiguredError, never a message written that nothing will send.
 */
import { MailNotConfiguredError, type OutboxMessage } from '../domain/outbox.ts';
import { mailMessage, MAIL_LOCALES, type MailLocale } from '../oauth/outbox/mail.ts';
import { IdentityError } from '../identity/errors.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

export interface MailAdministration {
  /** Whether mail is configured: the features that need it are off when not. */
  readonly configured: boolean;
  /** Queues a test message to `to` in `locale` (en by default), with its audit event; the message as written. */
  sendTest(acting: Acting, to: string, options?: { locale?: string | undefined }): Promise<OutboxMessage>;
  /**
   * Sends the message now when this process can and nobody else holds it, then waits (looking
   * every `pollMs`) until it is delivered or dead, or waiting more is pointless (its next attempt
   * is later than `timeoutMs` away), or `timeoutMs` is over; the message as it then is.
   */
  awaitOutcome(id: string, options: { timeoutMs: number; pollMs?: number }): Promise<OutboxMessage | undefined>;
}

/** An address as RFC 5321 §4.1.2 allows a mailbox, kept simple: local@domain, one line, no spaces or angle brackets. */
const ADDRESS = /^[^\s@<>()",;:]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*$/;

export function isMailAddress(value: string): boolean {
  return value.length <= 254 && ADDRESS.test(value);
}

export function mailAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'settings' | 'mail'>): MailAdministration {
  return {
    configured: ports.mail !== undefined,
    async sendTest(acting, to, options = {}) {
      const mail = ports.mail;
      if (mail === undefined) throw new MailNotConfiguredError();
      if (!isMailAddress(to)) throw new IdentityError('invalid_argument', `${JSON.stringify(to.slice(0, 100))} is not a mail address (local@domain)`, 'to');
      const locale = options.locale ?? 'en';
      if (!(MAIL_LOCALES as readonly string[]).includes(locale)) throw new IdentityError('invalid_argument', `locale must be one of ${MAIL_LOCALES.join(', ')}`, 'locale');
      const now = ports.clock.now();
      const id = ports.random.uuid();
      const actor = [acting.actor.via, acting.actor.caller].filter((part) => part !== undefined).join(':');
      const rendered = mail.composer.compose('test', locale as MailLocale, { issuer: ports.settings.issuer, actor, time: new Date(now).toISOString() });
      const message = mailMessage({ id, kind: 'test', to, locale: locale as MailLocale, mail: rendered, dedupeKey: `mail.test:${id}`, now });
      await ports.store.transaction((tx) => tx.outbox.enqueue(message));
      ports.audit.emit({ event: 'mail.queued', messageId: id, kind: message.kind, to, actor: acting.actor });
      return (await ports.store.outbox.get(id))!;
    },
    async awaitOutcome(id, { timeoutMs, pollMs = 250 }) {
      const deadline = ports.clock.now() + timeoutMs;
      let message = ports.mail ? await ports.mail.deliverNow(id) : await ports.store.outbox.get(id);
      while (message?.status === 'pending' && ports.clock.now() < deadline) {
        // Retried later than the caller will wait: the answer is "pending", now.
        if (message.leaseUntil === undefined && message.nextAttemptAt > deadline) break;
        await new Promise((resolve) => setTimeout(resolve, pollMs));
        message = ports.mail ? await ports.mail.deliverNow(id) : await ports.store.outbox.get(id);
      }
      return message;
    },
  };
}
