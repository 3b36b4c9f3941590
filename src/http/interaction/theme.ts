/**
 * Login-page theming without code (issue 14, item 5; docs/theming.md): a folder that
 * GATEHOUSE_THEME_DIR names, holding `theme.json` and the files it names. Read and validated
 * once, when the configuration is loaded (src/config.ts), so an invalid theme stops start-up with
 * a message naming the file and the field; afterwards nothing on disk is read again.
 *
 * What a theme can change, and why it cannot break the pages' Content-Security-Policy (no inline
 * style or script, style-src 'self'):
 * - colours become CSS custom properties in a stylesheet generated here (`theme.css`), served
 *   from our origin; each value is parsed strictly (hex, rgb(), hsl()), so none can end the
 *   declaration it sits in (`red;}body{…`), and pairs of them must keep WCAG 2.2 contrast;
 * - a logo and favicon (png, svg, jpg, webp; ico for the favicon) whose bytes must match their
 *   extension, and custom CSS, are served as files under fixed names (src/http/interaction/theme-routes.ts);
 * - texts override the built-in catalogue (src/http/interaction/i18n/*.ts) key by key; an unknown
 *   key or a lost placeholder is refused. Texts are escaped like every other value of a page.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { settingError, type Config } from '../../config.ts';
import { en, type Messages } from './i18n/en.ts';
import { fi } from './i18n/fi.ts';
import { sv } from './i18n/sv.ts';

/** The built-in catalogue by locale (the same as i18n.ts's, imported here without its dependencies). */
const CATALOGUE = { en, fi, sv } as const;
export type ThemeLocale = keyof typeof CATALOGUE;
const LOCALES = Object.keys(CATALOGUE) as ThemeLocale[];

/** A file the theme routes serve: fixed name, its bytes, content type and strong ETag. */
export interface ThemeAsset {
  /** The name under `<issuer path>/theme/`: `logo.svg`, `favicon.png`, `theme.css`, `custom.css`. */
  name: string;
  body: Buffer;
  contentType: string;
  etag: string;
}

export interface Theme {
  /** The folder, absolute. */
  dir: string;
  productName: string;
  logo?: ThemeAsset;
  favicon?: ThemeAsset;
  /** The colours as CSS custom properties that login.css uses. */
  stylesheet: ThemeAsset;
  customCss?: ThemeAsset;
  /** Every servable file by its name: only these are served, nothing else of the folder. */
  assets: ReadonlyMap<string, ThemeAsset>;
  /** The catalogue with the theme's texts laid over it, by locale. */
  messages: Readonly<Record<ThemeLocale, Messages>>;
  /** The keys the theme overrides, dotted (`signInErrors.server_error`), by locale: what `gatehouse theme check` and the console list. */
  overridden: Readonly<Record<ThemeLocale, readonly string[]>>;
}

/** Refusal of a theme: `<file>: <field>: <why>`, so the operator knows where to look. */
export class ThemeError extends Error {
  constructor(file: string, field: string, why: string) {
    super(`${file}: ${field}: ${why}`);
    this.name = 'ThemeError';
  }
}

export const THEME_LIMITS = {
  themeJson: 64 * 1024,
  texts: 64 * 1024,
  logo: 512 * 1024,
  favicon: 128 * 1024,
  css: 256 * 1024,
  text: 2000,
  productName: 100,
} as const;

/** The image formats a logo or favicon may have, by extension: content type and a check of the file's first bytes. */
const IMAGE_TYPES: Record<string, { type: string; magic: (bytes: Buffer) => boolean }> = {
  png: { type: 'image/png', magic: (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) },
  jpg: { type: 'image/jpeg', magic: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  jpeg: { type: 'image/jpeg', magic: (b) => b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff },
  webp: { type: 'image/webp', magic: (b) => b.subarray(0, 4).toString('latin1') === 'RIFF' && b.subarray(8, 12).toString('latin1') === 'WEBP' },
  svg: { type: 'image/svg+xml', magic: (b) => isUtf8(b) && /<svg[\s>]/.test(b.toString('utf8')) },
};
const FAVICON_TYPES: typeof IMAGE_TYPES = { ...IMAGE_TYPES, ico: { type: 'image/x-icon', magic: (b) => b.readUInt32BE(0) === 0x00000100 } };

/** The colours a theme may set, by their theme.json name, with the page's own (login.css) as defaults. */
export const THEME_COLORS = {
  primary: '#1f5f9e',
  primary_text: '#ffffff',
  background: '#f3f5f7',
  surface: '#ffffff',
  text: '#1b1f24',
  link: '#1f5f9e',
  error: '#7a1010',
} as const;
type ColorName = keyof typeof THEME_COLORS;

const TOP_KEYS = new Set(['product_name', 'logo', 'favicon', 'colors', 'css', 'texts']);

/**
 * The theme GATEHOUSE_THEME_DIR names, read and validated: by the server at start-up (src/main.ts,
 * src/app.ts) and by `gatehouse theme check`. An invalid theme is a ConfigError naming the variable,
 * then the file and field; undefined when the variable is unset (the built-in look).
 */
export function configuredTheme(config: Config): Theme | undefined {
  if (config.themeDir === undefined) return undefined;
  try {
    return loadTheme(config.themeDir);
  } catch (error) {
    throw settingError(config, 'GATEHOUSE_THEME_DIR', error);
  }
}

/** Reads and validates the theme in `folder`; throws a ThemeError naming file and field. */
export function loadTheme(folder: string): Theme {
  const dir = resolve(folder);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) throw new ThemeError(dir, 'folder', 'is not a folder');
  const jsonFile = join(dir, 'theme.json');
  const doc = readJson(jsonFile, THEME_LIMITS.themeJson);
  const fail = (field: string, why: string) => new ThemeError(jsonFile, field, why);
  for (const key of Object.keys(doc)) if (!TOP_KEYS.has(key)) throw fail(key, `is not a theme setting (known: ${[...TOP_KEYS].join(', ')})`);

  const productName = doc.product_name;
  if (typeof productName !== 'string' || productName.trim() === '') throw fail('product_name', 'is required: a non-empty string');
  if ([...productName].length > THEME_LIMITS.productName || /\p{Cc}/u.test(productName)) throw fail('product_name', `must be at most ${THEME_LIMITS.productName} characters, without control characters`);

  const logo = doc.logo === undefined ? undefined : imageFile(dir, jsonFile, 'logo', doc.logo, IMAGE_TYPES, THEME_LIMITS.logo);
  const favicon = doc.favicon === undefined ? undefined : imageFile(dir, jsonFile, 'favicon', doc.favicon, FAVICON_TYPES, THEME_LIMITS.favicon);
  const customCss = doc.css === undefined ? undefined : cssFile(dir, jsonFile, doc.css);
  const colors = themeColors(jsonFile, doc.colors);
  const stylesheet = asset('theme.css', 'text/css; charset=utf-8', Buffer.from(themeStylesheet(colors), 'utf8'));
  const { messages, overridden } = themeMessages(dir, jsonFile, doc.texts);

  const assets = new Map([stylesheet, logo, favicon, customCss].filter((a): a is ThemeAsset => a !== undefined).map((a) => [a.name, a]));
  return { dir, productName: productName.trim(), logo, favicon, stylesheet, customCss, assets, messages, overridden };
}

function asset(name: string, contentType: string, body: Buffer): ThemeAsset {
  // A strong validator (RFC 9110 §8.8.3) of the exact bytes served.
  return { name, contentType, body, etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"` };
}

/**
 * A file the theme names: a plain file name inside the folder (no path, no dot-file), not
 * larger than `limit`. Nothing outside the folder can be named, so nothing outside it is read.
 */
function namedFile(dir: string, jsonFile: string, field: string, value: unknown, limit: number): { name: string; bytes: Buffer } {
  const fail = (why: string) => new ThemeError(jsonFile, field, why);
  if (typeof value !== 'string' || !/^[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}$/.test(value)) throw fail('must be the name of a file in the theme folder (letters, digits, ".", "_", "-"; no path)');
  const path = join(dir, value);
  if (!existsSync(path) || !statSync(path).isFile()) throw fail(`the file ${path} does not exist`);
  const size = statSync(path).size;
  if (size > limit) throw fail(`${value} is ${size} bytes; at most ${limit} (${limit / 1024} KiB)`);
  if (size === 0) throw fail(`${value} is empty`);
  return { name: value, bytes: readFileSync(path) };
}

function imageFile(dir: string, jsonFile: string, field: 'logo' | 'favicon', value: unknown, types: typeof IMAGE_TYPES, limit: number): ThemeAsset {
  const { name, bytes } = namedFile(dir, jsonFile, field, value, limit);
  const extension = name.slice(name.lastIndexOf('.') + 1).toLowerCase();
  const kind = Object.hasOwn(types, extension) ? types[extension] : undefined;
  if (name.lastIndexOf('.') < 0 || kind === undefined) throw new ThemeError(jsonFile, field, `${name}: must be one of ${Object.keys(types).join(', ')} by its extension`);
  if (!kind.magic(bytes)) throw new ThemeError(join(dir, name), field, `is not a ${extension} file (its content does not match its extension)`);
  return asset(`${field}.${extension === 'jpeg' ? 'jpg' : extension}`, kind.type, bytes);
}

function cssFile(dir: string, jsonFile: string, value: unknown): ThemeAsset {
  const { bytes } = namedFile(dir, jsonFile, 'css', value, THEME_LIMITS.css);
  if (!isUtf8(bytes) || bytes.includes(0)) throw new ThemeError(join(dir, String(value)), 'css', 'must be UTF-8 text');
  return asset('custom.css', 'text/css; charset=utf-8', bytes);
}

function readJson(file: string, limit: number): Record<string, unknown> {
  if (!existsSync(file)) throw new ThemeError(file, 'file', 'is missing');
  if (statSync(file).size > limit) throw new ThemeError(file, 'file', `is larger than ${limit / 1024} KiB`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ThemeError(file, 'file', `is not valid JSON (${(error as Error).message})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new ThemeError(file, 'file', 'must hold a JSON object');
  return doc as Record<string, unknown>;
}

function isUtf8(bytes: Buffer): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

// ---- colours ----

/** An sRGB colour, channels 0..255, alpha 0..1. */
export interface Rgba {
  r: number;
  g: number;
  b: number;
  a: number;
}

/** The colours of a theme: the CSS text written into theme.css, and the parsed value for the contrast checks. */
type Colors = Record<ColorName, { css: string; rgba: Rgba }>;

function themeColors(jsonFile: string, value: unknown): Colors {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw new ThemeError(jsonFile, 'colors', 'must be an object of colour names');
  const given = (value ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(given)) if (!Object.hasOwn(THEME_COLORS, key)) throw new ThemeError(jsonFile, `colors.${key}`, `is not a theme colour (known: ${Object.keys(THEME_COLORS).join(', ')})`);
  const colors = {} as Colors;
  for (const name of Object.keys(THEME_COLORS) as ColorName[]) {
    const raw = given[name] ?? THEME_COLORS[name];
    const rgba = typeof raw === 'string' ? parseCssColor(raw) : undefined;
    if (rgba === undefined) throw new ThemeError(jsonFile, `colors.${name}`, `${JSON.stringify(raw)} is not a colour gatehouse accepts: #rgb, #rrggbb, #rrggbbaa, rgb(…) or hsl(…)`);
    // Written back in one canonical form, not as given: theme.css holds only what this wrote.
    colors[name] = { css: hexOf(rgba), rgba };
  }
  checkContrast(jsonFile, colors);
  return colors;
}

/**
 * A colour in one of the forms the theme accepts, or undefined. The grammar is closed (digits,
 * `.`, `%`, `deg`, commas, spaces and one `/`), so an accepted value can only ever be a colour
 * inside its declaration: no `;`, `}`, quote, `url(` or comment can get through.
 */
export function parseCssColor(text: string): Rgba | undefined {
  const value = text.trim().toLowerCase();
  if (value.length > 64) return undefined;
  const hex = /^#([0-9a-f]{3}|[0-9a-f]{6}|[0-9a-f]{8})$/.exec(value)?.[1];
  if (hex !== undefined) {
    const full = hex.length === 3 ? [...hex].map((c) => c + c).join('') : hex;
    const channel = (i: number) => parseInt(full.slice(i * 2, i * 2 + 2), 16);
    return { r: channel(0), g: channel(1), b: channel(2), a: full.length === 8 ? channel(3) / 255 : 1 };
  }
  const fn = /^(rgba?|hsla?)\(([0-9.%deg,/ ]+)\)$/.exec(value);
  if (!fn) return undefined;
  const [, name = '', inner = ''] = fn;
  const parts = /,/.test(inner) ? inner.split(',').map((p) => p.trim()) : spaceSeparated(inner);
  if (parts === undefined || (parts.length !== 3 && parts.length !== 4)) return undefined;
  const number = /^(\d{1,3}(\.\d+)?|\.\d+)$/;
  const alpha = parts[3] === undefined ? 1 : alphaValue(parts[3]);
  if (alpha === undefined) return undefined;
  if (name.startsWith('rgb')) {
    const channels = parts.slice(0, 3).map((p) => (p.endsWith('%') && number.test(p.slice(0, -1)) ? (Number(p.slice(0, -1)) * 255) / 100 : number.test(p) ? Number(p) : NaN));
    if (channels.some((c) => !(c >= 0 && c <= 255))) return undefined;
    return { r: channels[0]!, g: channels[1]!, b: channels[2]!, a: alpha };
  }
  const [h = '', s = '', l = ''] = parts;
  const hue = /^(\d{1,3}(\.\d+)?)(deg)?$/.exec(h);
  const percent = (p: string) => (p.endsWith('%') && number.test(p.slice(0, -1)) ? Number(p.slice(0, -1)) : NaN);
  const [sat, light] = [percent(s), percent(l)];
  if (!hue || !(sat >= 0 && sat <= 100) || !(light >= 0 && light <= 100)) return undefined;
  return { ...hslToRgb(Number(hue[1]) % 360, sat / 100, light / 100), a: alpha };
}

/** `#rrggbb`, or `#rrggbbaa` when translucent. */
function hexOf(c: Rgba): string {
  const byte = (v: number) => Math.round(Math.min(255, Math.max(0, v))).toString(16).padStart(2, '0');
  return `#${byte(c.r)}${byte(c.g)}${byte(c.b)}${c.a < 1 ? byte(c.a * 255) : ''}`;
}

/** `10 20 30` or `10 20 30 / 50%` (CSS Color 4 space-separated syntax). */
function spaceSeparated(inner: string): string[] | undefined {
  const [channels = '', alpha, ...rest] = inner.split('/');
  if (rest.length > 0) return undefined;
  const parts = channels.trim().split(/\s+/);
  return alpha === undefined ? parts : [...parts, alpha.trim()];
}

function alphaValue(text: string): number | undefined {
  const value = text.endsWith('%') ? Number(text.slice(0, -1)) / 100 : Number(text);
  return /^(\d{1,3}(\.\d+)?|\.\d+)%?$/.test(text) && value >= 0 && value <= 1 ? value : undefined;
}

function hslToRgb(h: number, s: number, l: number): Omit<Rgba, 'a'> {
  const k = (n: number) => (n + h / 30) % 12;
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => 255 * (l - a * Math.max(-1, Math.min(k(n) - 3, Math.min(9 - k(n), 1))));
  return { r: f(0), g: f(8), b: f(4) };
}

/** `top` drawn over `bottom` (alpha compositing), opaque when `bottom` is. */
function over(top: Rgba, bottom: Rgba): Rgba {
  const mix = (t: number, b: number) => t * top.a + b * (1 - top.a);
  return { r: mix(top.r, bottom.r), g: mix(top.g, bottom.g), b: mix(top.b, bottom.b), a: 1 };
}

/** `color-mix(in srgb, a p, b)`: what the stylesheet asks the browser to draw. */
function mixSrgb(a: Rgba, p: number, b: Rgba): Rgba {
  return { r: a.r * p + b.r * (1 - p), g: a.g * p + b.g * (1 - p), b: a.b * p + b.b * (1 - p), a: 1 };
}

/** WCAG 2.2 contrast ratio (relative luminance, §1.4.3's definition). */
export function contrastRatio(x: Rgba, y: Rgba): number {
  const luminance = (c: Rgba) => {
    const lin = (v: number) => {
      const s = v / 255;
      return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
  };
  const [hi, lo] = [luminance(x), luminance(y)].sort((p, q) => q - p);
  return (hi! + 0.05) / (lo! + 0.05);
}

const WHITE: Rgba = { r: 255, g: 255, b: 255, a: 1 };
const BLACK: Rgba = { r: 0, g: 0, b: 0, a: 1 };
/** How much of the error colour tints the message box (theme.css `--gh-error-background`). */
const ERROR_TINT = 0.08;

/**
 * Text must stay readable whatever the colours: each pair a page draws text with needs 4.5:1
 * (WCAG 2.2 §1.4.3, AA), checked here so a theme cannot fail the axe checks the built-in pages
 * pass. Translucent colours are judged as drawn over what lies beneath them.
 */
function checkContrast(jsonFile: string, colors: Colors): void {
  const background = over(colors.background.rgba, WHITE);
  const surface = over(colors.surface.rgba, background);
  const primary = over(colors.primary.rgba, surface);
  const errorBox = mixSrgb(over(colors.error.rgba, surface), ERROR_TINT, surface);
  const pairs: [ColorName, Rgba, ColorName, Rgba][] = [
    ['primary_text', over(colors.primary_text.rgba, primary), 'primary', primary],
    ['primary', primary, 'surface', surface],
    ['text', over(colors.text.rgba, surface), 'surface', surface],
    ['link', over(colors.link.rgba, surface), 'surface', surface],
    ['error', over(colors.error.rgba, errorBox), 'surface', errorBox],
  ];
  for (const [fgName, fg, bgName, bg] of pairs) {
    const ratio = contrastRatio(fg, bg);
    if (ratio < 4.5) {
      throw new ThemeError(jsonFile, `colors.${fgName}`, `its contrast with colors.${bgName} is ${ratio.toFixed(2)}:1; text needs at least 4.5:1 (WCAG 2.2 §1.4.3)`);
    }
  }
}

/**
 * theme.css: the colours as the custom properties login.css draws with. Its values are the
 * validated colours and `color-mix()` of them, nothing else. Hover darkens a button with light
 * text and lightens one with dark text, so hovering never lowers its contrast.
 */
function themeStylesheet(colors: Colors): string {
  const c = (name: ColorName) => colors[name].css;
  const primary = over(colors.primary.rgba, WHITE);
  const textIsLight = contrastRatio(over(colors.primary_text.rgba, primary), BLACK) > contrastRatio(primary, BLACK);
  const lines = [
    `--gh-primary: ${c('primary')};`,
    `--gh-primary-hover: color-mix(in srgb, ${c('primary')} 85%, ${textIsLight ? '#000' : '#fff'});`,
    `--gh-primary-text: ${c('primary_text')};`,
    `--gh-background: ${c('background')};`,
    `--gh-surface: ${c('surface')};`,
    `--gh-text: ${c('text')};`,
    // Secondary texts and field borders use the text colour itself: its contrast is checked.
    `--gh-muted: ${c('text')};`,
    `--gh-input-border: ${c('text')};`,
    `--gh-border: color-mix(in srgb, ${c('text')} 20%, ${c('surface')});`,
    `--gh-focus: ${c('text')};`,
    `--gh-link: ${c('link')};`,
    `--gh-error: ${c('error')};`,
    `--gh-error-border: ${c('error')};`,
    `--gh-message-border: ${c('error')};`,
    `--gh-error-background: color-mix(in srgb, ${c('error')} ${ERROR_TINT * 100}%, ${c('surface')});`,
    `--gh-secondary-hover: color-mix(in srgb, ${c('primary')} 8%, ${c('surface')});`,
  ];
  return `/* Generated by gatehouse from theme.json's colors (docs/theming.md). */\n:root {\n${lines.map((l) => `  ${l}`).join('\n')}\n}\n`;
}

// ---- texts ----

/** Every single text of a bundle by its dotted key: `signInTitle`, `signInErrors.invalid_client`. */
function flatten(bundle: object, prefix = ''): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(bundle)) {
    if (typeof value === 'string') out.set(`${prefix}${key}`, value);
    else for (const [k, v] of flatten(value as object, `${prefix}${key}.`)) out.set(k, v);
  }
  return out;
}

const placeholders = (text: string) => new Set(text.match(/\{[a-z]+\}/gi) ?? []);

/**
 * The catalogue with the theme's texts over it. Texts for a locale come from theme.json's
 * `texts.<locale>` or from `texts/<locale>.json`, not both. Keys are the catalogue's, dotted for
 * its groups (`signInErrors.invalid_client`), or nested objects of them.
 */
function themeMessages(dir: string, jsonFile: string, value: unknown): Pick<Theme, 'messages' | 'overridden'> {
  if (value !== undefined && (typeof value !== 'object' || value === null || Array.isArray(value))) throw new ThemeError(jsonFile, 'texts', 'must be an object of locales (en, fi, sv)');
  const inline = (value ?? {}) as Record<string, unknown>;
  for (const key of Object.keys(inline)) if (!(LOCALES as string[]).includes(key)) throw new ThemeError(jsonFile, `texts.${key}`, `is not a locale of the pages (${LOCALES.join(', ')})`);
  const out = {} as Record<ThemeLocale, Messages>;
  const overridden = {} as Record<ThemeLocale, string[]>;
  for (const locale of LOCALES) {
    const file = join(dir, 'texts', `${locale}.json`);
    const fromFile = existsSync(file);
    if (fromFile && inline[locale] !== undefined) throw new ThemeError(jsonFile, `texts.${locale}`, `is also given by ${file}: keep one of them`);
    const source = fromFile ? file : jsonFile;
    const fieldPrefix = fromFile ? '' : `texts.${locale}.`;
    const given = fromFile ? readJson(file, THEME_LIMITS.texts) : inline[locale];
    if (given === undefined) {
      out[locale] = CATALOGUE[locale];
      overridden[locale] = [];
      continue;
    }
    if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new ThemeError(source, `texts.${locale}`, 'must be an object of text keys');
    const overrides = textOverrides(source, fieldPrefix, locale, given as Record<string, unknown>);
    out[locale] = overlay(CATALOGUE[locale], overrides);
    overridden[locale] = [...overrides.keys()];
  }
  return { messages: out, overridden };
}

function textOverrides(file: string, fieldPrefix: string, locale: ThemeLocale, given: Record<string, unknown>): Map<string, string> {
  const builtIn = flatten(CATALOGUE[locale]);
  const overrides = new Map<string, string>();
  const visit = (object: Record<string, unknown>, prefix: string) => {
    for (const [key, text] of Object.entries(object)) {
      const dotted = `${prefix}${key}`;
      const field = `${fieldPrefix}${dotted}`;
      if (typeof text === 'object' && text !== null && !Array.isArray(text) && !builtIn.has(dotted)) {
        visit(text as Record<string, unknown>, `${dotted}.`);
        continue;
      }
      const original = builtIn.get(dotted);
      if (original === undefined) throw new ThemeError(file, field, 'is not a text of the pages (see src/http/interaction/i18n/en.ts for the keys)');
      if (typeof text !== 'string' || text.trim() === '') throw new ThemeError(file, field, 'must be a non-empty string');
      if (text.length > THEME_LIMITS.text || /[^\P{Cc}\n\t]/u.test(text)) throw new ThemeError(file, field, `must be at most ${THEME_LIMITS.text} characters, without control characters`);
      const [want, have] = [placeholders(original), placeholders(text)];
      for (const p of want) if (!have.has(p)) throw new ThemeError(file, field, `must keep the placeholder ${p}: the page fills it in`);
      for (const p of have) if (!want.has(p)) throw new ThemeError(file, field, `has the placeholder ${p}, which this text does not have (it has ${[...want].join(', ') || 'none'})`);
      overrides.set(dotted, text);
    }
  };
  visit(given, '');
  return overrides;
}

/** A copy of `bundle` with the dotted keys of `overrides` replaced. */
function overlay(bundle: Messages, overrides: Map<string, string>): Messages {
  const copy = structuredClone(bundle) as unknown as Record<string, unknown>;
  for (const [dotted, text] of overrides) {
    const path = dotted.split('.');
    let target = copy;
    for (const part of path.slice(0, -1)) target = target[part] as Record<string, unknown>;
    target[path.at(-1)!] = text;
  }
  return copy as unknown as Messages;
}
