/**
 * `gatehouse webhooks add|list|show|update|rotate-secret|deliveries|redeliver|remove` as child
 * processes against a fresh database of every kind (docs/webhooks.md, docs/cli.md): the secret is
 * printed by add and rotate-secret only, changes are audited, and refusals (a URL the outbound
 * rules refuse, an unknown event type, an unknown endpoint) are one line and exit 2.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runGatehouse as gatehouse, storeLineOf, type CliResult as Result } from '../helpers/cli.ts';
import { DATABASES, type TestDatabase } from '../helpers/databases.ts';

for (const kind of DATABASES) {
  describe(`gatehouse webhooks on ${kind.name}`, () => {
    let database: TestDatabase;
    let dir: string;
    let env: Record<string, string>;
    const failed = (result: Result, message: string) => {
      assert.equal(result.code, 2, result.stderr);
      assert.equal(result.stderr, `${storeLineOf(env)}gatehouse: ${message}\n`);
    };

    before(async () => {
      database = await kind.create();
      dir = mkdtempSync(join(tmpdir(), 'gatehouse-webhooks-cli-'));
      env = { GATEHOUSE_DATABASE_URL: database.url, GATEHOUSE_AUDIT_LOG: join(dir, 'audit.log'), GATEHOUSE_ISSUER: 'https://sso.example/uas' };
      assert.equal((await gatehouse(['migrate'], env)).code, 0);
    });
    after(async () => {
      await database.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    test('add, list, show, update, rotate-secret, deliveries, remove; refusals exit 2', async () => {
      failed(await gatehouse(['webhooks', 'add', 'http://hooks.example.com/in', '--events', 'user.created'], env), 'url: refused: http://hooks.example.com is not https (http only to a loopback host, with GATEHOUSE_OUTBOUND_LOOPBACK) (docs/webhooks.md, "Where gatehouse may POST")');
      failed(await gatehouse(['webhooks', 'add', 'https://hooks.example.com/in', '--events', 'user.created,user.exploded'], env), 'events: not in the event catalogue (docs/webhooks.md): user.exploded');

      const added = await gatehouse(['webhooks', 'add', 'https://hooks.example.com/in', '--events', 'user.created,user.deleted', '--description', 'CRM', '--json'], env);
      assert.equal(added.code, 0, added.stderr);
      const endpoint = JSON.parse(added.stdout) as Record<string, unknown>;
      assert.deepEqual([endpoint.url, endpoint.events, endpoint.enabled, endpoint.description], ['https://hooks.example.com/in', ['user.created', 'user.deleted'], true, 'CRM']);
      assert.match(String(endpoint.secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
      const id = String(endpoint.id);

      const list = await gatehouse(['webhooks', 'list'], env);
      assert.match(list.stdout, new RegExp(`^${id}\\s+https://hooks\\.example\\.com/in\\s+user\\.created user\\.deleted\\s+yes$`, 'm'));
      const shown = JSON.parse((await gatehouse(['webhooks', 'show', id, '--json'], env)).stdout) as Record<string, unknown>;
      assert.equal(shown.secret, undefined, 'the secret is printed only when made');

      const updated = JSON.parse((await gatehouse(['webhooks', 'update', id, '--events', '*', '--disable', '--json'], env)).stdout) as Record<string, unknown>;
      assert.deepEqual([updated.events, updated.enabled], ['*', false]);
      const rotated = JSON.parse((await gatehouse(['webhooks', 'rotate-secret', id, '--json'], env)).stdout) as Record<string, unknown>;
      assert.notEqual(rotated.secret, endpoint.secret);
      assert.equal(typeof rotated.previousSecretUntil, 'number');
      const deliveries = await gatehouse(['webhooks', 'deliveries', id, '--json'], env);
      assert.deepEqual([deliveries.code, JSON.parse(deliveries.stdout)], [0, []]);
      failed(await gatehouse(['webhooks', 'redeliver', id, '00000000-0000-4000-8000-000000000000'], env), `no delivery 00000000-0000-4000-8000-000000000000 of webhook endpoint ${id}`);

      const removed = await gatehouse(['webhooks', 'remove', id], env);
      assert.deepEqual([removed.code, removed.stdout], [0, `removed webhook endpoint ${id}\n`]);
      failed(await gatehouse(['webhooks', 'show', id], env), `no webhook endpoint ${id}`);
      const audited = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n').map((line) => (JSON.parse(line) as { event: string }).event).filter((e) => e.startsWith('webhook.'));
      assert.deepEqual(audited, ['webhook.created', 'webhook.updated', 'webhook.secret_rotated', 'webhook.deleted']);
      assert.ok(!readFileSync(join(dir, 'audit.log'), 'utf8').includes('whsec_'), 'no secret in the audit log');
    });
  });
}
