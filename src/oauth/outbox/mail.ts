/**
 * Mail as the use cases see it (docs/mail.md): a composer that renders a kind of mail in a
 * language (src/adapters/mail/render.ts), and `mailMessage`, the outbox row of a rendered mail.
 * A use case renders first, then writes the row in the unit of work of its change; the sender
 * sends it later, whichever instance runs it. `MailService` is undefined when mail is off
 * (GATEHOUSE_SMTP_URL unset): the use cases then refuse with MailNotConfiguredError.
 */
import type { MailPayload, NewOutboxMessage, OutboxMessage } from '../../domain/outbox.ts';

export const MAIL_LOCALES = ['en', 'fi', 'sv'] as const;
export type MailLocale = (typeof MAIL_LOCALES)[number];

/** The kinds of mail, each with its templates (src/adapters/mail/texts.ts, rendered by src/adapters/mail/render.ts). Issue 25's later items add theirs. */
export const MAIL_KINDS = ['test', 'password_reset', 'email_code_sign_in', 'email_code_enrol', 'email_code_verify_email', 'registration', 'registration_exists', 'registration_approved', 'registration_rejected', 'invitation', 'email_verification', 'email_changed'] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

export interface MailComposer {
  compose(kind: MailKind, locale: MailLocale, data: Readonly<Record<string, string>>): RenderedMail;
}

export interface MailService {
  composer: MailComposer;
  /** Sends one message now when it is due and unclaimed (the outbox sender of this process); the message as it then is. */
  deliverNow(id: string): Promise<OutboxMessage | undefined>;
}

/** The outbox row of a rendered mail to `to`. */
export function mailMessage(m: { id: string; kind: MailKind; to: string; locale: MailLocale; mail: RenderedMail; dedupeKey: string; now: number }): NewOutboxMessage {
  const payload: MailPayload = { to: m.to, subject: m.mail.subject, text: m.mail.text, html: m.mail.html, locale: m.locale };
  return { id: m.id, channel: 'mail', kind: `mail.${m.kind}`, destination: m.to, payload: { ...payload }, dedupeKey: m.dedupeKey, createdAt: m.now, nextAttemptAt: m.now };
}
