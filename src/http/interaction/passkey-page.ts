/**
 * What a page with a passkey ceremony needs (issue 24): the paths of the login page's ceremonies
 * (passkey-routes.ts), the form the templates render (templates/passkey-form.eta), the two script
 * files, and the CSP sources that let them run and fetch the options: `'self'` only.
 */
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';

type PathConfig = Pick<HttpDeps['config'], 'issuerPath'>;

/** The username-less sign-in's form, and where its options come from. */
export function passkeySignInPaths(config: PathConfig): { action: string; options: string } {
  const base = `${config.issuerPath}${ENDPOINT_PATHS.authorization}/passkey`;
  return { action: base, options: `${base}/options` };
}

/** The second factor's page's passkey form, and where its options come from. */
export function passkeySecondFactorPaths(config: PathConfig): { action: string; options: string } {
  const base = `${config.issuerPath}${ENDPOINT_PATHS.authorization}/second-factor/passkey`;
  return { action: base, options: `${base}/options` };
}

/** A passkey form as templates/passkey-form.eta renders it; hidden (shown by passkey.js) until script runs. */
export interface PasskeyForm {
  action: string;
  options: string;
  ceremony: 'register' | 'authenticate';
  label: string;
  /** Shown when the browser or authenticator could not complete the ceremony (passkey.js). */
  errorText: string;
  /** What the form carries besides the CSRF token and the response: the authorization request's fields. */
  hidden: readonly (readonly [string, string])[];
  /** Start the browser's passkey autofill on the username field (conditional mediation). */
  conditional?: boolean;
  /** Words above the button ("or"), when it follows another way to sign in. */
  separator?: string;
  /** Ask for the new passkey's name (registration). */
  nameField?: boolean;
  secondary?: boolean;
}

/** The scripts of a page with a passkey form, in order: the library's bundle, then ours. */
export function passkeyScripts(config: PathConfig): string[] {
  return [`${config.issuerPath}/assets/webauthn.js`, `${config.issuerPath}/assets/passkey.js`];
}

/** The CSP of a page with a passkey form: its scripts and its options' fetch, from our origin only. */
export const PASSKEY_CSP = { scriptSources: ["'self'"], connectSources: ["'self'"] } as const;
