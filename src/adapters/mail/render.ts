/**
 * Renders a mail (docs/mail.md, "Templates"; docs/decisions.md AM18–AM21): one pair of Eta
 * templates for every kind — text (`mail-text.eta`) and HTML (`mail-html.eta`) — filled with the
 * kind's texts in the mail's language (texts.ts: en, fi, sv) and the theme's product name, as
 * the login pages are (src/http/interaction/views.ts). The HTML escapes every value
 * (autoEscape); the text is not HTML and is not escaped. A theme brings its product name, not
 * templates: an Eta template is code, and a theme folder is data (AM20).
 */
import { join } from 'node:path';
import { Eta } from 'eta';
import type { MailComposer, MailKind, MailLocale, RenderedMail } from '../../oauth/outbox/mail.ts';
import { MAIL_TEXTS } from './texts.ts';

const views = join(import.meta.dirname, 'templates');
const html = new Eta({ views, cache: true, autoEscape: true });
const text = new Eta({ views, cache: true, autoEscape: false, autoTrim: false });

/** What a theme gives mail: the product name (GATEHOUSE_THEME_DIR's `product_name`; "gatehouse" without a theme). */
export interface MailBrand {
  productName: string;
}

/** Fills `{name}` placeholders; an unknown one stays as it is written, so a missing value shows instead of vanishing. */
function fill(template: string, values: Readonly<Record<string, string>>): string {
  return template.replace(/\{([a-z]+)\}/g, (whole, name: string) => values[name] ?? whole);
}

export function renderMail(kind: MailKind, locale: MailLocale, brand: MailBrand, data: Readonly<Record<string, string>>): RenderedMail {
  const texts = MAIL_TEXTS[locale][kind];
  const values = { ...data, product: brand.productName };
  const view = { lang: locale, product: brand.productName, subject: fill(texts.subject, values), paragraphs: texts.paragraphs.map((p) => fill(p, values)), footer: fill(texts.footer, values) };
  return { subject: view.subject, text: text.render('./mail-text', view), html: html.render('./mail-html', view) };
}

export function mailComposer(brand: MailBrand): MailComposer {
  return { compose: (kind, locale, data) => renderMail(kind, locale, brand, data) };
}
