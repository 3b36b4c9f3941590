/**
 * The janitor: deletes the rows nothing needs any more, so the tables stay the size of what is
 * live instead of growing without bound (research/peers.md §3.3: Hydra's tables grew to tens of GB,
 * its janitor missed rows and loaded millions of them in one SELECT).
 *
 * Every statement touches at most `batchSize` rows, and one pass at most `maxBatches` batches per
 * table, yielding to the event loop between them, so a pass never holds locks for long and never
 * reads a whole table. Deletes are idempotent and re-check their condition, so any number of
 * instances may run passes at the same time; the scheduler starts each at a random point of its
 * first interval to spread them out.
 *
 * What is kept, and why (also in docs/operations.md, "Cleanup"):
 * - Everything survives at least GRACE_MS past the moment it stopped mattering, so clocks that
 *   differ a little between instances, and requests in flight, never see a row vanish early.
 * - A session goes once its inactivity or absolute deadline has passed. With
 *   GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY (`logoutOnExpiry`), EXPIRY_NOTICE_GRACE_MS after it, and
 *   its relying parties are told in the same unit of work (decisions LO10, LO11).
 * - A code never redeemed goes UNREDEEMED_CODE_GRACE_MS after it expired (a late redemption fails
 *   either way): minutes, not the hour of the rest, so codes minted and abandoned in bulk (a
 *   signed-in browser repeating silent authorizations) do not pile up for an hour.
 * - A redeemed code stays while any token issued from it (by the code grant or refreshed from
 *   those) is usable, so a replay of the code can still revoke them (RFC 9700 §4.2.4, the spec's
 *   replay rule). With refresh tokens that never expire, that can be forever.
 * - A token with an expiry goes once expired, whether revoked, rotated or not: an expired refresh
 *   token is refused as expired before reuse detection looks at it, so a rotated one protects its
 *   family exactly until its own expiry.
 * - A token without an expiry (GATEHOUSE_REFRESH_TOKEN_TTL=0) goes only REVOKED_RETENTION_MS after
 *   it was revoked; one never revoked is never deleted.
 * - A throttling counter goes once expired (its window has passed).
 * - A device authorization (RFC 8628) goes GRACE_MS after it expired, whatever its state: its
 *   tokens live in the tokens table and do not need it, and a late poll is expired_token or
 *   invalid_grant either way.
 * - A stored audit event goes once older than GATEHOUSE_AUDIT_RETENTION (`auditRetentionMs`; 0 or
 *   absent keeps them), the oldest first (docs/decisions.md AU5).
 * - An initial access token of dynamic client registration (RFC 7591 §3) goes GRACE_MS after it
 *   expired, used up or not: it authorizes nothing then, and the hour keeps it in the console's
 *   list as "expired" for whoever wonders why a registration was refused (docs/decisions.md DR12).
 */
import { tellRelyingParties } from '../identity/logout-notices.ts';
import type { Clock } from '../lib/clock.ts';
import type { CodeCursor, Store } from '../storage/ports.ts';

/** How long past its last use any row is kept (clock skew between instances, requests in flight). */
export const GRACE_MS = 60 * 60_000;
/**
 * With expiry notices (LO11), how long past its deadline a session is ended and its relying parties
 * told: longer than the longest authorization code (GATEHOUSE_CODE_TTL ≤ 600 s), so a code minted
 * just before the deadline has been exchanged — and its relying party remembered — by then, plus
 * clock skew between instances; far less than GRACE_MS, so the applications hear of it soon.
 */
export const EXPIRY_NOTICE_GRACE_MS = 15 * 60_000;
/**
 * How long past its expiry a never-redeemed code is kept: enough for clocks that differ a little
 * between instances (a redemption on an instance whose clock is behind), far less than GRACE_MS.
 */
export const UNREDEEMED_CODE_GRACE_MS = 5 * 60_000;
/** How long a revoked token without an expiry is kept (a trail for whoever investigates). */
export const REVOKED_RETENTION_MS = 30 * 24 * 60 * 60_000;
export const DEFAULT_BATCH_SIZE = 1000;
/**
 * How long the outbox keeps a delivered message (its payload may hold a link that was secret):
 * a week, to answer "did it go out?"; a dead one a month, for an administrator to see and
 * redeliver (docs/decisions.md AM27).
 */
export const OUTBOX_DELIVERED_RETENTION_MS = 7 * 24 * 60 * 60_000;
export const OUTBOX_DEAD_RETENTION_MS = 30 * 24 * 60 * 60_000;
/** Batches per table in one pass: 100 × 1000 rows; whatever remains waits for the next pass. */
export const DEFAULT_MAX_BATCHES = 100;
/** Ended invitations stay listed for administrators this long (docs/invitations.md; item 7 of issue 25). */
export const INVITATION_RETENTION_MS = 30 * 24 * 60 * 60_000;

export interface CleanupDeps {
  store: Pick<Store, 'codes' | 'tokens' | 'sessions'> & Partial<Pick<Store, 'transaction' | 'throttling' | 'assertions' | 'deviceAuthorizations' | 'audit' | 'registrations' | 'pendingSignIns' | 'passkeyChallenges' | 'outbox' | 'passwordResets' | 'sessionClients' | 'emailCodes' | 'accountRegistrations' | 'invitations' | 'emailVerifications'>>;
  clock: Clock;
  /** How long stored audit events are kept (ms; GATEHOUSE_AUDIT_RETENTION); 0 or absent: for ever. */
  auditRetentionMs?: number;
  /**
   * GATEHOUSE_BACKCHANNEL_LOGOUT_ON_EXPIRY: expired sessions are ended with back-channel logout
   * tokens to their relying parties, in one unit of work per batch (needs `store.transaction`).
   */
  logoutOnExpiry?: boolean;
}

export interface CleanupOptions {
  batchSize?: number;
  maxBatches?: number;
  /** Asked between batches: true ends the pass there (a server shutting down). */
  stopping?: () => boolean;
}

/** Rows deleted by one pass, per table, and whether a table had more than one pass may take. */
export interface CleanupReport {
  sessions: number;
  codes: number;
  tokens: number;
  throttling: number;
  /** Client-assertion jtis whose assertion expired (RFC 7523 §3: kept only until exp). */
  assertions: number;
  deviceAuthorizations: number;
  /** Stored audit events older than the retention. */
  auditEvents: number;
  /** Initial access tokens of dynamic client registration that expired more than GRACE_MS ago. */
  initialAccessTokens: number;
  /** Sign-ins that waited for a second factor until they expired (docs/decisions.md SA20). */
  pendingSignIns: number;
  /** Challenges of passkey ceremonies never finished (docs/decisions.md SA64). */
  passkeyChallenges: number;
  /** Outbox messages delivered more than OUTBOX_DELIVERED_RETENTION_MS ago, or dead for OUTBOX_DEAD_RETENTION_MS (docs/decisions.md AM27). */
  outbox: number;
  /** Password reset links that expired unused (docs/password-reset.md). */
  passwordResets: number;
  /** Relying parties remembered for sessions that are gone (back-channel logout, decisions LO3). */
  sessionClients: number;
  /** E-mail one-time codes that expired unused (docs/second-factors.md, "E-mail codes"). */
  emailCodes: number;
  /** Self-registration links that expired unfollowed (docs/registration.md). */
  accountRegistrations: number;
  /** Invitations ended (accepted, revoked, expired) more than INVITATION_RETENTION_MS ago (docs/invitations.md). */
  invitations: number;
  /** E-mail verification links that expired unused (docs/email-verification.md). */
  emailVerifications: number;
  /** true when some table hit `maxBatches`: the next pass continues there. */
  more: boolean;
  ms: number;
}

/** One pass over every table; rows are judged against the clock's `now` at the start. */
export async function cleanUp(deps: CleanupDeps, options: CleanupOptions = {}): Promise<CleanupReport> {
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const maxBatches = options.maxBatches ?? DEFAULT_MAX_BATCHES;
  const stopping = options.stopping ?? (() => false);
  const started = Date.now();
  const now = deps.clock.now();
  const before = now - GRACE_MS;
  const { store } = deps;
  let more = false;

  /** Runs `batch` until it deletes less than a full batch, or `maxBatches` times. */
  const drain = async (batch: () => Promise<number>): Promise<number> => {
    let total = 0;
    for (let i = 0; i < maxBatches; i++) {
      if (stopping()) {
        more = true;
        return total;
      }
      const deleted = await batch();
      total += deleted;
      if (deleted < batchSize) return total;
      await yieldToEventLoop();
    }
    more = true;
    return total;
  };

  const sessions = deps.logoutOnExpiry ? await drain(() => endExpiredSessions(store, now - EXPIRY_NOTICE_GRACE_MS, now, batchSize)) : await drain(() => store.sessions.deleteExpired(before, batchSize));
  // Tokens before codes: a code whose last tokens just went can go in the same pass.
  const tokens = await drain(() => store.tokens.deleteExpired(before, now - REVOKED_RETENTION_MS, batchSize));

  let codes = 0;
  let cursor: CodeCursor | undefined;
  let pages = 0;
  do {
    if (stopping()) {
      more = true;
      break;
    }
    const page = await store.codes.deleteSpent({ unredeemedBefore: now - UNREDEEMED_CODE_GRACE_MS, redeemedBefore: before, tokensLiveAfter: before, after: cursor, limit: batchSize });
    codes += page.deleted;
    cursor = page.next;
    if (++pages >= maxBatches && cursor) more = true;
    if (cursor) await yieldToEventLoop();
  } while (cursor && pages < maxBatches);

  // Counters are judged at `now`: an expired counter already counts as absent (ThrottleStore).
  const throttling = store.throttling ? await drain(() => store.throttling!.deleteExpired(now, batchSize)) : 0;

  // A jti is needed only while its assertion could still be accepted: until its exp.
  const assertions = store.assertions ? await drain(() => store.assertions!.deleteExpired(now, batchSize)) : 0;
  const deviceAuthorizations = store.deviceAuthorizations ? await drain(() => store.deviceAuthorizations!.deleteExpired(before, batchSize)) : 0;

  const retentionMs = deps.auditRetentionMs ?? 0;
  const auditEvents = store.audit && retentionMs > 0 ? await drain(() => store.audit!.deleteOlderThan(now - retentionMs, batchSize)) : 0;

  const initialAccessTokens = store.registrations ? await drain(() => store.registrations!.deleteExpiredInitialAccessTokens(before, batchSize)) : 0;

  // A pending sign-in is worth nothing once expired (take refuses it): deleted at once.
  const pendingSignIns = store.pendingSignIns ? await drain(() => store.pendingSignIns!.deleteExpired(now, batchSize)) : 0;

  // Likewise a passkey ceremony's challenge (take refuses an expired one).
  const passkeyChallenges = store.passkeyChallenges ? await drain(() => store.passkeyChallenges!.deleteExpired(now, batchSize)) : 0;

  // Outbox messages delivered or dead long enough ago (AM27).
  const outbox = store.outbox ? await drain(() => store.outbox!.deleteFinished(now - OUTBOX_DELIVERED_RETENTION_MS, now - OUTBOX_DEAD_RETENTION_MS, batchSize)) : 0;

  // Expired reset links (take and find refuse them): deleted at once.
  const passwordResets = store.passwordResets ? await drain(() => store.passwordResets!.deleteExpired(now, batchSize)) : 0;

  // Sessions cleaned up above leave their relying parties' rows: nobody will end those sessions now.
  const sessionClients = store.sessionClients ? await drain(() => store.sessionClients!.deleteOrphans(batchSize)) : 0;

  // Expired e-mail codes (take refuses them): deleted at once.
  const emailCodes = store.emailCodes ? await drain(() => store.emailCodes!.deleteExpired(now, batchSize)) : 0;

  // Expired registration links: deleted at once, as the reset links.
  const accountRegistrations = store.accountRegistrations ? await drain(() => store.accountRegistrations!.deleteExpired(now, batchSize)) : 0;

  // Expired verification links (take and find refuse them): deleted at once.
  const emailVerifications = store.emailVerifications ? await drain(() => store.emailVerifications!.deleteExpired(now, batchSize)) : 0;

  // Ended invitations, once administrators have had a month to see them (docs/invitations.md).
  const invitations = store.invitations ? await drain(() => store.invitations!.deleteEnded(now - INVITATION_RETENTION_MS, batchSize)) : 0;

  return { sessions, codes, tokens, throttling, assertions, deviceAuthorizations, auditEvents, initialAccessTokens, pendingSignIns, passkeyChallenges, outbox, passwordResets, sessionClients, emailCodes, accountRegistrations, emailVerifications, invitations, more, ms: Date.now() - started };
}

/**
 * One batch of expired sessions ended as a logout ends one (LO11): deleted, their relying parties'
 * rows taken and a logout token queued for each, in one unit of work — a session is gone exactly
 * when its tokens will be sent. The DELETE … RETURNING of the sessions, then of their
 * session_clients rows, names only what this unit deleted: against a logout of the same session or
 * another instance's pass, one of them wins and tells the relying parties, once (and the outbox's
 * dedupe key, LO7, would make a second telling the same message). Idempotent: a batch run again
 * finds nothing.
 */
async function endExpiredSessions(store: CleanupDeps['store'], before: number, now: number, limit: number): Promise<number> {
  if (!store.transaction) throw new Error('logout on expiry needs a store with units of work');
  return store.transaction(async (tx) => {
    const ended = await tx.sessions.endExpired(before, limit);
    const byUser = new Map<string, string[]>();
    for (const session of ended) byUser.set(session.userId, [...(byUser.get(session.userId) ?? []), session.sessionIndex]);
    for (const [userId, sessionIndexes] of byUser) await tellRelyingParties(tx, userId, sessionIndexes, now);
    return ended.length;
  });
}

/** Every row one pass deleted, over all tables. */
export function deletedRows(report: CleanupReport): number {
  return report.sessions + report.codes + report.tokens + report.throttling + report.assertions + report.deviceAuthorizations + report.auditEvents + report.initialAccessTokens + report.pendingSignIns + report.passkeyChallenges + report.outbox + report.passwordResets + report.emailCodes + report.sessionClients + report.accountRegistrations + report.emailVerifications + report.invitations;
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** The subset of pino the scheduler logs through. */
export interface CleanupLog {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface CleanupSchedule {
  /** Stops the timer, and a pass in progress after its current batch; resolves once it has stopped. */
  stop(): Promise<void>;
}

/**
 * Runs `cleanUp` every `intervalMs`, the first time at a random point of the first interval (so
 * instances started together do not sweep together). A pass that fails (the store is unreachable)
 * is logged and the next one comes on schedule; nothing here can stop the process. The timer does
 * not keep the process alive.
 */
export function scheduleCleanup(deps: CleanupDeps, options: CleanupOptions & { intervalMs: number; log: CleanupLog; random?: () => number }): CleanupSchedule {
  const { intervalMs, log } = options;
  const random = options.random ?? Math.random;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = false;

  const arm = (delay: number) => {
    if (stopped) return;
    timer = setTimeout(run, delay);
    timer.unref();
  };
  const run = () => {
    running = cleanUp(deps, { ...options, stopping: () => stopped }).then(
      (report) => {
        const deleted = deletedRows(report);
        if (deleted > 0 || report.more) log.info({ cleanup: report }, `cleanup deleted ${deleted} expired row(s)`);
      },
      (error: unknown) => log.warn({ err: error }, 'cleanup failed; it will run again at the next interval'),
    );
    void running.finally(() => {
      running = undefined;
      arm(intervalMs);
    });
  };

  arm(Math.floor(random() * intervalMs));
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
