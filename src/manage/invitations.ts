/**
 * Administrators' invitations (issue 25 items 4 and 7; docs/invitations.md; decisions AM74–AM79):
 * invite by e-mail address, list, resend (a new link; the old one dies), revoke. Every front end
 * (CLI, identity API, management API and through it the console) calls these. Without mail
 * configured, inviting and resending are refused (MailNotConfiguredError), never dropped.
 * The invitee's side is src/oauth/account/invitation.ts.
 */
import { invitationStatus, INVITATION_STATUSES, type Invitation, type InvitationStatus } from '../domain/invitation.ts';
import { MailNotConfiguredError } from '../domain/outbox.ts';
import { IdentityError } from '../identity/errors.ts';
import { optionalText } from '../identity/text.ts';
import { checkedEmail, requireUserOrganization } from '../identity/users.ts';
import { queueInvitationMail } from '../oauth/account/invitation.ts';
import { MAIL_LOCALES } from '../oauth/outbox/mail.ts';
import type { Actor } from '../observability/audit.ts';
import { ConflictError, MissingReferenceError, type InvitationPageKey } from '../storage/ports.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts, AdministrationSettings } from './ports.ts';

/** GATEHOUSE_INVITATION_LIFETIME's default (7 days), for ports built without the setting. */
const DEFAULT_LIFETIME = 604_800;

export interface NewInvitation {
  email: string;
  givenName?: string | undefined;
  familyName?: string | undefined;
  organizationId?: string | undefined;
  /** The language of the mail and its page: en (default), fi or sv. */
  locale?: string | undefined;
}

/** An invitation as administrators see it: its status at the time asked, never the token's hash. */
export type InvitationView = Omit<Invitation, 'tokenHash' | 'status'> & { status: InvitationStatus };

export interface InvitationAdministration {
  /** Invites `email`; the invitation and its mail's outbox id. */
  invite(acting: Acting, input: NewInvitation): Promise<{ invitation: InvitationView; messageId: string }>;
  get(id: string): Promise<InvitationView>;
  /** At most `limit` + 1 invitations, newest first, after `after` (the caller pages as the other lists do). */
  page(query: { status?: string | undefined; after?: InvitationPageKey | undefined; limit: number }): Promise<InvitationView[]>;
  /** A new link for a pending invitation (also one past its expiry), with a new lifetime; the old link dies. */
  resend(acting: Acting, id: string): Promise<{ invitation: InvitationView; messageId: string }>;
  revoke(acting: Acting, id: string): Promise<InvitationView>;
}

export type InvitationPorts = Pick<AdministrationPorts, 'store' | 'clock' | 'random' | 'audit' | 'mail'> & { settings: Partial<Pick<AdministrationSettings, 'issuer' | 'invitationLifetime'>> };

export function invitationAdministration(ports: InvitationPorts): InvitationAdministration {
  const { store, clock, audit } = ports;
  const view = (invitation: Invitation): InvitationView => {
    const { tokenHash: _hidden, ...rest } = invitation;
    return { ...rest, status: invitationStatus(invitation, clock.now()) };
  };
  /** The mail service and the link's settings, or the refusal when mail is off. */
  const mailing = () => {
    const { issuer, invitationLifetime = DEFAULT_LIFETIME } = ports.settings;
    if (ports.mail === undefined || issuer === undefined) throw new MailNotConfiguredError('mail is not configured, so no invitation can be sent: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)');
    return { ...ports, mail: ports.mail, config: { issuer, invitationLifetime } };
  };
  const find = async (id: string): Promise<Invitation> => {
    const invitation = await store.invitations.get(id);
    if (invitation === undefined) throw new IdentityError('not_found', `no invitation has the id ${JSON.stringify(id)}`);
    return invitation;
  };
  const notPending = (invitation: Invitation, act: string) =>
    new IdentityError('in_use', `the invitation to ${invitation.email} is ${invitationStatus(invitation, clock.now())}: only a pending invitation can be ${act}${act === 'resent' ? '; invite the address again instead' : ''}`);

  return {
    async invite(acting, input) {
      const email = checkedEmail(input.email);
      if (email === undefined) throw new IdentityError('invalid_argument', 'email is required: the address the invitation goes to', 'email');
      const locale = input.locale ?? 'en';
      if (!(MAIL_LOCALES as readonly string[]).includes(locale)) throw new IdentityError('invalid_argument', `locale must be one of ${MAIL_LOCALES.join(', ')}`, 'locale');
      const givenName = optionalText(input.givenName, 'givenName');
      const familyName = optionalText(input.familyName, 'familyName');
      const organizationId = optionalText(input.organizationId, 'organizationId');
      if (organizationId !== undefined) await requireUserOrganization(store, organizationId);
      // An existing account with the address refuses at once (AM75); the account the invitation
      // makes is decided again by the unique username when it is accepted.
      const existing = (await store.users.getByUsername(email)) ?? (await store.users.list({ filters: { email }, exactMatch: true, limit: 1 }))[0];
      if (existing !== undefined) throw new IdentityError('already_exists', `an account with the e-mail address ${email} exists already (${existing.username}): send it a password reset link instead`, 'email');
      const sending = mailing();
      const queued = queueInvitationMail(sending, { email, locale });
      const now = clock.now();
      const invitation: Invitation = {
        id: ports.random.uuid(),
        tokenHash: queued.tokenHash,
        email,
        givenName,
        familyName,
        organizationId,
        invitedBy: actorName(acting.actor),
        locale,
        status: 'pending',
        createdAt: now,
        expiresAt: queued.expiresAt,
        endedAt: undefined,
        userId: undefined,
      };
      try {
        await store.transaction(async (tx) => {
          await tx.invitations.retireExpired(email, now);
          await tx.invitations.insert(invitation);
          await tx.outbox.enqueue(queued.message);
        });
      } catch (error) {
        if (error instanceof ConflictError) throw new IdentityError('already_exists', `a pending invitation to ${email} exists already: resend it, or revoke it first`, 'email');
        if (error instanceof MissingReferenceError) throw new IdentityError('invalid_reference', `organization ${JSON.stringify(organizationId)} does not exist`, 'organizationId');
        throw error;
      }
      audit.emit({ event: 'invitation.created', invitationId: invitation.id, email, messageId: queued.message.id, actor: acting.actor });
      return { invitation: view(invitation), messageId: queued.message.id };
    },

    get: async (id) => view(await find(id)),

    async page(query) {
      if (query.status !== undefined && !(INVITATION_STATUSES as readonly string[]).includes(query.status)) throw new IdentityError('invalid_argument', `status must be one of ${INVITATION_STATUSES.join(', ')}`, 'status');
      const rows = await store.invitations.page({ status: query.status as InvitationStatus | undefined, now: clock.now(), after: query.after, limit: query.limit + 1 });
      return rows.map(view);
    },

    async resend(acting, id) {
      const current = await find(id);
      const sending = mailing();
      const queued = queueInvitationMail(sending, current);
      const renewed = await store.transaction(async (tx) => {
        const changed = await tx.invitations.renew(id, { tokenHash: queued.tokenHash, expiresAt: queued.expiresAt, invitedBy: actorName(acting.actor) });
        if (changed !== undefined) await tx.outbox.enqueue(queued.message);
        return changed;
      });
      if (renewed === undefined) throw notPending((await store.invitations.get(id)) ?? current, 'resent');
      audit.emit({ event: 'invitation.resent', invitationId: id, email: renewed.email, messageId: queued.message.id, actor: acting.actor });
      return { invitation: view(renewed), messageId: queued.message.id };
    },

    async revoke(acting, id) {
      const current = await find(id);
      const revoked = await store.invitations.revoke(id, clock.now());
      if (revoked === undefined) throw notPending((await store.invitations.get(id)) ?? current, 'revoked');
      audit.emit({ event: 'invitation.revoked', invitationId: id, email: revoked.email, actor: acting.actor });
      return view(revoked);
    },
  };
}

/** Who invited, as the list shows it: the front end and its caller (`manage-api:<user id>`, `cli:<os user>`, `identity-api:<client>`). */
function actorName(actor: Actor): string {
  const who = actor.caller ?? actor.clientId;
  return who === undefined ? actor.via : `${actor.via}:${who}`;
}
