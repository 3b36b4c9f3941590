/**
 * `sid`, the session ID of OpenID Connect Front-Channel Logout 1.0 §3 and Back-Channel Logout 1.0
 * §2.4: "a Session of a User Agent or device for a logged-in End-User at an RP". gatehouse gives
 * each relying party its own value for one SSO session (decisions LO1): the SHA-256 of the
 * session's index and the client_id, base64url. It needs no storage — the logout token and the
 * front-channel iframe compute it again from the session and the client. It is not a secret: the
 * ID token's `session_index` (Ubisecure's claim) lets any RP of the session compute any other's,
 * which vouches for nothing beyond what that RP may already ask (LO1, LO2). Its syntax is a client identifier's (§3: VSCHAR),
 * which base64url is.
 */
import { createHash } from 'node:crypto';

/** The `sid` of the SSO session `sessionIndex` at the client `clientId`. */
export function sessionIdFor(sessionIndex: string, clientId: string): string {
  // NUL cannot occur in either (a session index is `_` and hex; a client_id is VSCHAR), so the pair is unambiguous.
  return createHash('sha256').update(`sid\0${sessionIndex}\0${clientId}`).digest('base64url');
}
