/**
 * A user's second factors (issue 24; docs/second-factors.md): what a user holds besides the
 * password. The secrets live only in the store's own records (TotpFactor, the recovery codes'
 * hashes); a `Factor` is what may be shown — to the user, an administrator, the login step.
 */
export type FactorKind = 'totp' | 'recovery_codes' | 'passkey' | 'email_otp';

export interface Factor {
  id: string;
  userId: string;
  kind: FactorKind;
  /** Chosen by the user or administrator ("phone", "imported"); for recovery codes, "Recovery codes". */
  name: string;
  /** When it was enrolled (ms). */
  createdAt: number;
  /** When a code of it was last accepted (ms); undefined: never. */
  lastUsedAt: number | undefined;
  /**
   * Passkeys only: whether the credential may be backed up, i.e. synced to other devices
   * (WebAuthn L3 §6.1, the BE flag, fixed at creation). Decides its amr: `swk` when true, `hwk`
   * when device-bound (docs/decisions.md SA63). Absent for other kinds.
   */
  backupEligible?: boolean;
  /**
   * E-mail codes only (kind 'email_otp'): the address its codes are sent to, fixed at enrolment
   * (the profile's address then, proved by a code; docs/decisions.md AM91). Absent for other kinds.
   */
  email?: string;
}

/** The purposes of e-mail codes (src/oauth/factors/email-code.ts): a code of one purpose is never accepted for another. */
export const EMAIL_CODE_PURPOSES = ['sign_in', 'enrol', 'verify_email'] as const;
export type EmailCodePurpose = (typeof EMAIL_CODE_PURPOSES)[number];

/**
 * A one-time code sent by e-mail, as stored: only its keyed hash (the code is in the mail alone),
 * bound to the user, the purpose, the address it went to and, for a sign-in, the factor.
 */
export interface EmailCode {
  id: string;
  userId: string;
  /** The e-mail factor a sign-in code is for; undefined for an enrolment's or a verification's. */
  factorId: string | undefined;
  purpose: EmailCodePurpose;
  address: string;
  codeHash: string;
  createdAt: number;
  expiresAt: number;
}

/** The HMAC hash of a TOTP factor (RFC 6238 §1.2: HMAC-SHA-1 by default, SHA-256 and SHA-512 allowed). */
export type TotpAlgorithm = 'SHA1' | 'SHA256' | 'SHA512';

/** The TOTP secret as stored: sealed under GATEHOUSE_KEY_ENCRYPTION_KEY, or in the clear (base32) when no key is set. */
export type StoredSecret = { form: 'sealed'; value: string } | { form: 'clear'; value: string };

/** A TOTP factor with what verifies its codes (RFC 6238): never leaves src/oauth/factors. */
export interface TotpFactor {
  factor: Factor;
  secret: StoredSecret;
  algorithm: TotpAlgorithm;
  /** 6 (the default), 7 or 8 (RFC 4226 §5.3). */
  digits: number;
  /** The time step X in seconds (RFC 6238 §4.1: 30 by default). */
  period: number;
  /** The last time step whose code was accepted (RFC 6238 §5.2: a code is accepted once); undefined: none yet. */
  lastStep: number | undefined;
}

/**
 * A passkey: a WebAuthn public key credential (WebAuthn L3 §6.1, §7.1) registered with user
 * verification; never leaves src/oauth/factors and the store. Binary values are base64url.
 */
export interface PasskeyFactor {
  factor: Factor & { kind: 'passkey'; backupEligible: boolean };
  /** The credential ID (WebAuthn L3 §4, "Credential ID"), base64url; unique across users. */
  credentialId: string;
  /** The credential public key, COSE_Key (RFC 9052 §7) as the authenticator gave it, base64url. */
  publicKey: string;
  /** The last signature counter accepted (WebAuthn L3 §6.1.1); 0 for authenticators that keep none. */
  signCount: number;
  /** The transports the browser reported (AuthenticatorTransport: usb, nfc, ble, internal, hybrid…): hints for allowCredentials. */
  transports: string[];
  /** The BS flag of the last use (WebAuthn L3 §6.1): whether the credential is backed up now. */
  backedUp: boolean;
  /** The authenticator's AAGUID as the attestation-less registration reports it (often all zeros). */
  aaguid: string;
}
