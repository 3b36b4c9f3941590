/**
 * The console's outbox page over real HTTP, on every database (docs/mail.md, "The outbox"): the
 * messages by status (waiting, retrying, delivered, dead), never what they say; an administrator
 * redelivers a dead one after a confirmation (the GET changes nothing), a reader sees no
 * redeliver link; with mail off the page says so.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { NewOutboxMessage } from '../../src/domain/outbox.ts';
import type { Store } from '../../src/storage/ports.ts';
import { consoleSignIn } from '../helpers/console-signin.ts';
import { DATABASES } from '../helpers/databases.ts';
import { browse, createTestUser, formFields, submit, type CookieJar } from '../helpers/fixtures.ts';
import { ensureManagementSetup } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';

const PASSWORD = 'outbox console pw 1';

async function aMessage(store: Store, to: string, fate: 'pending' | 'retrying' | 'delivered' | 'dead'): Promise<string> {
  const now = Date.now();
  const m: NewOutboxMessage = { id: randomUUID(), channel: 'mail', kind: 'mail.test', destination: to, payload: { secret: 'https://sso.example/reset?token=SECRET' }, dedupeKey: randomUUID(), createdAt: now, nextAttemptAt: now };
  await store.outbox.enqueue(m);
  if (fate === 'pending') return m.id;
  await store.outbox.claim({ owner: 'test', now, leaseMs: 60_000, limit: 1, channels: ['mail'], id: m.id });
  if (fate === 'delivered') await store.outbox.markDelivered(m.id, 'test', now);
  else await store.outbox.markFailed(m.id, 'test', { now, error: fate === 'dead' ? 'SMTP 550: mailbox unavailable' : 'ECONNECTION: connection refused', retryAt: fate === 'dead' ? undefined : now + 60_000 });
  return m.id;
}

for (const kind of DATABASES) {
  describe(`the console's outbox on ${kind.name}`, () => {
    let server: RunningServer;
    let admin: CookieJar;
    let reader: CookieJar;
    const ids: Record<string, string> = {};
    const page = async (jar: CookieJar, path: string) => {
      const response = await browse(`${server.url}${path}`, jar);
      return { response, html: await response.text() };
    };
    before(async () => {
      server = await startServer(kind, { env: { GATEHOUSE_OUTBOX_INTERVAL: '0' } });
      await ensureManagementSetup(server);
      const store = server.gatehouse.store;
      const signIn = async (group: string) => {
        const user = await createTestUser(store, { password: PASSWORD });
        await store.groups.addMember((await store.groups.getByName(group))!.id, user.id);
        const { jar, callback } = await consoleSignIn(server.url, user.username, PASSWORD);
        assert.equal(callback.status, 303);
        return jar;
      };
      admin = await signIn(server.config.manageAdminGroup);
      reader = await signIn(server.config.manageReadonlyGroup);
      for (const fate of ['pending', 'retrying', 'delivered', 'dead'] as const) ids[fate] = await aMessage(store, `${fate}@example.com`, fate);
    });
    after(async () => server.close());

    test('lists the messages by status, never their payload; says mail is off', async () => {
      const all = await page(admin, '/manage/outbox');
      assert.equal(all.response.status, 200);
      assert.match(all.html, /aria-current="page">Outbox</);
      assert.match(all.html, /Mail is off: GATEHOUSE_SMTP_URL is not set/);
      const rows = [...all.html.matchAll(/<tr><td>[^<]*<\/td><td><code>mail\.test<\/code><\/td><td>([^<]*)<\/td><td>([^<]*)<\/td><td>(\d+)<\/td>/g)].map((m) => [m[1], m[2], m[3]]);
      assert.deepEqual(rows.sort(), [['dead@example.com', 'Dead', '1'], ['delivered@example.com', 'Delivered', '1'], ['pending@example.com', 'Waiting', '0'], ['retrying@example.com', 'Retrying', '1']]);
      assert.equal(all.html.includes('SECRET'), false, 'never the payload');
      const dead = await page(admin, '/manage/outbox?status=dead&lang=fi');
      assert.deepEqual([...dead.html.matchAll(/<td>([a-z]+@example\.com)<\/td><td>([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]), [['dead@example.com', 'Kuollut']]);
      assert.match(dead.html, /<code>SMTP 550: mailbox unavailable<\/code>/);
    });

    test('an administrator redelivers a dead message after a confirmation; a reader gets no link', async () => {
      const forReader = await page(reader, '/manage/outbox?status=dead');
      assert.equal(forReader.html.includes('/redeliver'), false);
      const list = await page(admin, '/manage/outbox?status=dead');
      assert.ok(list.html.includes(`href="/manage/outbox/${ids.dead}/redeliver"`));
      const confirm = await page(admin, `/manage/outbox/${ids.dead}/redeliver`);
      assert.equal(confirm.response.status, 200);
      assert.equal((await server.gatehouse.store.outbox.get(ids.dead!))?.status, 'dead', 'the GET changed nothing');
      const token = formFields(confirm.html).find(([n]) => n === 'csrf_token')![1];
      const origin = new URL(server.issuer).origin;
      const done = await submit(`${server.url}/manage/outbox/${ids.dead}/redeliver`, [['csrf_token', token]], admin, { origin, referer: `${origin}/manage/outbox/${ids.dead}/redeliver` });
      assert.equal(done.status, 303);
      assert.equal(done.headers.get('location'), '/manage/outbox?status=pending&done=redelivered');
      const row = await server.gatehouse.store.outbox.get(ids.dead!);
      assert.deepEqual([row?.status, row?.attempts], ['pending', 0]);
      const after = await page(admin, '/manage/outbox?status=pending&done=redelivered&lang=en');
      assert.match(after.html, /The message is queued again\./);
    });
  });
}
