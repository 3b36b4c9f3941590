/**
 * Standard Webhooks signatures (the Standard Webhooks specification, "Signature scheme";
 * docs/webhooks.md, "Verifying a delivery"; decisions WH6–WH10).
 *
 * A secret is `whsec_` followed by the base64 of its key bytes; the signed content is
 * `<webhook-id>.<webhook-timestamp>.<body>`, the signature `v1,<base64 of HMAC-SHA256>`, and the
 * `webhook-signature` header lists one signature per valid secret, separated by spaces — during
 * a rotation's overlap both the new and the previous secret sign, so a receiver that still has
 * the old one keeps verifying (the specification's "Secret rotation").
 */
import { createHmac, randomBytes } from 'node:crypto';
import { openWebhookSecret, sealWebhookSecret } from '../crypto/key-encryption.ts';
import type { StoredWebhookEndpoint } from '../domain/webhook.ts';

export const SECRET_PREFIX = 'whsec_';
/** Key bytes of a new secret: the specification asks for 24 to 64; 32 is HMAC-SHA256's block-size-friendly choice. */
const SECRET_BYTES = 32;

export function newWebhookSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(SECRET_BYTES).toString('base64')}`;
}

/** `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under `secret` (whsec_…). */
export function signature(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The three headers of a delivery signed with each of `secrets` (timestamp in seconds since the epoch). */
export function signedHeaders(secrets: readonly string[], id: string, timestamp: number, body: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': secrets.map((s) => signature(s, id, timestamp, body)).join(' ') };
}

/** A secret as the store keeps it: sealed when a key-encryption key is set (WH8), else as it is. */
export function storedSecret(secret: string, keyEncryptionKey: string | undefined): string {
  return keyEncryptionKey === undefined ? secret : sealWebhookSecret(secret, keyEncryptionKey);
}

/** The secret a stored value holds: `whsec_…` as it is, a sealed one opened (throws when it cannot be). */
export function openedSecret(stored: string, keyEncryptionKey: string | undefined): string {
  if (stored.startsWith(SECRET_PREFIX)) return stored;
  if (keyEncryptionKey === undefined) throw new Error('a webhook secret is sealed and GATEHOUSE_KEY_ENCRYPTION_KEY is unset');
  return openWebhookSecret(stored, keyEncryptionKey);
}

/** The secrets that sign at `now`: the current one, and the previous one while its overlap lasts (WH9). */
export function signingSecrets(endpoint: Pick<StoredWebhookEndpoint, 'secret' | 'previousSecret' | 'previousSecretUntil'>, now: number, keyEncryptionKey: string | undefined): string[] {
  const secrets = [openedSecret(endpoint.secret, keyEncryptionKey)];
  if (endpoint.previousSecret !== undefined && endpoint.previousSecretUntil !== undefined && now < endpoint.previousSecretUntil) secrets.push(openedSecret(endpoint.previousSecret, keyEncryptionKey));
  return secrets;
}
