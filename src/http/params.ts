/**
 * Query strings and form bodies are parsed the same way: every name maps to a string, or to an
 * array of strings when it was repeated, so the protocol core can refuse duplicated parameters
 * (RFC 6749 §3.1, §3.2) instead of silently picking one.
 */
export type RawParams = Record<string, string | string[]>;

export function parseParams(text: string): RawParams {
  const out: RawParams = Object.create(null) as RawParams;
  for (const [name, value] of new URLSearchParams(text)) {
    const seen = out[name];
    if (seen === undefined) out[name] = value;
    else if (Array.isArray(seen)) seen.push(value);
    else out[name] = [seen, value];
  }
  return out;
}
