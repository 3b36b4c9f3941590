import { consentRequired } from '../../domain/client.ts';
import type { Factor, FactorKind } from '../../domain/factor.ts';
import type { SsoSession } from '../../domain/session.ts';
import { LoginRequired, UnmetAuthenticationRequirements } from '../errors.ts';
import { meets, raisingKinds } from '../levels.ts';
import type { AuthorizationRequest } from './request.ts';
import { enrolmentChoices } from './enrol-on-login.ts';
import type { LevelDemand } from './select-level.ts';

/**
 * Whether the existing session answers the request silently or the user must log in (OIDC Core
 * §3.1.2.1, §3.1.2.3). A session is not enough when prompt asks for a login, consent or account
 * choice (the login page for all three; but a third-party client's prompt=consent is answered by
 * the consent page after the session, consent.ts), when max_age is exceeded (`max_age=0`
 * is prompt=login), or when an id_token_hint names another user. prompt=none forbids any page:
 * then the answer is login_required (§3.1.2.6).
 *
 * A session that is enough in those respects but whose amr does not meet the level the request
 * selects (select-level.ts) is stepped up: `step_up` asks only for the factors (`kinds`) that
 * would meet it, never the password again. An essential level none of the user's factors can
 * reach is a fresh sign-in, where a factor enrolled then could meet it (SA124), and otherwise
 * unmet_authentication_requirements; under prompt=none a step-up or sign-in the user could make is
 * login_required (it needs a page), a voluntary one is skipped.
 */
export type Interaction = { type: 'silent'; session: SsoSession } | { type: 'login' } | { type: 'step_up'; session: SsoSession; kinds: FactorKind[] };

/** `factors`: the session user's, read only when the request selects a level (decideInteraction's caller). */
export function decideInteraction(request: AuthorizationRequest, session: SsoSession | undefined, now: number, factors: readonly Factor[] = []): Interaction {
  if (session && sessionSatisfies(request, session, now)) {
    const step = levelStep(request.level, session.amr, factors);
    if (step.type === 'met' || (step.type === 'step_up' && !step.essential && request.prompt.has('none'))) return { type: 'silent', session };
    if (step.type === 'unreachable') {
      // Out of reach of the user's factors, but a passkey enrolled at sign-in could meet it: a
      // full, fresh sign-in (the password, the user's factor), then the enrolment (SA124).
      if (!enrolmentCouldMeet(request.level)) throw new UnmetAuthenticationRequirements(UNMET);
      if (request.prompt.has('none')) throw new LoginRequired('The session\'s authentication does not meet the level the request requires; the user must authenticate further.');
      return { type: 'login' };
    }
    if (request.prompt.has('none')) throw new LoginRequired('The session\'s authentication does not meet the level the request requires; the user must authenticate further.');
    return { type: 'step_up', session, kinds: step.kinds };
  }
  if (request.prompt.has('none')) throw new LoginRequired(session ? 'The session does not satisfy the request; the user must log in.' : 'The user is not logged in.');
  return { type: 'login' };
}

export const UNMET = 'The user cannot authenticate as the request or the client\'s policy requires.';

/**
 * What a sign-in that proved `amr` still needs for `demand`, given the user's factors: `met`;
 * `step_up` with the kinds of factor that would meet the first level missing (`essential`: the
 * essential one; else the first voluntary level the user can reach); `unreachable` when the
 * essential level is missing and no factor of the user's can raise the sign-in to it. A voluntary
 * level out of reach is skipped.
 */
export type LevelStep = { type: 'met' } | { type: 'step_up'; essential: boolean; kinds: FactorKind[] } | { type: 'unreachable' };

export function levelStep(demand: LevelDemand, amr: readonly string[], factors: readonly Factor[]): LevelStep {
  if (demand.unmeetable) return { type: 'unreachable' };
  if (demand.essential !== undefined && !meets(demand.essential, amr)) {
    const kinds = raisingKinds(demand.essential, amr, factors);
    return kinds.length === 0 ? { type: 'unreachable' } : { type: 'step_up', essential: true, kinds };
  }
  for (const requirement of demand.preferred) {
    if (meets(requirement, amr)) return { type: 'met' };
    const kinds = raisingKinds(requirement, amr, factors);
    if (kinds.length > 0) return { type: 'step_up', essential: false, kinds };
  }
  return { type: 'met' };
}

/**
 * Whether a passkey enrolled at sign-in could meet the demand's required level: any configured
 * level (a device-bound passkey meets every requirement, levels.ts); not an essential acr naming
 * only values that are not configured.
 */
export function enrolmentCouldMeet(demand: LevelDemand): boolean {
  return !demand.unmeetable && demand.essential !== undefined && enrolmentChoices(demand.essential, []).length > 0;
}

/** Whether `amr` meets what the request requires (essential); a voluntary level missed is no reason to stop. */
export function meetsRequired(demand: LevelDemand, amr: readonly string[]): boolean {
  return !demand.unmeetable && (demand.essential === undefined || meets(demand.essential, amr));
}

/** Whether the request selects any level at all: only then are the user's factors worth reading. */
export function selectsLevel(demand: LevelDemand): boolean {
  return demand.unmeetable || demand.essential !== undefined || demand.preferred.length > 0;
}

function sessionSatisfies(request: AuthorizationRequest, session: SsoSession, now: number): boolean {
  if (request.prompt.has('login') || request.prompt.has('select_account')) return false;
  // First-party clients have no consent page: prompt=consent shows the login page, as before (docs/decisions.md F2).
  if (request.prompt.has('consent') && !consentRequired(request.client)) return false;
  if (request.maxAge !== undefined && (request.maxAge === 0 || now - session.authTime > request.maxAge * 1000)) return false;
  if (request.hintedSubject !== undefined && request.hintedSubject !== session.userId) return false;
  return true;
}
