/**
 * What a person who types the server's address into a browser sees: at `/` and at the issuer's
 * path (`/uas` by default) a small page saying what this server is, with links to discovery, the signing
 * keys, readiness and the identity API's description, in the browser's language; and the
 * favicon at /favicon.ico, where browsers look for it unasked, and under the issuer's path, which
 * the pages link (a deployment may route only that path to gatehouse). The page has no script and no
 * inline style: the default Content-Security-Policy of src/http/plugins/security-headers.ts holds.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../deps.ts';
import { chooseLocale, messages } from '../interaction/i18n.ts';
import { renderView, sendPage } from '../interaction/views.ts';

const FAVICON = readFileSync(join(import.meta.dirname, '..', 'interaction', 'assets', 'favicon.ico'));

export async function landingRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  const apiDocs = `/${deps.config.identityRestPrefix}/openapi.json`;
  const base = deps.config.issuerPath;
  // GET also answers HEAD (Fastify's exposeHeadRoutes): same status and headers, no body.
  const landing = async (request: FastifyRequest, reply: FastifyReply) => {
    // The page has no parameters, so only the browser's language picks its language.
    const locale = chooseLocale(undefined, request.headers['accept-language']);
    const t = messages(locale, deps.config.theme);
    return sendPage(reply, 200, renderView('landing', { base, theme: deps.config.theme, lang: locale, t, title: t.landingTitle, display: 'page', apiDocs }));
  };
  app.get('/', landing);
  if (base !== '') app.get(base, landing);
  const favicon = async (_request: FastifyRequest, reply: FastifyReply) =>
    reply.header('cache-control', 'public, max-age=86400').type('image/x-icon').send(FAVICON);
  app.get('/favicon.ico', favicon);
  if (base !== '') app.get(`${base}/favicon.ico`, favicon);
}
