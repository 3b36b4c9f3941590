/**
 * Listing the audit events kept in the store (GATEHOUSE_AUDIT_STORE) for the management API
 * (docs/management-api.md, "Audit events"): a page of them, newest first, with the current
 * usernames of the people it names, read for the whole page in one query (not one per event).
 */
import type { AuditKey, AuditQuery, AuditRecord, Store } from '../storage/ports.ts';
import type { AdministrationPorts } from './ports.ts';

export type { AuditKey, AuditRecord };

/** The `actor` of a stored event's data (src/observability/audit.ts, Actor). */
export interface StoredActor {
  via: string;
  caller?: string;
  clientId?: string;
  method?: string;
}

const actorOf = (record: AuditRecord) => (record.data as { actor?: StoredActor }).actor;

/** The user ids a page of events names: subjects, and callers other than the CLI's operating-system account. */
function userIdsOf(records: readonly AuditRecord[]): string[] {
  return records.flatMap((record) => {
    const caller = actorOf(record)?.via === 'cli' ? undefined : actorOf(record)?.caller;
    return [record.userId, caller].filter((id): id is string => id !== undefined);
  });
}

/**
 * Up to `query.limit + 1` events matching every filter (the one past `limit` says that a next page
 * exists), and the current username of each user id the first `limit` name, while that user exists.
 */
export async function pageOfAuditEvents(deps: { store: Pick<Store, 'audit' | 'users'> }, query: AuditQuery): Promise<{ events: AuditRecord[]; usernames: Map<string, string> }> {
  const events = await deps.store.audit.page({ ...query, limit: query.limit + 1 });
  const usernames = await deps.store.users.usernames(userIdsOf(events.slice(0, query.limit)));
  return { events, usernames };
}

export interface AuditEventAdministration {
  /** A page of the stored audit events, newest first, with the usernames they name (pageOfAuditEvents). */
  page(query: AuditQuery): Promise<{ events: AuditRecord[]; usernames: Map<string, string> }>;
}

export function auditEventAdministration(ports: Pick<AdministrationPorts, 'store'>): AuditEventAdministration {
  return { page: (query) => pageOfAuditEvents(ports, query) };
}
