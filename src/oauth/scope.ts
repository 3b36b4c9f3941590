import type { Client } from '../domain/client.ts';
import type { ClientStore } from '../storage/ports.ts';
import { SUPPORTED_SCOPES } from './discovery.ts';
import { InvalidScope } from './errors.ts';
import { isLookupKey } from './lookup-key.ts';

/** At most this many unknown scope values are looked up as client_ids per request. */
const MAX_AUDIENCE_LOOKUPS = 8;

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
 * (OIDC certification expects unknown values such as offline_access to be ignored), except
 * audience scopes — the client_id of another registered, active client asks for a token meant for
 * that client (Ubisecure: `scope=openid <resource client_id>`, how identity API tokens are
 * requested). When the client registered a `scope`, only values from it are kept (Ubisecure:
 * "only those values are allowed"). Order follows the request.
 */
export function grantedScope(requested: string[], client: Client, audiences: ReadonlySet<string> = new Set()): string[] {
  const allowed = client.scope === undefined ? undefined : new Set(parseScope(client.scope));
  return requested.filter(
    (value) => ((SUPPORTED_SCOPES as readonly string[]).includes(value) || audiences.has(value)) && (allowed === undefined || allowed.has(value) || value === 'openid'),
  );
}

/** The requested values that are client_ids of registered, active clients. */
export async function audienceScopes(clients: ClientStore, requested: string[]): Promise<Set<string>> {
  const candidates = requested.filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value) && isLookupKey(value, 255)).slice(0, MAX_AUDIENCE_LOOKUPS);
  const found = await Promise.all(candidates.map((value) => clients.get(value)));
  return new Set(found.filter((c): c is Client => c !== undefined && c.active).map((c) => c.clientId));
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
