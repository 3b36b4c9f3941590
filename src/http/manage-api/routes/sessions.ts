/**
 * `/users/{id}/sessions`: a user's live SSO sessions (newest first) and ending one of them. A
 * session is named on the wire by its session_index, what ID tokens carry as `sid` (OIDC
 * Front-/Back-Channel Logout §3) — never by the cookie value or its hash, which would let whoever
 * reads the list (a reader too) sign in as the user.
 */
import type { SsoSession } from '../../../domain/session.ts';
import { sessionDeadline, type SessionPageKey } from '../../../oauth/sessions.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';
import { isoTime, pageLimit, pathUser, uuidSchema } from './identity-shared.ts';

export const sessionSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'user_id', 'created_at', 'expires_at', 'auth_time', 'amr'],
  properties: {
    id: { type: 'string', description: 'The session_index (`sid` in ID tokens).' },
    user_id: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: 'string', format: 'date-time', description: 'The earlier of the idle and the absolute deadline.' },
    auth_time: { type: 'string', format: 'date-time' },
    amr: { type: 'array', items: { type: 'string' } },
    acr: { type: ['string', 'null'] },
    clients: { type: 'array', items: { type: 'string' }, description: 'The clients holding a live token issued in this session (client_ids, sorted): what ending it cuts off.' },
  },
};

export function sessionView(session: SsoSession, clients: readonly string[] = []): Record<string, unknown> {
  return {
    id: session.sessionIndex,
    user_id: session.userId,
    created_at: isoTime(session.createdAt),
    expires_at: isoTime(sessionDeadline(session)),
    auth_time: isoTime(session.authTime),
    amr: session.amr,
    acr: session.acr ?? null,
    clients,
  };
}

/** The cursor's key `{c: created_at, i: session_index}`. */
function isSessionKey(key: unknown): key is { c: number; i: string } {
  const k = key as { c?: unknown; i?: unknown } | null;
  return typeof k === 'object' && k !== null && Number.isSafeInteger(k.c) && typeof k.i === 'string' && k.i.length <= 64;
}

export const sessionRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/users/:id/sessions',
    operationId: 'listUserSessions',
    summary: "List a user's live SSO sessions, newest first",
    tag: 'Sessions',
    access: 'read',
    params: { type: 'object', required: ['id'], properties: { id: uuidSchema } },
    querystring: listQuerySchema(undefined),
    responses: { 200: { description: 'A page of sessions.', schema: pageSchema(sessionSchema) } },
    async handle(call) {
      const user = await pathUser(call);
      const limit = pageLimit(call);
      const key = decodeCursor(call.query.cursor, isSessionKey);
      const after: SessionPageKey | undefined = key && { createdAt: key.c, sessionIndex: key.i };
      const { sessions: rows, clients } = await call.deps.admin.sessions.page(user.id, { after, limit });
      return { body: toPage(rows, limit, (s) => ({ c: s.createdAt, i: s.sessionIndex }), (s) => sessionView(s, clients.get(s.sessionIndex))) };
    },
  },
  {
    method: 'DELETE',
    path: '/users/:id/sessions/:sid',
    operationId: 'endUserSession',
    summary: "End one of a user's SSO sessions",
    description: 'Ends the session, spends its unredeemed authorization codes and revokes every token issued in it, in one unit of work (as a logout does). 404 when that user has no such session (one past its deadline but not yet cleaned up can still be ended: tokens issued in it may outlive it).',
    tag: 'Sessions',
    access: 'write',
    params: { type: 'object', required: ['id', 'sid'], properties: { id: uuidSchema, sid: { type: 'string', maxLength: 64 } } },
    responses: { 204: { description: 'The session ended.' } },
    async handle(call) {
      const user = await pathUser(call);
      const sid = call.params.sid ?? '';
      if (!(await call.deps.admin.sessions.end(call.acting, user.id, sid))) throw notFound(`user ${user.id} has no session ${JSON.stringify(sid.slice(0, 80))}`);
      return { status: 204 };
    },
  },
];
