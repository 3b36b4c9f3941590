import type { Client } from '../domain/client.ts';
import { SUPPORTED_SCOPES } from './discovery.ts';
import { InvalidScope } from './errors.ts';

/** Scope values are space-delimited, case-sensitive strings of %x21 / %x23-5B / %x5D-7E (RFC 6749 §3.3). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;

export function parseScope(scope: string | undefined): string[] {
  if (scope === undefined) return [];
  const values = scope.split(' ').filter((v) => v !== '');
  for (const value of values) if (!SCOPE_TOKEN.test(value)) throw new InvalidScope('The scope parameter is malformed.');
  return [...new Set(values)];
}

/**
 * The scope granted for an authorization request: values gatehouse does not support are dropped
 * (OIDC certification expects unknown values such as offline_access to be ignored), and when the
 * client registered a `scope`, only values from it are kept (Ubisecure: "only those values are
 * allowed"). Order follows the request.
 */
export function grantedScope(requested: string[], client: Client): string[] {
  const allowed = client.scope === undefined ? undefined : new Set(parseScope(client.scope));
  return requested.filter((value) => (SUPPORTED_SCOPES as readonly string[]).includes(value) && (allowed === undefined || allowed.has(value) || value === 'openid'));
}

/** A narrower scope on refresh (RFC 6749 §6): every value must have been granted originally. */
export function narrowScope(original: string[], requested: string | undefined): string[] {
  if (requested === undefined) return original;
  const wanted = parseScope(requested);
  const granted = new Set(original);
  const extra = wanted.filter((value) => !granted.has(value));
  if (extra.length > 0) throw new InvalidScope('The requested scope exceeds the scope originally granted.');
  return wanted;
}

export function formatScope(values: string[]): string {
  return values.join(' ');
}
