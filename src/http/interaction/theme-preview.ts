/**
 * The login page as the configured theme shows it, with sample data, for the console's theme
 * preview (`/manage/theme`, mounted by src/http/console/; docs/theming.md). The same templates
 * and texts as the real page, but nothing of a real authorization request: a sample client, no
 * carried parameters, no CSRF token, and every control disabled, so the preview cannot sign
 * anyone in nor post anywhere.
 */
import type { Client } from '../../domain/client.ts';
import { clientNameFor } from '../../oauth/client-display.ts';
import { contentSecurityPolicy } from '../plugins/security-headers.ts';
import { messages, type Locale } from './i18n.ts';
import { type PageConfig, renderView } from './views.ts';

export type PreviewDisplay = 'page' | 'popup' | 'touch';
export const PREVIEW_DISPLAYS: readonly PreviewDisplay[] = ['page', 'popup', 'touch'];

export interface ThemePreviewOptions {
  locale?: Locale;
  display?: PreviewDisplay;
  /** Show the "wrong username or password" message too, to preview the error colours. */
  withError?: boolean;
}

export interface ThemePreview {
  html: string;
  /** Send it as the page's Content-Security-Policy: the pages' own strict one. */
  contentSecurityPolicy: string;
}

/** The client the preview signs in "to", named in the three languages of the pages. */
export const SAMPLE_CLIENT: Pick<Client, 'name' | 'metadata'> = {
  name: 'Example application',
  metadata: { 'client_name#fi': 'Esimerkkisovellus', 'client_name#sv': 'Exempelapplikationen' },
};

export function renderThemePreview(deps: { config: PageConfig }, options: ThemePreviewOptions = {}): ThemePreview {
  const locale = options.locale ?? 'en';
  const display = options.display ?? 'page';
  const t = messages(locale, deps.config.theme);
  const html = renderView(`login-${display}`, {
    lang: locale,
    t,
    title: t.signInTitle,
    display,
    clientName: clientNameFor(SAMPLE_CLIENT, locale),
    logoUri: undefined,
    invalidCredentials: options.withError === true,
    base: deps.config.issuerPath,
    theme: deps.config.theme,
    // Nowhere: the controls are disabled, and there is nothing to carry.
    action: '#',
    hidden: [],
    csrfToken: '',
    username: '',
    preview: true,
    message: options.withError === true ? t.loginFailed : undefined,
  });
  return { html, contentSecurityPolicy: contentSecurityPolicy() };
}
