/**
 * Server-rendered pages through Eta templates, which escape every `<%= %>` value for HTML
 * (autoEscape): user input never reaches a page by string concatenation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';

const eta = new Eta({ views: join(import.meta.dirname, 'templates'), cache: true, autoEscape: true });

/** The login stylesheet, read once at start-up. */
export const LOGIN_CSS = readFileSync(join(import.meta.dirname, 'assets', 'login.css'), 'utf8');

export type View = 'login-page' | 'login-popup' | 'login-touch' | 'error' | 'signed-out';

export function renderView(view: View, data: Record<string, unknown>): string {
  return eta.render(`./${view}`, data);
}

/**
 * Headers of every page: never cached (they carry per-request state and CSRF tokens), never
 * framed (RFC 9700 §4.16), no Referer leaking the request (§4.2.4), and a policy that allows only
 * our own stylesheet. form-action is left out on purpose: browsers apply it to the redirect that
 * follows a login, which goes to the client.
 */
export function sendPage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', "default-src 'none'; style-src 'self'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'")
    .header('x-frame-options', 'DENY')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer')
    .type('text/html; charset=utf-8')
    .send(html);
}
