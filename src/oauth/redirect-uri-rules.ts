/**
 * What a registered redirect URI may look like. The authorization endpoint later compares the
 * request's redirect_uri with the registered ones by exact string equality (RFC 9700 §2.1,
 * §4.1.3), so registration is the one place a URI is parsed and judged; it is then stored
 * exactly as given. The rules close the known open-redirect and code-theft tricks: URIs that
 * parsers read differently, script schemes, credentials in the authority, and dot-segments.
 */

/** Schemes that run code or read local data in a browser; never a redirect target. */
const FORBIDDEN_SCHEMES = new Set(['javascript', 'vbscript', 'data', 'file', 'blob', 'filesystem', 'about']);

/** RFC 8252 §7.3 loopback redirection; `localhost` is allowed though §8.3 prefers IP literals. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

const MAX_LENGTH = 2048;

/**
 * Whether `port` (the text after the host's ":") is a port in its one written form: 1 to 65535,
 * no leading zero, not empty (decision X5). RFC 3986 §3.2.3 allows any `*DIGIT`, but a URL parser
 * turns `009` into `9` and drops an empty port, so the string compared at the authorization
 * endpoint would not be the address the browser goes to; and port 0 is not connectable, so a
 * loopback redirect to it (RFC 8252 §7.3) can only fail or be read as "any port".
 */
export function isCanonicalPort(port: string): boolean {
  return /^[1-9][0-9]{0,4}$/.test(port) && Number(port) <= 65535;
}

/** What redirectUriProblem and checkRedirectUri say of a port that is not canonical. */
export const PORT_RULE = 'a port must be a number from 1 to 65535 without leading zeros (RFC 8252 section 7.3)';

/** Why `uri` cannot be registered as a redirect URI, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri === '') return 'must not be empty';
  if (uri.length > MAX_LENGTH) return `must be at most ${MAX_LENGTH} characters`;
  // Spaces, control characters and non-ASCII are silently stripped or re-encoded by URL parsers,
  // which would make the stored string differ from what the browser is sent to.
  if (/[^\x21-\x7e]/.test(uri)) return 'must be printable ASCII without spaces (percent-encode other characters)';
  // WHATWG URL reads "\" as "/" in http(s) URLs while other parsers do not: a classic open-redirect.
  if (uri.includes('\\')) return 'must not contain a backslash';

  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined) return 'must be an absolute URI with a scheme (RFC 6749 §3.1.2)';
  if (FORBIDDEN_SCHEMES.has(scheme)) return `must not use the ${scheme}: scheme`;
  // Even an empty fragment ("…/cb#") is refused (RFC 6749 §3.1.2).
  if (uri.includes('#')) return 'must not contain a fragment (RFC 6749 §3.1.2)';

  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return 'is not a valid absolute URI';
  }

  const { authority, path } = splitRaw(uri, scheme.length + 1);
  if (authority !== undefined) {
    // "https://good.example@evil.example/" reads as good.example to a human (RFC 3986 §7.6).
    if (authority.includes('@') || url.username !== '' || url.password !== '') return 'must not contain user information ("user@" before the host; RFC 3986 §7.6)';
    // Percent-encoding in the authority ("localhost%2eevil.test", "…%25@…") only serves to confuse parsers.
    if (authority.includes('%')) return 'must not percent-encode anything in the host or port';
    const port = portOf(authority);
    if (port !== undefined && !isCanonicalPort(port)) return `must have no port or a valid one: ${PORT_RULE}`;
  }
  if (hasDotSegment(path)) return 'must not contain "." or ".." path segments, even percent-encoded (RFC 3986 §5.2.4)';

  if (scheme === 'https') return url.hostname === '' ? 'needs a host' : undefined;
  if (scheme === 'http') {
    // Both the raw host and the parsed one: WHATWG rewrites "127.1" or "0x7f.1" to 127.0.0.1.
    const rawHost = hostOf(authority ?? '').toLowerCase();
    if (LOOPBACK_HOSTS.has(url.hostname) && LOOPBACK_HOSTS.has(rawHost)) return undefined;
    return 'may use http only with a loopback host: 127.0.0.1, [::1] or localhost (RFC 8252 §7.3); use https';
  }
  // Any other scheme is taken as private-use (RFC 8252 §7.1), unless it is a well-known one that
  // is not an app's: those open something else entirely (a mail client, a dialler, a browser page).
  if (PUBLIC_SCHEMES.has(scheme)) return `must use https, http with a loopback host, or a private-use scheme such as com.example.app: (RFC 8252 §7.1), not "${scheme}:"`;
  return undefined;
}

/** Registered schemes that name no app of the client's: never a private-use redirect scheme. */
const PUBLIC_SCHEMES = new Set([
  'ftp', 'sftp', 'ssh', 'telnet', 'ws', 'wss', 'mailto', 'tel', 'sms', 'mms', 'news', 'nntp', 'gopher', 'irc', 'ldap', 'urn', 'geo', 'jar',
  'intent', 'market', 'itms', 'itms-apps', 'view-source', 'chrome', 'chrome-extension', 'moz-extension', 'resource', 'ms-settings',
]);

/**
 * What registration accepts but an operator should hear about, or undefined. A private-use scheme
 * without a dot (`myapp://cb`): RFC 8252 §7.1 says the scheme SHOULD be a reverse domain name the
 * app's publisher controls, because any other app may register `myapp:` too and receive the
 * code. SHOULD, not MUST, and many deployed apps use such schemes (PKCE, required of public
 * clients, keeps a stolen code useless), so it is allowed with this warning (the CLI prints it).
 */
export function redirectUriWarning(uri: string): string | undefined {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(uri)?.[1]?.toLowerCase();
  if (scheme === undefined || scheme === 'http' || scheme === 'https' || scheme.includes('.') || redirectUriProblem(uri) !== undefined) return undefined;
  return `${JSON.stringify(uri)} uses the private-use scheme "${scheme}:" without a dot; RFC 8252 §7.1 says it SHOULD be a reverse domain name you control, such as com.example.app:, so that no other app can claim it`;
}

/** The authority (when the URI has one) and the path, as written; never normalized. */
function splitRaw(uri: string, afterScheme: number): { authority: string | undefined; path: string } {
  const rest = uri.slice(afterScheme);
  const endOfPath = (s: string) => s.search(/[?#]|$/);
  if (!rest.startsWith('//')) return { authority: undefined, path: rest.slice(0, endOfPath(rest)) };
  const hierarchy = rest.slice(2);
  const authorityEnd = hierarchy.search(/[/?#]|$/);
  const tail = hierarchy.slice(authorityEnd);
  return { authority: hierarchy.slice(0, authorityEnd), path: tail.slice(0, endOfPath(tail)) };
}

/** The port of an authority as written (maybe empty), or undefined when it has no ":port". */
function portOf(authority: string): string | undefined {
  const rest = authority.slice(hostOf(authority).length);
  return rest.startsWith(':') ? rest.slice(1) : undefined;
}

/** The host of an authority without its port; IPv6 literals keep their brackets. */
function hostOf(authority: string): string {
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1);
  const colon = authority.lastIndexOf(':');
  return colon === -1 ? authority : authority.slice(0, colon);
}

/**
 * Whether the path has a "." or ".." segment once percent-decoding is repeated until nothing
 * changes (so "%2e%2e" and the double-encoded "%252f" count). ";" also ends a segment: some
 * servlet containers read "/..;/" as "/../".
 */
function hasDotSegment(path: string): boolean {
  let decoded = path;
  for (let round = 0; round < 5; round++) {
    const next = decoded.replace(/%([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    if (next === decoded) break;
    decoded = next;
  }
  return /(^|[/;\\])\.\.?(?=[/;\\?#]|$)/.test(decoded);
}
