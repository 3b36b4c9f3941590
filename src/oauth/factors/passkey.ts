/**
 * Passkeys: WebAuthn public key credentials (W3C Web Authentication Level 3), checked by
 * @simplewebauthn/server. Every ceremony asks for user verification (`required`, SA62), so a
 * passkey is two factors at once (possession, and the PIN or biometric that unlocked it) and is
 * phishing-resistant (the browser signs over our origin). Credentials are discoverable
 * (`residentKey: 'required'`), so one can sign in without a username; attestation is `none`
 * (SA66): we do not restrict which authenticators users may have.
 *
 * The relying party is the issuer: its host is the RP ID and its origin the only origin expected
 * (SA65). Each ceremony's challenge is 32 random bytes kept server-side, by SHA-256, bound to the
 * ceremony's purpose and what it answers, for CHALLENGE_SECONDS, and taken once (SA64).
 */
import { generateAuthenticationOptions, generateRegistrationOptions, verifyAuthenticationResponse, verifyRegistrationResponse } from '@simplewebauthn/server';
import type { AuthenticationResponseJSON, PublicKeyCredentialCreationOptionsJSON, PublicKeyCredentialRequestOptionsJSON, RegistrationResponseJSON } from '@simplewebauthn/server';
import { isoBase64URL } from '@simplewebauthn/server/helpers';
import type { Factor, PasskeyFactor } from '../../domain/factor.ts';
import type { UserProfile } from '../../domain/user.ts';
import { hashSecret } from '../../lib/hash.ts';
import { ConflictError, MissingReferenceError } from '../../storage/ports.ts';
import type { OAuthDeps } from '../deps.ts';
import { FactorInputError, FactorUserMissingError } from './enrolment.ts';
import type { CeremonyMethod } from './method.ts';

export const passkeyMethod = {
  style: 'ceremony' as const,
  kind: 'passkey' as const,
  // RFC 8176 §2: "hwk", proof of possession of a hardware-secured key; "swk", of a
  // software-secured one. A backup-eligible (synced) passkey's key leaves the device it was made
  // on, so it is `swk`; a device-bound one is `hwk` (SA63).
  amrOf: (factor: Factor) => (factor.backupEligible === true ? ['swk'] : ['hwk']),
} satisfies CeremonyMethod;

/** COSE algorithms accepted (IANA COSE Algorithms): ES256, EdDSA, RS256 — what platform and roaming authenticators make. */
export const PASSKEY_ALGORITHMS = [-7, -8, -257] as const;

/** How long a ceremony may take (seconds): the browser's timeout, and the challenge's life. */
export const CHALLENGE_SECONDS = 300;

/**
 * What a challenge serves: enrolment on the account page, a username-less sign-in, the second
 * step of a password sign-in, or the passkey an invitation's account is made with (AM100).
 */
export type CeremonyPurpose = 'register' | 'sign_in' | 'second_factor' | 'invitation';

export const DEFAULT_PASSKEY_NAME = 'Passkey';

/** The store, the clock, randomness, the issuer (the relying party) and the audit log. */
export type PasskeyDeps = Pick<OAuthDeps, 'config' | 'store' | 'clock' | 'random' | 'audit'>;

/** The relying party of the issuer (SA65): its host (no port: WebAuthn L3 §5.1.2, an RP ID is a domain) and its origin. */
export function relyingParty(config: Pick<OAuthDeps['config'], 'issuer'>): { rpID: string; origin: string; name: string } {
  const url = new URL(config.issuer);
  return { rpID: url.hostname, origin: url.origin, name: url.host };
}

/** A fresh challenge, kept server-side by its SHA-256 for this purpose and binding; the value for the browser (base64url). */
async function newChallenge(deps: Pick<PasskeyDeps, 'store' | 'clock' | 'random'>, purpose: CeremonyPurpose, binding: string, userId: string | undefined): Promise<string> {
  const challenge = deps.random.token(32);
  await keepChallenge(deps, challenge, purpose, binding, userId);
  return challenge;
}

async function keepChallenge(deps: Pick<PasskeyDeps, 'store' | 'clock'>, challenge: string, purpose: CeremonyPurpose, binding: string, userId: string | undefined): Promise<void> {
  const now = deps.clock.now();
  await deps.store.passkeyChallenges.insert({ challengeHash: hashSecret(challenge), purpose, binding, userId, createdAt: now, expiresAt: now + CHALLENGE_SECONDS * 1000 });
}

/**
 * The challenge the browser signed over (clientDataJSON's `challenge`), taken from the store if
 * it was made for this purpose and binding and has not expired: undefined otherwise. Taken
 * before the signature is checked, so a challenge serves one try, right or wrong.
 */
async function takeChallenge(deps: Pick<PasskeyDeps, 'store' | 'clock'>, clientDataJSON: string, purpose: CeremonyPurpose, binding: string): Promise<{ challenge: string; userId: string | undefined } | undefined> {
  const challenge = clientChallenge(clientDataJSON);
  if (challenge === undefined) return undefined;
  const taken = await deps.store.passkeyChallenges.take(hashSecret(challenge), purpose, binding, deps.clock.now());
  return taken === undefined ? undefined : { challenge, userId: taken.userId };
}

/** clientDataJSON's `challenge`, if it has the shape of ours (32 bytes, base64url). */
function clientChallenge(clientDataJSON: string): string | undefined {
  let challenge: unknown;
  try {
    challenge = (JSON.parse(isoBase64URL.toUTF8String(clientDataJSON)) as { challenge?: unknown }).challenge;
  } catch {
    return undefined;
  }
  return typeof challenge === 'string' && /^[A-Za-z0-9_-]{43}$/.test(challenge) ? challenge : undefined;
}

/** The user's WebAuthn user handle (SA61): 32 random bytes made once, base64url; never the user id. */
export async function userHandleOf(deps: Pick<PasskeyDeps, 'store' | 'random'>, userId: string): Promise<string> {
  try {
    return await deps.store.factors.userHandle(userId, deps.random.token(32));
  } catch (error) {
    if (error instanceof MissingReferenceError) throw new FactorUserMissingError();
    throw error;
  }
}

/**
 * The options of a registration (WebAuthn L3 §5.4) for `user`, for the browser's
 * navigator.credentials.create(): a discoverable credential with user verification, no
 * attestation, one of PASSKEY_ALGORITHMS, none of the user's existing passkeys again.
 */
export async function startPasskeyRegistration(deps: PasskeyDeps, user: UserProfile, binding: string): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const handle = await userHandleOf(deps, user.id);
  const existing = await deps.store.factors.passkeys(user.id);
  const challenge = await newChallenge(deps, 'register', binding, user.id);
  return creationOptions(deps, { name: user.username, displayName: user.username, handle, challenge, exclude: existing });
}

/**
 * The options of a registration for an account not made yet (an invitation's, AM100): `draw`
 * makes, from the fresh challenge, the binding it answers and the user handle the account will
 * have; the challenge is kept under `purpose` and that binding, naming no user (there is none yet).
 */
export async function startNewAccountPasskeyRegistration(
  deps: PasskeyDeps,
  purpose: CeremonyPurpose,
  who: { name: string; displayName: string },
  draw: (challenge: string) => { binding: string; handle: string },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const challenge = deps.random.token(32);
  const { binding, handle } = draw(challenge);
  await keepChallenge(deps, challenge, purpose, binding, undefined);
  return creationOptions(deps, { ...who, handle, challenge, exclude: [] });
}

/** Registration options: a discoverable credential with user verification, no attestation, one of PASSKEY_ALGORITHMS, none of `exclude` again. */
function creationOptions(
  deps: Pick<PasskeyDeps, 'config'>,
  o: { name: string; displayName: string; handle: string; challenge: string; exclude: readonly PasskeyFactor[] },
): Promise<PublicKeyCredentialCreationOptionsJSON> {
  const rp = relyingParty(deps.config);
  return generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.rpID,
    userName: o.name,
    userDisplayName: o.displayName,
    userID: isoBase64URL.toBuffer(o.handle),
    challenge: isoBase64URL.toBuffer(o.challenge),
    timeout: CHALLENGE_SECONDS * 1000,
    attestationType: 'none',
    excludeCredentials: o.exclude.map((p) => ({ id: p.credentialId, transports: p.transports })),
    // Platform and roaming authenticators alike: no authenticatorAttachment.
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification: 'required' },
    supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
  });
}

export type PasskeyRegistration = { type: 'enrolled'; factor: Factor } | { type: 'refused' };

/**
 * Stores the passkey of a registration response if it answers a challenge made for this user and
 * binding, at our origin and RP ID, with user verification; `refused` otherwise (nothing stored).
 * A credential ID already registered (to anyone) is refused too (WebAuthn L3 §7.1 step 26).
 */
export async function finishPasskeyRegistration(deps: PasskeyDeps, userId: string, binding: string, input: { response: unknown; name?: string | undefined }): Promise<PasskeyRegistration> {
  const name = passkeyName(input.name);
  const passkey = await verifyPasskeyRegistration(deps, input.response, { purpose: 'register', binding, challengeUserId: userId, userId, name });
  if (passkey === undefined) return { type: 'refused' };
  try {
    await deps.store.factors.insertPasskey(passkey);
  } catch (error) {
    if (error instanceof ConflictError) return { type: 'refused' };
    if (error instanceof MissingReferenceError) throw new FactorUserMissingError();
    throw error;
  }
  deps.audit.emit({ event: 'factor.enrolled', userId, kind: 'passkey', factorId: passkey.factor.id, name });
  return { type: 'enrolled', factor: passkey.factor };
}

/** The challenge a registration response's client data carries (not yet checked against anything), or undefined. */
export function registrationChallenge(response: unknown): string | undefined {
  const parsed = registrationResponse(response);
  return parsed === undefined ? undefined : clientChallenge(parsed.response.clientDataJSON);
}

/** What a registration must answer, and whose passkey it makes. */
export interface ExpectedRegistration {
  purpose: CeremonyPurpose;
  binding: string;
  /** The user the challenge row names (undefined when the account does not exist yet: an invitation's). */
  challengeUserId: string | undefined;
  /** The user the passkey is for. */
  userId: string;
  name: string;
}

/**
 * The passkey a registration response makes, not yet stored, if it answers a live challenge of
 * `expected`'s purpose and binding (taken: one try), at our origin and RP ID, with user
 * verification; undefined otherwise. The caller stores it (FactorStore.insertPasskey), whose
 * unique credential ID refuses one registered before (WebAuthn L3 §7.1 step 26).
 */
export async function verifyPasskeyRegistration(deps: PasskeyDeps, input: unknown, expected: ExpectedRegistration): Promise<PasskeyFactor | undefined> {
  const response = registrationResponse(input);
  if (response === undefined) return undefined;
  const taken = await takeChallenge(deps, response.response.clientDataJSON, expected.purpose, expected.binding);
  if (taken === undefined || taken.userId !== expected.challengeUserId) return undefined;
  const rp = relyingParty(deps.config);
  let info;
  try {
    const verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: taken.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      requireUserVerification: true,
      supportedAlgorithmIDs: [...PASSKEY_ALGORITHMS],
    });
    if (!verified.verified) return undefined;
    info = verified.registrationInfo;
  } catch {
    // The library throws on every malformed or wrong response: a refusal, never a 5xx.
    return undefined;
  }
  const backupEligible = info.credentialDeviceType === 'multiDevice';
  return {
    factor: { id: deps.random.uuid(), userId: expected.userId, kind: 'passkey' as const, name: expected.name, createdAt: deps.clock.now(), lastUsedAt: undefined, backupEligible },
    credentialId: info.credential.id,
    publicKey: isoBase64URL.fromBuffer(info.credential.publicKey),
    signCount: info.credential.counter,
    transports: (response.response.transports ?? []).filter((t) => typeof t === 'string' && t.length <= 32).slice(0, 8),
    backedUp: info.credentialBackedUp,
    aaguid: info.aaguid,
  };
}

/**
 * The options of an authentication (WebAuthn L3 §5.5), with user verification. For `userId` (the
 * second step after a password) allowCredentials lists that user's passkeys; without one
 * (username-less) it is empty and the authenticator offers its discoverable credentials.
 */
export async function startPasskeyAssertion(deps: PasskeyDeps, purpose: Exclude<CeremonyPurpose, 'register'>, binding: string, userId?: string): Promise<PublicKeyCredentialRequestOptionsJSON> {
  const allow = userId === undefined ? [] : await deps.store.factors.passkeys(userId);
  const challenge = await newChallenge(deps, purpose, binding, userId);
  return generateAuthenticationOptions({
    rpID: relyingParty(deps.config).rpID,
    challenge: isoBase64URL.toBuffer(challenge),
    timeout: CHALLENGE_SECONDS * 1000,
    userVerification: 'required',
    allowCredentials: allow.map((p) => ({ id: p.credentialId, transports: p.transports })),
  });
}

/**
 * `ok`: the assertion is right and recorded (its counter advanced); `passkey` is the credential
 * used, `amr` what it adds before `mfa`. `refused`: anything else — no live challenge of this
 * purpose and binding, an unknown credential, another user's, a wrong signature, origin or RP ID,
 * no user verification, a counter that did not advance, a malformed response.
 */
export type PasskeyAssertion = { type: 'ok'; passkey: PasskeyFactor; amr: readonly string[] } | { type: 'refused'; /** The owner of the credential tried, when it is known (for the audit). */ userId?: string };

/**
 * Checks an authentication response. With `userId` (a second factor), the credential must be that
 * user's (and the challenge made for them); without (username-less), the response's user handle
 * must be the credential's owner's (WebAuthn L3 §7.2 step 6).
 */
export async function verifyPasskeyAssertion(deps: PasskeyDeps, purpose: Exclude<CeremonyPurpose, 'register'>, binding: string, input: { response: unknown; userId?: string }): Promise<PasskeyAssertion> {
  const response = authenticationResponse(input.response);
  if (response === undefined) return { type: 'refused' };
  // The credential first (a read), so that a refusal can say whose credential was tried (the audit).
  const passkey = await deps.store.factors.passkeyByCredentialId(response.id);
  const owner = passkey?.factor.userId;
  const refused = { type: 'refused' as const, ...(owner === undefined ? {} : { userId: owner }) };
  const taken = await takeChallenge(deps, response.response.clientDataJSON, purpose, binding);
  if (taken === undefined || taken.userId !== input.userId || passkey === undefined || owner === undefined) return refused;
  if (input.userId !== undefined && owner !== input.userId) return { type: 'refused' };
  if (input.userId === undefined && response.response.userHandle !== (await userHandleOf(deps, owner))) return refused;
  const rp = relyingParty(deps.config);
  let info;
  try {
    const verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: taken.challenge,
      expectedOrigin: rp.origin,
      expectedRPID: rp.rpID,
      credential: { id: passkey.credentialId, publicKey: isoBase64URL.toBuffer(passkey.publicKey), counter: passkey.signCount, transports: passkey.transports },
      requireUserVerification: true,
    });
    if (!verified.verified) return refused;
    info = verified.authenticationInfo;
  } catch {
    return refused;
  }
  // The counter rule again, now atomically, on every instance (FactorStore.usePasskey, SA60).
  if (!(await deps.store.factors.usePasskey(passkey.factor.id, info.newCounter, info.credentialBackedUp, deps.clock.now()))) return refused;
  return { type: 'ok', passkey, amr: passkeyMethod.amrOf(passkey.factor) };
}

/** At most this many characters of JSON in a response (a registration with a large RSA key and extensions is well under). */
export const MAX_RESPONSE_CHARS = 16_384;

const B64URL = /^[A-Za-z0-9_-]*$/;

function isB64url(value: unknown, max = MAX_RESPONSE_CHARS): value is string {
  return typeof value === 'string' && value.length > 0 && value.length <= max && B64URL.test(value);
}

/** The JSON text a form carried, parsed, if it is an object. */
export function parseResponseField(text: string): unknown {
  if (text.length === 0 || text.length > MAX_RESPONSE_CHARS) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The shape of a RegistrationResponseJSON (WebAuthn L3 §5.1.8), checked before the library sees it. */
function registrationResponse(value: unknown): RegistrationResponseJSON | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const r = v.response as Record<string, unknown> | undefined;
  if (v.type !== 'public-key' || !isB64url(v.id, 1024) || v.rawId !== v.id || typeof r !== 'object' || r === null) return undefined;
  if (!isB64url(r.clientDataJSON) || !isB64url(r.attestationObject)) return undefined;
  if (r.transports !== undefined && !Array.isArray(r.transports)) return undefined;
  return { id: v.id, rawId: v.id, type: 'public-key', clientExtensionResults: {}, response: { clientDataJSON: r.clientDataJSON, attestationObject: r.attestationObject, transports: (r.transports as RegistrationResponseJSON['response']['transports']) ?? [] } };
}

/** The shape of an AuthenticationResponseJSON (WebAuthn L3 §5.1.8). */
function authenticationResponse(value: unknown): AuthenticationResponseJSON | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const r = v.response as Record<string, unknown> | undefined;
  if (v.type !== 'public-key' || !isB64url(v.id, 1024) || v.rawId !== v.id || typeof r !== 'object' || r === null) return undefined;
  if (!isB64url(r.clientDataJSON) || !isB64url(r.authenticatorData) || !isB64url(r.signature)) return undefined;
  if (r.userHandle !== undefined && r.userHandle !== null && !isB64url(r.userHandle, 128)) return undefined;
  const userHandle = typeof r.userHandle === 'string' ? r.userHandle : undefined;
  return {
    id: v.id,
    rawId: v.id,
    type: 'public-key',
    clientExtensionResults: {},
    response: { clientDataJSON: r.clientDataJSON, authenticatorData: r.authenticatorData, signature: r.signature, ...(userHandle === undefined ? {} : { userHandle }) },
  };
}

const MAX_NAME = 64;

function passkeyName(name: string | undefined): string {
  const trimmed = (name ?? '').trim();
  if (trimmed === '') return DEFAULT_PASSKEY_NAME;
  // eslint-disable-next-line no-control-regex
  if (trimmed.length > MAX_NAME || /[\u0000-\u001f\u007f]/.test(trimmed)) throw new FactorInputError('name', `the name must be at most ${MAX_NAME} characters, without control characters`);
  return trimmed;
}
