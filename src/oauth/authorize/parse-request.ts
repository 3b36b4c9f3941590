import { InvalidRequest, RequestNotSupported, RequestUriNotSupported } from '../errors.ts';
import { param, rejectRepeated, type RawParams } from '../params.ts';

/** Every parameter of OIDC Core §3.1.2.1, RFC 6749 §4.1.1 and RFC 7636 §4.3 the endpoint knows. */
export const AUTHORIZATION_PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'response_mode',
  'scope',
  'state',
  'nonce',
  'prompt',
  'max_age',
  'login_hint',
  'id_token_hint',
  'acr_values',
  'ui_locales',
  'claims_locales',
  'display',
  'code_challenge',
  'code_challenge_method',
  'claims',
  'request',
  'request_uri',
  'registration',
] as const;
export type AuthorizationParam = (typeof AUTHORIZATION_PARAMS)[number];
export type AuthorizationParams = Partial<Record<AuthorizationParam, string>>;

/**
 * Longest accepted value of each parameter, in characters. Bounded so that a request cannot make
 * us store or echo arbitrary amounts of data; an ID token hint is a JWT and needs more room.
 */
export const DEFAULT_MAX_LENGTH = 2048;
const MAX_LENGTH: Partial<Record<AuthorizationParam, number>> = { nonce: 512, id_token_hint: 8192 };

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x1f\x7f]/;

export function maxLength(name: AuthorizationParam): number {
  return MAX_LENGTH[name] ?? DEFAULT_MAX_LENGTH;
}

/**
 * Reads the recognised parameters once client_id and redirect_uri are verified. A repeated
 * parameter is refused before anything else reads it (RFC 6749 §3.1; parameter pollution, where
 * the server checks one copy and the client reads another); request objects are not supported
 * (OIDC Core §6, §3.1.2.6); every value is bounded in length.
 */
export function parseRequest(raw: RawParams): AuthorizationParams {
  rejectRepeated(raw, AUTHORIZATION_PARAMS);
  const params: AuthorizationParams = {};
  for (const name of AUTHORIZATION_PARAMS) {
    const value = param(raw, name);
    if (value !== undefined) params[name] = value;
  }
  if (params.request !== undefined) throw new RequestNotSupported('The request parameter is not supported.');
  if (params.request_uri !== undefined) throw new RequestUriNotSupported('The request_uri parameter is not supported.');
  for (const name of AUTHORIZATION_PARAMS) {
    const value = params[name];
    if (value === undefined) continue;
    if (value.length > maxLength(name)) throw new InvalidRequest(`The ${name} parameter is too long (at most ${maxLength(name)} characters).`);
    // No parameter has a use for control characters (state is VSCHAR, RFC 6749 Appendix A.5),
    // and some stores cannot even hold them.
    if (CONTROL.test(value)) throw new InvalidRequest(`The ${name} parameter contains control characters.`);
  }
  return params;
}
