import { InvalidRequest } from '../errors.ts';
import type { RawParams } from '../params.ts';
import type { ResponseMode } from './response-modes/mode.ts';
import { DEFAULT_RESPONSE_MODE, findResponseMode, RESPONSE_MODES } from './response-modes/registry.ts';

/**
 * The third check, once client_id and redirect_uri are verified and before any other: how the
 * answer travels (OAuth 2.0 Multiple Response Type Encoding Practices §2.1, OAuth 2.0 Form Post
 * Response Mode §2). Absent: the default for response_type=code, query. A mode that is repeated,
 * unknown, or cannot reach this redirect_uri is invalid_request (RFC 6749 §4.1.2.1: "an invalid
 * parameter value"; OIDC Core §3.1.2.6), and that error cannot travel by a mode that does not
 * exist: the caller sends it by the default mode, query (RFC 6749 §4.1.2.1 "adding the following
 * parameters to the query component of the redirection URI").
 */
export function checkResponseMode(raw: RawParams, redirectUri: string): ResponseMode {
  const value = raw.response_mode;
  if (value === undefined || value === '') return DEFAULT_RESPONSE_MODE;
  if (Array.isArray(value)) throw new InvalidRequest('The response_mode parameter is repeated.');
  const mode = findResponseMode(value);
  if (mode === undefined) throw new InvalidRequest(`Unsupported response_mode; supported: ${RESPONSE_MODES.map((known) => known.name).join(', ')}.`);
  const refusal = mode.refuses(redirectUri);
  if (refusal !== undefined) throw new InvalidRequest(refusal);
  return mode;
}
