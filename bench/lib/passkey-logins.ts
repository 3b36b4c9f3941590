/**
 * S6p's users (issue 24): each with a passkey of its own, registered straight in the store (as a
 * registration through the account page stores it), and the software authenticator that answers
 * the login page's WebAuthn options for them: ES256 over authenticatorData ‖ SHA-256(clientDataJSON)
 * (WebAuthn L3 §6.3.3), flags UP|UV, signature counter 0 (an authenticator that keeps none, as
 * synced passkey providers do: accepted on every login, so passes need no ordering, SA60). The
 * users are taken round-robin, so concurrent passes update different credentials' rows.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from 'node:crypto';
import { hashPassword } from '../../src/identity/passwords.ts';
import type { Store } from '../../src/storage/ports.ts';
import { aUser } from './fixtures.ts';

interface PasskeyUser {
  credentialId: string;
  userHandle: string;
  privateKey: KeyObject;
}

/** The COSE_Key (RFC 9052 §7) of a P-256 public key for ES256: {1: 2, 3: -7, -1: 1, -2: x, -3: y} in CBOR. */
function coseKey(x: Buffer, y: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0xa5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20]), x, Buffer.from([0x22, 0x58, 0x20]), y]);
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest();

export class PasskeyLogins {
  readonly #users: PasskeyUser[] = [];
  readonly #tag = randomBytes(4).toString('hex');
  #next = 0;

  get size(): number {
    return this.#users.length;
  }

  /** The pool grown to `count` users; they have a password too (never used here), as a real user would. */
  async growTo(store: Store, count: number): Promise<void> {
    const passwordHash = await hashPassword(`unused ${this.#tag}`);
    const add = async (index: number): Promise<PasskeyUser> => {
      const user = aUser(`bench-passkey-${this.#tag}-${index}`);
      await store.users.insert(user, passwordHash);
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      const jwk = publicKey.export({ format: 'jwk' });
      const credentialId = randomBytes(16).toString('base64url');
      const userHandle = await store.factors.userHandle(user.id, randomBytes(32).toString('base64url'));
      await store.factors.insertPasskey({
        factor: { id: crypto.randomUUID(), userId: user.id, kind: 'passkey', name: 'bench passkey', createdAt: Date.now(), lastUsedAt: undefined, backupEligible: false },
        credentialId,
        publicKey: coseKey(Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')).toString('base64url'),
        signCount: 0,
        transports: ['internal'],
        backedUp: false,
        aaguid: '00000000-0000-0000-0000-000000000000',
      });
      return { credentialId, userHandle, privateKey };
    };
    while (this.#users.length < count) {
      const from = this.#users.length;
      this.#users.push(...(await Promise.all(Array.from({ length: Math.min(64, count - from) }, (_, i) => add(from + i)))));
    }
  }

  /** The next user's answer (an AuthenticationResponseJSON, as text) to the request options `optionsJson`, at `origin`. */
  answer(optionsJson: string, origin: string): string {
    const options = JSON.parse(optionsJson) as { challenge: string; rpId: string };
    const user = this.#users[this.#next++ % this.#users.length]!;
    const clientDataJSON = Buffer.from(JSON.stringify({ type: 'webauthn.get', challenge: options.challenge, origin, crossOrigin: false }));
    // rpIdHash, flags UP (0x01) | UV (0x04), signature counter 0.
    const authenticatorData = Buffer.concat([sha256(options.rpId), Buffer.from([0x05, 0, 0, 0, 0])]);
    const signature = sign('sha256', Buffer.concat([authenticatorData, sha256(clientDataJSON)]), user.privateKey);
    return JSON.stringify({
      id: user.credentialId,
      rawId: user.credentialId,
      type: 'public-key',
      clientExtensionResults: {},
      response: { clientDataJSON: clientDataJSON.toString('base64url'), authenticatorData: authenticatorData.toString('base64url'), signature: signature.toString('base64url'), userHandle: user.userHandle },
    });
  }
}
