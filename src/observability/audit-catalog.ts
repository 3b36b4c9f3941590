/**
 * Every audit event's name, with what it says: the registry the management API validates `type`
 * filters against and publishes in its OpenAPI document. `satisfies` keeps it complete: an event
 * added to the AuditEvent union without a line here fails the type check.
 */
import type { AuditEvent } from './audit.ts';

export const AUDIT_EVENTS = {
  'login.succeeded': 'A password sign-in succeeded (login form or password grant).',
  'login.failed': 'A password sign-in failed.',
  'login.second_factor_required': 'A right password for a user with a second factor: the sign-in waits for the factor (the password grant is refused).',
  'login.throttled': 'A sign-in was refused by the throttle before its credentials were checked.',
  lockout: 'A failure counter reached its threshold.',
  'login.hint_mismatch': 'A correct login was refused because id_token_hint named another user.',
  'client_auth.failed': 'A client failed to authenticate.',
  'identity_api.auth_failed': 'An identity API caller failed to authenticate.',
  'identity_api.throttled': 'An identity API call was refused by the throttle.',
  'token.issued': 'Tokens were issued (fingerprints only).',
  'token.refreshed': 'Tokens were refreshed.',
  'token.revoked': 'A token was revoked at the revocation endpoint.',
  'code.replayed': 'A used authorization code was presented again; its tokens were revoked.',
  'code.retried': 'An authorization code spent by a refused redemption (refusedFor: code_verifier, redirect_uri, client_id, expired, user, scope) was presented again; it had issued no tokens.',
  'refresh_token.reused': 'A rotated refresh token was presented again; its family was revoked.',
  logout: 'A session ended.',
  'authorization.rate_limited': 'Silent authorizations reached their budget.',
  'device.approved': 'A device authorization was approved.',
  'device.denied': 'A device authorization was denied.',
  'device.user_code_rate_limited': 'User-code entry reached its budget.',
  'consent.granted': 'A user allowed a client on the consent page.',
  'consent.denied': 'A user denied a client on the consent page.',
  'consent.withdrawn': 'An administrator withdrew a consent.',
  'user.created': 'An administrator created a user.',
  'user.updated': 'An administrator changed a user (the names of the fields).',
  'user.deleted': 'An administrator deleted a user.',
  'user.password_changed': "A user's password was set.",
  'user.group_added': 'A user was added to a group.',
  'user.group_removed': 'A user was removed from a group.',
  'user.status_changed': 'A user was enabled or disabled.',
  'client.created': 'A client was registered.',
  'client.updated': 'A client was changed.',
  'client.deleted': 'A client was deleted.',
  'client.secret_rotated': "A client's secret was replaced.",
  'client.status_changed': 'A client was activated or deactivated.',
  'policy.created': 'An authorization policy was created.',
  'policy.updated': 'An authorization policy was replaced.',
  'policy.deleted': 'An authorization policy was deleted.',
  'session.ended': "An administrator ended one of a user's SSO sessions; its tokens were revoked.",
  'mail.queued': 'An administrator queued a mail in the outbox (e.g. `gatehouse mail test`).',
  'outbox.redelivered': 'An administrator redelivered a dead outbox message.',
  'outbox.dead': 'The outbox gave up a message after its attempts (the last error says why); an administrator may redeliver it.',
  'group.created': 'A group was created.',
  'group.deleted': 'A group was deleted.',
  'organization.created': 'An organization was created.',
  'organization.updated': 'An organization was changed (the names of the fields).',
  'organization.deleted': 'An organization was deleted.',
  'key.rotated': 'A new signing key was made active.',
  'initial_access_token.created': 'An administrator minted an initial access token for dynamic client registration (its id, never its value).',
  'initial_access_token.revoked': 'An administrator revoked an initial access token.',
  'factor.verified': 'A second-factor code was accepted after the password.',
  'factor.failed': 'A second-factor code was refused.',
  'factor.throttled': 'A second-factor code was refused by the throttle before it was checked.',
  'factor.enrolled': 'A second factor was enrolled (TOTP confirmed or imported, recovery codes made or replaced).',
  'factor.removed': "One of a user's second factors was removed: by an administrator (actor), or by the user on the account security page.",
  'factor.reset': "An administrator removed all of a user's second factors.",
  'factor.renamed': "One of a user's second factors was renamed: by an administrator (actor), or by the user on the account security page.",
  'factor.secrets_sealed': 'TOTP secrets stored in the clear were sealed under GATEHOUSE_KEY_ENCRYPTION_KEY (how many).',
  'client.registered': 'A client registered itself with an initial access token (RFC 7591).',
  'password_reset.sent': 'A password reset link was queued to a user\'s e-mail address: asked for on the "Forgot your password?" page (by user) or sent by an administrator (actor).',
  'password_reset.not_sent': 'A reset was asked for and nothing was sent (no such account, no e-mail address, not enabled, or the account\'s hourly budget spent); the asker got the same answer.',
  'password_reset.completed': 'A user set a new password through a reset link: their sessions ended and their tokens were revoked in the same unit of work.',
  'email_verification.sent': "An e-mail verification link was queued: to the user's address, or to a new address they asked to change to (change); asked for by the user on their profile page or sent by an administrator (actor).",
  'email_verification.not_sent': "A user asked for a verification link and nothing was sent: the account's or the recipient address's hourly budget was spent.",
  'email_verification.verified': 'A user followed a verification link: their address is verified, and for a change (changed) the new address replaced the old one.',
  'email_verification.marked': "An administrator said explicitly whether a user's e-mail address is verified, when creating or changing the user.",
  'profile.changed': 'A user changed their own name on their profile page (the fields, never the values).',
} as const satisfies Record<AuditEvent['event'], string>;

export type AuditEventName = keyof typeof AUDIT_EVENTS;

export const AUDIT_EVENT_NAMES: readonly AuditEventName[] = Object.keys(AUDIT_EVENTS) as AuditEventName[];

export function isAuditEventName(name: string): name is AuditEventName {
  return Object.hasOwn(AUDIT_EVENTS, name);
}
