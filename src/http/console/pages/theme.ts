/**
 * The login-page theme (docs/console.md, "Theme"; docs/theming.md): what GATEHOUSE_THEME_DIR
 * gives — product name, colours, files, overridden text keys — or that there is none, and a
 * preview of the login page in each display and language (renderThemePreview).
 *
 * The preview is its own document at `/manage/theme/preview?display=&locale=`, opened by a link,
 * not framed (docs/decisions.md CO11): it carries the login pages' own policy, and the console's
 * CSP (`frame-src` absent under `default-src 'none'`) and `X-Frame-Options: DENY` stay as they are.
 * Any signed-in manager may look (a reader too): the page wrapper has asked the API's `GET /me`.
 */
import { UI_LOCALES } from '../../../oauth/discovery.ts';
import { PREVIEW_DISPLAYS, renderThemePreview, type PreviewDisplay } from '../../interaction/theme-preview.ts';
import { THEME_COLORS, type ThemeLocale } from '../../interaction/theme.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill } from '../i18n.ts';
import { field, type ConsolePage } from '../page.ts';

const SECTION = 'theme';
const LOCALE_NAMES: Record<string, string> = { en: 'English', fi: 'Suomi', sv: 'Svenska' };

/**
 * The theme's colours as its generated stylesheet sets them (`--gh-primary: #0b6e4f;`): the theme
 * keeps them only there, already parsed and checked, so this reads back what the pages really use.
 */
function colours(stylesheet: string): { name: string; value: string }[] {
  return Object.keys(THEME_COLORS).flatMap((name) => {
    const value = new RegExp(`--gh-${name.replace('_', '-')}: (#[0-9a-f]{3,8});`).exec(stylesheet)?.[1];
    return value === undefined ? [] : [{ name, value }];
  });
}

export const themePages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/theme',
    section: SECTION,
    async handle(call) {
      const { theme } = call.deps.config;
      const previews = PREVIEW_DISPLAYS.map((display) => ({
        display,
        label: call.t[`display_${display}`],
        links: UI_LOCALES.map((locale) => ({ locale, label: LOCALE_NAMES[locale] ?? locale, href: `${CONSOLE_PATH}/theme/preview?display=${display}&locale=${locale}` })),
      }));
      return call.render('theme', {
        title: call.t.themeTitle,
        theme:
          theme === undefined
            ? undefined
            : {
                dir: theme.dir,
                productName: theme.productName,
                colours: colours(theme.stylesheet.body.toString('utf8')),
                files: [...theme.assets.values()].map((a) => ({ name: a.name, type: a.contentType, size: fill(call.t.bytes, { n: a.body.length }), href: `${call.deps.config.issuerPath}/theme/${a.name}` })),
                overridden: (Object.entries(theme.overridden) as [ThemeLocale, readonly string[]][]).map(([locale, keys]) => ({ locale, label: LOCALE_NAMES[locale] ?? locale, keys })),
              },
        previews,
        errorPreview: `${CONSOLE_PATH}/theme/preview?display=page&locale=${call.locale}&error=1`,
      });
    },
  },
  {
    method: 'GET',
    path: '/theme/preview',
    section: SECTION,
    async handle(call) {
      // Absent: the defaults; repeated or not one of the known values: 400 naming the parameter.
      const param = (name: string, fallback: string) => (call.query[name] === undefined ? fallback : typeof call.query[name] === 'string' ? call.query[name] : '');
      const display = param('display', 'page');
      const locale = param('locale', call.locale);
      const bad = !(PREVIEW_DISPLAYS as readonly string[]).includes(display) ? 'display' : !(UI_LOCALES as readonly string[]).includes(locale) ? 'locale' : undefined;
      if (bad !== undefined) {
        const allowed = bad === 'display' ? PREVIEW_DISPLAYS.join(', ') : UI_LOCALES.join(', ');
        return call.render('message', { title: call.t.errorTitle, text: fill(call.t.previewBadParameter, { field: bad, allowed }), link: { href: `${CONSOLE_PATH}/theme`, label: call.t.backToTheme } }, 400);
      }
      const preview = renderThemePreview(call.deps, { display: display as PreviewDisplay, locale: locale as ThemeLocale, withError: field(call.query, 'error') === '1' });
      return call.reply
        .code(200)
        .header('cache-control', 'no-store')
        .header('content-security-policy', preview.contentSecurityPolicy)
        .type('text/html; charset=utf-8')
        .send(preview.html);
    },
  },
];
