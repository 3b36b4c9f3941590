/**
 * The console's Outbox page in real Chromium (docs/mail.md, "The outbox"): an administrator signs
 * in through the real login page and opens the list (every state shown), the dead filter and the
 * redeliver confirmation, at desktop and phone width: axe-core finds no serious or critical
 * violation, and the strict CSP none either.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { bootstrap, cspViolations, launchChromium, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'outbox page administrator pw 1';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

describe('the Outbox page in Chromium', { skip: noChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  let dead: string;
  before(async () => {
    server = await startServer(sqlite, { env: { GATEHOUSE_OUTBOX_INTERVAL: '0' } });
    await bootstrap({ databaseUrl: server.database.url, issuer: server.issuer }, 'outbox-admin', PASSWORD);
    const outbox = server.gatehouse.store.outbox;
    const now = Date.now();
    for (const [to, fate] of [['waiting@example.com', 'pending'], ['retrying.with.a.long.address@example.com', 'retry'], ['done@example.com', 'delivered'], ['gone@example.com', 'dead']] as const) {
      const id = randomUUID();
      await outbox.enqueue({ id, channel: 'mail', kind: 'mail.test', destination: to, payload: {}, dedupeKey: id, createdAt: now, nextAttemptAt: now });
      if (fate === 'pending') continue;
      await outbox.claim({ owner: 'e2e', now, leaseMs: 60_000, limit: 1, channels: ['mail'], id });
      if (fate === 'delivered') await outbox.markDelivered(id, 'e2e', now);
      else await outbox.markFailed(id, 'e2e', { now, error: fate === 'dead' ? 'SMTP 550: 5.1.1 mailbox unavailable' : 'ECONNECTION: Connection closed unexpectedly', retryAt: fate === 'dead' ? undefined : now + 60_000 });
      if (fate === 'dead') dead = id;
    }
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  for (const width of [1280, 375]) {
    test(`list, dead filter and redeliver confirmation at ${width} px: no serious axe violation, no CSP violation`, { timeout: 120_000 }, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      await recordCspViolations(context);
      const page = await context.newPage();
      try {
        await page.goto(`${server.url}/manage/outbox`);
        await page.getByLabel('Username').fill('outbox-admin');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(`${server.url}/manage/outbox`);
        assert.deepEqual(await page.locator('tbody tr td:nth-child(4)').allTextContents().then((s) => s.sort()), ['Dead', 'Delivered', 'Retrying', 'Waiting']);
        for (const path of ['/manage/outbox', '/manage/outbox?status=dead', `/manage/outbox/${dead}/redeliver`]) {
          await page.goto(`${server.url}${path}`);
          assert.deepEqual(await seriousViolations(page), [], `axe on ${path}`);
          assert.deepEqual(await cspViolations(page), [], `CSP on ${path}`);
          const wide = await page.evaluate<string[]>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width} + 1 && !e.closest('table')).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`);
          assert.ok(await page.evaluate<boolean>(`document.documentElement.scrollWidth <= ${width}`), `${path}: the page is no wider than the screen: ${wide.join(', ')}`);
        }
      } finally {
        await context.close();
      }
    });
  }
});
