import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FactorKind } from '../../domain/factor.ts';
import { ENDPOINT_PATHS } from '../../oauth/discovery.ts';
import type { HttpDeps } from '../deps.ts';
import { csrfToken } from './csrf.ts';
import { PASSKEY_CSP, passkeyScripts } from './passkey-page.ts';
import { formatWait, messages, type Locale, type MessageKey } from './i18n.ts';
import { renderView, sendPage } from './views.ts';

/** Where the login page's second step posts, beside the login form (login-route.ts). */
export function secondFactorPath(config: Pick<HttpDeps['config'], 'issuerPath'>): string {
  return `${config.issuerPath}${ENDPOINT_PATHS.authorization}/second-factor`;
}

/**
 * Which field the page shows: the authenticator's code (numeric, `one-time-code` autofill) or a
 * recovery code (letters and digits). The user switches with a submit button, so the page works
 * without JavaScript; the server tells which code it is by its shape either way.
 */
export type CodeMethod = 'totp' | 'recovery';

/** The field the page shows first: the authenticator's code, unless the user has only recovery codes. */
export function firstCodeMethod(kinds: readonly FactorKind[]): CodeMethod {
  return kinds.includes('totp') ? 'totp' : 'recovery';
}

/** The method the form asks for: the `switch` button's when it was pressed, else the form's own. */
export function codeMethodOf(fields: { method: string; switch: string }): { method: CodeMethod; switched: boolean } {
  if (fields.switch === 'recovery' || fields.switch === 'totp') return { method: fields.switch, switched: true };
  return { method: fields.method === 'recovery' ? 'recovery' : 'totp', switched: false };
}

/** The kinds a page offers, as its forms carry them back (the page is drawn again after a wrong code): only known kinds, in order. */
export function kindsOf(field: string): FactorKind[] {
  const known: readonly FactorKind[] = ['totp', 'recovery_codes', 'passkey'];
  const asked = field.split(',');
  const kinds = known.filter((kind) => asked.includes(kind));
  // A form without the field (an older page) asked for a code.
  return kinds.length === 0 ? ['totp', 'recovery_codes'] : kinds;
}

export interface SecondFactorPage {
  locale: Locale;
  /** The display value's layout (OIDC Core §3.1.2.1): the login page's; `page` on the device page. */
  display: string;
  clientName: string;
  /** The words before the client's name: the login page's or the device page's. */
  clientIntro: MessageKey;
  action: string;
  /** What the form carries back: the authorization request's fields, or the device's user code. */
  hidden: [string, string][];
  method: CodeMethod;
  status?: number;
  message?: MessageKey;
  retryAfter?: number;
  /** The code was refused: the field is marked invalid and described by the message (WCAG 3.3.1). */
  invalid?: boolean;
  formActionSources?: readonly string[];
  /**
   * The user's kinds of factor (the outcome's `kinds`, COMMON contract): the code field when they
   * hold 'totp' or 'recovery_codes', the "Use a passkey" button when they hold 'passkey' (with
   * `passkey`, where its ceremony posts). Absent: the code field only.
   */
  kinds?: readonly FactorKind[];
  passkey?: { action: string; options: string };
  /** The page's referrer policy when not the default `no-referrer`: the account page's `same-origin`, so its POSTs carry an Origin to check. */
  referrer?: 'same-origin';
}

/**
 * The second factor's page (issue 24), shared by the login page and the device page: one field,
 * labelled and described (its hint, and the error when there is one, through aria-describedby),
 * and a button that switches between the authenticator's code and a recovery code.
 */
export function sendSecondFactorPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, page: SecondFactorPage): FastifyReply {
  const t = messages(page.locale, deps.config.theme);
  const kinds = page.kinds ?? ['totp', 'recovery_codes'];
  const passkey = kinds.includes('passkey') && page.passkey !== undefined ? page.passkey : undefined;
  const codes = kinds.includes('totp') || kinds.includes('recovery_codes');
  const html = renderView('second-factor', {
    lang: page.locale,
    t,
    title: t.secondFactorTitle,
    display: page.display,
    clientName: page.clientName,
    clientIntro: t[page.clientIntro],
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    action: page.action,
    hidden: page.hidden,
    csrfToken: csrfToken(request, reply, deps),
    method: page.method,
    kinds: kinds.join(','),
    codes,
    passkey:
      passkey === undefined
        ? undefined
        : { ...passkey, ceremony: 'authenticate', label: t.passkeyUse, errorText: t.passkeyCancelled, hidden: [...page.hidden, ['kinds', kinds.join(',')]], separator: codes ? t.passkeyOr : undefined, secondary: codes },
    scripts: passkey === undefined ? [] : passkeyScripts(deps.config),
    referrer: page.referrer,
    invalid: page.invalid === true,
    message: page.message === undefined ? undefined : t[page.message].replace('{wait}', () => formatWait(page.locale, page.retryAfter ?? 0)),
  });
  return sendPage(reply, page.status ?? 200, html, { formActionSources: page.formActionSources ?? [], ...(passkey === undefined ? {} : PASSKEY_CSP) });
}
