/**
 * The use cases of a user's consents: list and withdraw: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * Withdrawing is src/oauth/consents.ts withdrawConsent (issue 13, item 4): the consent, the
 * client's unredeemed codes for the user and its tokens for the user go in one unit of work.
 */
import type { Consent } from '../domain/consent.ts';
import { IdentityError } from '../identity/errors.ts';
import { findConsent, withdrawConsent } from '../oauth/consents.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

/** A consent, with the name of its client when the client has one. */
export interface ConsentOfClient {
  consent: Consent;
  clientName: string | undefined;
}

export interface ConsentAdministration {
  /** The user's consents in the store's client_id order, with their clients' names. */
  list(userId: string): Promise<ConsentOfClient[]>;
  /** Up to `page.limit + 1` of the user's consents after the client_id `page.after`, by client_id (the one past `limit` says that a next page exists). */
  page(userId: string, page: { after: string | undefined; limit: number }): Promise<Consent[]>;
  /** The user's consent to the client, if any. */
  find(userId: string, clientId: string): Promise<Consent | undefined>;
  /**
   * Withdraws the user's consent to the client and revokes every token the client holds for the
   * user (also when there was no consent: tokens of a client made third-party later). Refused
   * (`not_found`) for a client that does not exist. The `consent.withdrawn` event when anything
   * was withdrawn or revoked.
   */
  withdraw(acting: Acting, userId: string, clientId: string): Promise<{ withdrawn: boolean; revoked: number }>;
}

export function consentAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'audit'>): ConsentAdministration {
  const { store, clock, audit } = ports;
  // By code units, whatever the database's collation: the order the page's cursor compares by.
  const byClient = async (userId: string) => (await store.consents.listForUser(userId)).sort((a, b) => (a.clientId < b.clientId ? -1 : 1));
  return {
    async list(userId) {
      const consents = await store.consents.listForUser(userId);
      const clients = await Promise.all(consents.map((c) => store.clients.get(c.clientId)));
      return consents.map((consent, i) => ({ consent, clientName: clients[i]?.name }));
    },
    // One user's consents are at most one per client: read whole, paged by client_id as keyset.
    async page(userId, { after, limit }) {
      const rows = (await byClient(userId)).filter((c) => after === undefined || c.clientId > after);
      return rows.slice(0, limit + 1);
    },
    find: (userId, clientId) => findConsent(store, userId, clientId),
    async withdraw(acting, userId, clientId) {
      if (!(await store.clients.get(clientId))) throw new IdentityError('not_found', `no client has the client_id ${JSON.stringify(clientId)}`);
      const result = await withdrawConsent(store, userId, clientId, clock.now());
      if (result.withdrawn || result.revoked > 0) audit.emit({ event: 'consent.withdrawn', userId, clientId, revoked: result.revoked, actor: acting.actor });
      return result;
    },
  };
}
