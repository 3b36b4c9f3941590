/**
 * Keys of the throttle's counters. Whatever was sent, a key is a scope and the SHA-256 of the
 * counted value: fixed length, nothing readable stored, and an attacker's junk cannot make rows
 * any larger. Addresses are grouped the way one party holds them: an IPv4 address alone, an
 * IPv6 address by its /64 (RFC 6177: one site, or one subscriber, gets at least a /64).
 */
import { isIP } from 'node:net';
import { hashSecret } from '../../lib/hash.ts';

export type CounterScope = 'login-user' | 'login-ip' | 'login-pair' | 'client-id' | 'client-ip' | 'client-pair' | 'api-user' | 'api-ip' | 'api-pair' | 'factor-user' | 'factor-ip' | 'factor-pair';

export function counterKey(scope: CounterScope | RateScope, value: string): string {
  return `${scope}:${hashSecret(value)}`;
}

/** Scopes of the rate limits of silent authorizations (silent-authorizations.ts), of user-code entry (device/verification.ts) and of username-less passkey ceremonies (authorize/passkey-sign-in.ts): hits, not failures. */
export type RateScope = 'sso-session' | 'sso-ip' | 'device-ip' | 'device-all' | 'device-start-ip' | 'passkey-sign-in-ip' | 'reset-ip' | 'reset-user' | 'email-code-user' | 'email-code-address' | 'register-ip' | 'register-email' | 'verify-user' | 'verify-recipient';

/**
 * The address as the throttle counts it: IPv4 as is (also when mapped into IPv6), IPv6 as its
 * /64 prefix. Anything else (the HTTP layer never passes it) is cut to a bounded length.
 */
export function addressGroup(address: string): string {
  const version = isIP(address);
  if (version === 4) return address;
  if (version !== 6) return `?${address.slice(0, 64)}`;
  const groups = ipv6Groups(address);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 0xff, groups[7]! >> 8, groups[7]! & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

/** The eight 16-bit groups of an address `isIP` accepted as IPv6 (zone dropped, `::` expanded). */
function ipv6Groups(address: string): number[] {
  let text = address.toLowerCase();
  const zone = text.indexOf('%');
  if (zone >= 0) text = text.slice(0, zone);
  const lastColon = text.lastIndexOf(':');
  const tail = text.slice(lastColon + 1);
  if (tail.includes('.')) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split('.').map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', rest] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const fill = rest === undefined ? [] : Array.from({ length: 8 - left.length - right.length }, () => '0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}
