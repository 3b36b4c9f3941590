/**
 * The application layer (docs/architecture.md, "Layers"): the administrative use cases of every
 * resource, bound once to their ports by the composition root (src/app.ts; the CLI's `withStore`).
 * Every front end (CLI, identity API, management API and through it the console) calls these and
 * holds no rule of its own: a use case takes who acts (acting.ts), runs the rules and the unit of
 * work of its change, emits its audit event, and throws the same refusal whoever asks, which each
 * front end renders in its own wire format.
 */
import { cleanUp, type CleanupOptions, type CleanupReport } from '../oauth/cleanup.ts';
import type { AdministrationPorts } from './ports.ts';
import { userAdministration, type UserAdministration } from './users.ts';
import { groupAdministration, type GroupAdministration } from './groups.ts';
import { organizationAdministration, type OrganizationAdministration } from './organizations.ts';
import { clientAdministration, type ClientAdministration } from './clients.ts';
import { policyAdministration, type PolicyAdministration } from './policies.ts';
import { keyAdministration, type KeyAdministration } from './keys.ts';
import { sessionAdministration, type SessionAdministration } from './sessions.ts';
import { consentAdministration, type ConsentAdministration } from './consents.ts';
import { bootstrapAdministration, type BootstrapAdministration } from './bootstrap.ts';
import { auditEventAdministration, type AuditEventAdministration } from './audit-events.ts';
import { registrationTokenAdministration, type RegistrationTokenAdministration } from './registration-tokens.ts';
import { mailAdministration, type MailAdministration } from './mail.ts';
import { outboxAdministration, type OutboxAdministration } from './outbox.ts';
import { registrationAdministration, type RegistrationAdministration } from './registrations.ts';
import { invitationAdministration, type InvitationAdministration } from './invitations.ts';
import { webhookAdministration, type WebhookAdministration } from './webhooks.ts';

export type { Acting } from './acting.ts';
export type { AdministrationPorts } from './ports.ts';

export interface Administration {
  users: UserAdministration;
  groups: GroupAdministration;
  organizations: OrganizationAdministration;
  clients: ClientAdministration;
  policies: PolicyAdministration;
  keys: KeyAdministration;
  sessions: SessionAdministration;
  consents: ConsentAdministration;
  registrationTokens: RegistrationTokenAdministration;
  auditEvents: AuditEventAdministration;
  /** Mail (docs/mail.md): whether it is on, and the test message. */
  mail: MailAdministration;
  /** The durable outbox: its messages, and redelivering a dead one. */
  outbox: OutboxAdministration;
  /** Pending self-registrations (docs/registration.md): approve or reject; listed as the users of status pending. */
  registrations: RegistrationAdministration;
  /** Invitations by e-mail (docs/invitations.md): invite, list, resend, revoke. */
  invitations: InvitationAdministration;
  /** Webhook endpoints (docs/webhooks.md): register, change, rotate the secret, the delivery log. */
  webhooks: WebhookAdministration;
  /** What the management API and the console need, created where missing (`gatehouse admin bootstrap`). */
  bootstrap: BootstrapAdministration;
  /** One pass of the janitor the server runs every GATEHOUSE_CLEANUP_INTERVAL (`gatehouse cleanup`; src/oauth/cleanup.ts). */
  cleanup(options?: CleanupOptions): Promise<CleanupReport>;
}

/** Every resource's use cases over the same ports. */
export function administration(ports: AdministrationPorts): Administration {
  return {
    users: userAdministration(ports),
    groups: groupAdministration(ports),
    organizations: organizationAdministration(ports),
    clients: clientAdministration(ports),
    policies: policyAdministration(ports),
    keys: keyAdministration(ports),
    sessions: sessionAdministration(ports),
    consents: consentAdministration(ports),
    registrationTokens: registrationTokenAdministration(ports),
    auditEvents: auditEventAdministration(ports),
    mail: mailAdministration(ports),
    outbox: outboxAdministration(ports),
    registrations: registrationAdministration(ports),
    invitations: invitationAdministration(ports),
    webhooks: webhookAdministration(ports),
    bootstrap: bootstrapAdministration(ports),
    cleanup: (options) => cleanUp({ store: ports.store, clock: ports.clock, auditRetentionMs: ports.settings.auditRetention * 86_400_000, logoutOnExpiry: ports.settings.backchannelLogoutOnExpiry }, options),
  };
}
