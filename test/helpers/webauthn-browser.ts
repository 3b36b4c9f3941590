/**
 * What the Chromium tests of passkeys need besides test/helpers/console-browser.ts: WebAuthn wants
 * a secure context and an RP ID that is a domain, so the page's host is `localhost` (mapped to the
 * server's 127.0.0.1), and a client's redirect URI on a small server of its own.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type CDPSession, type Page } from 'playwright-core';
import { CHROMIUM } from './console-browser.ts';

/** Chromium, with localhost resolved to 127.0.0.1 (where the test server listens). */
export function launchForLocalhost(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--host-resolver-rules=MAP localhost 127.0.0.1'],
  });
}

/** A redirect URI that answers 200, and its server (close it after). */
export async function callbackServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/plain' }).end('callback reached'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback` };
}

/** The page's console errors and failed loads (400 and above, but the favicon), as they happen. */
export function recordProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('response', (response) => {
    if (response.status() >= 400 && !response.url().endsWith('/favicon.ico')) problems.push(`${response.status()} ${response.url()}`);
  });
  return problems;
}

/** A virtual platform authenticator as a laptop's (CTAP2, internal, resident keys, user verification done). */
export const PLATFORM_AUTHENTICATOR = { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true } as const;

/**
 * A new browser context's page with a virtual authenticator (WebAuthn.addVirtualAuthenticator,
 * `extra` over PLATFORM_AUTHENTICATOR), without passkey autofill (so a login page never signs in
 * by itself), and the record of its problems (recordProblems).
 */
export async function openWithAuthenticator(browser: Browser, extra: Record<string, unknown> = {}): Promise<{ context: BrowserContext; page: Page; cdp: CDPSession; authenticatorId: string; problems: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = recordProblems(page);
  await page.addInitScript('PublicKeyCredential.isConditionalMediationAvailable = async () => false;');
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', { options: { ...PLATFORM_AUTHENTICATOR, ...extra } });
  return { context, page, cdp, authenticatorId, problems };
}
