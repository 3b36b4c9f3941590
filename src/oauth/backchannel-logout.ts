/**
 * OpenID Connect Back-Channel Logout 1.0 §2.3, "Remembering Logged-In RPs" (issue 26 item 2;
 * docs/logout.md; decisions LO3): the code exchange remembers, in its unit of work, each relying
 * party that registered a `backchannel_logout_uri` and received tokens in a session, with the sid
 * its ID token carries. What ending the session then sends is src/identity/logout-notices.ts.
 */
import type { Client } from '../domain/client.ts';
import { backchannelLogoutUri, frontchannelLogoutUri } from '../identity/logout-notices.ts';
import type { StoreTransaction } from '../storage/ports.ts';
import { sessionIdFor } from './sid.ts';

/** The event member of a logout token (§2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * Inside the code exchange's unit of work: remembers that `client` received tokens in the session
 * `sessionIndex`, when it registered a back- or front-channel logout URI (nobody else is ever told, so nobody else needs a
 * row: no write on the hot path of the other clients, LO3).
 */
export async function rememberLogoutReceiver(tx: Pick<StoreTransaction, 'sessionClients'>, client: Client, sessionIndex: string, now: number): Promise<void> {
  if (backchannelLogoutUri(client) === undefined && frontchannelLogoutUri(client) === undefined) return;
  await tx.sessionClients.record({ sessionIndex, clientId: client.clientId, sid: sessionIdFor(sessionIndex, client.clientId) }, now);
}
