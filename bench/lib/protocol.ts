/**
 * What S7–S9 learn over the wire, the same way from gatehouse and from the peer: the discovery
 * document (which grants and client-authentication methods the server offers, and where its
 * endpoints are) and pending device codes (RFC 8628 §3.1–3.2).
 */

/** The parts of a discovery document (RFC 8414 §2, OpenID Connect Discovery §3) S7–S9 read. */
export interface Discovery {
  issuer?: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  introspection_endpoint?: string;
  device_authorization_endpoint?: string;
  grant_types_supported?: string[];
  token_endpoint_auth_methods_supported?: string[];
  token_endpoint_auth_signing_alg_values_supported?: string[];
}

/** The discovery document at `base` + `path`, or undefined when there is none. */
export async function discover(base: string, path: string): Promise<Discovery | undefined> {
  try {
    const response = await fetch(`${base}${path}`);
    if (!response.ok) return undefined;
    return (await response.json()) as Discovery;
  } catch {
    return undefined;
  }
}

/** The path (and query) of an endpoint URL named by a discovery document, for autocannon. */
export function pathOf(url: string): string {
  const parsed = new URL(url);
  return parsed.pathname + parsed.search;
}

/** Why `grant` (or `authMethod` with it) cannot be measured on a server with this discovery document; undefined when it can. */
export function missing(discovery: Discovery | undefined, server: string, wants: { grant: string; authMethod?: string; endpoint?: keyof Discovery }): string | undefined {
  if (!discovery) return `${server} serves no discovery document`;
  const grants = discovery.grant_types_supported ?? ['authorization_code', 'implicit'];
  if (!grants.includes(wants.grant)) return `${server} has no ${wants.grant} grant yet (grant_types_supported: ${grants.join(' ')})`;
  if (wants.authMethod) {
    const methods = discovery.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
    if (!methods.includes(wants.authMethod)) return `${server} has no ${wants.authMethod} client authentication yet (token_endpoint_auth_methods_supported: ${methods.join(' ')})`;
  }
  if (wants.endpoint && !discovery[wants.endpoint]) return `${server} names no ${wants.endpoint}`;
  if (!discovery.token_endpoint) return `${server} names no token_endpoint`;
  return undefined;
}

export interface DeviceCodes {
  codes: string[];
  /** The polling interval the server asked for (RFC 8628 §3.2; 5 s when it names none). */
  interval: number;
  /** The shortest lifetime of the codes, in seconds (`expires_in`). */
  expiresIn: number;
}

/**
 * `count` pending device codes of a public client, each from its own device authorization
 * request (RFC 8628 §3.1), `concurrency` in flight. Nobody ever enters their user codes, so
 * polling any of them is answered `authorization_pending` until it expires.
 */
export async function requestDeviceCodes(endpoint: string, clientId: string, count: number, concurrency = 16): Promise<DeviceCodes> {
  const codes: string[] = [];
  let interval = 0;
  let expiresIn = Infinity;
  let next = 0;
  const lane = async () => {
    while (next < count) {
      next++;
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: clientId }).toString(),
      });
      const body = (await response.json().catch(() => ({}))) as { device_code?: string; interval?: number; expires_in?: number; error?: string; error_description?: string };
      if (!response.ok || !body.device_code) throw new Error(`device authorization request answered ${response.status} ${body.error ?? ''} ${body.error_description ?? ''}`.trim());
      codes.push(body.device_code);
      interval = Math.max(interval, body.interval ?? 5);
      expiresIn = Math.min(expiresIn, body.expires_in ?? 600);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return { codes, interval, expiresIn };
}
