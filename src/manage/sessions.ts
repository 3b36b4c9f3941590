/**
 * The use cases of a user's SSO sessions: list and end: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 *
 * Ending a session is the logout's unit of work (src/oauth/sessions.ts): the session, its
 * unredeemed codes and every token issued in it end together (RFC 9700 §4.14.2).
 */
import type { SsoSession } from '../domain/session.ts';
import { fingerprint } from '../observability/audit.ts';
import { endSessionOfUser, pageOfUserSessions, type SessionPageKey } from '../oauth/sessions.ts';
import type { Acting } from './acting.ts';
import type { AdministrationPorts } from './ports.ts';

export type { SessionPageKey };

export interface SessionAdministration {
  /**
   * Up to `page.limit + 1` of the user's live sessions, newest first (the one past `limit` says
   * that a next page exists), and the clients holding a live token issued in each of the first
   * `limit` (client_ids, sorted: what ending it would cut off).
   */
  page(userId: string, page: { after: SessionPageKey | undefined; limit: number }): Promise<{ sessions: SsoSession[]; clients: Map<string, string[]> }>;
  /**
   * Ends one of the user's sessions, named by its session_index, and revokes what was issued in
   * it; false when that user has no such session.
   */
  end(acting: Acting, userId: string, sessionIndex: string): Promise<boolean>;
}

export function sessionAdministration(ports: Pick<AdministrationPorts, 'store' | 'clock' | 'audit'>): SessionAdministration {
  return {
    page: (userId, page) => pageOfUserSessions(ports, userId, page),
    async end(acting, userId, sessionIndex) {
      const ended = await endSessionOfUser(ports, userId, sessionIndex);
      if (!ended) return false;
      // The session_index only as a fingerprint: it is what ID tokens carry as `sid`.
      ports.audit.emit({ event: 'session.ended', userId, session: fingerprint(ended.session.sessionIndex), revoked: ended.revoked, actor: acting.actor });
      return true;
    },
  };
}
