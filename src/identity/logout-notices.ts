/**
 * OpenID Connect Back-Channel and Front-Channel Logout 1.0 (issue 26; docs/logout.md; decisions LO3–LO10):
 * what the units of work that end sessions do for the relying parties. Every one of them — logout,
 * an administrator's end, a user disabled, locked or deleted, a new password — takes the rows of
 * the sessions it ended (src/oauth/backchannel-logout.ts wrote them at the code exchange, §2.3)
 * and queues one logout token per relying party and sid in the durable outbox, in the same unit of
 * work, so a session ends exactly when its logout tokens will be sent. Here, in the identity layer,
 * because ending a user's sessions is (users.ts endUserSessions). The token itself is signed when
 * it is sent (src/adapters/backchannel-logout.ts), so a retry an hour later still carries a fresh
 * `iat`/`exp`; its `jti` is the outbox message's id, the same on every attempt, by which a relying
 * party can tell a copy (§2.6: it may check that no logout token with the same jti came recently).
 */
import { createHash } from 'node:crypto';
import type { Client } from '../domain/client.ts';
import type { NewOutboxMessage } from '../domain/outbox.ts';
import type { SessionClient, StoreTransaction } from '../storage/ports.ts';

/** What a back-channel logout message carries until it is signed (the outbox's payload). */
export interface LogoutTokenPayload {
  client_id: string;
  sub: string;
  sid: string;
}

/** The client's registered back-channel logout URI, if any (client metadata, §2.2). */
export function backchannelLogoutUri(client: Pick<Client, 'metadata'>): string | undefined {
  const uri = client.metadata.backchannel_logout_uri;
  return typeof uri === 'string' ? uri : undefined;
}

/** The client's registered front-channel logout URI, if any (Front-Channel Logout 1.0 §2). */
export function frontchannelLogoutUri(client: Pick<Client, 'metadata'>): string | undefined {
  const uri = client.metadata.frontchannel_logout_uri;
  return typeof uri === 'string' ? uri : undefined;
}

/** A relying party to tell through the browser (Front-Channel Logout 1.0 §3): its URI and the sid it knows. */
export interface FrontChannelNotice {
  clientId: string;
  uri: string;
  sid: string;
}

/**
 * Inside the unit of work that ended `sessions` (all of `userId`): queues a logout token for each
 * relying party remembered in them that still has a back-channel logout URI and is active, and
 * returns those with a front-channel logout URI, which only a browser can reach (the logout page's
 * iframes). Each message's id — the token's `jti` — and dedupe key come from (session, client,
 * sid), so a unit of work that runs twice (a retried serialization failure) queues each once (AM1).
 */
export async function tellRelyingParties(tx: Pick<StoreTransaction, 'sessionClients' | 'clients' | 'outbox'>, userId: string, sessionIndexes: readonly string[], now: number): Promise<FrontChannelNotice[]> {
  const receivers = await tx.sessionClients.takeOfSessions(sessionIndexes);
  const frontChannel: FrontChannelNotice[] = [];
  for (const receiver of receivers) {
    const client = await tx.clients.get(receiver.clientId);
    if (!client?.active) continue;
    const back = backchannelLogoutUri(client);
    if (back !== undefined) await tx.outbox.enqueue(logoutMessage(receiver, userId, back, now));
    const front = frontchannelLogoutUri(client);
    if (front !== undefined) frontChannel.push({ clientId: client.clientId, uri: front, sid: receiver.sid });
  }
  return frontChannel;
}

function logoutMessage(receiver: SessionClient, userId: string, uri: string, now: number): NewOutboxMessage {
  const key = createHash('sha256').update(`${receiver.sessionIndex}\0${receiver.clientId}\0${receiver.sid}`).digest('base64url');
  const payload: LogoutTokenPayload = { client_id: receiver.clientId, sub: userId, sid: receiver.sid };
  return { id: `bcl-${key}`, channel: 'backchannel_logout', kind: 'backchannel_logout', destination: uri, payload: { ...payload }, dedupeKey: `backchannel_logout:${key}`, createdAt: now, nextAttemptAt: now };
}
