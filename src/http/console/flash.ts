/**
 * One message for the next console page shown (docs/console.md, "Refusals and expired sessions";
 * docs/decisions.md CO10), kept in the short-lived `flash` cookie (cookies.ts):
 *
 * - `refused`: the management API refused a change (409 "the last administrator", "policy in use",
 *   "protected client"; 400 of a form-less action): the browser goes back to the page the form was
 *   on (Post/Redirect/Get), which shows the API's detail as an alert;
 * - `lost`: a form was posted without a live session, so nothing was done; the sign-in that follows
 *   brings the user back, and the page then says the change must be made again.
 *
 * The cookie is only ever text shown escaped, so a forged one can at worst show its owner a
 * message of their own making.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { clearConsoleCookie, readConsoleCookie, setConsoleCookie } from './cookies.ts';

export type Flash = { kind: 'lost' } | { kind: 'refused'; detail: string };

/** Longest detail kept: a problem's detail is a sentence; the cookie must stay well under 4 KiB. */
const MAX_DETAIL = 500;

type CookieConfig = Pick<Config, 'secureCookies'>;

export function setFlash(reply: FastifyReply, config: CookieConfig, flash: Flash): void {
  const value = flash.kind === 'lost' ? { kind: 'lost' } : { kind: 'refused', detail: flash.detail.slice(0, MAX_DETAIL) };
  setConsoleCookie(reply, config, 'flash', Buffer.from(JSON.stringify(value), 'utf8').toString('base64url'));
}

/** The flash this request carries, cleared so it is shown once; undefined when none or malformed. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply, config: CookieConfig): Flash | undefined {
  const cookie = readConsoleCookie(request, config, 'flash');
  if (cookie === undefined) return undefined;
  clearConsoleCookie(reply, config, 'flash');
  if (cookie.length > 2048) return undefined;
  try {
    const value = JSON.parse(Buffer.from(cookie, 'base64url').toString('utf8')) as { kind?: unknown; detail?: unknown };
    if (value.kind === 'lost') return { kind: 'lost' };
    if (value.kind === 'refused' && typeof value.detail === 'string') return { kind: 'refused', detail: value.detail.slice(0, MAX_DETAIL) };
  } catch {
    // A malformed cookie is no message.
  }
  return undefined;
}
