/**
 * The session check of the product we replace (`GET /uas/status`): a relying party asks whether
 * the SSO session behind a `session_index` is still alive, and may extend it. The answer says
 * nothing about the user, only whether the session exists; times are epoch milliseconds.
 */
import type { OAuthDeps } from './deps.ts';
import { isLookupKey } from './lookup-key.ts';
import type { RawParams } from './params.ts';
import { sessionDeadline, touchSession } from './sessions.ts';

export type SessionStatus =
  | { valid: false; issueInstant: number }
  | {
      valid: true;
      issueInstant: number;
      refresh: boolean;
      entityID: string;
      sessionIndex: string;
      sessionNotOnOrAfter: number;
      authnInstant: number;
    };

const SESSION_INDEX = /^_[0-9a-f]{40}$/;

/**
 * Valid only for a live session of a user who may still sign in, asked about by a known active
 * client (entityID is its client_id). `refresh=true` moves the inactivity deadline forward, as any
 * use of the session does, and the answer reports the new deadline.
 */
export async function sessionStatus(deps: OAuthDeps, raw: RawParams): Promise<SessionStatus> {
  const now = deps.clock.now();
  const invalid = { valid: false, issueInstant: now } as const;
  const entityId = single(raw.entityID);
  const sessionIndex = single(raw.sessionIndex);
  if (entityId === undefined || sessionIndex === undefined || !SESSION_INDEX.test(sessionIndex) || !isLookupKey(entityId)) return invalid;

  const client = await deps.store.clients.get(entityId);
  if (!client?.active) return invalid;
  let session = await deps.store.sessions.findLiveByIndex(sessionIndex, now);
  if (!session) return invalid;
  const user = await deps.store.users.getProfile(session.userId);
  if (user?.status !== 'enabled') return invalid;

  const refresh = single(raw.refresh) === 'true';
  if (refresh) session = await touchSession(deps, session);
  return {
    valid: true,
    issueInstant: now,
    refresh,
    entityID: entityId,
    sessionIndex: session.sessionIndex,
    sessionNotOnOrAfter: sessionDeadline(session),
    authnInstant: session.authTime,
  };
}

/** A repeated or empty parameter is no answer at all here: the check just says "not valid". */
function single(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}
