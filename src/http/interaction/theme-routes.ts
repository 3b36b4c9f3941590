/**
 * The theme's files (docs/theming.md), under `<issuer path>/theme/<name>`: the generated
 * `theme.css`, `custom.css`, `logo.<ext>` and `favicon.<ext>` — only the names theme.ts gave the
 * files theme.json names, looked up in a map, so no request path can reach anything else of the
 * folder or of the disk (`/theme/../config`, `%2e%2e%2f…` are just names that are not in it).
 * The bytes were read and checked at start-up; nothing is read from disk here.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpDeps } from '../deps.ts';
import type { ThemeAsset } from './theme.ts';

/**
 * An SVG opened directly (not through <img>) is a document that could run script or load
 * things: its own policy lets it run and load nothing, only draw with its inline styles.
 */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'";

export async function themeRoutes(app: FastifyInstance, deps: Pick<HttpDeps, 'config'>): Promise<void> {
  const theme = deps.config.theme;
  if (theme === undefined) return;
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    reply.code(404).header('cache-control', 'no-store').send({ error: 'not_found', error_description: `No route for ${request.method} ${request.url.split('?')[0]}` });

  // GET also answers HEAD (Fastify's exposeHeadRoutes): same status and headers, no body.
  app.get<{ Params: { name: string } }>(`${deps.config.issuerPath}/theme/:name`, async (request, reply) => {
    const found: ThemeAsset | undefined = theme.assets.get(request.params.name);
    if (found === undefined) return notFound(request, reply);
    // Revalidated after five minutes, so a restarted server with a changed theme is seen soon;
    // the strong ETag makes that a 304 while nothing changed (RFC 9110 §13.1.2).
    reply.header('cache-control', 'public, max-age=300').header('etag', found.etag).header('x-content-type-options', 'nosniff');
    if (found.contentType === 'image/svg+xml') reply.header('content-security-policy', SVG_POLICY);
    if (matches(request.headers['if-none-match'], found.etag)) return reply.code(304).send();
    return reply.type(found.contentType).send(found.body);
  });
}

/** If-None-Match (RFC 9110 §13.1.2): `*` or a list of entity tags, compared weakly. */
function matches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag);
}
