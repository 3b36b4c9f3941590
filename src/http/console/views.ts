/**
 * The console's pages: Eta templates with autoEscape (every `<%= %>` is HTML-escaped), one layout,
 * and one stylesheet and one script served as files, so the pages' Content-Security-Policy allows
 * no inline script or style (docs/console.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Eta } from 'eta';
import type { FastifyReply } from 'fastify';
import { contentSecurityPolicy } from '../plugins/security-headers.ts';

const eta = new Eta({ views: join(import.meta.dirname, 'templates'), cache: true, autoEscape: true });

export const CONSOLE_CSS = readFileSync(join(import.meta.dirname, 'assets', 'console.css'), 'utf8');
export const CONSOLE_JS = readFileSync(join(import.meta.dirname, 'assets', 'console.js'), 'utf8');

/**
 * The console's policy: the default one (nothing but our own files, no framing, forms post only
 * to us, no `<base>`) plus `script-src 'self'` for the one script file — never inline, never eval.
 */
export const CONSOLE_CSP = contentSecurityPolicy([], [], ["'self'"]);

export function renderConsole(view: string, data: Record<string, unknown>): string {
  return eta.render(`./${view}`, data);
}

/**
 * A console page: never cached (per-user data, CSRF tokens, secrets shown once), the console's CSP,
 * and `Referrer-Policy: same-origin` instead of the default `no-referrer`, because under
 * `no-referrer` a browser sends `Origin: null` with a form post and the origin check (csrf.ts)
 * could not tell our own forms from anyone's. Referers still never leave our origin.
 */
export function sendConsolePage(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .header('cache-control', 'no-store')
    .header('pragma', 'no-cache')
    .header('content-security-policy', CONSOLE_CSP)
    .header('referrer-policy', 'same-origin')
    .type('text/html; charset=utf-8')
    .send(html);
}
