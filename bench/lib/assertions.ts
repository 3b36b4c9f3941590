/**
 * S8's client key and its client assertions (RFC 7523 §2.2, OIDC Core §9 `private_key_jwt`).
 *
 * ES256: allowed by FAPI 2.0 (RS256 is not), accepted by gatehouse's allow-list and by the peer.
 * Each token request needs an assertion with its own `jti` (both servers refuse a replay), and
 * signing one costs the load generator's core about as much as verifying it costs the server's,
 * so the assertions of a round are signed before the round starts (like S4b's pre-minted refresh
 * tokens) and the round ends when its pool is used up.
 */
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

export const ASSERTION_ALG = 'ES256';
/** `urn:ietf:params:oauth:client-assertion-type:jwt-bearer` (RFC 7523 §2.2). */
export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
/** How long a pool's assertions live: far beyond a round, well within gatehouse's 60-minute limit. */
const LIFETIME_SECONDS = 10 * 60;

export interface ClientKey {
  privateKey: CryptoKey;
  /** The public key as the client registers it in `jwks` (with `kid`, `alg`, `use`). */
  publicJwk: JWK;
}

export async function generateClientKey(): Promise<ClientKey> {
  const { privateKey, publicKey } = await generateKeyPair(ASSERTION_ALG, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid: `bench-${randomUUID().slice(0, 8)}`, alg: ASSERTION_ALG, use: 'sig' };
  return { privateKey, publicJwk };
}

/**
 * `count` client assertions of `clientId` for the token endpoint `audience` (RFC 7523 §3: iss and
 * sub the client, aud the endpoint, exp, a unique jti), each signed once.
 */
export async function mintAssertions(key: ClientKey, clientId: string, audience: string, count: number): Promise<string[]> {
  const now = Math.floor(Date.now() / 1000);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(
      await new SignJWT({})
        .setProtectedHeader({ alg: ASSERTION_ALG, kid: key.publicJwk.kid!, typ: 'JWT' })
        .setIssuer(clientId)
        .setSubject(clientId)
        .setAudience(audience)
        .setJti(randomUUID())
        .setIssuedAt(now)
        .setExpirationTime(now + LIFETIME_SECONDS)
        .sign(key.privateKey),
    );
  }
  return out;
}
