/**
 * The outbox's 'mail' channel over SMTP, through nodemailer (docs/mail.md; docs/decisions.md
 * AM12–AM17). One URL says where: `smtp://` must be upgraded with STARTTLS (RFC 3207) before
 * anything is sent — a server that does not offer it, or whose certificate does not verify, gets
 * nothing — unless GATEHOUSE_SMTP_STARTTLS=off says the relay is local; `smtps://` is TLS from the
 * first byte (RFC 8314 §3.3). The URL's credentials go to nodemailer and nowhere else: no logger
 * is given to it, and no error message here repeats the URL.
 */
import { createTransport } from 'nodemailer';
import type { Config } from '../config.ts';
import type { MailPayload, OutboxMessage } from '../domain/outbox.ts';
import { DeliveryFailure, type OutboxTransport } from '../oauth/outbox/transport.ts';

export type SmtpSettings = Pick<Config, 'smtpStarttls' | 'smtpTimeout'> & { smtpUrl: string; mailFrom: string };

/** The nodemailer options the settings mean (exported for the test that the URL's choices hold). */
export function smtpOptions(settings: SmtpSettings) {
  const url = new URL(settings.smtpUrl);
  const implicitTls = url.protocol === 'smtps:';
  const timeout = settings.smtpTimeout * 1000;
  const user = decodeURIComponent(url.username);
  return {
    host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: url.port === '' ? (implicitTls ? 465 : 587) : Number(url.port),
    secure: implicitTls,
    // smtp://: STARTTLS or nothing, unless the operator said the relay is local.
    requireTLS: !implicitTls && settings.smtpStarttls === 'required',
    ignoreTLS: !implicitTls && settings.smtpStarttls === 'off',
    ...(user === '' ? {} : { auth: { user, pass: decodeURIComponent(url.password) } }),
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
    dnsTimeout: timeout,
    logger: false,
    debug: false,
  };
}

/** The Message-ID of an outbox message (RFC 5322 §3.6.4): its id at the From's domain, the same on every attempt (AM9). */
export function messageIdOf(outboxId: string, from: string): string {
  const address = /<([^<>]+)>$/.exec(from)?.[1] ?? from;
  return `<${outboxId}@${address.slice(address.lastIndexOf('@') + 1)}>`;
}

export interface SmtpTransport extends OutboxTransport {
  close(): void;
}

export function smtpTransport(settings: SmtpSettings): SmtpTransport {
  const transporter = createTransport(smtpOptions(settings));
  return {
    channel: 'mail',
    async deliver(message: OutboxMessage) {
      const mail = message.payload as unknown as MailPayload;
      try {
        await transporter.sendMail({
          from: settings.mailFrom,
          // An address object, never a string nodemailer would parse for names and groups.
          to: { name: '', address: mail.to },
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: messageIdOf(message.id, settings.mailFrom),
          headers: { 'Content-Language': mail.locale, 'Auto-Submitted': 'auto-generated' },
        });
      } catch (error) {
        throw failureOf(error);
      }
    },
    close: () => transporter.close(),
  };
}

/**
 * A reply code of 5xx is permanent (RFC 5321 §4.2.1: "the command was not accepted and the
 * requested action did not occur", and repeating it will not help); 4xx, and no reply at all
 * (connection refused or cut, timeouts, a failed STARTTLS), are temporary.
 */
function failureOf(error: unknown): DeliveryFailure {
  const e = error as { responseCode?: unknown; code?: unknown; message?: unknown };
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined;
  const text = typeof e.message === 'string' && e.message !== '' ? e.message : String(error);
  const permanent = code !== undefined && code >= 500 && code < 600;
  const label = code !== undefined ? `SMTP ${code}` : typeof e.code === 'string' ? e.code : 'SMTP';
  return new DeliveryFailure(`${label}: ${text}`, permanent, { cause: error });
}
