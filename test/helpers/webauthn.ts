/**
 * A software WebAuthn authenticator for tests (W3C Web Authentication Level 3): ES256 keys from
 * node:crypto, the client data a browser would make, authenticator data with the flags asked for,
 * attestation `none`. It answers the options the server sends as a browser and an authenticator
 * together would, and lets a test break any part (origin, RP ID, counter, user handle, flags).
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { formFields } from './fixtures.ts';

/** The flags of authenticator data (WebAuthn L3 §6.1). */
export const FLAGS = { UP: 0x01, UV: 0x04, BE: 0x08, BS: 0x10, AT: 0x40 } as const;

/** A tiny CBOR encoder (RFC 8949) for the shapes WebAuthn needs: integers, byte and text strings, maps. */
export function cbor(value: unknown): Buffer {
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value);
  if (typeof value === 'string') return Buffer.concat([head(3, Buffer.byteLength(value)), Buffer.from(value)]);
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), Buffer.from(value)]);
  if (value instanceof Map) return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])]);
  if (typeof value === 'object' && value !== null) return cbor(new Map(Object.entries(value)));
  throw new Error(`cbor: cannot encode ${typeof value}`);
}

function head(major: number, n: number): Buffer {
  if (n < 24) return Buffer.from([(major << 5) | n]);
  if (n < 0x100) return Buffer.from([(major << 5) | 24, n]);
  if (n < 0x10000) return Buffer.from([(major << 5) | 25, n >> 8, n & 0xff]);
  const b = Buffer.alloc(5);
  b[0] = (major << 5) | 26;
  b.writeUInt32BE(n, 1);
  return b;
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest();

export interface Credential {
  id: Buffer;
  privateKey: KeyObject;
  /** The COSE_Key of the public key (RFC 9052 §7; EC2, P-256, ES256). */
  cosePublicKey: Buffer;
  rpId: string;
  /** The user handle the server gave at registration, base64url. */
  userHandle: string;
  counter: number;
}

/** What a test may change in one ceremony. */
export interface Tamper {
  origin?: string;
  rpId?: string;
  flags?: number;
  /** The counter to report (default: the credential's, plus one, unless the authenticator keeps none). */
  counter?: number;
  /** Report this user handle in an assertion instead of the credential's. */
  userHandle?: string;
  /** Use this credential instead of the one the options allow. */
  credential?: Credential;
  type?: string;
}

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  readonly origin: string;
  /** The flags every ceremony sets: UP and UV, and BE|BS for a synced authenticator. */
  readonly flags: number;
  /** Whether it keeps a signature counter (a synced passkey provider sends 0 every time). */
  readonly counting: boolean;

  constructor(options: { origin: string; synced?: boolean; counting?: boolean }) {
    this.origin = options.origin;
    this.flags = FLAGS.UP | FLAGS.UV | (options.synced === true ? FLAGS.BE | FLAGS.BS : 0);
    this.counting = options.counting ?? true;
  }

  /** navigator.credentials.create(): a RegistrationResponseJSON for the server's creation options. */
  register(options: { challenge: string; rp: { id?: string }; user: { id: string } }, tamper: Tamper = {}): Record<string, unknown> {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const jwk = publicKey.export({ format: 'jwk' });
    const cosePublicKey = cbor(
      new Map<number, unknown>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x!, 'base64url')],
        [-3, Buffer.from(jwk.y!, 'base64url')],
      ]),
    );
    const rpId = options.rp.id ?? new URL(this.origin).hostname;
    const credential: Credential = { id: randomBytes(16), privateKey, cosePublicKey, rpId, userHandle: options.user.id, counter: 0 };
    const counter = tamper.counter ?? (this.counting ? 1 : 0);
    const attested = Buffer.concat([Buffer.alloc(16), Buffer.from([0, credential.id.length]), credential.id, cosePublicKey]);
    const authData = authenticatorData(tamper.rpId ?? rpId, (tamper.flags ?? this.flags) | FLAGS.AT, counter, attested);
    const clientDataJSON = clientData(tamper.type ?? 'webauthn.create', options.challenge, tamper.origin ?? this.origin);
    credential.counter = counter;
    this.credentials.push(credential);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(cbor({ fmt: 'none', attStmt: {}, authData })), transports: ['internal'] },
    };
  }

  /** navigator.credentials.get(): an AuthenticationResponseJSON for the server's request options, by the first credential allowed (or any, username-less). */
  assert(options: { challenge: string; rpId?: string; allowCredentials?: { id: string }[] }, tamper: Tamper = {}): Record<string, unknown> {
    const allowed = options.allowCredentials ?? [];
    const credential = tamper.credential ?? this.credentials.find((c) => allowed.length === 0 || allowed.some((a) => a.id === b64url(c.id)));
    if (credential === undefined) throw new Error('the authenticator holds no credential the options allow');
    const counter = tamper.counter ?? (this.counting ? credential.counter + 1 : 0);
    const authData = authenticatorData(tamper.rpId ?? options.rpId ?? credential.rpId, tamper.flags ?? this.flags, counter);
    const clientDataJSON = clientData(tamper.type ?? 'webauthn.get', options.challenge, tamper.origin ?? this.origin);
    const signature = sign('sha256', Buffer.concat([authData, sha256(clientDataJSON)]), credential.privateKey);
    credential.counter = Math.max(credential.counter, counter);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: b64url(clientDataJSON), authenticatorData: b64url(authData), signature: b64url(signature), userHandle: tamper.userHandle ?? credential.userHandle },
    };
  }
}

function authenticatorData(rpId: string, flags: number, counter: number, attested: Buffer = Buffer.alloc(0)): Buffer {
  const count = Buffer.alloc(4);
  count.writeUInt32BE(counter);
  return Buffer.concat([sha256(rpId), Buffer.from([flags]), count, attested]);
}

function clientData(type: string, challenge: string, origin: string): Buffer {
  return Buffer.from(JSON.stringify({ type, challenge, origin, crossOrigin: false }));
}

/** The passkey form of a page (templates/passkey-form.eta): its action, where its options come from, and its fields. */
export function passkeyForm(html: string): { action: string; options: string; fields: Record<string, string> } {
  const match = /<form method="post" action="([^"]*)" class="passkey"[^>]*data-options="([^"]*)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (match === null) throw new Error('no passkey form on the page');
  return { action: match[1]!, options: match[2]!, fields: Object.fromEntries(formFields(match[3]!)) };
}
