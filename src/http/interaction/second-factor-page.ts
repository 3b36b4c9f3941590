import type { FastifyReply, FastifyRequest } from 'fastify';
import type { FactorKind } from '../../domain/factor.ts';
import type { HeldSignInCode } from '../../oauth/authorize/second-factor.ts';
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
 * Which field the page shows: the authenticator's code (numeric, `one-time-code` autofill), a
 * recovery code (letters and digits) or a code sent by e-mail (letters, with its "Send a code by
 * e-mail" form). The user switches with a submit button, so the page works without JavaScript;
 * the server tells which code it is by its shape either way.
 */
export type CodeMethod = 'totp' | 'recovery' | 'email';

/**
 * The field the page shows first: the authenticator's code, else the e-mail code's (whose code is
 * sent only when the user asks: docs/decisions.md AM96), else a recovery code.
 */
export function firstCodeMethod(kinds: readonly FactorKind[]): CodeMethod {
  if (kinds.includes('totp')) return 'totp';
  return kinds.includes('email_otp') ? 'email' : 'recovery';
}

/** The method the form asks for: the `switch` button's when it was pressed, else the form's own. */
export function codeMethodOf(fields: { method: string; switch: string }): { method: CodeMethod; switched: boolean } {
  if (fields.switch === 'recovery' || fields.switch === 'totp' || fields.switch === 'email') return { method: fields.switch, switched: true };
  return { method: fields.method === 'recovery' || fields.method === 'email' ? fields.method : 'totp', switched: false };
}

/** Whether the form is the "Send a code by e-mail" one (its `send` field). */
export function asksForEmailCode(send: string): boolean {
  return send === 'email';
}

/** The kinds a page offers, as its forms carry them back (the page is drawn again after a wrong code): only known kinds, in order. */
export function kindsOf(field: string): FactorKind[] {
  const known: readonly FactorKind[] = ['totp', 'recovery_codes', 'passkey', 'email_otp'];
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
  /** The masked address a code was just sent to (the message `emailCodeSent`'s `{address}`). */
  sentTo?: string;
}

/** The page's messages that are news, not errors: shown as the account pages' notices (`.notice`, role=status). */
const NOTICES: ReadonlySet<MessageKey> = new Set<MessageKey>(['emailCodeSent']);

/**
 * The second factor's page (issue 24), shared by the login page and the device page: one field,
 * labelled and described (its hint, and the error when there is one, through aria-describedby),
 * and a button that switches between the authenticator's code and a recovery code.
 */
export function sendSecondFactorPage(request: FastifyRequest, reply: FastifyReply, deps: HttpDeps, page: SecondFactorPage): FastifyReply {
  const t = messages(page.locale, deps.config.theme);
  const kinds = page.kinds ?? ['totp', 'recovery_codes'];
  const passkey = kinds.includes('passkey') && page.passkey !== undefined ? page.passkey : undefined;
  const codes = kinds.includes('totp') || kinds.includes('recovery_codes') || kinds.includes('email_otp');
  // E-mail codes: the send form while mail is on; without mail the page says so (AM97), never a silent drop.
  const email = kinds.includes('email_otp') ? (deps.mail === undefined ? 'off' : 'on') : undefined;
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
    email,
    hasTotp: kinds.includes('totp'),
    hasRecovery: kinds.includes('recovery_codes'),
    passkey:
      passkey === undefined
        ? undefined
        : { ...passkey, ceremony: 'authenticate', label: t.passkeyUse, errorText: t.passkeyCancelled, hidden: [...page.hidden, ['kinds', kinds.join(',')]], separator: codes ? t.passkeyOr : undefined, secondary: codes },
    scripts: passkey === undefined ? [] : passkeyScripts(deps.config),
    referrer: page.referrer,
    invalid: page.invalid === true,
    // What the page tells rather than warns of (a code is on its way) is a notice, announced politely (AM107).
    notice: page.message !== undefined && NOTICES.has(page.message),
    message:
      page.message === undefined
        ? undefined
        : t[page.message]
            .replace('{wait}', () => formatWait(page.locale, page.retryAfter ?? 0))
            .replace('{address}', () => page.sentTo ?? '')
            .replace('{minutes}', () => String(Math.round(deps.config.emailCodeLifetime / 60))),
  });
  return sendPage(reply, page.status ?? 200, html, { formActionSources: page.formActionSources ?? [], ...(passkey === undefined ? {} : PASSKEY_CSP) });
}

/** What the page shows again, with its other options as they were. */
type Shown = Pick<SecondFactorPage, 'method' | 'kinds' | 'status' | 'message' | 'retryAfter' | 'sentTo'>;

/**
 * The answer to "Send a code by e-mail" (login, device and account pages alike): the page again in
 * its e-mail mode saying where the code went (the address masked), or why none went — the hourly
 * budget spent (429 with Retry-After, RFC 6585 §4), mail not configured (409: the page says to
 * sign in another way, AM97) — or `expired()` when nothing is held any more.
 */
export function answerEmailCodeAsk(reply: FastifyReply, sent: HeldSignInCode, kinds: readonly FactorKind[], show: (shown: Shown) => FastifyReply | Promise<FastifyReply>, expired: () => FastifyReply | Promise<FastifyReply>): FastifyReply | Promise<FastifyReply> {
  switch (sent.type) {
    case 'sent':
      return show({ method: 'email', kinds, message: 'emailCodeSent', sentTo: sent.masked });
    case 'throttled':
      reply.header('retry-after', String(sent.retryAfter));
      return show({ method: 'email', kinds, status: 429, message: 'emailCodeThrottled', retryAfter: sent.retryAfter });
    case 'off':
      return show({ method: 'email', kinds, status: 409, message: 'emailCodeOff' });
    case 'none':
      return show({ method: firstCodeMethod(kinds), kinds, status: 400, message: 'emailCodeOff' });
    case 'expired':
      return expired();
  }
}
