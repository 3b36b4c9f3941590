/**
 * Self-registration (issue 25 item 4; docs/registration.md; decisions AM60–AM69).
 *
 * - `askToRegister`: the "Create an account" page's POST. As password reset's ask (AM40), it
 *   answers from what the asker sent alone — the input's shape, the domain policy and the client
 *   address's hourly budget — and only then, after the answer is decided, looks the address up and
 *   queues the mail (`work`, which the caller runs after replying): a new address gets a link to
 *   finish, an address that already has an account gets a mail saying so with the reset page's
 *   address (AM61). The answer cannot tell which, because nothing that depends on it happens first.
 * - `registrationLinkStatus`: the link's GET, which never consumes it (mail scanners prefetch links).
 * - `completeRegistration`: the link's POST: the password is checked (the one rule of every way of
 *   setting one, identity/users.ts `checkedPassword`), then one unit of work takes the link with
 *   one conditional DELETE and creates the user, whose username is the address the link proved
 *   (AM63): `enabled`, or `pending` while GATEHOUSE_REGISTRATION_APPROVAL is on (AM65). Two links
 *   for one address followed at once make one account: the username's unique key decides.
 */
import type { User } from '../../domain/user.ts';
import type { RegistrationField, RegistrationMode } from '../../config.ts';
import { IdentityError } from '../../identity/errors.ts';
import { passwordPolicyOf } from '../../identity/password-policy.ts';
import { checkedEmail, hashCheckedPassword, newUserId, requireUserOrganization } from '../../identity/users.ts';
import { hashSecret } from '../../lib/hash.ts';
import { ConflictError, type OrganizationStore, type StoreTransaction } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { MAIL_LOCALES, mailMessage, type MailLocale, type MailService } from '../outbox/mail.ts';
import { addressGroup, counterKey } from '../throttling/keys.ts';
import { FORGOT_PAGE, MAX_IDENTIFIER } from './password-reset.ts';

/** The settings self-registration reads (src/config.ts, GATEHOUSE_REGISTRATION*). */
export interface RegistrationSettings {
  issuer: string;
  registration: RegistrationMode;
  registrationDomains: readonly string[];
  registrationApproval: boolean;
  registrationFields: readonly RegistrationField[];
  registrationOrganization: string;
  registrationLifetime: number;
  registrationsPerAddress: number;
  registrationsPerEmail: number;
  /** GATEHOUSE_PASSWORD_MIN_LENGTH (the password policy's, as every way of choosing a password). */
  passwordMinLength?: number | undefined;
}

export type RegistrationDeps = Pick<OAuthDeps, 'store' | 'clock' | 'random' | 'audit'> & { config: RegistrationSettings; mail?: MailService | undefined };

/** The "Create an account" page's path under the issuer's path. */
export const REGISTER_PAGE = '/account/register';
/** The mailed link's page: the issuer plus this, `?token=`. */
export const FINISH_PAGE = '/account/register/finish';

/** The budgets' fixed window: one hour. */
const WINDOW_SECONDS = 3600;
/** A token as the ask makes it: 32 random bytes, base64url. */
const TOKEN = /^[A-Za-z0-9_-]{43}$/;
/** The longest authorization request the finished page links back to. */
const MAX_RETURN_TO = 4096;

export function registrationLink(issuer: string, token: string): string {
  return `${issuer}${FINISH_PAGE}?token=${token}`;
}

/** Whether the "Create an account" form is offered: `open` and `domain` (with mail); `invitation` offers invitations only. */
export function selfRegistrationOn(deps: Pick<RegistrationDeps, 'config' | 'mail'>): boolean {
  return deps.mail !== undefined && (deps.config.registration === 'open' || deps.config.registration === 'domain');
}

export type RegistrationAsk =
  | { type: 'accepted'; work: () => Promise<void> }
  | { type: 'invalid'; field: 'email' | RegistrationField }
  | { type: 'domain'; }
  | { type: 'throttled'; retryAfter: number }
  | { type: 'off' };

export interface RegistrationInput {
  email: unknown;
  givenName: unknown;
  familyName: unknown;
  /** The authorization request the asker came from (a path under the issuer), to link back to. */
  returnTo: unknown;
  ip: string | undefined;
  locale: MailLocale;
}

/**
 * The "Create an account" POST (AM61): `accepted` whatever the address, with the work to run after
 * answering; `invalid` for a malformed address or a required name left out; `domain` for an
 * address outside GATEHOUSE_REGISTRATION_DOMAINS (a policy every asker may know: it says nothing
 * of accounts, AM64); `throttled` when the client address spent its hourly budget (counted for
 * every ask, so it says nothing either).
 */
export async function askToRegister(deps: RegistrationDeps, input: RegistrationInput): Promise<RegistrationAsk> {
  if (!selfRegistrationOn(deps)) return { type: 'off' };
  const email = registrationEmail(input.email);
  if (email === undefined) return { type: 'invalid', field: 'email' };
  const names: { givenName?: string; familyName?: string } = {};
  for (const [field, key, value] of [['given_name', 'givenName', input.givenName], ['family_name', 'familyName', input.familyName]] as const) {
    const text = nameField(value);
    if (text === null || (text === undefined && deps.config.registrationFields.includes(field))) return { type: 'invalid', field };
    if (text !== undefined) names[key] = text;
  }
  if (deps.config.registration === 'domain' && !deps.config.registrationDomains.includes(domainOf(email))) return { type: 'domain' };
  const perAddress = deps.config.registrationsPerAddress;
  if (perAddress > 0 && input.ip !== undefined) {
    const now = deps.clock.now();
    const counted = await deps.store.rateLimits.take([{ key: counterKey('register-ip', addressGroup(input.ip)), limit: perAddress }], now, now + WINDOW_SECONDS * 1000);
    if (counted.length === 0) return { type: 'throttled', retryAfter: WINDOW_SECONDS };
  }
  const returnTo = typeof input.returnTo === 'string' && input.returnTo.length <= MAX_RETURN_TO && input.returnTo.startsWith(`${new URL(deps.config.issuer).pathname.replace(/\/$/, '')}/oauth2/authorization?`) ? input.returnTo : undefined;
  return { type: 'accepted', work: () => sendRegistrationMail(deps, { email, ...names, returnTo, ip: input.ip, locale: input.locale }) };
}

/** The address as typed, trimmed, if it is one: at most 256 characters (RFC 5321 §4.5.3.1), no control characters, the shape identity/users.ts accepts. */
function registrationEmail(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (text === '' || text.length > MAX_IDENTIFIER) return undefined;
  try {
    return checkedEmail(text);
  } catch (error) {
    if (error instanceof IdentityError) return undefined;
    throw error;
  }
}

/** A name as typed: undefined when left out, null when it is not a name (too long, control characters, not text). */
function nameField(value: unknown): string | undefined | null {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') return null;
  const text = value.trim();
  if (text === '') return undefined;
  if ([...text].length > 200 || /\p{Cc}/u.test(text)) return null;
  return text;
}

/** The domain of an address, lower-cased (domains compare case-insensitively, RFC 5321 §2.4). */
function domainOf(email: string): string {
  return email.slice(email.lastIndexOf('@') + 1).toLowerCase();
}

/** What audit events say of an address nobody has proven: a short fingerprint, as the reset ask's. */
export function emailFingerprint(email: string): string {
  return hashSecret(`registration-email:${email.toLowerCase()}`).slice(0, 16);
}

interface Asked {
  email: string;
  givenName?: string;
  familyName?: string;
  returnTo: string | undefined;
  ip: string | undefined;
  locale: MailLocale;
}

/** Whether an account already has this address: as its username, or as its e-mail address. */
async function addressTaken(store: Pick<StoreTransaction, 'users'>, email: string): Promise<boolean> {
  if ((await store.users.getCredentials(email)) !== undefined) return true;
  return (await store.users.list({ filters: { email }, exactMatch: true, limit: 1 })).length > 0;
}

/** The ask's work, after its answer: the address's hourly budget, then a link, or the "you already have an account" mail. */
async function sendRegistrationMail(deps: RegistrationDeps, asked: Asked): Promise<void> {
  const mail = deps.mail!;
  const fingerprint = emailFingerprint(asked.email);
  const now = deps.clock.now();
  const perEmail = deps.config.registrationsPerEmail;
  if (perEmail > 0) {
    const counted = await deps.store.rateLimits.take([{ key: counterKey('register-email', asked.email.toLowerCase()), limit: perEmail }], now, now + WINDOW_SECONDS * 1000);
    if (counted.length === 0) {
      deps.audit.emit({ event: 'registration.requested', outcome: 'throttled', email: fingerprint, ip: asked.ip });
      return;
    }
  }
  const id = deps.random.uuid();
  const { issuer } = deps.config;
  if (await addressTaken(deps.store, asked.email)) {
    // No account is made and none is named: the mail goes to the address, which only its owner reads (AM61).
    const rendered = mail.composer.compose('registration_exists', asked.locale, { issuer, link: `${issuer}${FORGOT_PAGE}?ui_locales=${asked.locale}` });
    await deps.store.outbox.enqueue(mailMessage({ id, kind: 'registration_exists', to: asked.email, locale: asked.locale, mail: rendered, dedupeKey: `mail.registration_exists:${id}`, now }));
    deps.audit.emit({ event: 'registration.requested', outcome: 'account_exists', email: fingerprint, messageId: id, ip: asked.ip });
    return;
  }
  const token = deps.random.token(32);
  const lifetime = deps.config.registrationLifetime;
  const rendered = mail.composer.compose('registration', asked.locale, { issuer, link: registrationLink(issuer, token), minutes: String(Math.round(lifetime / 60)) });
  const message = mailMessage({ id, kind: 'registration', to: asked.email, locale: asked.locale, mail: rendered, dedupeKey: `mail.registration:${id}`, now });
  // The link and its mail in one unit of work: a link exists exactly when its mail will be sent.
  await deps.store.transaction(async (tx) => {
    await tx.accountRegistrations.insert({ tokenHash: hashSecret(token), email: asked.email, givenName: asked.givenName, familyName: asked.familyName, locale: asked.locale, returnTo: asked.returnTo, createdAt: now, expiresAt: now + lifetime * 1000 });
    await tx.outbox.enqueue(message);
  });
  deps.audit.emit({ event: 'registration.requested', outcome: 'link_sent', email: fingerprint, messageId: id, ip: asked.ip });
}

/** What the link's GET shows: the form (with the address it proves), or that the link is spent. */
export async function registrationLinkStatus(deps: Pick<RegistrationDeps, 'store' | 'clock'>, token: unknown): Promise<{ type: 'usable'; email: string } | { type: 'gone' }> {
  if (typeof token !== 'string' || !TOKEN.test(token)) return { type: 'gone' };
  const registration = await deps.store.accountRegistrations.find(hashSecret(token), deps.clock.now());
  return registration === undefined ? { type: 'gone' } : { type: 'usable', email: registration.email };
}

export type RegistrationOutcome =
  | { type: 'done'; user: User; pending: boolean; returnTo: string | undefined; locale: string }
  | { type: 'gone' }
  | { type: 'mismatch' }
  /** The address got an account meanwhile (another link of it, or an administrator): none is made. */
  | { type: 'exists' };

/** The organization GATEHOUSE_REGISTRATION_ORGANIZATION names, by id or technical name; undefined when it is empty. IdentityError when it names none. */
export async function registrationOrganization(store: { organizations: OrganizationStore }, name: string): Promise<string | undefined> {
  if (name === '') return undefined;
  const byId = await store.organizations.get(name);
  const organization = byId ?? (await store.organizations.list({ filters: { technicalName: name }, exactMatch: true, limit: 2 }))[0];
  if (organization === undefined) throw new IdentityError('invalid_reference', `organization ${JSON.stringify(name)} does not exist (neither an id nor a technical name)`, 'organizationId');
  await requireUserOrganization(store, organization.id);
  return organization.id;
}

/**
 * The link's POST. The password is checked and hashed before the link is touched (a refused
 * password — IdentityError `invalid_argument` — leaves the link usable); then one unit of work
 * takes the link, checks that no account has the address, and creates the user. A username
 * conflict (the same address's other link, followed at the same moment) rolls the whole unit back.
 */
export async function completeRegistration(deps: RegistrationDeps, input: { token: unknown; password: unknown; confirmation: unknown; ip: string | undefined }): Promise<RegistrationOutcome> {
  if (typeof input.token !== 'string' || !TOKEN.test(input.token)) return { type: 'gone' };
  if (input.password !== input.confirmation) return { type: 'mismatch' };
  const tokenHash = hashSecret(input.token);
  // The address is the username, which the password may not be (NIST SP 800-63B-4 §3.1.1.2): read
  // the link without taking it to know it; the unit of work below still takes it, once.
  const link = await deps.store.accountRegistrations.find(tokenHash, deps.clock.now());
  if (link === undefined) return { type: 'gone' };
  const passwordHash = await hashCheckedPassword(input.password, { username: link.email, email: link.email }, passwordPolicyOf(deps.config));
  const status = deps.config.registrationApproval ? 'pending' : 'enabled';
  let done: { user: User; returnTo: string | undefined; locale: string } | 'gone' | 'exists';
  try {
    done = await deps.store.transaction(async (tx) => {
      const now = deps.clock.now();
      const registration = await tx.accountRegistrations.take(tokenHash, now);
      if (registration === undefined) return 'gone' as const;
      if (await addressTaken(tx, registration.email)) return 'exists' as const;
      // Read in the unit: an organization deleted or made virtual meanwhile fails the creation, clearly.
      const organizationId = await registrationOrganization(tx, deps.config.registrationOrganization);
      const user: User = {
        id: await newUserId(tx, deps.random),
        // The username is the address the link proved (AM63): unique case-insensitively, so two
        // links of one address followed at once make one account.
        username: registration.email,
        status,
        givenName: registration.givenName,
        familyName: registration.familyName,
        email: registration.email,
        // The link arrived at this address and was followed: it is proven (docs/email-verification.md).
        emailVerified: true,
        organizationId,
        attributes: {},
        createdAt: now,
        updatedAt: now,
      };
      await tx.users.insert(user, passwordHash);
      // The registrant's language, for the mail of an administrator's approval or rejection (AM105).
      await tx.users.setRegistrationLocale(user.id, registration.locale);
      return { user, returnTo: registration.returnTo, locale: registration.locale };
    });
  } catch (error) {
    if (error instanceof ConflictError) done = 'exists';
    else throw error;
  }
  if (done === 'gone') return { type: 'gone' };
  if (done === 'exists') {
    deps.audit.emit({ event: 'registration.refused', reason: 'account_exists', ip: input.ip });
    return { type: 'exists' };
  }
  deps.audit.emit({ event: 'registration.completed', userId: done.user.id, username: done.user.username, status, ip: input.ip });
  return { type: 'done', user: done.user, pending: status === 'pending', returnTo: done.returnTo, locale: done.locale };
}

/** A stored locale as a mail's: the registration's, else English. */
export function mailLocaleOf(locale: string | undefined): MailLocale {
  return (MAIL_LOCALES as readonly string[]).includes(locale ?? '') ? (locale as MailLocale) : 'en';
}
