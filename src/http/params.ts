/**
 * Query strings and form bodies are parsed the same way: every name maps to a string, or to an
 * array of strings when it was repeated, so the protocol core can refuse duplicated parameters
 * (RFC 6749 §3.1, §3.2) instead of silently picking one.
 *
 * The parser is strict where URLSearchParams is lenient: a `%` not followed by two hex digits, or
 * percent-encoded bytes that are not UTF-8 (`%FF`, an encoded surrogate, an overlong form), would
 * silently become U+FFFD or stay literal there, so two parsers could read one request two ways.
 * Here they make the request malformed, as do more than MAX_PARAMS parameters, a name longer than
 * MAX_NAME_LENGTH or a value longer than MAX_VALUE_LENGTH (limits that bound the work and storage
 * one request can cause; the core has tighter ones per parameter).
 *
 * Fastify calls the query-string parser while routing, outside any error handler, so the parser
 * never throws: a malformed input parses to no parameters and carries the reason under
 * MALFORMED, which src/http/plugins/limits.ts turns into each endpoint's own invalid_request.
 */
export type RawParams = Record<string, string | string[]>;

/** At most this many parameters (repeats included) in one query string or form body. */
export const MAX_PARAMS = 100;
/** Characters of a decoded parameter name. */
export const MAX_NAME_LENGTH = 256;
/** Characters of a decoded parameter value: the longest any endpoint accepts (`id_token_hint`). */
export const MAX_VALUE_LENGTH = 8192;

/** The reason a query string or body could not be parsed (a symbol: never a parameter name). */
export const MALFORMED: unique symbol = Symbol('malformed parameters');

export type ParsedParams = RawParams & { [MALFORMED]?: string };

/** Why the parsed query or body was refused (not well-formed application/x-www-form-urlencoded, or over a limit), or undefined. */
export function paramsProblem(params: unknown): string | undefined {
  return params !== null && typeof params === 'object' ? (params as ParsedParams)[MALFORMED] : undefined;
}

/** Limits a caller may loosen for its own forms (the console's JSON text areas); the defaults above otherwise. */
export interface ParamLimits {
  maxValueLength?: number;
}

export function parseParams(text: string, limits: ParamLimits = {}): ParsedParams {
  const maxValueLength = limits.maxValueLength ?? MAX_VALUE_LENGTH;
  const out = Object.create(null) as ParsedParams;
  if (text === '') return out;
  const malformed = (reason: string): ParsedParams => {
    const none = Object.create(null) as ParsedParams;
    none[MALFORMED] = reason;
    return none;
  };
  let count = 0;
  for (const pair of text.split('&')) {
    if (pair === '') continue; // `a=1&&b=2`: empty sequences are skipped (WHATWG URL §5.1)
    if (++count > MAX_PARAMS) return malformed(`The request has more than ${MAX_PARAMS} parameters.`);
    const eq = pair.indexOf('=');
    const name = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = decode(eq === -1 ? '' : pair.slice(eq + 1));
    if (name === undefined || value === undefined) return malformed('The request has malformed percent-encoding or is not UTF-8.');
    if (name.length > MAX_NAME_LENGTH) return malformed(`A parameter name is longer than ${MAX_NAME_LENGTH} characters.`);
    if (value.length > maxValueLength) return malformed(`A parameter value is longer than ${maxValueLength} characters.`);
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[name] = [seen, value];
  }
  return out;
}

const FATAL_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * A form body from its bytes: raw (unencoded) bytes must be UTF-8 too, which Buffer#toString
 * would not check.
 */
export function parseFormBytes(body: Uint8Array, limits: ParamLimits = {}): ParsedParams {
  let text: string;
  try {
    text = FATAL_UTF8.decode(body);
  } catch {
    const none = Object.create(null) as ParsedParams;
    none[MALFORMED] = 'The request has malformed percent-encoding or is not UTF-8.';
    return none;
  }
  return parseParams(text, limits);
}

/**
 * `+` is a space, then percent-decoding as UTF-8. decodeURIComponent throws (URIError) on a bad
 * `%` escape and on byte sequences that are not UTF-8, including encoded surrogates and overlong
 * forms, which is exactly what must be refused.
 */
function decode(component: string): string | undefined {
  const spaced = component.includes('+') ? component.replaceAll('+', ' ') : component;
  let decoded: string;
  try {
    decoded = spaced.includes('%') ? decodeURIComponent(spaced) : spaced;
  } catch {
    return undefined;
  }
  // A lone surrogate cannot come off the wire as UTF-8, but a caller may pass any string.
  return decoded.isWellFormed() ? decoded : undefined;
}
