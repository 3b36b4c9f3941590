import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/**
 * Private signing keys at rest: AES-256-GCM under a key derived (HKDF-SHA256) from
 * GATEHOUSE_KEY_ENCRYPTION_KEY. Format: `v1.<iv>.<ciphertext>.<tag>`, base64url parts.
 */
export function encryptPrivateKey(plaintext: string, secret: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', deriveKey(secret), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

export function decryptPrivateKey(sealed: string, secret: string): string {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== 'v1' || !iv || !body || !tag) throw new Error('unrecognised encrypted key format');
  const decipher = createDecipheriv('aes-256-gcm', deriveKey(secret), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  try {
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('cannot decrypt a signing key: GATEHOUSE_KEY_ENCRYPTION_KEY differs from the one it was encrypted with');
  }
}

function deriveKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'gatehouse', 'signing-key-encryption', 32));
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
