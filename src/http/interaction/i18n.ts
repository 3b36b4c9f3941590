/**
 * The page language: the first language of ui_locales we have texts for (OIDC Core §3.1.2.1),
 * else the first of the browser's Accept-Language (RFC 9110 §12.5.4) we have, else English.
 * Tags match on their primary language subtag, so `fi-FI` selects `fi`.
 */
import { UI_LOCALES } from '../../oauth/discovery.ts';
import { en, type Messages } from './i18n/en.ts';
import { fi } from './i18n/fi.ts';
import { sv } from './i18n/sv.ts';
import type { Theme } from './theme.ts';

export type Locale = (typeof UI_LOCALES)[number];
export type { Messages };
/** The keys of the bundle's single texts (not its groups of error texts). */
export type MessageKey = { [K in keyof Messages]: Messages[K] extends string ? K : never }[keyof Messages];

const BUNDLES: Record<Locale, Messages> = { en, fi, sv };

/** The texts of `locale`: the theme's (its overrides laid over the catalogue, docs/theming.md) when there is one. */
export function messages(locale: Locale, theme?: Pick<Theme, 'messages'>): Messages {
  return theme?.messages[locale] ?? BUNDLES[locale];
}

export function chooseLocale(uiLocales: string | undefined, acceptLanguage: string | undefined): Locale {
  const fromRequest = (uiLocales ?? '').split(' ').map(supported).find((l) => l !== undefined);
  return fromRequest ?? acceptedLanguages(acceptLanguage).map(supported).find((l) => l !== undefined) ?? 'en';
}

/**
 * A wait as the page's language says it, for the `{wait}` of a message: whole seconds under a
 * minute, else whole minutes, rounded up so the user never comes back too early.
 */
export function formatWait(locale: Locale, seconds: number): string {
  const [unit, amount] = seconds < 60 ? (['second', Math.max(1, Math.ceil(seconds))] as const) : (['minute', Math.ceil(seconds / 60)] as const);
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'long' }).format(amount);
}

function supported(tag: string): Locale | undefined {
  const primary = tag.trim().split('-')[0]?.toLowerCase() ?? '';
  return (UI_LOCALES as readonly string[]).includes(primary) ? (primary as Locale) : undefined;
}

/** Accept-Language ranges by descending weight; equal weights keep their order; q=0 means "not this". */
function acceptedLanguages(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .slice(0, 1000)
    .split(',')
    .map((part, index) => {
      const [range = '', ...attributes] = part.split(';');
      const q = attributes.map((a) => /^\s*q=([0-9.]+)\s*$/.exec(a)?.[1]).find((v) => v !== undefined);
      return { range: range.trim(), weight: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.range !== '' && entry.weight > 0)
    .sort((a, b) => b.weight - a.weight || a.index - b.index)
    .map((entry) => entry.range);
}
