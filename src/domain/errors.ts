/**
 * The refusals of the store (src/storage/ports.ts throws them) as errors of the domain: the use
 * cases and every front end tell them apart (a duplicate, a missing reference, an organization or a
 * policy still in use, a tree that would turn cyclic) without importing the store.
 */

/** A uniqueness rule of the store was broken (duplicate username, client_id, …). */
export class ConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConflictError';
  }
}

/** A referenced row does not exist (unknown organization, group, user…). */
export class MissingReferenceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MissingReferenceError';
  }
}

/**
 * A write would make the organization tree cyclic (`cycle`: an organization under itself or one of
 * its own sub-organizations) or deeper than MAX_ORGANIZATION_DEPTH (`too_deep`); or a read found
 * stored rows that already are (`too_deep`: a cycle cannot be told from a very deep tree).
 */
export class TreeShapeError extends Error {
  readonly reason: 'cycle' | 'too_deep';
  constructor(reason: 'cycle' | 'too_deep', message: string) {
    super(message);
    this.name = 'TreeShapeError';
    this.reason = reason;
  }
}

/**
 * Opening a store that does not exist yet, where creating one was not asked for: a missing SQLite
 * file, or a database without gatehouse's tables. The CLI's commands other than `migrate` refuse
 * to create a store silently (a mistyped path would otherwise give an empty store).
 */
export class StoreMissingError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreMissingError';
  }
}

/** An organization that still has users cannot be deleted. */
export class OrganizationInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OrganizationInUseError';
  }
}

/** A policy still attached to a client cannot be deleted. */
export class PolicyInUseError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PolicyInUseError';
  }
}

/**
 * A change that would lock every administrator out: deleting or deactivating the management API's
 * own client or the web console's (src/manage/management-clients.ts, PROTECTED_CLIENT_IDS;
 * docs/decisions.md MA5a). Refused whoever acts, in every front end.
 */
export class ProtectedClientError extends Error {
  readonly clientId: string;
  constructor(clientId: string, message: string) {
    super(message);
    this.name = 'ProtectedClientError';
    this.clientId = clientId;
  }
}
