import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Private signing keys at rest: AES-256-GCM under a key derived (HKDF-SHA256) from
 * GATEHOUSE_KEY_ENCRYPTION_KEY. Format: `v1.<iv>.<ciphertext>.<tag>`, base64url parts.
 */
export function encryptPrivateKey(plaintext: string, secret: string, purpose: SealPurpose = 'signing-key-encryption'): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(secret, purpose), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function decryptPrivateKey(sealed: string, secret: string, purpose: SealPurpose = 'signing-key-encryption'): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== 'v1' || !iv || !body || !tag) throw new Error('unrecognised encrypted key format');
  const decipher = createDecipheriv('aes-256-gcm', deriveKey(secret, purpose), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('cannot decrypt a signing key: GATEHOUSE_KEY_ENCRYPTION_KEY differs from the one it was encrypted with');
  }
}

/**
 * What a sealed value is, as the HKDF info: each purpose gets its own AES key from the one
 * GATEHOUSE_KEY_ENCRYPTION_KEY, so a sealed signing key can never be opened as a client secret
 * or the other way round.
 */
export type SealPurpose = 'signing-key-encryption' | 'client-secret-encryption' | 'totp-secret-encryption' | 'webhook-secret-encryption';

function deriveKey(secret: string, purpose: SealPurpose): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'gatehouse', purpose, 32));
}

/** A client_secret_jwt client's secret at rest (docs/decisions.md, "client_secret_jwt secrets are sealed, not hashed"). */
export function sealClientSecret(secret: string, keyEncryptionKey: string): string {
  return encryptPrivateKey(secret, keyEncryptionKey, 'client-secret-encryption');
}

/** The secret sealed by sealClientSecret; throws when `keyEncryptionKey` is not the one it was sealed with. */
export function openClientSecret(sealed: string, keyEncryptionKey: string): string {
  return decryptPrivateKey(sealed, keyEncryptionKey, 'client-secret-encryption');
}

/** A TOTP factor's secret at rest (docs/decisions.md SA3): sealed like client_secret_jwt secrets, its own purpose. */
export function sealTotpSecret(secret: string, keyEncryptionKey: string): string {
  return encryptPrivateKey(secret, keyEncryptionKey, 'totp-secret-encryption');
}

/** The secret sealed by sealTotpSecret; throws when `keyEncryptionKey` is not the one it was sealed with. */
export function openTotpSecret(sealed: string, keyEncryptionKey: string): string {
  return decryptPrivateKey(sealed, keyEncryptionKey, 'totp-secret-encryption');
}

/** A webhook endpoint's signing secret at rest (docs/decisions.md WH8): sealed like TOTP secrets, its own purpose. */
export function sealWebhookSecret(secret: string, keyEncryptionKey: string): string {
  return encryptPrivateKey(secret, keyEncryptionKey, 'webhook-secret-encryption');
}

/** The secret sealed by sealWebhookSecret; throws when `keyEncryptionKey` is not the one it was sealed with. */
export function openWebhookSecret(sealed: string, keyEncryptionKey: string): string {
  return decryptPrivateKey(sealed, keyEncryptionKey, 'webhook-secret-encryption');
}

/**
 * The signing keys in the store cannot be opened with the configured key-encryption key (or none
 * is configured). Start-up stops with this message: signing would fail on every request.
 */
export class KeyEncryptionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'KeyEncryptionError';
  }
}
