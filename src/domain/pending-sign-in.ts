/**
 * A sign-in half done (issue 24): the password was right, the user has a second factor, and the
 * factor has not been given yet. The browser holds only a random value whose SHA-256 is `idHash`
 * (as with an SSO session); the row says who proved what, for which request, until when. It
 * starts nothing: no session, no code. Taken once, by the second factor's success.
 */
export interface PendingSignIn {
  idHash: string;
  userId: string;
  /** The client the user is signing in to: the authorization request's, or the device's. */
  clientId: string;
  /**
   * What the sign-in answers, as a SHA-256: the authorization request's carried fields (login
   * page) or the device authorization's user code (device page). The second step must answer the
   * same one, so the pending sign-in serves no other request.
   */
  binding: string;
  /** The methods proved so far (RFC 8176 §2): `["pwd"]` after the password. */
  amr: string[];
  createdAt: number;
  /** After this (ms) the pending sign-in is gone: the password must be typed again. */
  expiresAt: number;
}
