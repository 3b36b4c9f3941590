import type { Client } from '../domain/client.ts';
import type { ClientStore } from '../storage/ports.ts';
import { SUPPORTED_SCOPES } from './discovery.ts';
import { InvalidScope } from './errors.ts';
import { allowedAudiences } from './client-metadata.ts';
import { isLookupKey } from './lookup-key.ts';

/** At most this many unknown scope values outside a client's `aud` are looked up as client_ids per request. */
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
 * audiences — see grantedAudiences, which decides them. When the client registered a `scope`,
 * only values from it are kept among the others (Ubisecure: "only those values are allowed");
 * audiences are governed by `aud` alone. Order follows the request.
 */
export function grantedScope(requested: string[], client: Client, audiences: ReadonlySet<string> = new Set()): string[] {
  const allowed = client.scope === undefined ? undefined : new Set(parseScope(client.scope));
  return requested.filter((value) => audiences.has(value) || ((SUPPORTED_SCOPES as readonly string[]).includes(value) && (allowed === undefined || allowed.has(value) || value === 'openid')));
}

/**
 * The audiences granted to `client` among the requested scope values. A value that is the
 * client_id of a registered client asks for a token meant for that client (Ubisecure:
 * `scope=openid <resource client_id>`, how identity API tokens are requested). It is granted only
 * when the client's `aud` metadata lists it and that client is active; otherwise the request is
 * refused with invalid_scope (RFC 6749 §4.1.2.1, §5.2), never silently narrowed, so a client
 * learns why it got no such token. Without `aud` a client gets no audience at all. Values that
 * name no client are left for grantedScope to drop. At most MAX_AUDIENCE_LOOKUPS values outside
 * the allow-list are looked up; the rest are dropped as unknown, which grants nothing either.
 */
export async function grantedAudiences(clients: ClientStore, client: Client, requested: string[]): Promise<Set<string>> {
  const allowList = allowedAudiences(client);
  const candidates = requested.filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value) && isLookupKey(value, 255));
  const allowed = candidates.filter((value) => allowList.has(value));
  const others = candidates.filter((value) => !allowList.has(value)).slice(0, MAX_AUDIENCE_LOOKUPS);
  const [allowedClients, otherClients] = await Promise.all([Promise.all(allowed.map((value) => clients.get(value))), Promise.all(others.map((value) => clients.get(value)))]);
  const refused = others.find((_, i) => otherClients[i] !== undefined);
  if (refused !== undefined) throw new InvalidScope(`The scope value ${refused} is a client_id this client may not request as an audience (client metadata aud).`);
  const unavailable = allowed.find((_, i) => !allowedClients[i]?.active);
  if (unavailable !== undefined) throw new InvalidScope(`The audience ${unavailable} is not an active client.`);
  return new Set(allowed);
}

/**
 * The same rule on a scope already granted (the refresh grant, RFC 6749 §6): every audience in it
 * must still be allowed by the client's current `aud` and still be an active client, or the
 * request is invalid_scope. A granted scope holds only supported values and audiences.
 */
export async function checkGrantedAudiences(clients: ClientStore, client: Client, scope: string[]): Promise<void> {
  const audiences = scopeAudiences(scope);
  if (audiences.length === 0) return;
  const allowList = allowedAudiences(client);
  const refused = audiences.find((value) => !allowList.has(value));
  if (refused !== undefined) throw new InvalidScope(`The client may no longer request the audience ${refused} (client metadata aud).`);
  const found = await Promise.all(audiences.map((value) => clients.get(value)));
  const unavailable = audiences.find((_, i) => !found[i]?.active);
  if (unavailable !== undefined) throw new InvalidScope(`The audience ${unavailable} is not an active client.`);
}

/**
 * The audiences of a granted scope: its values that are not supported scope values. A granted
 * scope holds only supported values and audiences (grantedScope), so every other value is the
 * client_id of a client the token is meant for. The one place that tells them apart.
 */
export function scopeAudiences(scope: readonly string[]): string[] {
  return scope.filter((value) => !(SUPPORTED_SCOPES as readonly string[]).includes(value));
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
