import { isNativeClient, type Client } from '../../domain/client.ts';
import { InvalidRedirectUri } from '../errors.ts';
import type { RawParams } from '../params.ts';
import { isCanonicalPort, PORT_RULE } from '../redirect-uri-rules.ts';
import { DEFAULT_MAX_LENGTH } from './parse-request.ts';

/**
 * An http loopback redirect URI split into host, port and the rest (path and query). Matched on
 * the raw string, never on a parsed-and-normalised URL: normalising would turn `%2e%2e`, `..;/`,
 * case or default ports into something that compares equal (RFC 9700 §4.1.3). The host must be
 * followed directly by `:port`, `/`, `?` or the end, which leaves no room for userinfo
 * (`127.0.0.1@evil`) or a longer name (`localhost.evil.test`).
 */
const LOOPBACK = /^http:\/\/(127\.0\.0\.1|\[::1\]|localhost)(?::([0-9]{1,5}))?([/?][\x21-\x7e]*)?$/;

/** Schemes that run code in the browser are refused even if someone managed to register them. */
const DANGEROUS_SCHEME = /^\s*(javascript|data|vbscript|file):/i;

/** The port of a `scheme://host:port` URI as written (group 1); IPv6 literal hosts in brackets. */
const AUTHORITY_PORT = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/(?:\[[^\]/?#]*\]|[^/?#:@[]*):([^/?#]*)/;

/** Printable ASCII only: anything else cannot be a registered URI and must not reach a Location header. */
const PRINTABLE = /^[\x21-\x7e]+$/;

/**
 * The second check: redirect_uri present, single, and equal to a registered one by simple string
 * comparison (RFC 6749 §3.1.2.3, RFC 9700 §2.1, OIDC Core §3.1.2.1). The one exception is the
 * port of an http loopback URI of a native client (`application_type: "native"`), which picks it
 * at run time (RFC 8252 §7.3): host, path and query must still be identical. A web client, the
 * console included, compares exactly: on a loopback issuer any local process could otherwise
 * listen on another port and receive its codes (docs/decisions.md F6). Failures are shown to the
 * user, never redirected.
 */
export function checkRedirectUri(client: Client, raw: RawParams): string {
  // The client is verified by now: the error page may offer a way back to it (never to the request's URI).
  const refuse = (description: string, detail?: string) => new InvalidRedirectUri(description, { detail, applicationUri: applicationOrigin(client) });
  const requested = raw.redirect_uri;
  if (Array.isArray(requested)) throw refuse('The redirect_uri parameter is repeated.');
  if (requested === undefined || requested === '') throw refuse('The redirect_uri parameter is missing.');
  if (requested.length > DEFAULT_MAX_LENGTH || !PRINTABLE.test(requested)) throw refuse('The redirect_uri is not registered for this client.');
  // A fragment is never allowed in a redirection endpoint (RFC 6749 §3.1.2).
  if (DANGEROUS_SCHEME.test(requested) || requested.includes('#')) throw refuse('The redirect_uri is not acceptable.');
  // Port 0 or 009 on a loopback URI matched any registered port (RFC 8252 §7.3): decision X5. A
  // URI registered before the rule existed is refused all the same.
  const port = AUTHORITY_PORT.exec(requested)?.[1];
  if (port !== undefined && !isCanonicalPort(port)) throw refuse(`The redirect_uri is not acceptable: ${PORT_RULE}.`);
  const native = isNativeClient(client);
  if (!client.redirectUris.some((registered) => redirectUriMatches(registered, requested, native))) {
    throw refuse('The redirect_uri is not registered for this client.', `client ${client.clientId} sent an unregistered redirect_uri`);
  }
  return requested;
}

/**
 * Where the error page's "back to the application" link may point: the origin of the client's
 * first registered redirect URI that names a web site — https, or http on a loopback host with an
 * explicit port (a development server; a loopback URI without a port belongs to a native app that
 * listens only while it waits for a code, RFC 8252 §7.3). Only the origin: the path is a callback
 * that expects a code. Private-use schemes are never linked (nothing says an app is installed).
 * Undefined when no registered URI qualifies.
 */
export function applicationOrigin(client: Pick<Client, 'redirectUris'>): string | undefined {
  for (const uri of client.redirectUris) {
    let url: URL;
    try {
      url = new URL(uri);
    } catch {
      continue;
    }
    if (url.username !== '' || url.password !== '') continue;
    if (url.protocol === 'https:' && url.hostname !== '') return url.origin;
    if (url.protocol === 'http:' && LOOPBACK.test(uri) && url.port !== '') return url.origin;
  }
  return undefined;
}

/**
 * Exact match, or — for a native client only (RFC 8252 §7.3) — an http loopback URI that differs
 * from the registered one only in its port.
 */
export function redirectUriMatches(registered: string, requested: string, native: boolean): boolean {
  if (registered === requested) return true;
  if (!native) return false;
  const a = LOOPBACK.exec(registered);
  const b = LOOPBACK.exec(requested);
  if (!a || !b) return false;
  const [, hostA, , restA = ''] = a;
  const [, hostB, portB, restB = ''] = b;
  if (portB !== undefined && !isCanonicalPort(portB)) return false;
  return hostA === hostB && restA === restB;
}
