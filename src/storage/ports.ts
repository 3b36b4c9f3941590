/**
 * The store as the core sees it: use cases with atomic primitives, no SQL. `app.ts` wires the
 * SQL implementation (`storage/sql`); the contract suite in test/contract runs it on every database.
 */
import type { Client } from '../domain/client.ts';
import type { Consent } from '../domain/consent.ts';
import type { EmailCode, EmailCodePurpose, Factor, PasskeyFactor, TotpFactor } from '../domain/factor.ts';
import type { DeviceApproval, DeviceAuthorization } from '../domain/device-authorization.ts';
import type { AuthorizationCode, CodeRefusal, Token } from '../domain/grant.ts';
import type { Group } from '../domain/group.ts';
import type { Organization } from '../domain/organization.ts';
import type { Policy, PolicyDocument } from '../domain/policy.ts';
import type { PendingSignIn } from '../domain/pending-sign-in.ts';
import type { NewOutboxMessage, OutboxChannel, OutboxMessage, OutboxStatus } from '../domain/outbox.ts';
import type { StoredWebhookEndpoint, WebhookEvents } from '../domain/webhook.ts';
import type { Invitation, InvitationStatus } from '../domain/invitation.ts';
import type { SsoSession } from '../domain/session.ts';
import type { SigningKey } from '../domain/signing-key.ts';
import type { SigningAlg } from '../protocol/constants.ts';
import type { Attributes, User, UserCredentials, UserProfile, UserStatus } from '../domain/user.ts';

// The errors the store throws live in the domain, so the front ends map them without importing the store.
export { ConflictError, MissingReferenceError, OrganizationInUseError, PolicyInUseError, StoreMissingError, TreeShapeError } from '../domain/errors.ts';

export interface ClientStore {
  insert(client: Client): Promise<void>;
  get(clientId: string): Promise<Client | undefined>;
  /**
   * The resource server that registered `uri` among its `resource_uris` (RFC 8707 §2), compared
   * exactly. insert and update keep the URIs in step with the client, in one unit of work: a URI
   * another client holds is a ConflictError, on every database and under concurrency (migration 014).
   */
  findByResourceUri(uri: string): Promise<Client | undefined>;
  /**
   * The resource servers that declared `values` among their `resource_scopes`, as value → client_id
   * (values no resource server declared are absent): one statement. insert and update keep the
   * values in step with the client, in one unit of work: a value another client holds is a
   * ConflictError, on every database and under concurrency (migration 019).
   */
  resourceScopeOwners(values: readonly string[]): Promise<Map<string, string>>;
  list(): Promise<Client[]>;
  /** Replaces the stored client; false when it does not exist. */
  update(client: Client): Promise<boolean>;
  /**
   * Attaches the policy `policyName` to the client only where the client has none: one
   * conditional write, so a policy an administrator attached meanwhile (on any instance) is never
   * overwritten. true when it was attached; false when the client does not exist or has a policy.
   * MissingReferenceError when no policy has that name.
   */
  attachPolicyIfNone(clientId: string, policyName: string, now: number): Promise<boolean>;
  delete(clientId: string): Promise<boolean>;
  /**
   * Inserts the client unless one with its client_id exists: one conditional write (never a read
   * before it), so concurrent callers (two `gatehouse admin bootstrap` runs) never fail or
   * duplicate. true when it was inserted. A resource URI another client holds is a ConflictError.
   */
  insertIfAbsent(client: Client): Promise<boolean>;
  /**
   * One keyset page for the management API: the clients whose client_id sorts after `after`, by
   * client_id, at most `limit` of them (callers ask for one more than they show); `q` keeps those
   * whose client_id or client_name contains it, case-insensitively (LIKE wildcards match literally).
   */
  page(query: PageQuery<string>): Promise<Client[]>;
}

export interface UserQuery {
  /** Attribute filters; `id`, `username`, `email`, `emailVerified` (`true` or `false`), `givenName`, `familyName`, `organizationId`, `status` and custom names. */
  filters?: Record<string, string>;
  /** true: values must match exactly; false: prefix match. */
  exactMatch?: boolean;
  organizationIds?: string[];
  /** 0 or undefined: no limit. */
  limit?: number;
}

export interface UserStore {
  insert(user: User, passwordHash: string | undefined): Promise<void>;
  get(id: string): Promise<User | undefined>;
  getByUsername(username: string): Promise<User | undefined>;
  /** The user without custom attributes: one indexed read, for the hot paths (claims, status checks). */
  getProfile(id: string): Promise<UserProfile | undefined>;
  /** For logins only: the user with its password hash. */
  getCredentials(username: string): Promise<UserCredentials | undefined>;
  /**
   * The matching users' profiles in username order, read from the users table alone: a listing
   * never loads custom attributes (a filter on one only tests it), so its memory does not grow
   * with what the users hold.
   */
  list(query?: UserQuery): Promise<UserProfile[]>;
  /** The matching users' ids in username order; one query that reads the id column only. */
  listIds(query?: UserQuery): Promise<string[]>;
  /** The usernames of those of `ids` that are users, by id: one query however many (a page of audit events names its people with it). */
  usernames(ids: readonly string[]): Promise<Map<string, string>>;
  update(user: User): Promise<boolean>;
  setPasswordHash(id: string, passwordHash: string, now: number): Promise<boolean>;
  /** Sets the password hash only while it is still `expected` (undefined: none), in ONE conditional UPDATE; false when it changed meanwhile or the user is gone. */
  replacePasswordHash(id: string, expected: string | undefined, passwordHash: string, now: number): Promise<boolean>;
  /**
   * Sets the user's address to `email` and marks it verified (a verification link followed,
   * src/oauth/account/email-verification.ts) only while the address is still `expected`
   * (undefined: none), in ONE conditional UPDATE; false when it changed meanwhile or the user is gone.
   */
  confirmEmail(id: string, expected: string | undefined, email: string, now: number): Promise<boolean>;
  /** Sets the status to `to` only while it is `from`, in ONE conditional UPDATE; false when it is not (an approval decided elsewhere meanwhile) or the user is gone. */
  changeStatus(id: string, from: UserStatus, to: UserStatus, now: number): Promise<boolean>;
  /** Deletes the user only while its status is `status`, in ONE conditional DELETE; false otherwise (a rejection of a registration approved meanwhile). */
  deleteWithStatus(id: string, status: UserStatus): Promise<boolean>;
  /** Records the language the user registered in (migration 035), for the mails of an administrator's decision on the registration. */
  setRegistrationLocale(id: string, locale: string): Promise<void>;
  /** The language the user registered in; undefined for an account made otherwise (or before migration 035). */
  registrationLocale(id: string): Promise<string | undefined>;
  delete(id: string): Promise<boolean>;
  /**
   * One page of users in username order (the case-insensitive key), after the key `after`: at
   * most `limit` profiles, which callers ask one more of than they show. `q` matches a substring
   * of the username, email or names, case-insensitively; the other members filter exactly.
   * Keyset paging: rows inserted meanwhile never shift a page (management API).
   */
  page(query: UserPageQuery): Promise<UserProfile[]>;
}

export interface OrganizationQuery {
  /** Attribute filters: built-in names and custom ones, as UserQuery's. */
  filters?: Record<string, string>;
  exactMatch?: boolean;
  /** 0 or undefined: no limit. */
  limit?: number;
}

/**
 * The organization tree. Race rule: an insert under a parent and an update run in one transaction
 * that first serialises with every other such write (PostgreSQL: a transaction-scoped advisory
 * lock; SQLite: BEGIN IMMEDIATE), then checks the tree and writes. So two concurrent moves (A under
 * B, B under A) can never both commit, and no write ever commits a cycle or a tree deeper than
 * MAX_ORGANIZATION_DEPTH, whichever instance makes it. The parent reference is a foreign key with
 * ON DELETE RESTRICT: an insert or move under a parent that is deleted at the same time fails
 * (MissingReferenceError), and a delete of an organization that gets a child at the same time
 * fails; neither leaves a dangling parent. For users and a delete, see `delete`.
 */
export interface OrganizationStore {
  /**
   * TreeShapeError when the parent is already MAX_ORGANIZATION_DEPTH levels deep (or is the new
   * organization itself); MissingReferenceError when the parent does not exist (also when it is
   * deleted concurrently).
   */
  insert(organization: Organization): Promise<void>;
  get(id: string): Promise<Organization | undefined>;
  list(query?: OrganizationQuery): Promise<Organization[]>;
  /** The matching organizations' ids in technical-name order; reads the id column only, never attributes. */
  listIds(query?: OrganizationQuery): Promise<string[]>;
  /**
   * The ids of `id` and of every organization below it, read in one bounded query (stored rows
   * that form a cycle cannot make it run on). TreeShapeError (`too_deep`) when something lies more
   * than MAX_ORGANIZATION_DEPTH levels below `id`, which only cyclic or hand-written rows can do.
   */
  subtreeIds(id: string): Promise<string[]>;
  /**
   * Replaces the stored organization; false when it does not exist. When the parent changes, the
   * new parent's ancestors are checked in the same serialised transaction: TreeShapeError
   * (`cycle`) for a move under itself or its own subtree, (`too_deep`) for a move that would make
   * the tree deeper than MAX_ORGANIZATION_DEPTH; nothing is changed then.
   */
  update(organization: Organization): Promise<boolean>;
  /**
   * Deletes an organization that holds nothing; false when it does not exist. MissingReferenceError
   * while it has sub-organizations, OrganizationInUseError while it has users; nothing is deleted
   * then. Race rule: the check for users and the delete are one transaction that locks the row
   * (PostgreSQL; SQLite: BEGIN IMMEDIATE), so a user added to it at the same time, on any instance,
   * either makes the delete fail or fails itself (MissingReferenceError); it is never left without
   * its organization.
   */
  delete(id: string): Promise<boolean>;
  /**
   * One page of organizations in (technical name, id) order after `after`, at most `limit`; `q`
   * matches a substring of the technical or friendly name, case-insensitively (management API).
   */
  page(query: PageQuery<OrganizationPageKey>): Promise<Organization[]>;
}

export interface GroupStore {
  insert(group: Group): Promise<void>;
  getByName(name: string): Promise<Group | undefined>;
  list(): Promise<Group[]>;
  /** false when the user was already a member. */
  addMember(groupId: string, userId: string): Promise<boolean>;
  removeMember(groupId: string, userId: string): Promise<boolean>;
  members(groupId: string): Promise<string[]>;
  groupsOf(userId: string): Promise<Group[]>;
  /** Deletes the group and its memberships in one statement; false when it did not exist. */
  delete(groupId: string): Promise<boolean>;
  isMember(userId: string, groupName: string): Promise<boolean>;
  /** One page of groups in name order (case-insensitive key) after `after`; `q`: a substring of the name. */
  page(query: PageQuery<string>): Promise<Group[]>;
  /** One page of a group's members' profiles in username order (case-insensitive key) after `after`. */
  memberPage(groupId: string, query: PageQuery<string>): Promise<UserProfile[]>;
  /** Inserts the group unless one of that name (case-insensitively) exists: one conditional write; true when inserted. */
  insertIfAbsent(group: Group): Promise<boolean>;
  /**
   * Marks the existing groups of these names (case-insensitively) as administrator groups
   * (`Group.administrator`) in one statement; the names of those that were not marked before.
   */
  markAdministrator(names: readonly string[]): Promise<string[]>;
  /** Clears the group's administrator mark; false when it had none (or no longer exists). */
  unmarkAdministrator(groupId: string): Promise<boolean>;
}

/**
 * What evaluating a policy for one user needs, read in ONE statement: the policy's row as stored
 * now (never a cached copy: another instance may have changed it), and the user's attributes,
 * group names and organization chain.
 */
export interface PolicySubject {
  /** The stored document (JSON text) and its version; undefined when no policy has that name. */
  policy: { version: number; document: string } | undefined;
  attributes: Attributes;
  /** The names of the user's groups. */
  groups: string[];
  /**
   * The user's organization first, then (when the read asked for its ancestors) its parent, up to
   * the root; empty: no organization.
   */
  organizations: { id: string; technicalName: string; friendlyName: string }[];
}

/**
 * Named authorization policies (src/domain/policy.ts). Race rules: a client refers to a policy by
 * a foreign key with ON DELETE RESTRICT (migration 012), so the database itself decides between a
 * delete and a client being attached at the same time, on any instance: either the delete fails
 * with PolicyInUseError or the attach fails with MissingReferenceError; no client is ever left
 * referring to a deleted policy. `update` raises the version in the same statement that writes
 * the document, so concurrent updates each get their own version and the last one wins whole.
 */
export interface PolicyStore {
  /** ConflictError when a policy of that name exists. */
  insert(policy: Policy): Promise<void>;
  get(name: string): Promise<Policy | undefined>;
  /** Every policy, by name. */
  list(): Promise<Policy[]>;
  /** Replaces the document and raises the version by one; the policy as stored, or undefined when none has that name. */
  update(document: PolicyDocument, now: number): Promise<Policy | undefined>;
  /** false when none has that name; PolicyInUseError (nothing deleted) while a client refers to it. */
  delete(name: string): Promise<boolean>;
  /** The client_ids of the clients that refer to the policy. */
  clientsUsing(name: string): Promise<string[]>;
  /**
   * The policy row and the user's facts it is evaluated on (PolicySubject), in one prepared
   * statement; the organization's ancestors only with `ancestors` (a walk up the tree, which only
   * an access rule with include_sub_organizations needs).
   */
  subject(policyName: string, userId: string, options?: { ancestors?: boolean }): Promise<PolicySubject>;
  /** One keyset page by name (as ClientStore.page); `q` searches the name. */
  page(query: PageQuery<string>): Promise<Policy[]>;
}

export interface SessionStore {
  insert(session: SsoSession): Promise<void>;
  /** The session if it exists and has not expired at `now`. */
  findLive(idHash: string, now: number): Promise<SsoSession | undefined>;
  /** The session if it has not expired at `now` and its user is `enabled`; one statement (single sign-on). */
  findUsable(idHash: string, now: number): Promise<SsoSession | undefined>;
  findLiveByIndex(sessionIndex: string, now: number): Promise<SsoSession | undefined>;
  /** Moves the inactivity deadline forward (never past the absolute one). */
  touch(idHash: string, expiresAt: number): Promise<void>;
  /** Ends the session; returns it when it existed. */
  end(idHash: string): Promise<SsoSession | undefined>;
  endAllOfUser(userId: string): Promise<string[]>;
  /** How many sessions are live at `now`, counting no further than `limit` (metrics). */
  countLive(now: number, limit: number): Promise<number>;
  /**
   * Cleanup: deletes up to `limit` sessions whose inactivity or absolute deadline passed before
   * `before`; how many it deleted. Idempotent: instances may run it at the same time.
   */
  deleteExpired(before: number, limit: number): Promise<number>;
  /**
   * Cleanup with expiry notices (GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY; decisions LO10): deletes
   * up to `limit` sessions expired before `before`, in one statement, and returns the ones this
   * statement deleted — so of two instances (or a logout) ending the same session, one gets it.
   */
  endExpired(before: number, limit: number): Promise<Pick<SsoSession, 'sessionIndex' | 'userId'>[]>;
  /**
   * One page of a user's sessions live at `now`, newest first: (createdAt, sessionIndex)
   * descending, after the key `after` (management API). Never exposes what the cookie holds.
   */
  pageOfUser(userId: string, now: number, query: PageQuery<SessionPageKey>): Promise<SsoSession[]>;
  /** Ends the session with this session_index only when it is `userId`'s; returns it when it was. */
  endOfUser(userId: string, sessionIndex: string): Promise<SsoSession | undefined>;
  /** Ends every session of `userId` but the one whose hash is `keepIdHash`, in one statement; returns those ended (a password change, docs/account.md). */
  endOthersOfUser(userId: string, keepIdHash: string): Promise<SsoSession[]>;
  /** Records the browser's User-Agent and the client address of a session just started (the account page's list; migration 033). */
  describe(idHash: string, device: { userAgent: string | undefined; ip: string | undefined }): Promise<void>;
}

/** `refusedFor` on a replay: the code was spent by a refused redemption (no token was issued from it). */
export type Redemption =
  /** `user`: the code's user as UserStore.getProfile reads it, read by the redeeming statement itself; absent when there is none. */
  | { outcome: 'redeemed'; code: AuthorizationCode; user?: UserProfile }
  | { outcome: 'replayed'; code: AuthorizationCode; refusedFor: CodeRefusal | undefined }
  | { outcome: 'unknown' };

/** Where a cleanup pass over the codes goes on: after this (expiresAt, codeHash). */
export interface CodeCursor {
  expiresAt: number;
  codeHash: string;
}

/**
 * One page of the codes' cleanup. Codes that expired before `unredeemedBefore` are looked at; a
 * never-redeemed one goes at once (a late redemption fails either way), a redeemed one only when
 * it also expired before `redeemedBefore` (<= `unredeemedBefore`) and no token of its family is
 * usable after `tokensLiveAfter`.
 */
export interface CodeCleanupPage {
  unredeemedBefore: number;
  redeemedBefore: number;
  tokensLiveAfter: number;
  after: CodeCursor | undefined;
  limit: number;
}

export interface CodeStore {
  insert(code: AuthorizationCode): Promise<void>;
  /**
   * Stores the code only if the SSO session `sessionIdHash` is live at `now` (as
   * SessionStore.findLive reads it), in one statement; whether it was stored. Run in the unit of
   * work that would have read the session first: the read is the INSERT's own (issue 27).
   */
  insertForLiveSession(code: AuthorizationCode, sessionIdHash: string, now: number): Promise<boolean>;
  /**
   * Marks the code consumed in one atomic step. Exactly one of any number of concurrent callers
   * gets `redeemed`; the rest, and every later caller, get `replayed`, and the code is marked
   * replayed before they return.
   */
  consumeOnce(codeHash: string, now: number): Promise<Redemption>;
  /**
   * Records why the redemption that consumed this code was refused, in the same unit of work, so
   * a later presentation is answered `replayed` with `refusedFor` set. The code stays consumed.
   */
  markRefused(codeHash: string, reason: CodeRefusal): Promise<void>;
  /**
   * Marks every unredeemed code of an SSO session consumed, so none can be redeemed after the
   * session ended (logout); a later attempt is refused like a replay. Returns how many.
   */
  consumeBySession(sessionIndex: string, now: number): Promise<number>;
  /** Marks every unredeemed code one client holds for one user consumed (a withdrawn consent); how many. */
  consumeByUserAndClient(userId: string, clientId: string, now: number): Promise<number>;
  /**
   * Cleanup, one page: looks at up to `limit` codes that expired before `unredeemedBefore`, in
   * (expiresAt, codeHash) order after `after`, and deletes those nothing needs any more: codes never
   * redeemed, and redeemed codes that expired before `redeemedBefore` none of whose tokens (the
   * family named by the code's hash) is still usable, i.e. unrevoked and without an expiry or
   * expiring after `tokensLiveAfter`. The conditions are checked again by the DELETE itself, so a
   * code redeemed meanwhile is never deleted as unredeemed.
   * A redeemed code is kept while its tokens live, so a replay can still revoke them. `next` is the
   * cursor of the next page, undefined after the last. Idempotent.
   */
  deleteSpent(page: CodeCleanupPage): Promise<{ deleted: number; next: CodeCursor | undefined }>;
}

/** A token with its user's profile and what its client's current row says about it. */
export interface TokenWithUser {
  token: Token;
  /** undefined when the user is gone. */
  user: UserProfile | undefined;
  clientActive: boolean;
  /** The client's `userinfo_signed_response_alg` (OIDC Core §5.3.2): UserInfo answers it a signed JWT. */
  clientUserinfoAlg: SigningAlg | undefined;
  /** The client's authorization policy (migration 012), read in the same statement; undefined: none. */
  clientPolicy: string | undefined;
  /**
   * For a client with a policy, the policy's row and the user's attributes, groups and own
   * organization (no ancestors), read in the same statement, as PolicyStore.subject reads them;
   * undefined for a client without one.
   */
  clientPolicySubject: PolicySubject | undefined;
}

export interface IntrospectionRead {
  /** undefined: no client has that client_id. */
  caller: Client | undefined;
  /** undefined: no token has that hash. */
  found: TokenWithUser | undefined;
  /**
   * The resource server (client_id) that declared each of the token's scope values that one
   * declared; undefined when the store could not read it with the token (then ask the clients).
   */
  scopeOwners: ReadonlyMap<string, string> | undefined;
}

export interface TokenStore {
  insert(token: Token): Promise<void>;
  /** Stores the tokens of one grant in one statement. */
  insertMany(tokens: Token[]): Promise<void>;
  /**
   * Gives the token stored under `fromHash` the key `toHash`, in whatever state it is now: a
   * revocation since it was stored stays. A JWT access token (RFC 9068) is stored in its grant's
   * unit of work under a placeholder and keyed by its own hash once signed, after the unit commits
   * (src/oauth/issue-tokens.ts; docs/decisions.md JA6). False when no token has `fromHash`.
   */
  rekey(fromHash: string, toHash: string): Promise<boolean>;
  /** The token whatever its state; callers check expiry, revocation and rotation. */
  find(tokenHash: string): Promise<Token | undefined>;
  /**
   * The token whatever its state, with its user's profile (undefined when the user is gone) and
   * whether its client is registered and active now, read in one statement: introspection,
   * userinfo and the refresh grant need all three. `clientActive` is the stored state at the
   * time of the read (no cache), so deactivating or deleting a client cuts its tokens off at once
   * on every instance.
   */
  findWithUser(tokenHash: string): Promise<TokenWithUser | undefined>;
  /**
   * Introspection's reads in one statement (RFC 7662 §2; issue 27): the asking client as
   * ClientStore.get reads it, the token as findWithUser reads it, and the resource servers that
   * declared the token's scope values, as ClientStore.resourceScopeOwners reads them.
   */
  introspectionRead(callerId: string, tokenHash: string): Promise<IntrospectionRead>;
  /**
   * Marks a live refresh token rotated in one atomic step; false when it was already rotated or
   * revoked (a concurrent or replayed use).
   */
  markRotated(tokenHash: string, now: number): Promise<boolean>;
  revoke(tokenHash: string, now: number): Promise<boolean>;
  /** Revokes every live token of a family (for a code's family: RFC 9700 §4.2.4, the spec's replay rule). */
  revokeFamily(familyId: string, now: number): Promise<number>;
  /** Revokes every live token issued in one SSO session of a user (logout). */
  revokeBySession(session: { userId: string; sessionIndex: string }, now: number): Promise<number>;
  /** Revokes every live token of a user, whatever session it came from (a disabled or deleted user). */
  revokeByUser(userId: string, now: number): Promise<number>;
  /** Revokes every live token one client holds for one user (a withdrawn consent); how many. */
  revokeByUserAndClient(userId: string, clientId: string, now: number): Promise<number>;
  /** Revokes every token of the user except those issued in the session `sessionIndex` (a password change keeps the session it was made in); how many. */
  revokeByUserExceptSession(userId: string, sessionIndex: string, now: number): Promise<number>;
  /**
   * The clients that hold a live token (not revoked, not expired) issued in each of `userId`'s
   * sessions, by session_index, client_ids sorted; a session without one is absent. Served by the
   * tokens' user index: one statement for a page of sessions (the management API's session list).
   */
  clientsOfSessions(userId: string, sessionIndexes: readonly string[], now: number): Promise<Map<string, string[]>>;
  /**
   * Cleanup: deletes up to `limit` tokens that expired before `expiredBefore` (whatever their
   * state: an expired refresh token is refused as expired before reuse detection looks at it), or
   * that never expire and were revoked before `revokedBefore`; how many it deleted. A token without
   * an expiry that is not revoked is never deleted. Idempotent.
   */
  deleteExpired(expiredBefore: number, revokedBefore: number, limit: number): Promise<number>;
}

export interface KeyStore {
  /** Every key that is active or still published, newest first. */
  list(now: number): Promise<SigningKey[]>;
  insert(key: SigningKey): Promise<void>;
  /**
   * Stores `key` as the first signing key of its algorithm unless an unretired key of that
   * algorithm exists; whether it was stored. Race rule: key changes (this and `rotate`) are
   * serialised on every database and across instances, so of instances starting at once on an
   * empty store exactly one stores its key of each algorithm.
   */
  insertFirst(key: SigningKey): Promise<boolean>;
  /**
   * Makes `key` the active key of its algorithm and retires the previous active ones of that
   * algorithm (kept published until `publishUntil`), in one transaction; other algorithms' keys
   * are untouched. Race rule: serialised with every other key change, so two rotations of one
   * algorithm at once leave exactly one unretired key of it, the later one's.
   */
  rotate(key: SigningKey, publishUntil: number): Promise<void>;
  /** Every key whose private JWK is stored in the clear, published or not, oldest first. */
  listUnsealed(): Promise<SigningKey[]>;
  /**
   * Replaces a key's clear private JWK by its sealed form in one conditional statement, only while
   * it is still in the clear: of instances sealing the same key at once, exactly one gets true and
   * the stored key is that one's; the others get false and change nothing.
   */
  seal(kid: string, sealedPrivateJwk: string): Promise<boolean>;
}

/** A counter of the throttle, as the statement that returned it left it. */
export interface ThrottleCounter {
  key: string;
  /** Failed attempts counted in the window. */
  failures: number;
  /** Attempts reserved (`ThrottleStore.reserve`) and still being verified; each counts as a failure meanwhile. */
  pending: number;
  /** When the last failure's attempt was reserved (or, without a reservation, when it failed). */
  lastFailureAt: number;
  /** When the latest attempt was reserved; 0: never. While `pending` > 0 the wait also runs from it. */
  reservedAt: number;
}

/**
 * One key of a reservation and what makes it refuse. A key waits once `failures + pending`
 * reaches `threshold`: 2^(n − threshold) seconds, up to the reservation's `maxDelay`, from the
 * later of its last failure and (while one is pending) its latest reservation — the arithmetic of
 * src/oauth/throttling/policy.ts `waitMs`, evaluated by the database.
 */
export interface ThrottleRule {
  key: string;
  threshold: number;
  /**
   * Another key of the same reservation. When set, this key's wait refuses only an attempt whose
   * `onlyWhenCounted` counter already counts a failure or an attempt in flight (a username waits
   * only for the addresses that have tried it); when unset, the wait always refuses.
   */
  onlyWhenCounted?: string;
}

/** `granted`: the counters as the reservation left them. Refused: the keys' counters, read after the refusal (only to size Retry-After). */
export interface ThrottleReservation {
  granted: boolean;
  counters: ThrottleCounter[];
}

/**
 * Counters shared by every instance (src/oauth/throttling). A counter lives until its
 * `expiresAt`; after that it counts as absent and the next attempt starts it again from zero.
 *
 * Race rules. Whatever the concurrency, on one instance or several on one database:
 * - `reserve` decides and counts in one step: of concurrent reservations, exactly as many are
 *   granted as the counters allow, each granted one is counted before the next is decided, and a
 *   refused one changes nothing — not even on the keys that would have allowed it (all keys or
 *   none). On PostgreSQL the reservation is one transaction that first takes an advisory lock per
 *   key, in one global order (so two reservations never wait on each other in a cycle), then
 *   decides and counts in one statement; on SQLite it is that one statement alone (SQLite runs
 *   one writing statement at a time, and the decision reads the counters as they were before the
 *   statement touched any of them).
 * - The other writes are single atomic statements that lock one row, or several in sorted key
 *   order, and never wait for an advisory lock: they cannot close a cycle with a reservation. They
 *   add nothing to what reservations counted (`failReservation` turns a pending attempt into a
 *   failure at the time it was reserved, keeping the count and the time it waits from; a release or
 *   a clear lowers the count), so a reservation deciding on the state just before one of them
 *   refuses no less than it would just after. The one exception is harmless: a failure whose
 *   counter a success cleared meanwhile starts it again. `recordFailure` is for keys never reserved.
 * - Never read counters with `get` to decide whether to verify a credential: that is the
 *   check-then-act race this interface exists to avoid (docs/security.md, "Concurrent guesses").
 */
export interface ThrottleStore {
  /** The live counters among `keys` at `now`, in any order; absent and expired keys are left out. For reports and tests. */
  get(keys: string[], now: number): Promise<ThrottleCounter[]>;
  /**
   * Reserves one attempt under every rule's key, unless a key waits at `now` (ThrottleRule): then
   * nothing is counted and no row is created. A granted reservation adds one pending attempt to
   * each key (a key absent or expired starts again from zero failures), sets `reservedAt` to
   * `now` and keeps the counters until at least `expiresAt`. Every reservation must end in
   * `failReservation` or `releaseReservation` (or `clear`); one never ended counts as a failure
   * until its counter expires.
   */
  reserve(rules: ThrottleRule[], maxDelay: number, now: number, expiresAt: number): Promise<ThrottleReservation>;
  /**
   * The reserved attempt (made at `reservedAt`) failed: one pending attempt becomes a failure under
   * each key, in one atomic upsert (a key cleared meanwhile starts again from one failure). Returns
   * the counters as this left them: exactly one call sees each count of `failures`.
   */
  failReservation(keys: string[], reservedAt: number, now: number, expiresAt: number): Promise<ThrottleCounter[]>;
  /** The reserved attempt succeeded (or was never checked): one pending attempt is taken away from each key; a counter left empty is deleted. */
  releaseReservation(keys: string[]): Promise<void>;
  /**
   * Counts one failure under each key in one atomic statement (an upsert), with no reservation
   * before it: for checks so cheap and so unguessable that they are always made (client secrets,
   * src/oauth/throttling/client-attempts.ts). Concurrent callers never lose a count and each sees
   * a distinct number. A key whose counter expired at `now` starts again from one. Every counter
   * is kept until `expiresAt`. Returns the counters as this failure left them.
   */
  recordFailure(keys: string[], now: number, expiresAt: number): Promise<ThrottleCounter[]>;
  /** Forgets the counters, pending attempts included (a success). One key at a time. */
  clear(keys: string[]): Promise<void>;
  /** Deletes up to `limit` counters expired at `now`; how many it deleted (for the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/** One counter of a rate limit and the most hits it may count in its window. */
export interface RateBudget {
  key: string;
  /** At least 1. */
  limit: number;
}

/**
 * Fixed-window hit counters shared by every instance (the rate limit of silent authorizations,
 * src/oauth/throttling/silent-authorizations.ts). They live in the throttle's table under their
 * own key scopes, so the throttle's cleanup deletes them once their window has passed.
 */
export interface RateLimitStore {
  /**
   * Takes one hit from each budget in ONE atomic statement, a conditional upsert: a counter with
   * room counts the hit, a counter whose window ended at `now` starts again at one with a window
   * ending at `windowEndsAt`, and a full counter is left as it is. Returns the keys that counted
   * the hit, with their counts; the caller is refused when any key is missing. However many
   * callers race on however many instances, no counter ever counts more than its limit in a
   * window. A call refused by a full counter is not counted by the others (on PostgreSQL, only as
   * far as the statement's snapshot shows: a call racing the one that fills a counter may still
   * be counted by the others, never past their limits).
   */
  take(budgets: RateBudget[], now: number, windowEndsAt: number): Promise<{ key: string; hits: number }[]>;
}

/**
 * The `jti`s of client assertions already accepted (RFC 7523 §3 item 7, OIDC Core §9: a JWT
 * client assertion is used once), shared by every instance. `key` is fixed-length (the SHA-256 of
 * the client_id and the jti, src/oauth/client-auth/jwt-assertion.ts).
 *
 * Race rule: `useOnce` decides and records in ONE atomic statement (an insert-if-absent on the
 * primary key): of any number of concurrent calls with one key, on one instance or several,
 * exactly one gets true. Never look a key up first and insert after.
 */
export interface AssertionStore {
  /**
   * Records `key` as used until `expiresAt` (the assertion's exp) and returns true, unless it is
   * already recorded and not expired at `now`: then false and nothing changes.
   */
  useOnce(key: string, expiresAt: number, now: number): Promise<boolean>;
  /** Deletes up to `limit` keys expired at `now`; how many it deleted (for the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/**
 * What one poll of the token endpoint found (RFC 8628 §3.4–3.5), as DeviceAuthorizationStore.poll
 * left it. `redeemed`: this poll turned the approval into `consumed` and is the only one that ever
 * will. `pending`: the authorization is still undecided and this poll was recorded; `tooFast` when
 * it came sooner than the interval after the previous one (the interval has then grown by 5 s).
 * `other`: the row as it is (denied, consumed, expired, or issued to another client): the caller
 * answers from it and nothing was changed.
 */
export type DevicePoll =
  | { outcome: 'redeemed'; authorization: DeviceAuthorization }
  | { outcome: 'pending'; authorization: DeviceAuthorization; tooFast: boolean }
  | { outcome: 'other'; authorization: DeviceAuthorization }
  | { outcome: 'unknown' };

/** The user's decision on the user-code page. */
export type DeviceDecision = { approve: DeviceApproval } | 'deny';

/**
 * Device authorizations (RFC 8628). Race rules: every state change is one conditional UPDATE whose
 * WHERE names the state it leaves, so whatever the concurrency, on any number of instances:
 * - `decide` moves a pending, unexpired authorization to approved or denied; of concurrent or
 *   repeated decisions exactly one changes it, the others get undefined. An authorization that
 *   expires at `now` can no longer be decided (approve racing expiry: the statement's own `now`
 *   decides, and an expired row is never approved).
 * - `poll` redeems an approved, unexpired authorization of that client in one UPDATE to
 *   `consumed`: of concurrent polls exactly one gets `redeemed`; the rest see it consumed. A poll
 *   of a pending one moves `last_polled_at` and, when it came too soon, the interval in the same
 *   UPDATE, computed from the row's previous values, so two concurrent polls cannot both pass as
 *   on time. Run it inside Store.transaction with the token insert so tokens exist exactly when
 *   the authorization is consumed.
 */
export interface DeviceAuthorizationStore {
  /** Stores a new authorization; false (nothing stored) when its user code is already taken. */
  insert(authorization: DeviceAuthorization): Promise<boolean>;
  /** The authorization with this normalised user code if it is pending and unexpired at `now`. */
  findPending(userCode: string, now: number): Promise<DeviceAuthorization | undefined>;
  /** Approves or denies a pending, unexpired authorization; the row as changed, or undefined when none was. */
  decide(userCode: string, decision: DeviceDecision, now: number): Promise<DeviceAuthorization | undefined>;
  /** One poll by `clientId` at `now` (see DevicePoll). */
  poll(deviceCodeHash: string, clientId: string, now: number): Promise<DevicePoll>;
  /** Cleanup: deletes up to `limit` authorizations that expired before `before`; how many. Idempotent. */
  deleteExpired(before: number, limit: number): Promise<number>;
}

/**
 * Users' consents to third-party clients (src/domain/consent.ts), one per user and client. Race
 * rule: `put` writes the whole scope set, so widening a consent is a read (`find`) and a `put` in
 * one Store.transaction (src/oauth/consents.ts, grantConsent): two grants of different values at
 * once then both survive, on every database and across instances. Never `put` a set read outside
 * the unit of work.
 */
export interface ConsentStore {
  find(userId: string, clientId: string): Promise<Consent | undefined>;
  /**
   * Stores the consent, replacing the scope set and `updatedAt` of an existing one (its
   * `grantedAt` is kept). MissingReferenceError when the user or the client does not exist.
   */
  put(consent: Consent): Promise<void>;
  /** The user's consents, by client_id. */
  listForUser(userId: string): Promise<Consent[]>;
  /** Deletes the consent; whether there was one. */
  delete(userId: string, clientId: string): Promise<boolean>;
}

/**
 * Users' second factors (src/domain/factor.ts, migration 022): TOTP factors and a user's one set
 * of recovery codes. Deleting the user deletes them all (foreign keys ON DELETE CASCADE).
 *
 * Race rules, on every database and across instances:
 * - `useTotpStep` is the replay check of RFC 6238 §5.2: one conditional UPDATE (… WHERE last_step
 *   IS NULL OR last_step < step). Of concurrent calls with the same or an earlier step exactly one
 *   gets true; a code is accepted once, whichever instance sees it. Never read `lastStep` to
 *   decide: that is check-then-act.
 * - `useRecoveryCode` is one conditional UPDATE (… WHERE used_at IS NULL): of concurrent uses of one
 *   code exactly one gets its factor.
 * - `replaceRecoveryCodes` deletes the user's set and inserts the new one in one transaction of its
 *   own that first serialises with the other replacements for the user (PostgreSQL: the user's
 *   row locked; SQLite: the write lock): two concurrent replacements leave one set, the later
 *   one's, never both or a mix. Call it on the store, not in a unit of work (there a concurrent
 *   replacement can end in a ConflictError: a user has at most one set, a unique index).
 * - `usePasskey` is the signature-counter check of WebAuthn L3 §6.1.1 and the "last used" in one
 *   conditional UPDATE (… WHERE sign_count < new, or both 0: docs/decisions.md SA60). Of
 *   concurrent uses with one counter value exactly one gets true; a counter that goes back (a
 *   cloned authenticator) is refused. Never read `signCount` to decide.
 * - `userHandle` makes the user's handle once: an INSERT that does nothing when the user has one,
 *   then a read; concurrent calls for one user all answer the same handle.
 * - `insertTotp`, `insertPasskey`, `delete` and `deleteAll` are single statements.
 */
export interface FactorStore {
  /** The user's factors, oldest first (no secrets). */
  list(userId: string): Promise<Factor[]>;
  /** The user's TOTP factors with what verifies their codes, oldest first. */
  totpFactors(userId: string): Promise<TotpFactor[]>;
  /** Stores a TOTP factor. MissingReferenceError when the user does not exist. */
  insertTotp(totp: TotpFactor): Promise<void>;
  /**
   * Accepts time step `step` of the TOTP factor once: records it (and `now` as last used) only if
   * no step at or after it was accepted. true: accepted; false: a replay (or no such factor).
   */
  useTotpStep(factorId: string, step: number, now: number): Promise<boolean>;
  /**
   * Replaces the user's recovery codes by `factor` (kind 'recovery_codes') with the codes whose
   * SHA-256 are `codeHashes`. MissingReferenceError when the user does not exist.
   */
  replaceRecoveryCodes(factor: Factor, codeHashes: readonly string[]): Promise<void>;
  /** Marks the user's unused recovery code of hash `codeHash` used at `now`: its factor's id, or undefined when there is none (unknown or used). */
  useRecoveryCode(userId: string, codeHash: string, now: number): Promise<string | undefined>;
  /** How many unused recovery codes the factor has left. */
  recoveryCodesLeft(factorId: string): Promise<number>;
  /** Deletes the user's factor (its codes with it); whether there was one. */
  delete(userId: string, factorId: string): Promise<boolean>;
  /** Deletes every factor of the user; how many. */
  deleteAll(userId: string): Promise<number>;
  /** Renames the user's factor (by user and id together); whether there was one. */
  rename(userId: string, factorId: string, name: string): Promise<boolean>;
  /** Every TOTP factor whose secret is stored in the clear (no key was set at enrolment: SA3), with that secret; for sealing them (SA100). */
  clearTotpSecrets(): Promise<{ factorId: string; secret: string }[]>;
  /**
   * Replaces the clear secret `clear` of the factor by its sealed form. One conditional UPDATE
   * (`… WHERE sealed = 0 AND secret = clear`): a factor sealed meanwhile, or re-imported, is left
   * alone. Whether it was sealed here.
   */
  sealTotpSecret(factorId: string, clear: string, sealed: string): Promise<boolean>;
  /** Stores a passkey. MissingReferenceError when the user does not exist; ConflictError when its credential ID is already registered (to anyone). */
  insertPasskey(passkey: PasskeyFactor): Promise<void>;
  /** The user's passkeys, oldest first. */
  passkeys(userId: string): Promise<PasskeyFactor[]>;
  /** The passkey of this credential ID, whoever's it is. */
  passkeyByCredentialId(credentialId: string): Promise<PasskeyFactor | undefined>;
  /**
   * Records a use of the passkey whose authenticator reported `signCount` (and the BS flag
   * `backedUp`) at `now`, only if the counter went forward (or is 0 and always was: SA60).
   * true: recorded; false: a counter that did not advance (or no such passkey).
   */
  usePasskey(factorId: string, signCount: number, backedUp: boolean, now: number): Promise<boolean>;
  /** The user's WebAuthn user handle, made from `candidate` if the user has none yet. MissingReferenceError when the user does not exist. */
  userHandle(userId: string, candidate: string): Promise<string>;
  /** The user whose handle this is. */
  userOfHandle(handle: string): Promise<string | undefined>;
  /**
   * Stores an e-mail factor (kind 'email_otp', with its `email`). MissingReferenceError when the
   * user does not exist; ConflictError when the user has an e-mail factor already (one per user).
   */
  insertEmailFactor(factor: Factor): Promise<void>;
  /** Records a use of the factor at `now` (its "last used"). */
  touch(factorId: string, now: number): Promise<void>;
}

/**
 * E-mail one-time codes (migration 030; src/oauth/factors/email-code.ts).
 *
 * Race rule: `take` decides and consumes in ONE conditional DELETE (… WHERE user, purpose, hash
 * match AND not expired … RETURNING): of concurrent takes of one code, on any number of
 * instances, exactly one gets the row. Never find a code first and delete it after.
 */
export interface EmailCodeStore {
  insert(code: EmailCode): Promise<void>;
  /** Deletes and returns the user's live code of `purpose` whose hash is `codeHash` at `now`; undefined: wrong, used or expired. */
  take(userId: string, purpose: EmailCodePurpose, codeHash: string, now: number): Promise<EmailCode | undefined>;
  /** Deletes every code of the user of `purpose` (a sign-in or enrolment done: its other codes are not needed); how many. */
  deleteOfUser(userId: string, purpose: EmailCodePurpose): Promise<number>;
  /** Deletes up to `limit` codes expired at `now`; how many (the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/** A WebAuthn ceremony's challenge, as the server keeps it while the browser asks the authenticator (docs/decisions.md SA64). */
export interface PasskeyChallenge {
  /** SHA-256 of the challenge (base64url as sent to the browser). */
  challengeHash: string;
  /** What ceremony it is for: 'register', 'sign_in' (username-less) or 'second_factor'. */
  purpose: string;
  /** What it answers: the account session, the authorization request or the held sign-in (hashed). */
  binding: string;
  /** The user the ceremony is for, when one is known beforehand. */
  userId: string | undefined;
  createdAt: number;
  expiresAt: number;
}

/**
 * Challenges of WebAuthn ceremonies (migration 024). Race rule: `take` is one conditional DELETE
 * of the live row of this hash, purpose and binding, returning it: a challenge serves at most one
 * ceremony, on any number of instances.
 */
export interface PasskeyChallengeStore {
  insert(challenge: PasskeyChallenge): Promise<void>;
  take(challengeHash: string, purpose: string, binding: string, now: number): Promise<PasskeyChallenge | undefined>;
  /** Deletes up to `limit` rows expired at `now`; how many (for the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/**
 * Sign-ins waiting for their second factor (src/domain/pending-sign-in.ts; docs/decisions.md SA20).
 *
 * Race rule: `take` decides and consumes in ONE conditional statement (a DELETE of the live row,
 * returning it): of any number of concurrent takes of one row, on one instance or several, exactly
 * one gets it, so one right password starts at most one session. `find` only reads (which user to
 * ask for a factor); nothing may be started on the strength of `find` without a successful `take`.
 */
export interface PendingSignInStore {
  insert(pending: PendingSignIn): Promise<void>;
  /** The pending sign-in if it exists and has not expired at `now`. */
  find(idHash: string, now: number): Promise<PendingSignIn | undefined>;
  /** Deletes and returns the pending sign-in if it exists and has not expired at `now`; else undefined and nothing changes. */
  take(idHash: string, now: number): Promise<PendingSignIn | undefined>;
  /** Deletes up to `limit` rows expired at `now`; how many it deleted (for the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/** One claim of due messages (OutboxStore.claim). */
export interface OutboxClaim {
  /** Who claims: unique per claim (instance id + a random part), so a mark made under an old lease can never pass for a new one. */
  owner: string;
  now: number;
  /** The lease lasts this long (ms): longer than a send can take, so a live sender never loses it mid-send. */
  leaseMs: number;
  /** At most this many messages. */
  limit: number;
  /** Only these channels (those this instance has a transport for). */
  channels: readonly OutboxChannel[];
  /** Only this message (`gatehouse mail test` delivering its own message). */
  id?: string | undefined;
}

/** What a failed attempt leaves: another try at `retryAt`, or dead (`retryAt` undefined). */
export interface OutboxFailure {
  now: number;
  error: string;
  retryAt: number | undefined;
  /** The receiver's HTTP status, when it answered (webhooks). */
  responseStatus?: number | undefined;
}

/** Where a page of the outbox (newest first) goes on. */
export interface OutboxPageKey {
  createdAt: number;
  id: string;
}

/**
 * The durable outbox (src/domain/outbox.ts, migration 027; docs/decisions.md AM1–AM30).
 *
 * Race rules:
 * - `enqueue` is one INSERT that does nothing when the dedupe key exists; run it inside the
 *   Store.transaction of the change that causes the message, so the message exists exactly when
 *   the change committed (a unit of work retried on PostgreSQL writes it once: same key).
 * - `claim` decides and leases in ONE conditional statement (PostgreSQL: an UPDATE of the rows a
 *   `SELECT … FOR UPDATE SKIP LOCKED` picked; SQLite: one UPDATE, under its single writer): a
 *   message is claimable when pending, due and not leased (no lease, or one that expired), so of
 *   any number of concurrent claims on any number of instances exactly one gets it, and a lease
 *   whose holder crashed lets another take over once it expires. Never call it inside a unit of
 *   work (on PostgreSQL its lock would be held to the unit's end). Each claim counts an attempt.
 *   Ordering (webhooks, decisions WH15): a message with an `orderingKey` is claimable only while
 *   no earlier pending message (by createdAt, then id) has the same key — the same statement
 *   checks it (NOT EXISTS). A claimed message stays pending until marked, so while one claimer
 *   sends it no other claimer, whatever its snapshot, can take a later one of its key; a dead
 *   message no longer holds the later ones back. The order is that of (createdAt, id) among the
 *   messages written so far: a message committed later with an earlier createdAt (another
 *   instance's batch) can be overtaken by one already claimed.
 * - `markDelivered` and `markFailed` are conditional on the lease still being the caller's
 *   (`owner`, and the message still pending): a sender whose lease was taken over changes nothing,
 *   and learns so (false).
 * - `redeliver` turns a dead message back into a pending one in one conditional UPDATE (only
 *   from dead), so two administrators redelivering at once queue it once.
 */
export interface OutboxStore {
  /** Writes the message unless one with its dedupe key exists; whether it was written. ConflictError when the id is taken. */
  enqueue(message: NewOutboxMessage): Promise<boolean>;
  /** `enqueue` for many in one statement (the webhooks of a batch of audit events); how many were written. */
  enqueueMany(messages: readonly NewOutboxMessage[]): Promise<number>;
  /** Leases up to `limit` due messages to `owner`, oldest due first, counting an attempt each; the messages as leased. */
  claim(claim: OutboxClaim): Promise<OutboxMessage[]>;
  /** Marks the leased message delivered at `now`; false (nothing changed) when `owner` no longer holds it. */
  markDelivered(id: string, owner: string, now: number, responseStatus?: number): Promise<boolean>;
  /** Records a failed attempt of the leased message: pending again at `retryAt`, or dead; false when `owner` no longer holds it. */
  markFailed(id: string, owner: string, failure: OutboxFailure): Promise<boolean>;
  /**
   * Makes a dead message (with `alsoDelivered`, a delivered one too: webhooks, WH19) pending again,
   * due at `now`, with its attempts reset and out of any order (its ordering key cleared: the
   * messages after it have gone on); the message as it now is, or undefined when it is not in such
   * a status (or unknown).
   */
  redeliver(id: string, now: number, options?: { alsoDelivered?: boolean }): Promise<OutboxMessage | undefined>;
  get(id: string): Promise<OutboxMessage | undefined>;
  /** At most `limit` messages, newest first by (createdAt, id), after `after`; only `status` when given. */
  page(query: { status?: OutboxStatus | undefined; endpointId?: string | undefined; after?: OutboxPageKey | undefined; limit: number }): Promise<OutboxMessage[]>;
  /** How many messages are in each status (the metrics' queue depth). */
  countByStatus(): Promise<Record<OutboxStatus, number>>;
  /**
   * The janitor's delete (src/oauth/cleanup.ts): at most `limit` messages delivered before
   * `deliveredBefore` or dead since before `deadBefore` (epoch ms); how many went. Pending ones are
   * never deleted.
   */
  deleteFinished(deliveredBefore: number, deadBefore: number, limit: number): Promise<number>;
}

/**
 * Webhook endpoints (migration 036; src/domain/webhook.ts; decisions WH1–WH30).
 *
 * Race rules: each change is one conditional statement. `rotateSecret` moves the current secret
 * to `previous_secret` in the UPDATE itself (`previous_secret = secret`), so two rotations at once
 * leave the later one's secret current and the earlier one's previous: no secret shown to an
 * administrator is lost unseen.
 */
export interface WebhookStore {
  insert(endpoint: StoredWebhookEndpoint): Promise<void>;
  get(id: string): Promise<StoredWebhookEndpoint | undefined>;
  /** Every endpoint, oldest first (at most WEBHOOK_LIST_LIMIT); only the enabled ones with `enabledOnly`. */
  list(options?: { enabledOnly?: boolean }): Promise<StoredWebhookEndpoint[]>;
  /** Changes the given fields; the endpoint as it now is, or undefined when there is none. */
  update(id: string, changes: { url?: string; description?: string; events?: WebhookEvents; enabled?: boolean }, now: number): Promise<StoredWebhookEndpoint | undefined>;
  /** Makes `secret` current and the current one previous until `previousUntil`; undefined when there is no such endpoint. */
  rotateSecret(id: string, secret: string, previousUntil: number, now: number): Promise<StoredWebhookEndpoint | undefined>;
  delete(id: string): Promise<boolean>;
}

/** The most endpoints `WebhookStore.list` returns: administrators register a handful. */
export const WEBHOOK_LIST_LIMIT = 1000;

/** The store as one unit of work sees it: every use case, all committed together or not at all. */
/**
 * A password reset link sent (issue 25 item 2, docs/password-reset.md): keyed by the SHA-256 of
 * its token, bound to its user and to the fingerprint of the password hash it replaces (AM42).
 */
export interface PasswordReset {
  tokenHash: string;
  userId: string;
  /** The fingerprint (a SHA-256, passwordFingerprint in src/oauth/account/password-reset.ts) of the user's password hash when the link was made; no password has one too. */
  passwordFingerprint: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * Reset links. Race rule: `take` decides and consumes in ONE conditional DELETE … RETURNING: of
 * any number of concurrent takes of one token, on any instances, exactly one gets the row.
 */
export interface PasswordResetStore {
  insert(reset: PasswordReset): Promise<void>;
  /** The live link of `tokenHash` at `now`, without consuming it (the page's GET: mail scanners prefetch links). */
  find(tokenHash: string, now: number): Promise<PasswordReset | undefined>;
  /** Deletes and returns the live link of `tokenHash` at `now`, or undefined (used, expired or unknown). */
  take(tokenHash: string, now: number): Promise<PasswordReset | undefined>;
  /** Deletes every link of a user (a reset done: the other links of the same password die with it anyway). */
  deleteOfUser(userId: string): Promise<number>;
  /** Deletes up to `limit` links expired at `now`; how many (the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/** A relying party that received tokens in an SSO session (Back-Channel Logout 1.0 §2.3; decisions LO3). */
export interface SessionClient {
  sessionIndex: string;
  clientId: string;
  /** The sid in the ID tokens the client received (src/oauth/sid.ts), which its logout token names. */
  sid: string;
}

/**
 * The relying parties of each SSO session that a logout must tell (migration 034). Race rules:
 * `record` writes only while the session exists (one conditional INSERT … SELECT), so a session
 * ended meanwhile gets no row; `takeOfSessions` deletes and returns in one statement, so of two
 * units of work ending one session only one queues its logout tokens.
 */
/**
 * The last attempt at a back-channel logout token for a client (decisions LO13): `delivered` (a
 * 2xx) or `failed` (any other answer, a timeout, an address refused), with the message's id (the
 * token's jti) and, when failed, what went wrong.
 */
export interface LogoutDelivery {
  clientId: string;
  status: 'delivered' | 'failed';
  attemptedAt: number;
  messageId: string;
  error: string | undefined;
}

/** Per-client outcomes of back-channel logout deliveries (migration 037, `logout_deliveries`). */
export interface LogoutDeliveryStore {
  /** Keeps `delivery` as the client's last, in one statement, unless a later attempt is already recorded. */
  record(delivery: LogoutDelivery): Promise<void>;
  get(clientId: string): Promise<LogoutDelivery | undefined>;
}

export interface SessionClientStore {
  /** Remembers that `clientId` received tokens in the live session `sessionIndex` (nothing when it is gone or already remembered). */
  record(entry: SessionClient, now: number): Promise<void>;
  /** Deletes and returns the rows of these sessions. */
  takeOfSessions(sessionIndexes: readonly string[]): Promise<SessionClient[]>;
  /** Moves the rows of session `from` to session `to` (a sign-in that replaced the session, LO4), keeping their sid; how many. */
  move(from: string, to: string): Promise<number>;
  /** Deletes up to `limit` rows whose session no longer exists; how many (the cleanup job). */
  deleteOrphans(limit: number): Promise<number>;
}

/**
 * A self-registration link mailed (issue 25 item 4, docs/registration.md): keyed by the SHA-256
 * of its token; what the form asked for, kept until the link is followed (AM62).
 */
export interface AccountRegistration {
  tokenHash: string;
  email: string;
  givenName: string | undefined;
  familyName: string | undefined;
  /** The language the asker's pages were in: the follow-up mails are in it too. */
  locale: string;
  /** The authorization request (a path under the issuer) the asker came from: the finished page links back to it. */
  returnTo: string | undefined;
  createdAt: number;
  expiresAt: number;
}

/**
 * Registration links. Race rule: `take` decides and consumes in ONE conditional DELETE …
 * RETURNING: of any number of concurrent takes of one token, on any instances, exactly one gets it.
 */
export interface AccountRegistrationStore {
  insert(registration: AccountRegistration): Promise<void>;
  /** The live link of `tokenHash` at `now`, without consuming it (the page's GET: mail scanners prefetch links). */
  find(tokenHash: string, now: number): Promise<AccountRegistration | undefined>;
  /** Deletes and returns the live link of `tokenHash` at `now`, or undefined (used, expired or unknown). */
  take(tokenHash: string, now: number): Promise<AccountRegistration | undefined>;
  /** Deletes up to `limit` links expired at `now`; how many (the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

/** Where a page of invitations continues: after this (createdAt, id), newest first. */
export interface InvitationPageKey {
  createdAt: number;
  id: string;
}

/**
 * Invitations (migration 032; docs/invitations.md). Race rules: at most one `pending` row per
 * address (`insert` throws ConflictError otherwise, decided by a unique index); `accept`,
 * `renew` and `revoke` are each ONE conditional UPDATE … RETURNING on a pending row, so of any
 * number of concurrent calls on one invitation exactly one changes it.
 */
export interface InvitationStore {
  /** ConflictError when a pending invitation to the same address (case-insensitively) exists. */
  insert(invitation: Invitation): Promise<void>;
  /** Stores as `expired` the pending invitations to `email` past their expiry at `now` (before inviting the address again); how many. */
  retireExpired(email: string, now: number): Promise<number>;
  get(id: string): Promise<Invitation | undefined>;
  /** The pending invitation whose link is `tokenHash`, live at `now`, without changing it (the page's GET). */
  findLive(tokenHash: string, now: number): Promise<Invitation | undefined>;
  /** Marks the live pending invitation of `tokenHash` accepted at `now` and returns it; undefined when none is (used, revoked, expired, unknown). */
  accept(tokenHash: string, now: number): Promise<Invitation | undefined>;
  /** Records the account an accepted invitation made. */
  recordUser(id: string, userId: string): Promise<void>;
  /** A new link (and expiry) for a pending invitation: the old link dies; undefined when it is not pending. */
  renew(id: string, change: { tokenHash: string; expiresAt: number; invitedBy: string }): Promise<Invitation | undefined>;
  /** Revokes a pending invitation at `now`; undefined when it is not pending. */
  revoke(id: string, now: number): Promise<Invitation | undefined>;
  /** At most `limit` invitations, newest first by (createdAt, id), after `after`; only those whose status at `now` is `status` when given. */
  page(query: { status?: InvitationStatus | undefined; now: number; after?: InvitationPageKey | undefined; limit: number }): Promise<Invitation[]>;
  /** Deletes up to `limit` invitations that ended (accepted, revoked, expired or past their expiry) before `before`; how many (the cleanup job). */
  deleteEnded(before: number, limit: number): Promise<number>;
}

/**
 * An e-mail verification link sent (issue 25 item 3, docs/email-verification.md): keyed by the
 * SHA-256 of its token, bound to its user, the address it verifies and the address the user had
 * when it was sent (AM52).
 */
export interface EmailVerification {
  tokenHash: string;
  userId: string;
  /** The address the link verifies: the user's own, or the new one of a change. */
  email: string;
  /** The user's address when the link was sent (undefined: none); the link works only while it is still that. */
  previousEmail: string | undefined;
  createdAt: number;
  expiresAt: number;
}

/**
 * Verification links. Race rule: `take` decides and consumes in ONE conditional DELETE …
 * RETURNING: of any number of concurrent takes of one token, on any instances, exactly one gets the row.
 */
export interface EmailVerificationStore {
  insert(verification: EmailVerification): Promise<void>;
  /** The live link of `tokenHash` at `now`, without consuming it (the page's GET: mail scanners prefetch links). */
  find(tokenHash: string, now: number): Promise<EmailVerification | undefined>;
  /** Deletes and returns the live link of `tokenHash` at `now`, or undefined (used, expired or unknown). */
  take(tokenHash: string, now: number): Promise<EmailVerification | undefined>;
  /** The user's live links at `now`, newest first (the profile page shows a pending change). */
  listOfUser(userId: string, now: number): Promise<EmailVerification[]>;
  /** Deletes every link of a user (the address verified or changed: the others are dead anyway). */
  deleteOfUser(userId: string): Promise<number>;
  /** Deletes up to `limit` links expired at `now`; how many (the cleanup job). */
  deleteExpired(now: number, limit: number): Promise<number>;
}

export interface StoreTransaction {
  clients: ClientStore;
  users: UserStore;
  organizations: OrganizationStore;
  groups: GroupStore;
  policies: PolicyStore;
  sessions: SessionStore;
  codes: CodeStore;
  tokens: TokenStore;
  keys: KeyStore;
  throttling: ThrottleStore;
  rateLimits: RateLimitStore;
  assertions: AssertionStore;
  deviceAuthorizations: DeviceAuthorizationStore;
  consents: ConsentStore;
  registrations: RegistrationStore;
  factors: FactorStore;
  pendingSignIns: PendingSignInStore;
  passkeyChallenges: PasskeyChallengeStore;
  outbox: OutboxStore;
  webhooks: WebhookStore;
  passwordResets: PasswordResetStore;
  emailVerifications: EmailVerificationStore;
  sessionClients: SessionClientStore;
  logoutDeliveries: LogoutDeliveryStore;
  emailCodes: EmailCodeStore;
  accountRegistrations: AccountRegistrationStore;
  invitations: InvitationStore;
}

export interface Store extends StoreTransaction {
  /**
   * Runs `work` as one unit of work: every change it makes through `tx` commits together, or none
   * does when it throws (the error is rethrown). Units of work that overlap behave as if they had
   * run one after the other, on every database and across instances: a unit that reads a state
   * and writes on the strength of it cannot be overtaken by another between the two.
   *
   * Race rule: the store may run `work` more than once (PostgreSQL answers a unit it cannot
   * serialise with a serialization failure, and it is retried from the start), so `work` must
   * have no effect outside the store — emit audit events, set cookies and answer only after it
   * returns — and must use `tx`, never the outer store, for everything it reads or writes. Keep
   * units short: no password hashing or signing inside; on SQLite a unit holds the write lock.
   */
  transaction<T>(work: (tx: StoreTransaction) => Promise<T>): Promise<T>;
  /** Resolves when the database answers; rejects otherwise. */
  ping(): Promise<void>;
  close(): Promise<void>;
  /**
   * Audit events kept for the management API (migration 015). Outside units of work on purpose:
   * events are written after the change they report has committed (the race rule above), by a
   * batching sink (src/observability/audit-store-sink.ts).
   */
  audit: AuditStore;
}

/** One stored audit event (src/observability/audit.ts, AuditEvent) as the store keeps it. */
export interface AuditRecord {
  /** Unique and time-ordered: a UUIDv7 of `at` (RFC 9562 §5.7), so (at, id) is a total order. */
  id: string;
  /** When the event happened, epoch ms (the injected clock's). */
  at: number;
  event: string;
  /** The user the event is about (`userId`). */
  userId?: string | undefined;
  /** The client the event is about (`clientId`). */
  clientId?: string | undefined;
  /** Who made an administrative change: the actor's `caller` (an admin's user id, or the CLI's OS account). */
  actorId?: string | undefined;
  /** The event's other fields, its `actor` among them; never a secret (fingerprints only). */
  data: Record<string, unknown>;
}

/** The position of a stored audit event in the newest-first order. */
export interface AuditKey {
  at: number;
  id: string;
}

export interface AuditQuery {
  /** Events at or after this time (epoch ms). */
  since?: number | undefined;
  /** Events before this time (epoch ms, exclusive). */
  until?: number | undefined;
  /** Exact event names; any of them matches. Empty or absent: every event. */
  types?: readonly string[] | undefined;
  /** Events about this user OR made by this acting administrator (`userId` or `actorId`). */
  userId?: string | undefined;
  /** Events about this client (`clientId`). */
  clientId?: string | undefined;
  /** Keyset: events strictly after this one in the newest-first order (older, or as old with a smaller id). */
  before?: AuditKey | undefined;
  limit: number;
}

export interface AuditStore {
  /** Stores the events in one statement (one multi-row insert): all of them or none. */
  insertMany(events: readonly AuditRecord[]): Promise<void>;
  /**
   * Stores the events and writes the outbox messages (the webhooks they cause, WH11) in one
   * transaction: both or neither. Only inserts, each message unless its dedupe key exists.
   */
  insertManyWithMessages(events: readonly AuditRecord[], messages: readonly NewOutboxMessage[]): Promise<void>;
  /** At most `limit` events matching every filter, newest first by (at, id) descending. */
  page(query: AuditQuery): Promise<AuditRecord[]>;
  /** Deletes at most `limit` of the oldest events older than `before` (epoch ms); how many went. */
  deleteOlderThan(before: number, limit: number): Promise<number>;
}

/**
 * An initial access token of dynamic client registration (RFC 7591 §3), as stored: its SHA-256
 * only (src/lib/hash.ts); the value is shown once, when it is minted.
 */
export interface InitialAccessToken {
  id: string;
  tokenHash: string;
  description: string | undefined;
  /** Who minted it: `cli:<os account>`, or the management API caller's user id or client_id. */
  createdBy: string;
  createdAt: number;
  expiresAt: number;
  /** Registrations it may still authorize. */
  usesLeft: number;
}

/**
 * Dynamic client registration (RFC 7591, RFC 7592; src/oauth/dynamic-registration.ts).
 *
 * Race rule: `useInitialAccessToken` decides and spends in ONE conditional UPDATE (a live token
 * with a use left loses one), run in the Store.transaction that inserts the client, so a
 * registration that fails spends nothing and, of any number of concurrent registrations with a
 * token of n uses, on any number of instances, at most n create a client. Never read a token's
 * `usesLeft` to decide: that is the check-then-act race this method exists to avoid.
 */
export interface RegistrationStore {
  /** ConflictError when the id or the hash is taken. */
  insertInitialAccessToken(token: InitialAccessToken): Promise<void>;
  /** The token with this hash, whatever its state; for the error message only, never to decide. */
  findInitialAccessToken(tokenHash: string): Promise<InitialAccessToken | undefined>;
  /**
   * Spends one use of the token with this hash if it expires after `now` and has a use left; the
   * token as the UPDATE left it, or undefined (nothing changed) when it is unknown, expired or used up.
   */
  useInitialAccessToken(tokenHash: string, now: number): Promise<InitialAccessToken | undefined>;
  /** Tokens by id ascending, after `after`, `limit` of them (callers ask limit + 1 to see whether more follow). */
  listInitialAccessTokens(query: { after?: string | undefined; limit: number }): Promise<InitialAccessToken[]>;
  /** Deletes (revokes) the token; whether it existed. */
  deleteInitialAccessToken(id: string): Promise<boolean>;
  /**
   * The janitor's delete (src/oauth/cleanup.ts): at most `limit` tokens that expired before
   * `before` (epoch ms), whatever uses they had left; how many went. An expired token authorizes
   * nothing (`useInitialAccessToken` checks the expiry in its own UPDATE), so deleting it changes
   * no answer but the list's.
   */
  deleteExpiredInitialAccessTokens(before: number, limit: number): Promise<number>;
  /** Stores the registration access token of a client (its hash); ConflictError when the client has one. */
  insertRegistrationToken(clientId: string, tokenHash: string, now: number): Promise<void>;
  /** The hash of the client's registration access token; undefined when it has none (not dynamically registered, or deleted). */
  registrationTokenHash(clientId: string): Promise<string | undefined>;
}

/**
 * A keyset page request (the management API's lists, src/http/manage-api/pagination.ts): the rows
 * after the sort key `after` (all from the start when absent), at most `limit`, optionally only
 * those matching the search text `q`. Never an offset: a page does not shift when rows are
 * inserted or deleted before it.
 */
export interface PageQuery<K> {
  after?: K | undefined;
  limit: number;
  q?: string | undefined;
}

/** The users' page: `after` is a username key (normalizeUsername); the filters are exact. */
export interface UserPageQuery extends PageQuery<string> {
  status?: UserStatus | undefined;
  /** Only the members of this group (its id). */
  groupId?: string | undefined;
  organizationId?: string | undefined;
}

/** Where a page of organizations goes on: technical names repeat across parents, so the id breaks ties. */
export interface OrganizationPageKey {
  technicalName: string;
  id: string;
}

/** Where a page of sessions (newest first) goes on. */
export interface SessionPageKey {
  createdAt: number;
  sessionIndex: string;
}
