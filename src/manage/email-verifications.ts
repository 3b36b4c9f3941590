/**
 * Administrators send a verification link (issue 25 item 3; docs/email-verification.md,
 * "Administrators"): the user proves the address by following it, as on their profile page
 * (src/oauth/account/email-verification.ts sendVerificationLink). Refused clearly when mail is
 * off, the user has no e-mail address, its address is verified already, the user is not
 * enabled, or out of the administrator's reach. Marking an address verified without a link is
 * the other explicit act (`emailVerified` on create and update, src/manage/users.ts).
 */
import { MailNotConfiguredError } from '../domain/outbox.ts';
import type { UserProfile } from '../domain/user.ts';
import { requireReachOfUser } from '../identity/administrators.ts';
import { IdentityError } from '../identity/errors.ts';
import { getUser } from '../identity/users.ts';
import { sendVerificationLink, VerificationLinkRefused } from '../oauth/account/email-verification.ts';
import { MAIL_LOCALES, type MailLocale } from '../oauth/outbox/mail.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts, AdministrationSettings } from './ports.ts';

/** GATEHOUSE_EMAIL_VERIFICATION_LIFETIME's default, for ports built without the setting (tests of other use cases). */
const DEFAULT_LIFETIME = 3600;

export interface EmailVerificationAdministration {
  /** Queues a verification link to the user's e-mail address (in `locale`, en by default); the user and the outbox message's id. */
  sendEmailVerification(acting: Acting, idOrUsername: string, options?: { locale?: string | undefined }): Promise<{ user: UserProfile; messageId: string }>;
}

export function emailVerificationAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'mail'> & { settings: Partial<Pick<AdministrationSettings, 'issuer' | 'emailVerificationLifetime'>> }): EmailVerificationAdministration {
  return {
    async sendEmailVerification(acting, idOrUsername, options = {}) {
      const { issuer, emailVerificationLifetime = DEFAULT_LIFETIME } = ports.settings;
      if (ports.mail === undefined || issuer === undefined) throw new MailNotConfiguredError();
      const locale = options.locale ?? 'en';
      if (!(MAIL_LOCALES as readonly string[]).includes(locale)) throw new IdentityError('invalid_argument', `locale must be one of ${MAIL_LOCALES.join(', ')}`, 'locale');
      const user = await getUser(ports.store, idOrUsername);
      await requireReachOfUser(ports.store, acting.authority, user.id, `sending an e-mail verification link to ${user.username}`);
      try {
        const sent = await sendVerificationLink({ ...ports, config: { issuer, emailVerificationLifetime } }, user, { locale: locale as MailLocale, by: 'administrator', actor: acting.actor });
        return { user, messageId: sent.messageId };
      } catch (error) {
        if (error instanceof VerificationLinkRefused) throw new IdentityError('invalid_argument', error.message, error.reason === 'not_enabled' ? 'status' : 'email');
        throw error;
      }
    },
  };
}
