/**
 * A browser single-page app that signs its users in with gatehouse using oidc-client-ts: the
 * authorization code grant with PKCE from the browser (a public client, no secret), UserInfo,
 * silent renewal with the refresh token, and logout at the end_session_endpoint. Every call to
 * gatehouse is made by the browser, from this app's origin, through gatehouse's CORS.
 *
 * This file only serves the static app: index.html, app.js, the browser build of oidc-client-ts
 * (from the repository's node_modules, no bundler) and config.json with the settings below.
 * Run from the repository root with `node examples/spa/server.ts`.
 * Settings (environment): CLIENT_ID (required, from `gatehouse client create`), ISSUER (default
 * http://127.0.0.1:8080/uas), PORT (default 5173), HOST (listen address, default 127.0.0.1).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ISSUER = new URL(process.env.ISSUER ?? 'http://127.0.0.1:8080/uas');
const PORT = Number(process.env.PORT ?? 5173);
const HOST = process.env.HOST ?? '127.0.0.1';
const CLIENT_ID = process.env.CLIENT_ID;
if (!CLIENT_ID) {
  console.error('Set CLIENT_ID (see examples/spa/README.md).');
  process.exit(1);
}

const HERE = dirname(fileURLToPath(import.meta.url));
// The package's own browser build (an IIFE defining the global `oidc`, jwt-decode included).
const OIDC_CLIENT = join(dirname(fileURLToPath(import.meta.resolve('oidc-client-ts'))), '..', 'browser', 'oidc-client-ts.min.js');

const files: Record<string, { body: Buffer | string; type: string }> = {
  '/': { body: readFileSync(join(HERE, 'index.html')), type: 'text/html; charset=utf-8' },
  '/app.js': { body: readFileSync(join(HERE, 'app.js')), type: 'text/javascript; charset=utf-8' },
  '/oidc-client-ts.js': { body: readFileSync(OIDC_CLIENT), type: 'text/javascript; charset=utf-8' },
  '/config.json': { body: JSON.stringify({ issuer: ISSUER.href.replace(/\/$/, ''), client_id: CLIENT_ID }), type: 'application/json' },
};
// The redirect URI shows the same page, which finishes the login (app.js).
files['/callback'] = files['/']!;

// Scripts only from this origin; fetch() only to this origin and gatehouse's (discovery, token,
// UserInfo); no framing. A single-page app holding tokens must not run scripts from elsewhere.
const CSP = `default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self' ${ISSUER.origin}; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

const server = createServer((request, response) => {
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  const file = request.method === 'GET' ? files[path] : undefined;
  if (!file) {
    response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
    return;
  }
  response.writeHead(200, { 'content-type': file.type, 'content-security-policy': CSP, 'referrer-policy': 'no-referrer', 'x-content-type-options': 'nosniff', 'cache-control': 'no-cache' }).end(file.body);
});

server.listen(PORT, HOST, () => {
  console.log(`SPA example listening on http://127.0.0.1:${PORT}/ (issuer ${ISSUER.href}, client ${CLIENT_ID})`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => server.close(() => process.exit(0)));
