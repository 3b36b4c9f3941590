import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RawParams } from '../../oauth/params.ts';
import type { HttpDeps } from '../deps.ts';
import { htmlErrorHandler, type PageContext } from '../render/authorization.ts';
import { chooseLocale, type Locale } from './i18n.ts';

/**
 * Sets up a route group whose answers are pages: errors render as the HTML error page (of signing
 * in or of signing out, as `context` says), and a body
 * is read only as a form (OIDC Core §3.1.2.1), so JSON or text bodies are refused, not guessed at.
 */
export function useHtmlScope(app: FastifyInstance, deps: Pick<HttpDeps, 'config'>, context: PageContext = 'signIn'): void {
  app.setErrorHandler(htmlErrorHandler(deps.config, context));
  app.removeContentTypeParser(['application/json', 'text/plain']);
}

/** The parameters of a GET (query) or form POST (body), repeated names as arrays. */
export function requestParams(request: FastifyRequest): RawParams {
  const source = request.method === 'POST' ? request.body : request.query;
  return source !== null && typeof source === 'object' ? (source as RawParams) : {};
}

/** A single form field, or '' when absent or repeated. */
export function formField(raw: RawParams, name: string): string {
  const value = raw[name];
  return typeof value === 'string' ? value : '';
}

/** A self-service page's language: its `ui_locales` (query or form, at most 256 characters), else the browser's. */
export function pageLocale(request: FastifyRequest): Locale {
  const raw = requestParams(request);
  const uiLocales = typeof raw.ui_locales === 'string' && raw.ui_locales.length <= 256 ? raw.ui_locales : undefined;
  return chooseLocale(uiLocales, request.headers['accept-language']);
}
