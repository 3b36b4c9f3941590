/**
 * The authorization endpoint (RFC 6749 §4.1.1, OIDC Core §3.1.2) as a table of steps. The first
 * two verify client_id and redirect_uri and throw InvalidRedirectUri, which is shown to the user
 * and never redirected; the third chooses the response mode (check-response-mode.ts); every later
 * failure is returned with its redirect target, which carries that mode.
 */
import type { Client } from '../../domain/client.ts';
import type { PolicyRequirement } from '../../domain/policy.ts';
import type { SsoSession } from '../../domain/session.ts';
import type { OAuthDeps } from '../deps.ts';
import type { RawParams } from '../params.ts';
import { checkPkceRequest } from '../pkce.ts';
import { grantedAudiences, grantedScope, parseScope } from '../scope.ts';
import { AccessDenied, TemporarilyUnavailable, UnmetAuthenticationRequirements } from '../errors.ts';
import { POLICY_REFUSAL, policyAllows, policyRequirement, readPolicy, unverifiedEmail, UNVERIFIED_EMAIL_REFUSAL, type PolicyFacts } from '../policy/evaluate.ts';
import { factorsOf } from '../factors/verify.ts';
import { findUsableSession, touchSession } from '../sessions.ts';
import { takeSilentAuthorization } from '../throttling/silent-authorizations.ts';
import { checkClient } from './check-client.ts';
import { needsConsent } from './consent.ts';
import { checkDisplay } from './check-display.ts';
import { checkIdTokenHint } from './check-id-token-hint.ts';
import { checkMaxAge, checkPrompt } from './check-prompt.ts';
import { checkRedirectUri } from './check-redirect-uri.ts';
import { checkResponseMode } from './check-response-mode.ts';
import { checkResources } from './check-resources.ts';
import { checkResponseType } from './check-response-type.ts';
import { decideInteraction, selectsLevel, UNMET } from './decide-interaction.ts';
import { issueCode } from './issue-code.ts';
import { maxLength, parseRequest } from './parse-request.ts';
import { selectLevel } from './select-level.ts';
import type { AuthorizationRequest, AuthorizeOutcome, RedirectTarget, Validation } from './request.ts';
import { DEFAULT_RESPONSE_MODE } from './response-modes/registry.ts';

/**
 * Validates an authorization request from scratch: the GET/POST endpoint and the login form both call it.
 * `requirement` reads what the client's policy asks of every sign-in (default: policyRequirement,
 * the policy alone); the endpoint passes one that reads the session user's facts with it.
 */
export async function validateAuthorization(deps: OAuthDeps, raw: RawParams, requirement: (client: Client) => Promise<PolicyRequirement | undefined> = (client) => policyRequirement(deps.store, client)): Promise<Validation> {
  const client = await checkClient(deps, raw); // RFC 6749 §4.1.2.1 (page)
  const redirectUri = checkRedirectUri(client, raw); // RFC 6749 §3.1.2.3, RFC 8252 §7.3 (page)
  let target: RedirectTarget = { redirectUri, state: echoableState(raw), responseMode: DEFAULT_RESPONSE_MODE };
  try {
    // Before anything else can fail: every later error travels as the client asked (its own failure by query).
    target = { ...target, responseMode: checkResponseMode(raw, redirectUri) }; // OAuth 2.0 Multiple Response Types §2.1, Form Post Response Mode §2
    const params = parseRequest(raw); // RFC 6749 §3.1; OIDC Core §6
    checkResponseType(params.response_type, client); // RFC 6749 §3.1.1, §4.1.2.1
    const requested = parseScope(params.scope);
    const asked = grantedScope(requested, client, await grantedAudiences(deps.store.clients, client, requested)); // RFC 6749 §3.3: unknown values dropped; audiences outside `aud` invalid_scope (§4.1.2.1)
    const { scope, resources } = await checkResources(deps, client, raw, asked); // RFC 8707 §2: resource servers in `aud`, else invalid_target
    const pkce = checkPkceRequest(client, params.code_challenge, params.code_challenge_method); // RFC 7636 §4.4
    const prompt = checkPrompt(params.prompt); // OIDC Core §3.1.2.1
    // OIDC Registration §2: default_max_age applies when the request sends no max_age.
    const maxAge = checkMaxAge(params.max_age) ?? defaultMaxAge(client); // OIDC Core §3.1.2.1
    const hintedSubject = await checkIdTokenHint(deps, params.id_token_hint);
    const request = {
      client,
      clientId: client.clientId,
      redirectUri,
      target,
      scope,
      resources,
      nonce: params.nonce,
      pkce,
      prompt,
      maxAge,
      loginHint: params.login_hint,
      uiLocales: params.ui_locales,
      display: checkDisplay(params.display),
      // Issue 24: acr_values, the claims parameter's acr, default_acr_values and the client's policy (select-level.ts).
      level: selectLevel(deps.config.levels, { claims: params.claims, acrValues: params.acr_values, client, policy: await requirement(client) }),
      hintedSubject,
      params: params as Record<string, string>,
    };
    return { ok: true, request };
  } catch (error) {
    return { ok: false, target, error };
  }
}

/**
 * A request with a browser's session cookie: a code at once when the session satisfies the
 * request (single sign-on; using the session extends it) and its rate limit allows one
 * (src/oauth/throttling/silent-authorizations.ts), the login page when it does not, the consent
 * page when a third-party client needs the user's consent first.
 */
export async function authorize(deps: OAuthDeps, raw: RawParams, sessionCookie: string | undefined, ip?: string): Promise<AuthorizeOutcome> {
  // A client with a policy: the browser's session is read during validation, once the
  // redirect_uri is verified (a failure is then redirected, AZ-26), and with a session the policy
  // is read once, with the session user's facts, for both its requirement (the level) and its
  // access check below (issue 27: it was read twice). Without a session, the requirement alone.
  let early: { session: SsoSession | undefined; facts: PolicyFacts | undefined } | undefined;
  const requirement = async (client: Client): Promise<PolicyRequirement | undefined> => {
    if (client.authorizationPolicy === undefined) return undefined;
    const found = await findUsableSession(deps, sessionCookie);
    if (found === undefined) {
      early = { session: undefined, facts: undefined };
      return policyRequirement(deps.store, client);
    }
    early = { session: found, facts: await readPolicy(deps.store, client.authorizationPolicy, found.userId, { forAccess: true }) };
    return early.facts?.document?.minimumAuthentication;
  };
  const validation = await validateAuthorization(deps, raw, requirement);
  if (!validation.ok) return { type: 'error', target: validation.target, error: validation.error };
  const { request } = validation;
  try {
    // An essential acr naming only values that are not configured: no sign-in can meet it, so no page is shown first.
    if (request.level.unmeetable) throw new UnmetAuthenticationRequirements(UNMET);
    const session = early === undefined ? await findUsableSession(deps, sessionCookie) : early.session;
    // The session user's factors tell whether a level the session lacks is in reach (levels.ts): read only when one is selected.
    const factors = session && selectsLevel(request.level) ? await factorsOf(deps, session.userId) : [];
    const interaction = decideInteraction(request, session, deps.clock.now(), factors); // login_required under prompt=none
    if (interaction.type === 'login') return { type: 'login', request };
    // Issue 24: the session is the user's but too weak; only the missing factor is asked for (login.ts holdStepUp).
    if (interaction.type === 'step_up') {
      // Each step-up page holds a sign-in row for a session alone (no password): bounded as silent codes are.
      if (!(await takeSilentAuthorization(deps, interaction.session, ip, request.clientId))) throw new TemporarilyUnavailable('Too many authorization requests from this session or address; try again later.');
      return { type: 'step_up', request, session: interaction.session, kinds: interaction.kinds };
    }
    // After authentication, before consent and the code (docs/authorization.md): a session from
    // another client does not get past the client's authorization policy.
    const refused = await policyRefusal(deps, request, interaction.session.userId, early?.session?.userId === interaction.session.userId ? early.facts : undefined);
    if (refused) return refused;
    // A third-party client's consent page (consent.ts); under prompt=none, consent_required.
    if (await needsConsent(deps, request, interaction.session.userId)) return { type: 'consent', request, session: interaction.session };
    // A silent code costs the browser nothing but a stored row: bounded per session and address.
    if (!(await takeSilentAuthorization(deps, interaction.session, ip, request.clientId))) {
      // RFC 6749 §4.1.2.1: the server cannot handle the request now, owing to its load; the
      // client may try again later (docs/decisions.md, "Rate limit of silent authorizations").
      throw new TemporarilyUnavailable('Too many authorization requests from this session or address; try again later.');
    }
    const code = await issueCode(deps, request, await touchSession(deps, interaction.session));
    return { type: 'code', target: request.target, code };
  } catch (error) {
    return { type: 'error', target: request.target, error };
  }
}

/**
 * The authorization endpoint's policy check, shared by the silent path and the login form:
 * undefined when the client's authorization policy lets the user in; otherwise the explanation
 * page (`denied`), or — under prompt=none, which shows no page (OIDC Core §3.1.2.1) — access_denied
 * delivered at once (RFC 6749 §4.1.2.1: the resource owner's authorization is refused).
 */
export async function policyRefusal(
  deps: OAuthDeps,
  request: AuthorizationRequest,
  userId: string,
  /** The user's facts read already in this request (authorize), else read now. */
  alreadyRead?: PolicyFacts,
): Promise<Extract<AuthorizeOutcome, { type: 'denied' | 'error' }> | undefined> {
  if (request.client.authorizationPolicy === undefined) return undefined;
  const facts = alreadyRead ?? (await readPolicy(deps.store, request.client.authorizationPolicy, userId, { forAccess: true }));
  if (policyAllows(facts)) return undefined;
  // require_verified_email (docs/email-verification.md, AM58): the page says so and leads to the
  // profile page's "send a verification link"; prompt=none gets access_denied naming the reason.
  const unverified = unverifiedEmail(facts);
  if (request.prompt.has('none')) return { type: 'error', target: request.target, error: new AccessDenied(unverified ? UNVERIFIED_EMAIL_REFUSAL : POLICY_REFUSAL) };
  return { type: 'denied', request, ...(unverified ? { reason: 'email_unverified' as const } : {}) };
}

/** OIDC Registration §2 default_max_age, as registered (client-metadata.ts checked it is a whole number of seconds). */
function defaultMaxAge(client: { metadata: Record<string, unknown> }): number | undefined {
  const registered = client.metadata.default_max_age;
  return typeof registered === 'number' && Number.isInteger(registered) && registered >= 0 ? registered : undefined;
}

/**
 * The state to echo in an error redirect: the value as sent, unless it is repeated or too long,
 * in which case the request is refused and echoing either copy would be arbitrary.
 */
function echoableState(raw: RawParams): string | undefined {
  const state = raw.state;
  return typeof state === 'string' && state !== '' && state.length <= maxLength('state') ? state : undefined;
}
