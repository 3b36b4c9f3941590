/**
 * Administrators send a reset link instead of setting a password (issue 25 item 2;
 * docs/password-reset.md, "Administrators"): the user chooses the password, nobody else learns
 * it. The link and its mail are the "Forgot your password?" page's (src/oauth/account/
 * password-reset.ts sendResetLink); refused clearly when mail is off, the user has no e-mail
 * address or is not enabled, or is out of the administrator's reach.
 */
import { MailNotConfiguredError } from '../domain/outbox.ts';
import type { UserProfile } from '../domain/user.ts';
import { requireReachOfUser } from '../identity/administrators.ts';
import { IdentityError } from '../identity/errors.ts';
import { getUser } from '../identity/users.ts';
import { ResetLinkRefused, sendResetLink } from '../oauth/account/password-reset.ts';
import { MAIL_LOCALES, type MailLocale } from '../oauth/outbox/mail.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts, AdministrationSettings } from './ports.ts';

/** GATEHOUSE_PASSWORD_RESET_LIFETIME's default, for ports built without the setting (tests of other use cases). */
const DEFAULT_LIFETIME = 1800;

export interface PasswordResetAdministration {
  /** Queues a reset link to the user's e-mail address (in `locale`, en by default); the user and the outbox message's id. */
  sendPasswordReset(acting: Acting, idOrUsername: string, options?: { locale?: string | undefined }): Promise<{ user: UserProfile; messageId: string }>;
}

export function passwordResetAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'mail'> & { settings: Partial<Pick<AdministrationSettings, 'issuer' | 'passwordResetLifetime'>> }): PasswordResetAdministration {
  return {
    async sendPasswordReset(acting, idOrUsername, options = {}) {
      const { issuer, passwordResetLifetime = DEFAULT_LIFETIME } = ports.settings;
      if (ports.mail === undefined || issuer === undefined) throw new MailNotConfiguredError();
      const locale = options.locale ?? 'en';
      if (!(MAIL_LOCALES as readonly string[]).includes(locale)) throw new IdentityError('invalid_argument', `locale must be one of ${MAIL_LOCALES.join(', ')}`, 'locale');
      const user = await getUser(ports.store, idOrUsername);
      await requireReachOfUser(ports.store, acting.authority, user.id, `sending a password reset link to ${user.username}`);
      try {
        const messageId = await sendResetLink({ ...ports, config: { issuer, passwordResetLifetime } }, user, { locale: locale as MailLocale, by: 'administrator', actor: acting.actor });
        return { user, messageId };
      } catch (error) {
        if (error instanceof ResetLinkRefused) throw new IdentityError('invalid_argument', error.message, error.reason === 'no_email' ? 'email' : 'status');
        throw error;
      }
    },
  };
}
