/**
 * The outbox's 'backchannel_logout' channel (OpenID Connect Back-Channel Logout 1.0 §2.4–§2.8;
 * docs/logout.md; decisions LO6–LO8): signs the logout token when it is sent — `iss`, `aud` the
 * client, `iat`, a short `exp`, `jti` the outbox message's id (the same on every attempt), the
 * back-channel logout event, `sub` and `sid`, never a `nonce` (§2.4), `typ` `logout+jwt` (§2.4,
 * §4.1 against cross-JWT confusion), with the client's ID token algorithm (§2.6: the RP validates
 * it as an ID token's signature) — and POSTs it as `logout_token` (§2.5) through the SSRF-safe
 * poster. §2.8: 200 (any 2xx) is done; 400 says the RP could not log out, which trying again will
 * not change (permanent); other statuses, timeouts and network errors are tried again.
 */
import type { OutboxMessage } from '../domain/outbox.ts';
import type { KeyRing } from '../crypto/key-ring.ts';
import { signJwt } from '../crypto/jwt.ts';
import type { LogoutTokenPayload } from '../identity/logout-notices.ts';
import { toNumericDate, type Clock } from '../lib/clock.ts';
import { BACKCHANNEL_LOGOUT_EVENT } from '../oauth/backchannel-logout.ts';
import { DeliveryFailure, type OutboxTransport } from '../oauth/outbox/transport.ts';
import type { ClientStore, LogoutDeliveryStore } from '../storage/ports.ts';
import { OutboundRefused, postOutbound, type OutboundSettings } from './outbound-http.ts';

/** A logout token's lifetime (s): §2.4 asks for a short one; the RP checks `iat`/`exp` against its own clock. */
export const LOGOUT_TOKEN_TTL = 120;

export interface BackchannelLogoutDeps {
  issuer: string;
  clients: Pick<ClientStore, 'get'>;
  keyRing: Pick<KeyRing, 'activeKey'>;
  clock: Clock;
  outbound: OutboundSettings;
  /** Where each attempt's outcome is kept per client (decisions LO13); absent: nowhere. */
  deliveries?: Pick<LogoutDeliveryStore, 'record'>;
}

/** The claims of the logout token of `message` signed at `now` (exported for the tests' independent check). */
export function logoutTokenClaims(issuer: string, message: Pick<OutboxMessage, 'id' | 'payload'>, now: number): Record<string, unknown> {
  const { client_id: clientId, sub, sid } = message.payload as unknown as LogoutTokenPayload;
  const iat = toNumericDate(now);
  return { iss: issuer, aud: clientId, iat, exp: iat + LOGOUT_TOKEN_TTL, jti: message.id, events: { [BACKCHANNEL_LOGOUT_EVENT]: {} }, sub, sid };
}

export function backchannelLogoutTransport(deps: BackchannelLogoutDeps): OutboxTransport {
  return {
    channel: 'backchannel_logout',
    async deliver(message) {
      const { client_id: clientId } = message.payload as unknown as LogoutTokenPayload;
      const client = await deps.clients.get(clientId);
      // A client deleted or deactivated since the logout has no session left to end.
      if (!client?.active) throw new DeliveryFailure(`client ${clientId} is gone or inactive`, true);
      const token = await signJwt(logoutTokenClaims(deps.issuer, message, deps.clock.now()), await deps.keyRing.activeKey(client.idTokenSignedResponseAlg), 'logout+jwt');
      const attemptedAt = deps.clock.now();
      let failure: DeliveryFailure | undefined;
      try {
        const answer = await postOutbound(message.destination, new URLSearchParams({ logout_token: token }).toString(), 'application/x-www-form-urlencoded', deps.outbound, { 'cache-control': 'no-store' });
        if (answer.status < 200 || answer.status >= 300) {
          const said = answer.bodyPrefix.replace(/\s+/g, ' ').trim().slice(0, 120);
          failure = new DeliveryFailure(`the relying party answered ${answer.status}${said === '' ? '' : `: ${said}`}`, answer.status === 400);
        }
      } catch (error) {
        // An address refused stays refused until the settings change: dead, for an administrator to redeliver.
        failure =
          error instanceof OutboundRefused
            ? new DeliveryFailure(`refused: ${error.message}`, true, { cause: error })
            : new DeliveryFailure(`${(error as Error).name === 'TimeoutError' ? 'timed out' : (error as Error).message}`, false, { cause: error });
      }
      await recordOutcome(deps, { clientId, status: failure ? 'failed' : 'delivered', attemptedAt, messageId: message.id, error: failure?.message });
      if (failure) throw failure;
    },
  };
}

/**
 * Keeps the attempt's outcome for the client (LO13). Only a record: a store failing here must not
 * turn a token the relying party accepted into a failed attempt, which would send it again.
 */
async function recordOutcome(deps: BackchannelLogoutDeps, delivery: Parameters<LogoutDeliveryStore['record']>[0]): Promise<void> {
  try {
    await deps.deliveries?.record(delivery);
  } catch {
    // The outcome is informational; the outbox message's own state stays the truth (its lastError).
  }
}
