/**
 * The console's Webhooks pages in real Chromium (docs/webhooks.md): an administrator signs in
 * through the real login page, registers an endpoint with the form (a refused URL and an unknown
 * event type first: the form says what is wrong), sees the secret once, opens the endpoint's
 * delivery log (every state shown) and the redeliver confirmation, and redelivers; at desktop and
 * phone width axe-core finds no serious or critical violation, and the strict CSP none either.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { bootstrap, cspViolations, launchChromium, noChromium, recordCspViolations, seriousViolations } from '../helpers/console-browser.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'webhooks page administrator pw 1';
const sqlite = DATABASES.find((db) => db.name === 'sqlite')!;

describe('the Webhooks pages in Chromium', { skip: noChromium }, () => {
  let server: RunningServer;
  let browser: Browser;
  before(async () => {
    server = await startServer(sqlite, { env: { GATEHOUSE_OUTBOX_INTERVAL: '0' } });
    await bootstrap({ databaseUrl: server.database.url, issuer: server.issuer }, 'webhooks-admin', PASSWORD);
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await server?.close();
  });

  const checked = async (page: Page, width: number, what: string) => {
    assert.deepEqual(await seriousViolations(page), [], `axe on ${what}`);
    assert.deepEqual(await cspViolations(page), [], `CSP on ${what}`);
    const wide = await page.evaluate<string[]>(`[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > ${width} + 1 && !e.closest('table')).map((e) => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))`);
    assert.ok(await page.evaluate<boolean>(`document.documentElement.scrollWidth <= ${width}`), `${what}: the page is no wider than the screen: ${wide.join(', ')}`);
  };

  for (const width of [1280, 375]) {
    test(`register (refusals shown on the form), the secret once, the delivery log and redelivery at ${width} px`, { timeout: 120_000 }, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } });
      await recordCspViolations(context);
      const page = await context.newPage();
      try {
        await page.goto(`${server.url}/manage/webhooks`);
        await page.getByLabel('Username').fill('webhooks-admin');
        await page.getByLabel('Password').fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(`${server.url}/manage/webhooks`);
        await checked(page, width, 'the list');
        await page.getByRole('link', { name: 'Register an endpoint' }).click();
        const refusal = async (url: string, events: string) => {
          await page.getByLabel('URL').fill(url);
          await page.getByLabel('Event types').fill(events);
          await page.getByRole('button', { name: 'Register' }).click();
          return (await page.locator('.field-error').allTextContents()).join(' | ');
        };
        assert.match(await refusal('http://crm.example.com/hooks', 'user.created'), /is not https/);
        assert.match(await refusal('https://crm.example.com/hooks', 'user.created, user.exploded'), /must be equal to one of the allowed values/);
        await checked(page, width, 'the form with its errors');
        const url = `https://crm.example.com/hooks/${width}`;
        await page.getByLabel('URL').fill(url);
        await page.getByLabel('Event types').fill('user.created, user.updated');
        await page.getByRole('button', { name: 'Register' }).click();
        await page.getByRole('heading', { name: 'Webhook endpoint registered' }).waitFor();
        const secret = await page.locator('#webhook-secret').textContent();
        assert.match(secret ?? '', /^whsec_/);
        await checked(page, width, 'the secret page');

        // Deliveries in every state, as the sender leaves them.
        const endpoint = (await server.gatehouse.store.webhooks.list()).find((e) => e.url === url)!;
        const outbox = server.gatehouse.store.outbox;
        const now = Date.now();
        let delivered = '';
        for (const [n, fate] of [[1, 'pending'], [2, 'retry'], [3, 'delivered'], [4, 'dead']] as const) {
          const id = `0000000${n}-${String(width).padStart(4, '0')}-7000-8000-000000000000`;
          await outbox.enqueue({ id, channel: 'webhook', kind: 'webhook.user.created', destination: url, payload: {}, dedupeKey: id, createdAt: now + n, nextAttemptAt: now, endpointId: endpoint.id });
          if (fate === 'pending') continue;
          await outbox.claim({ owner: 'e2e', now, leaseMs: 60_000, limit: 1, channels: ['webhook'], id });
          if (fate === 'delivered') {
            await outbox.markDelivered(id, 'e2e', now, 204);
            delivered = id;
          } else await outbox.markFailed(id, 'e2e', { now, error: 'the endpoint answered 503: busy', retryAt: fate === 'dead' ? undefined : now + 60_000, responseStatus: 503 });
        }
        await page.getByRole('link', { name: url }).click();
        await page.getByRole('heading', { name: 'Deliveries', exact: true }).waitFor();
        assert.deepEqual((await page.locator('tbody tr td:nth-child(3)').allTextContents()).sort(), ['Dead', 'Delivered', 'Retrying', 'Waiting']);
        assert.deepEqual((await page.locator('tbody tr td:nth-child(5)').allTextContents()).sort(), ['', '204', '503', '503']);
        await checked(page, width, 'the delivery log');
        await page.getByRole('link', { name: `Redeliver ${delivered}` }).click();
        await checked(page, width, 'the redeliver confirmation');
        await page.getByRole('button', { name: 'Redeliver' }).click();
        await page.waitForURL(/status=pending/);
        assert.equal((await outbox.get(delivered))?.status, 'pending');
      } finally {
        await context.close();
      }
    });
  }
});
