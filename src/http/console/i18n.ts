/**
 * The console's language: `?lang=` (remembered in a cookie), else that cookie, else the browser's
 * Accept-Language, else English — the same matching as the login page (../interaction/i18n.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { UI_LOCALES } from '../../oauth/discovery.ts';
import { chooseLocale, type Locale } from '../interaction/i18n.ts';
import { readConsoleCookie, setConsoleCookie } from './cookies.ts';
import { en, type ConsoleMessages } from './i18n/en.ts';
import { fi } from './i18n/fi.ts';
import { sv } from './i18n/sv.ts';

export type { ConsoleMessages, Locale };
export type ConsoleMessageKey = keyof ConsoleMessages;

const BUNDLES: Record<Locale, ConsoleMessages> = { en, fi, sv };

export function consoleMessages(locale: Locale): ConsoleMessages {
  return BUNDLES[locale];
}

/** A text with its `{name}` placeholders filled; a value is inserted as is (templates escape it). */
export function fill(text: string, values: Record<string, string | number>): string {
  return text.replace(/\{([a-zA-Z]+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

function isLocale(value: unknown): value is Locale {
  return typeof value === 'string' && (UI_LOCALES as readonly string[]).includes(value);
}

/** The page's language; a valid `?lang=` is remembered for the next pages. */
export function consoleLocale(request: FastifyRequest, reply: FastifyReply, config: Pick<Config, 'secureCookies'>): Locale {
  const asked = (request.query as Record<string, unknown> | undefined)?.lang;
  if (isLocale(asked)) {
    setConsoleCookie(reply, config, 'lang', asked);
    return asked;
  }
  const remembered = readConsoleCookie(request, config, 'lang');
  return chooseLocale(isLocale(remembered) ? remembered : undefined, request.headers['accept-language']);
}
