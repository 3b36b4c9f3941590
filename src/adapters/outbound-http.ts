/**
 * POSTs to URLs that administrators or relying parties registered — back-channel logout URIs now,
 * webhook endpoints next (issue 26; docs/logout.md, "Where gatehouse may POST"; decisions LO5) —
 * without becoming a way into the network gatehouse runs in (server-side request forgery):
 *
 * - https only; http only to a loopback address, and only when GATEHOUSE_OUTBOUND_LOOPBACK allows it;
 * - the host is resolved once, here, and the connection goes to the address checked (no second
 *   lookup an attacker's DNS could answer differently: the resolver is the request's `lookup`);
 *   loopback, private, link-local, shared, multicast and reserved addresses (RFC 6890 and the IANA
 *   special-purpose registries) are refused unless GATEHOUSE_OUTBOUND_PRIVATE allows them;
 * - redirects are not followed (a 3xx is a failure: a receiver that moved registers its new URL);
 * - one timeout for the whole exchange; of the answer only the status and the first
 *   RESPONSE_PREFIX bytes are read, for the failure's description.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';

export interface OutboundSettings {
  /** GATEHOUSE_OUTBOUND_LOOPBACK: http:// and https:// to 127.0.0.0/8 and ::1 (development, tests). */
  allowLoopback: boolean;
  /** GATEHOUSE_OUTBOUND_PRIVATE: private and other non-public ranges (a receiver on the internal network). */
  allowPrivate: boolean;
  /** The whole exchange, connection to the last byte read (ms). */
  timeoutMs: number;
}

export interface OutboundAnswer {
  status: number;
  /** The first RESPONSE_PREFIX bytes of the body, as text. */
  bodyPrefix: string;
}

/** A POST refused before anything was sent, or that could not reach the receiver. */
export class OutboundRefused extends Error {
  override readonly name = 'OutboundRefused';
}

/** How much of an answer is kept: enough for a short error, never a document. */
export const RESPONSE_PREFIX = 256;

/**
 * The addresses that reach this host: 127/8 and ::1, and also "this network" 0.0.0.0/8 and the
 * unspecified address ::, to which Linux connects as to the local host (RFC 1122 §3.2.1.3 forbids
 * them as destinations; the kernel does not). IPv4-mapped forms (::ffff:0.0.0.0) are judged by the
 * IPv4 rules: BlockList applies them to those.
 */
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addSubnet('0.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');
LOOPBACK.addAddress('::', 'ipv6');

/** Every address that is not public unicast: RFC 6890 (IPv4 and IPv6 special-purpose registries), RFC 6598, RFC 4193. */
const NOT_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.88.99.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24],
  ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // IPv4-mapped addresses (::ffff:0:0/96) are judged by the IPv4 rules above: BlockList applies them to those.
  // ::/96: the deprecated IPv4-compatible addresses (RFC 4291 §2.5.5.1); fec0::/10: the deprecated site-local ones (RFC 3879).
  ['::', 96], ['::1', 128], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 23], ['2001:db8::', 32],
  ['2002::', 16], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) NOT_PUBLIC.addSubnet(network, prefix, 'ipv6');

/** Why gatehouse may not connect to `address` under `settings`, or undefined when it may. */
export function refusalOf(address: string, settings: Pick<OutboundSettings, 'allowLoopback' | 'allowPrivate'>): string | undefined {
  const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
  if (LOOPBACK.check(address, family)) return settings.allowLoopback ? undefined : `${address} is a loopback address (GATEHOUSE_OUTBOUND_LOOPBACK)`;
  if (NOT_PUBLIC.check(address, family)) return settings.allowPrivate ? undefined : `${address} is not a public address (GATEHOUSE_OUTBOUND_PRIVATE)`;
  return undefined;
}

/** The request's resolver: the host's addresses, each checked; the first allowed one is connected to. */
function checkedLookup(settings: OutboundSettings): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (error, found) => {
      if (error) return callback(error, '', 0);
      const addresses = found as LookupAddress[];
      const allowed = addresses.find((a) => refusalOf(a.address, settings) === undefined);
      if (allowed === undefined) {
        const why = addresses.length === 0 ? `${hostname} has no address` : refusalOf(addresses[0]!.address, settings)!;
        return callback(Object.assign(new OutboundRefused(why), { code: 'EREFUSED' }), '', 0);
      }
      // node:http asks with `all` unset: one address.
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, [allowed]);
      return callback(null, allowed.address, allowed.family);
    });
  };
}

/**
 * POSTs `body` (already encoded as `contentType`) to `url`; the answer's status and body prefix.
 * Throws OutboundRefused when the URL or its address is not allowed, and the network's errors.
 */
/**
 * Why a POST to `target` is refused before any lookup — its scheme, or a literal address the
 * settings refuse — or undefined. Registration checks it too (webhook endpoints: a clear 400 at
 * once instead of dead deliveries later); a host name is judged only when it is resolved.
 */
export function urlRefusal(target: URL, settings: Pick<OutboundSettings, 'allowLoopback' | 'allowPrivate'>): string | undefined {
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (target.protocol === 'http:') {
    if (!settings.allowLoopback) return `${target.origin} is not https (http only to a loopback host, with GATEHOUSE_OUTBOUND_LOOPBACK)`;
    if (isIP(host) !== 0 ? !LOOPBACK.check(host, isIP(host) === 6 ? 'ipv6' : 'ipv4') : host !== 'localhost') return `${target.origin} is not https and not a loopback host`;
  } else if (target.protocol !== 'https:') return `${target.protocol} URLs are not allowed`;
  // A literal address is checked here: lookup is not called for one.
  return isIP(host) !== 0 ? refusalOf(host, settings) : undefined;
}

export async function postOutbound(url: string, body: string, contentType: string, settings: OutboundSettings, headers: Record<string, string> = {}): Promise<OutboundAnswer> {
  const target = new URL(url);
  const why = urlRefusal(target, settings);
  if (why !== undefined) throw new OutboundRefused(why);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise<OutboundAnswer>((resolve, reject) => {
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': contentType, 'content-length': Buffer.byteLength(body), 'user-agent': 'gatehouse' },
      lookup: checkedLookup(settings),
      signal: AbortSignal.timeout(settings.timeoutMs),
    });
    request.on('error', reject);
    request.on('response', (response: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const finish = () => {
        response.destroy();
        resolve({ status: response.statusCode ?? 0, bodyPrefix: Buffer.concat(chunks).subarray(0, RESPONSE_PREFIX).toString('utf8') });
      };
      response.on('data', (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        if (size >= RESPONSE_PREFIX) finish();
      });
      response.on('end', finish);
      response.on('error', reject);
    });
    request.end(body);
  });
}
