/**
 * A device authorization (RFC 8628 §3.1–3.5): what the device authorization endpoint issued, and
 * what the user decided on the user-code page. The device code is stored only as its SHA-256; the
 * user code in its normalised form (8 characters of USER_CODE_ALPHABET, no dash), which is what
 * the page looks it up by.
 *
 * States: `pending` until the user approves or denies (or it expires); `approved` until one poll
 * redeems it for tokens, then `consumed`; `denied` for good. Each change is one conditional write
 * (src/storage/ports.ts, DeviceAuthorizationStore).
 */
export type DeviceAuthorizationStatus = 'pending' | 'approved' | 'denied' | 'consumed';

export interface DeviceAuthorization {
  deviceCodeHash: string;
  /** Normalised: 8 characters of USER_CODE_ALPHABET, upper case, no separator. */
  userCode: string;
  clientId: string;
  /** The granted scope, space-separated (the client's allowed values of what it asked for). */
  scope: string;
  status: DeviceAuthorizationStatus;
  createdAt: number;
  /** When the device code and user code stop being valid (ms); absolute, whatever the state. */
  expiresAt: number;
  /** The polling interval in seconds the client must keep (RFC 8628 §3.5: +5 on each slow_down). */
  interval: number;
  /** When the client last polled (ms); undefined before its first poll. */
  lastPolledAt: number | undefined;
  /** Set when the user approved: who, in which SSO session, and how they authenticated. */
  approval: DeviceApproval | undefined;
  /** When the user approved or denied. */
  decidedAt: number | undefined;
  /** When a poll redeemed the approval for tokens. */
  consumedAt: number | undefined;
}

export interface DeviceApproval {
  userId: string;
  sessionIndex: string;
  authTime: number;
  amr: string[];
  acr: string | undefined;
}
