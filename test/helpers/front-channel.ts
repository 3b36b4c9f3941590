/** Assertions about authorization responses shared by the front-channel suites. */
import assert from 'node:assert/strict';
import { ERROR_TEXT } from './fixtures.ts';

/**
 * An error redirect to `redirectUri` (RFC 6749 §4.1.2.1): only error, error_description, state
 * and iss, never a code, the description in the allowed ASCII, iss the issuer (RFC 9207).
 */
export function assertErrorRedirect(response: Response, expected: { redirectUri: string; error: string; state?: string; issuer: string }): URLSearchParams {
  assert.equal(response.status, 302, `expected an error redirect, got ${response.status}`);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const location = response.headers.get('location') ?? '';
  assert.ok(location.startsWith(expected.redirectUri), location);
  const params = new URL(location).searchParams;
  assert.equal(params.get('error'), expected.error, params.get('error_description') ?? '');
  assert.equal(params.get('code'), null);
  const allowed = new Set(['error', 'error_description', 'state', 'iss']);
  for (const name of params.keys()) assert.ok(allowed.has(name) || new URL(expected.redirectUri).searchParams.has(name), `unexpected parameter ${name}`);
  assert.match(params.get('error') ?? '', ERROR_TEXT);
  assert.match(params.get('error_description') ?? '', ERROR_TEXT);
  assert.equal(params.get('state'), expected.state ?? null);
  assert.equal(params.get('iss'), expected.issuer);
  return params;
}

/**
 * The HTML error page: the status (400 by default), no redirect to anywhere, never cached, and the
 * error code `error` shown as the page shows it (`<code>error</code>`), and no other.
 */
export async function assertErrorPage(response: Response, error: string, status = 400): Promise<string> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('location'), null);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const html = await response.text();
  const shown = [...html.matchAll(/<code>([^<]*)<\/code>/g)].map((m) => m[1]);
  assert.deepEqual(shown, [error], `the error page shows ${shown.join(', ') || 'no error code'}`);
  return html;
}

/** A success redirect with a code, the state when sent, and iss. */
export function assertCodeRedirect(response: Response, expected: { redirectUri: string; state?: string; issuer: string; status?: number }): string {
  assert.equal(response.status, expected.status ?? 302, `expected a code redirect, got ${response.status}`);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const location = response.headers.get('location') ?? '';
  assert.ok(location.startsWith(`${expected.redirectUri}?`) || location.startsWith(`${expected.redirectUri}&`), location);
  const params = new URL(location).searchParams;
  assert.equal(params.get('error'), null, params.get('error_description') ?? '');
  assert.equal(params.get('state'), expected.state ?? null);
  assert.equal(params.get('iss'), expected.issuer);
  const code = params.get('code');
  assert.ok(code && /^[A-Za-z0-9_-]{43}$/.test(code), 'a 256-bit base64url code');
  return code;
}

/** The login page: 200 HTML with the form. */
export async function assertLoginPage(response: Response, status = 200): Promise<string> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('location'), null);
  assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  const html = await response.text();
  assert.match(html, /<form method="post"/);
  return html;
}
