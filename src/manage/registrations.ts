/**
 * Pending registrations (issue 25 items 4 and 7; docs/registration.md, "Approval"): while
 * GATEHOUSE_REGISTRATION_APPROVAL is on, a self-registered account is `pending` and cannot sign in
 * until an administrator approves it (→ `enabled`, and a "your account is ready" mail) or rejects
 * it (→ deleted, and, unless asked not to, a mail saying so). They are listed as the users of
 * status `pending` (AM66). Each decision is one conditional write — the status changes, or the
 * user is deleted, only while it is still `pending` — with its mail's outbox row in the same unit
 * of work, so two administrators deciding at once make one decision and one mail.
 */
import type { UserProfile } from '../domain/user.ts';
import { requireReachOfUser } from '../identity/administrators.ts';
import { IdentityError } from '../identity/errors.ts';
import { getUser } from '../identity/users.ts';
import { mailLocaleOf } from '../oauth/account/registration.ts';
import { MAIL_LOCALES, mailMessage, type MailKind, type MailLocale } from '../oauth/outbox/mail.ts';
import type { StoreTransaction } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

export interface RegistrationAdministration {
  /**
   * Enables a pending account and queues the "your account is ready" mail (when mail is on and the
   * user has an address) in `locale` if given, else in the language the user registered in (the
   * mail is theirs, not the administrator's; AM105), else English. IdentityError `in_use` when it
   * is not pending.
   */
  approve(acting: Acting, idOrUsername: string, options?: { locale?: string | undefined }): Promise<{ user: UserProfile; messageId: string | undefined }>;
  /** Deletes a pending account and, unless `notify` is false, queues a mail saying so (its language chosen as approve's); IdentityError `in_use` when it is not pending. */
  reject(acting: Acting, idOrUsername: string, options?: { locale?: string | undefined; notify?: boolean | undefined }): Promise<{ user: UserProfile; messageId: string | undefined }>;
}

export function registrationAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'mail' | 'settings'>): RegistrationAdministration {
  /** The decision's mail, queued in the decision's unit of work; undefined when there is none to send. */
  async function queueMail(tx: Pick<StoreTransaction, 'outbox'>, kind: MailKind, user: UserProfile, locale: MailLocale, now: number): Promise<string | undefined> {
    if (ports.mail === undefined || user.email === undefined) return undefined;
    const id = ports.random.uuid();
    const rendered = ports.mail.composer.compose(kind, locale, { issuer: ports.settings.issuer, username: user.username });
    await tx.outbox.enqueue(mailMessage({ id, kind, to: user.email, locale, mail: rendered, dedupeKey: `mail.${kind}:${id}`, now }));
    return id;
  }

  /**
   * The pending user to decide on, and the language of the decision's mail: the one the
   * administrator names, else the one the user registered in (the mail is theirs, not the
   * administrator's; AM105), else English.
   */
  async function pendingUser(acting: Acting, idOrUsername: string, verb: string, named: string | undefined): Promise<{ user: UserProfile; locale: MailLocale }> {
    const checked = named === undefined ? undefined : mailLocale(named);
    const user = await getUser(ports.store, idOrUsername);
    await requireReachOfUser(ports.store, acting.authority, user.id, `${verb} the registration of ${user.username}`);
    if (user.status !== 'pending') throw notPending(user);
    return { user, locale: checked ?? mailLocaleOf(await ports.store.users.registrationLocale(user.id)) };
  }

  return {
    async approve(acting, idOrUsername, options = {}) {
      const { user, locale } = await pendingUser(acting, idOrUsername, 'approving', options.locale);
      const now = ports.clock.now();
      const messageId = await ports.store.transaction(async (tx) => {
        // Only while still pending: a rejection or another approval meanwhile wins, and this one says so.
        if (!(await tx.users.changeStatus(user.id, 'pending', 'enabled', now))) throw notPending(user);
        return queueMail(tx, 'registration_approved', user, locale, now);
      });
      ports.audit.emit({ event: 'registration.approved', userId: user.id, username: user.username, ...(messageId ? { messageId } : {}), actor: acting.actor });
      return { user: { ...user, status: 'enabled', updatedAt: now }, messageId };
    },
    async reject(acting, idOrUsername, options = {}) {
      const { user, locale } = await pendingUser(acting, idOrUsername, 'rejecting', options.locale);
      const now = ports.clock.now();
      const messageId = await ports.store.transaction(async (tx) => {
        // A pending account never signed in: it has no sessions or tokens to end.
        if (!(await tx.users.deleteWithStatus(user.id, 'pending'))) throw notPending(user);
        return options.notify === false ? undefined : queueMail(tx, 'registration_rejected', user, locale, now);
      });
      ports.audit.emit({ event: 'registration.rejected', userId: user.id, username: user.username, ...(messageId ? { messageId } : {}), actor: acting.actor });
      return { user, messageId };
    },
  };
}

/** Refused: the user is not pending — read so before the decision, or decided otherwise meanwhile (the conditional write found it changed). */
function notPending(user: UserProfile): IdentityError {
  const why = user.status === 'pending' ? 'it was approved or rejected meanwhile' : `it is ${user.status}`;
  return new IdentityError('in_use', `${user.username} is not a pending registration: ${why}`, 'status');
}

/** A locale an administrator named, checked (IdentityError invalid_argument for another). */
function mailLocale(locale: string): MailLocale {
  if (!(MAIL_LOCALES as readonly string[]).includes(locale)) throw new IdentityError('invalid_argument', `locale must be one of ${MAIL_LOCALES.join(', ')}`, 'locale');
  return locale as MailLocale;
}
