/**
 * The shapes the authorization endpoint's steps share: the validated request, where its answer
 * goes, and what the endpoint decides.
 */
import type { Client } from '../../domain/client.ts';
import type { FactorKind } from '../../domain/factor.ts';
import type { SsoSession } from '../../domain/session.ts';
import type { PkceBinding } from '../pkce.ts';
import type { ResponseMode } from './response-modes/mode.ts';
import type { LevelDemand } from './select-level.ts';

export const PROMPT_VALUES = ['none', 'login', 'consent', 'select_account'] as const;
export type Prompt = (typeof PROMPT_VALUES)[number];

export const DISPLAYS = ['page', 'popup', 'touch'] as const;
export type Display = (typeof DISPLAYS)[number];

/** Where an authorization response goes once client_id and redirect_uri are verified (RFC 6749 §4.1.2). */
export interface RedirectTarget {
  redirectUri: string;
  /** The request's state, echoed unchanged (RFC 6749 §4.1.2); undefined when not sent or unusable. */
  state: string | undefined;
  /** How the answer travels (check-response-mode.ts): the default, query, until the request's own mode is known to work. */
  responseMode: ResponseMode;
}

/** What an authorization code is bound to (RFC 6749 §4.1.3, RFC 7636 §4.4, OIDC Core §3.1.3.6). */
export interface CodeGrant {
  clientId: string;
  redirectUri: string;
  /** The granted scope values (unknown values already dropped). */
  scope: readonly string[];
  nonce: string | undefined;
  pkce: PkceBinding;
  /** The level of authentication the request selects (select-level.ts): the code's acr is the first requested value the session meets; none: the strongest level met. */
  level?: LevelDemand;
}

/** An authorization request that passed every check of OIDC Core §3.1.2.2. */
export interface AuthorizationRequest extends CodeGrant {
  client: Client;
  level: LevelDemand;
  target: RedirectTarget;
  /** The RFC 8707 `resource` values as sent (their audiences are in `scope`), for the login form to carry. */
  resources: readonly string[];
  /** Known prompt values; unknown ones are ignored (OIDC Core §3.1.2.1 lists the defined set). */
  prompt: ReadonlySet<Prompt>;
  /** Seconds; undefined when not sent. */
  maxAge: number | undefined;
  loginHint: string | undefined;
  /** The raw ui_locales value; the page picks the first language it supports. */
  uiLocales: string | undefined;
  display: Display;
  /** `sub` of a valid id_token_hint: the session must belong to this user (OIDC Core §3.1.2.1). */
  hintedSubject: string | undefined;
  /**
   * The recognised parameters as sent (non-empty, single-valued), so the login form can carry the
   * request and the login route can validate it again from scratch.
   */
  params: Readonly<Record<string, string>>;
}

/**
 * The request as the form fields a page (login, consent) carries to its POST, where it is validated
 * again from scratch: the single-valued parameters, then one `resource` field per value (RFC 8707 §2
 * lets it repeat).
 */
export function carriedFields(authorization: AuthorizationRequest): [string, string][] {
  return [...Object.entries(authorization.params), ...authorization.resources.map((uri): [string, string] => ['resource', uri])];
}

/**
 * The outcome of validating a request whose client and redirect_uri are verified: either the
 * request, or an error for the redirect_uri. `error` is an OAuthError, or an unexpected failure
 * that the renderer reports as server_error (RFC 6749 §4.1.2.1).
 */
export type Validation = { ok: true; request: AuthorizationRequest } | { ok: false; target: RedirectTarget; error: unknown };

/** What the authorization endpoint answers once the request is valid. */
/** Why the policy refused, when it is something the user can mend: an unverified e-mail address (require_verified_email). */
export type DeniedReason = 'email_unverified';

export type AuthorizeOutcome =
  | { type: 'code'; target: RedirectTarget; code: string }
  | { type: 'login'; request: AuthorizationRequest }
  /** The session's user, whose authentication is below the level selected: asked only for `kinds` (decide-interaction.ts). */
  | { type: 'step_up'; request: AuthorizationRequest; session: SsoSession; kinds: FactorKind[] }
  /** The user is signed in, but a third-party client needs their consent first (consent.ts). */
  | { type: 'consent'; request: AuthorizationRequest; session: SsoSession }
  /** The client's authorization policy refused the signed-in user: the explanation page, then access_denied. */
  | { type: 'denied'; request: AuthorizationRequest; reason?: DeniedReason }
  | { type: 'error'; target: RedirectTarget; error: unknown };
