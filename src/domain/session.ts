/** A server-side SSO session; the browser holds only a random id whose hash is `idHash`. */
export interface SsoSession {
  idHash: string;
  /** `_` followed by 40 hex characters, as Ubisecure's `session_index`. */
  sessionIndex: string;
  userId: string;
  /** When the user authenticated (ms); OIDC `auth_time`. */
  authTime: number;
  amr: string[];
  acr: string | undefined;
  createdAt: number;
  /** Inactivity deadline (ms), moved forward on use. */
  expiresAt: number;
  /** Absolute deadline (ms), never moved. */
  maxExpiresAt: number;
  /** The browser's User-Agent at sign-in (at most 256 characters), if recorded (the account page's session list). */
  userAgent?: string | undefined;
  /** The client address at sign-in, if recorded. */
  ip?: string | undefined;
}
