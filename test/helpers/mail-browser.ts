/**
 * The rig of the Chromium tests of mailed links and codes: a real SMTP server, a gatehouse on
 * SQLite that sends to it (no sender timer: the tests tick the outbox), and Chromium — made by
 * `before` and closed by `after` hooks of the calling `describe`.
 */
import { after, before } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchChromium } from './console-browser.ts';
import { DATABASES } from './databases.ts';
import { startServer, type RunningServer } from './server.ts';
import { startSmtpServer, type TestSmtpServer } from './smtp.ts';

export interface MailBrowserRig {
  smtp: TestSmtpServer;
  server: RunningServer;
  browser: Browser;
}

/** Registers the hooks; the rig's members are set once `before` has run. */
export function mailBrowserRig(env: Record<string, string> = {}): MailBrowserRig {
  const rig = {} as MailBrowserRig;
  before(async () => {
    rig.smtp = await startSmtpServer();
    const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;
    rig.server = await startServer(sqlite, { env: { GATEHOUSE_SMTP_URL: rig.smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0', ...env } });
    rig.browser = await launchChromium();
  });
  after(async () => {
    await rig.browser?.close();
    await rig.server?.close();
    await rig.smtp?.stop();
  });
  return rig;
}
