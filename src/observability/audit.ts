/**
 * Audit events: one structured log line per security-relevant fact (`{"audit":true,"event":…}`).
 * The protocol core emits them through the `AuditSink` it is given (OAuthDeps.audit), so tests
 * capture them and the composition root decides where they go.
 *
 * No event carries a secret: never a password, token, code, client secret or cookie value. Where
 * an event must name a token or a session, it carries `fingerprint(value)`, the first 12
 * characters of the SHA-256 the store keys it by (enough to find the row, useless as a credential).
 * A login failure names the account only when the typed name matched one, and then by its stored
 * username: what was typed may be a password typed into the wrong field.
 */
import type { EmailCodePurpose, FactorKind } from '../domain/factor.ts';
import type { CodeRefusal } from '../domain/grant.ts';
import { hashSecret } from '../lib/hash.ts';

/** Where the client came from: its address as the throttle counts it (see src/http/client-address.ts). */
interface From {
  ip?: string | undefined;
}

/**
 * Who made an administrative change: the CLI (with the operating-system account that ran it), or
 * the identity API with the method its caller used, and for a bearer token its user and client
 * (only the client when the token's subject is the client itself: client_credentials).
 * Never the API account's name, which the logs treat as half a credential.
 */
export interface Actor {
  /**
   * `manage-api`: the management API (and so the web console, which calls it with its signed-in
   * administrator's token); `dcr`: RFC 7591/7592 dynamic client registration, named by clientId.
   */
  via: 'cli' | 'identity-api' | 'manage-api' | 'dcr';
  /** The OS account (CLI) or the bearer token's user id (identity and management APIs; absent for a client's own token). */
  caller?: string;
  method?: 'bearer' | 'basic' | 'url_params';
  clientId?: string;
}

export type ThrottleKind = 'login' | 'client_auth' | 'identity_api' | 'second_factor';

export type LoginFailureReason = 'unknown_user' | 'wrong_password' | 'not_enabled';

export type AuditEvent =
  /**
   * The login events are those of every password sign-in: the login form's (no `via`) and the
   * resource owner password grant's (`via: 'password_grant'`, RFC 6749 §4.3), which share one
   * check (src/oauth/authorize/verify-credentials.ts). For the grant, `session` is the
   * fingerprint of the session_index its tokens carry (no SSO session is created).
   */
  | ({ event: 'login.succeeded'; userId: string; username: string; clientId: string; session: string; via?: 'password_grant' } & From)
  /**
   * The password was right and the user has a second factor (issue 24): nothing is issued yet. A
   * browser's sign-in waits for the factor (`factor.*` events follow, then `login.succeeded`); the
   * password grant, which cannot ask for it, is refused.
   */
  | ({ event: 'login.second_factor_required'; userId: string; username: string; clientId: string; via?: 'password_grant' } & From)
  | ({ event: 'login.failed'; reason: LoginFailureReason; userId?: string; username?: string; clientId: string; via?: 'password_grant' } & From)
  /** An attempt refused before its credentials were checked. */
  | ({ event: 'login.throttled'; by: 'username' | 'ip'; retryAfter: number; clientId: string; via?: 'password_grant' } & From)
  /** A failure counter reached its threshold: from now on the subject or address must wait. */
  | ({ event: 'lockout'; kind: ThrottleKind; by: 'username' | 'ip' | 'client'; failures: number; retryAfter: number; userId?: string; username?: string; clientId?: string } & From)
  | ({ event: 'client_auth.failed'; endpoint: ClientAuthEndpoint; clientId?: string; reason: string } & From)
  | ({ event: 'identity_api.auth_failed'; method: 'basic' | 'url_params' } & From)
  | ({ event: 'identity_api.throttled'; by: 'username' | 'ip'; retryAfter: number } & From)
  | ({
      event: 'token.issued';
      grantType: 'authorization_code' | 'client_credentials' | 'password' | 'urn:ietf:params:oauth:grant-type:device_code';
      clientId: string;
      /** Absent for a token whose subject is its client (client_credentials). */
      userId?: string;
      scope: string;
      family: string;
      accessToken: string;
      refreshToken?: string;
      idToken: boolean;
    } & From)
  | ({ event: 'token.refreshed'; clientId: string; userId: string; scope: string; family: string; rotated: boolean; accessToken: string; refreshToken?: string } & From)
  | ({ event: 'token.revoked'; clientId: string; userId?: string; kind: 'access_token' | 'refresh_token'; token: string; family: string; revoked: number } & From)
  | ({ event: 'code.replayed'; clientId: string; codeClientId: string; userId: string; code: string; revoked: number } & From)
  /** A code spent by a refused redemption presented again: no token was issued from it (back channel decision 17). */
  | ({ event: 'code.retried'; clientId: string; codeClientId: string; userId: string; code: string; refusedFor: CodeRefusal } & From)
  | ({ event: 'refresh_token.reused'; clientId: string; userId: string; family: string; token: string; revoked: number } & From)
  | ({ event: 'logout'; userId: string; session: string; revoked: number; clientId?: string } & From)
  /** A silent authorization filled its session's or address's budget: further ones are refused until the window ends. */
  | ({ event: 'authorization.rate_limited'; by: 'session' | 'ip'; limit: number; window: number; clientId: string; userId: string; session: string } & From)
  /** A correct login refused because the id_token_hint named another user (OIDC Core §3.1.2.1): no session, no code. */
  | ({ event: 'login.hint_mismatch'; userId: string; username: string; clientId: string } & From)
  /** The user approved or denied a device authorization on the user-code page (RFC 8628 §3.3). */
  | ({ event: 'device.approved'; clientId: string; userId: string; session: string; userCode: string } & From)
  | ({ event: 'device.denied'; clientId: string; userId: string; session: string; userCode: string } & From)
  /** User-code entry filled its address's or the global budget: further codes are refused until the window ends (RFC 8628 §5.1). */
  | ({ event: 'device.user_code_rate_limited'; by: 'ip' | 'global'; limit: number; window: number } & From)
  /** The user allowed or denied a third-party client on the consent page (`scope`: what it asked for). */
  | ({ event: 'consent.granted'; userId: string; clientId: string; scope: string; session: string } & From)
  | ({ event: 'consent.denied'; userId: string; clientId: string; scope: string; session: string } & From)
  /** A consent withdrawn by an administrator; `revoked`: the client's tokens for the user revoked with it. */
  | { event: 'consent.withdrawn'; userId: string; clientId: string; revoked: number; actor: Actor }
  | { event: 'user.created' | 'user.deleted' | 'user.password_changed'; userId: string; username: string; actor: Actor }
  /** `fields`: the names of what changed (never the values); `status` when it was set. */
  | { event: 'user.updated'; userId: string; username: string; fields: string[]; status?: string; actor: Actor }
  | { event: 'user.group_added' | 'user.group_removed'; userId: string; username: string; group: string; actor: Actor }
  | { event: 'user.status_changed'; userId: string; username: string; status: string; actor: Actor }
  /** `authorizationPolicy`: the client's authorization policy after the change (null: none), so the trail shows who got which policy. */
  | { event: 'client.created' | 'client.updated'; clientId: string; authorizationPolicy: string | null; actor: Actor }
  | { event: 'client.deleted' | 'client.secret_rotated'; clientId: string; actor: Actor }
  | { event: 'client.status_changed'; clientId: string; active: boolean; actor: Actor }
  /** An authorization policy created, replaced (`version`: the new one) or deleted by the CLI (docs/authorization.md). */
  | { event: 'policy.created' | 'policy.updated'; policy: string; version: number; actor: Actor }
  | { event: 'policy.deleted'; policy: string; actor: Actor }
  /** An administrator ended one SSO session of a user (`session`: the fingerprint of its session_index); `revoked`: its tokens revoked with it. */
  | { event: 'session.ended'; userId: string; session: string; revoked: number; actor: Actor }
  /** A group created or deleted by an administrator (`members`: how many memberships went with it). */
  | { event: 'group.created'; group: string; actor: Actor }
  | { event: 'group.deleted'; group: string; members: number; actor: Actor }
  /** An organization created, changed (`fields`: the names of what changed, never the values) or deleted. */
  | { event: 'organization.created' | 'organization.deleted'; organizationId: string; technicalName: string; actor: Actor }
  | { event: 'organization.updated'; organizationId: string; technicalName: string; fields: string[]; actor: Actor }
  /**
   * Dynamic client registration (RFC 7591/7592): an initial access token minted or revoked by an
   * administrator (`id`: its id, never its value), and a client registered with one
   * (`initialAccessTokenId`: the id of the initial access token spent — not a secret, and not named
   * like a credential, so the audit store keeps it as it is rather than fingerprinted, AU4). The
   * client's own later changes are client.updated and client.deleted with the actor `{via: 'dcr', clientId}`.
   */
  | { event: 'initial_access_token.created'; id: string; expiresAt: number; uses: number; actor: Actor }
  | { event: 'initial_access_token.revoked'; id: string; actor: Actor }
  | ({ event: 'client.registered'; clientId: string; initialAccessTokenId: string; actor: Actor } & From)
  /**
   * Second factors (docs/second-factors.md). A code checked after the password (`factor.verified`
   * with the method's kind; `factor.failed`), or refused by the throttle before it was checked
   * (`factor.throttled`, like login.throttled). Never the code, never the secret.
   */
  | ({ event: 'factor.verified'; userId: string; username: string; kind: FactorKind; factorId: string; clientId?: string } & From)
  | ({ event: 'factor.failed'; userId: string; username: string; clientId?: string } & From)
  | ({ event: 'factor.throttled'; userId: string; username: string; by: 'username' | 'ip'; retryAfter: number; clientId?: string } & From)
  /** A factor enrolled (a TOTP confirmed or imported, a set of recovery codes made or replaced); no `actor`: the user, for themselves. */
  | ({ event: 'factor.enrolled'; userId: string; kind: FactorKind; factorId: string; name: string; actor?: Actor } & From)
  /** One factor removed by an administrator (`actor`) or by the user on the account security page (no `actor`), or all of a user's (`factor.reset`, `removed`: how many). */
  | ({ event: 'factor.removed'; userId: string; kind: FactorKind; factorId: string; actor?: Actor } & From)
  | { event: 'factor.reset'; userId: string; removed: number; actor: Actor }
  /** A factor renamed, by an administrator (`actor`) or by the user on the account security page (no `actor`). Its new name, never a secret. */
  | ({ event: 'factor.renamed'; userId: string; kind: FactorKind; factorId: string; name: string; actor?: Actor } & From)
  /** TOTP secrets stored in the clear sealed under GATEHOUSE_KEY_ENCRYPTION_KEY (`gatehouse factors seal`, decisions SA100); `sealed`: how many. */
  | { event: 'factor.secrets_sealed'; sealed: number; actor: Actor }
  /** A signing key rotated in (`kid`: the new key; `alg`: its algorithm, whose previous key retires), by the CLI or the management API. */
  | { event: 'key.rotated'; kid: string; alg: string; actor: Actor }
  /**
   * The outbox (docs/mail.md): a mail queued by an administrator's act (`kind`: what it is, e.g.
   * `mail.test`; `messageId`: the outbox id, which the mail's Message-ID carries); a dead message
   * redelivered by an administrator; a message given up by the sender (no actor: the sender
   * decided, after `attempts`; `error`: the last failure).
   */
  | { event: 'mail.queued'; messageId: string; kind: string; to: string; actor: Actor }
  | { event: 'outbox.redelivered'; messageId: string; channel: string; kind: string; actor: Actor }
  /** Webhook endpoints (docs/webhooks.md): their id and URL, never a secret (rotation says only that it happened). */
  | { event: 'webhook.created'; endpointId: string; url: string; events: string[]; enabled: boolean; actor: Actor }
  | { event: 'webhook.updated'; endpointId: string; fields: string[]; actor: Actor }
  | { event: 'webhook.deleted'; endpointId: string; actor: Actor }
  | { event: 'webhook.secret_rotated'; endpointId: string; previousValidUntil: string; actor: Actor }
  | { event: 'outbox.dead'; messageId: string; channel: string; kind: string; attempts: number; error: string }
  /**
   * Password reset (docs/password-reset.md): a link sent (`by`: `user` from the "Forgot your
   * password?" page, or an administrator's act with its actor); an ask that sent nothing
   * (`reason`: no such account, no e-mail address, not enabled, or the account's hourly budget
   * spent — never shown to the asker); the password set through a link (its sessions ended).
   */
  | { event: 'password_reset.sent'; userId: string; username: string; messageId: string; by: 'user' | 'administrator'; actor?: Actor; ip?: string | undefined }
  | { event: 'password_reset.not_sent'; reason: 'unknown' | 'no_email' | 'not_enabled' | 'throttled'; userId?: string; identifier: string; ip?: string | undefined }
  | { event: 'password_reset.completed'; userId: string; username: string; sessionsEnded: number; ip?: string | undefined }
  /**
   * E-mail one-time codes (docs/second-factors.md, "E-mail codes"): a code queued to an address
   * (`purpose`: sign_in, enrol or verify_email; `factorId` for a sign-in's), a send refused
   * (`reason`: the hourly budget of the user or the address spent, or mail not configured), a
   * code used, and a wrong code for an enrolment or a verification (a sign-in's wrong code is
   * `factor.failed`, its use `factor.verified` with kind `email_otp`, as every factor's). Never the code.
   */
  | { event: 'email_code.sent'; userId: string; purpose: EmailCodePurpose; messageId: string; factorId?: string; ip?: string | undefined }
  | { event: 'email_code.refused'; userId: string; purpose: EmailCodePurpose; reason: 'throttled' | 'off'; ip?: string | undefined }
  | { event: 'email_code.used'; userId: string; purpose: EmailCodePurpose; factorId?: string; ip?: string | undefined }
  | { event: 'email_code.failed'; userId: string; purpose: EmailCodePurpose; ip?: string | undefined }
  /**
   * The account page (issue 25 item 6, docs/account.md): the signed-in user changed their password
   * (`by` the current password or a recent sign-in; their other sessions ended, the tokens not
   * issued in this session revoked), ended one of their sessions or all others, or withdrew a consent.
   */
  | { event: 'account.password_changed'; userId: string; username: string; by: 'current_password' | 'recent_sign_in'; sessionsEnded: number; revoked: number; ip?: string | undefined }
  | { event: 'account.session_ended'; userId: string; session: string; revoked: number; ip?: string | undefined }
  | { event: 'account.other_sessions_ended'; userId: string; sessionsEnded: number; revoked: number; ip?: string | undefined }
  | { event: 'account.consent_withdrawn'; userId: string; clientId: string; revoked: number; ip?: string | undefined }
  /**
   * Self-registration (docs/registration.md): an ask handled after its answer (`outcome`: a link
   * mailed, the "you already have an account" mail, or nothing for the address's hourly budget;
   * `email` is a fingerprint of the typed address, never the address); a link followed to an
   * account (`status` pending while approval is on); a link followed for an address that had got
   * an account meanwhile; a pending registration approved or rejected by an administrator.
   */
  | { event: 'registration.requested'; outcome: 'link_sent' | 'account_exists' | 'throttled'; email: string; messageId?: string; ip?: string | undefined }
  | { event: 'registration.completed'; userId: string; username: string; status: 'enabled' | 'pending'; ip?: string | undefined }
  | { event: 'registration.refused'; reason: 'account_exists'; ip?: string | undefined }
  | { event: 'registration.approved'; userId: string; username: string; messageId?: string; actor: Actor }
  | { event: 'registration.rejected'; userId: string; username: string; messageId?: string; actor: Actor }
  /**
   * Invitations (docs/invitations.md): made, resent (a new link; the old one dead) or revoked by
   * an administrator (actor), each with the outbox message of its mail; accepted by the invitee
   * (the account made, signed in).
   */
  | { event: 'invitation.created'; invitationId: string; email: string; messageId: string; actor: Actor }
  | { event: 'invitation.resent'; invitationId: string; email: string; messageId: string; actor: Actor }
  | { event: 'invitation.revoked'; invitationId: string; email: string; actor: Actor }
  | { event: 'invitation.accepted'; invitationId: string; userId: string; username: string; ip?: string | undefined }
  /**
   * E-mail verification (docs/email-verification.md): a link sent (`change`: to a new address the
   * user wants, not yet theirs; `by`: the user on their profile page, or an administrator's act
   * with its actor); an ask refused because the account's or the recipient's hourly budget is spent; a link followed (`changed`:
   * the new address replaced the old one; the addresses themselves are never in the event); an
   * administrator's explicit word on the address (`verified`), with the create or change that said it.
   */
  | { event: 'email_verification.sent'; userId: string; username: string; messageId: string; change: boolean; by: 'user' | 'administrator'; actor?: Actor; ip?: string | undefined }
  | { event: 'email_verification.not_sent'; userId: string; username: string; reason: 'throttled'; ip?: string | undefined }
  | { event: 'email_verification.verified'; userId: string; username: string; changed: boolean; ip?: string | undefined }
  | { event: 'email_verification.marked'; userId: string; username: string; verified: boolean; actor: Actor }
  /** A user changed their own name on their profile page (the names of the fields, never the values). */
  | { event: 'profile.changed'; userId: string; username: string; fields: string[]; ip?: string | undefined };

export type ClientAuthEndpoint = 'token' | 'introspection' | 'revocation' | 'device_authorization';

export interface AuditSink {
  emit(event: AuditEvent): void;
}

/** Emits nothing. */
export const noAudit: AuditSink = { emit: () => {} };

/** A short, stable name for a high-entropy secret: the first 12 characters of its stored SHA-256. */
export function fingerprint(secret: string): string {
  return hashSecret(secret).slice(0, 12);
}

/**
 * A token family as events name it: the first 12 characters of its id. A family is named by its
 * code's hash, so this is also the code's fingerprint; events never carry a store key in full.
 */
export function familyFingerprint(familyId: string): string {
  return familyId.slice(0, 12);
}

/** The part of a pino logger the sink uses. */
export interface AuditLogger {
  info(fields: object, message: string): void;
}

/**
 * Audit events as log lines of `logger`, which the caller makes a child bound to `{audit: true}`
 * (see `auditLogger`): `{"level":30,…,"audit":true,"event":"login.failed",…,"msg":"audit"}`.
 */
export function loggerAuditSink(logger: AuditLogger): AuditSink {
  return { emit: (event) => logger.info(event, 'audit') };
}

/** The part of a pino logger `auditLogger` needs: a child with its own bindings and level. */
export interface ParentLogger {
  child(bindings: { audit: true }, options: { level: string }): AuditLogger;
}

/**
 * The audit child of a pino logger. Its level is `info` whatever the parent's (an operator who
 * quiets the request log keeps the audit trail), unless logging is off altogether.
 */
export function auditLogger(parent: ParentLogger, logLevel: string): AuditLogger {
  return parent.child({ audit: true }, { level: logLevel === 'silent' ? 'silent' : 'info' });
}

/**
 * A sink whose destination is set later: the composition root hands it to the core before the
 * HTTP server (whose logger it writes to) exists.
 */
export class DeferredAuditSink implements AuditSink {
  #target: AuditSink = noAudit;
  attach(target: AuditSink): void {
    this.#target = target;
  }
  emit(event: AuditEvent): void {
    this.#target.emit(event);
  }
}
