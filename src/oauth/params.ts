import { InvalidRequest } from './errors.ts';

/** Parameters as parsed from a query string or form body: repeated names arrive as arrays. */
export type RawParams = Record<string, string | string[] | undefined>;

/**
 * Reads one parameter. A parameter sent more than once is an error (RFC 6749 §3.1, §3.2: "MUST NOT
 * be included more than once" — and a server that picks one invites parameter pollution); one
 * sent with an empty value counts as absent (§3.1).
 */
export function param(raw: RawParams, name: string): string | undefined {
  const value = raw[name];
  if (Array.isArray(value)) throw new InvalidRequest(`The ${name} parameter is repeated.`);
  return value === '' ? undefined : value;
}

export function requiredParam(raw: RawParams, name: string): string {
  const value = param(raw, name);
  if (value === undefined) throw new InvalidRequest(`The ${name} parameter is missing.`);
  return value;
}

/** The first repeated name among `names`, if any: checked up front so the error names it. */
export function rejectRepeated(raw: RawParams, names: readonly string[]): void {
  for (const name of names) param(raw, name);
}
