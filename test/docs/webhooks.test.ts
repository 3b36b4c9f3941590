/**
 * docs/webhooks.md stays true: its event catalogue is exactly the audit catalogue (the one
 * registry of event names), and its verification examples, run as written, accept a real delivery
 * of a running gatehouse and refuse a tampered one — the Node example always, the Python one where
 * python3 is installed.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { ManualClock } from '../../src/lib/clock.ts';
import { AUDIT_EVENTS } from '../../src/observability/audit-catalog.ts';
import { DATABASES } from '../helpers/databases.ts';
import { createTestUser } from '../helpers/fixtures.ts';
import { ensureManagementSetup, issueManageToken, manageCall } from '../helpers/manage.ts';
import { startServer, type RunningServer } from '../helpers/server.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

const DOC = readFileSync(new URL('../../docs/webhooks.md', import.meta.url), 'utf8');

function codeBlock(language: string): string {
  const match = new RegExp('```' + language + '\\n([\\s\\S]*?)```').exec(DOC);
  assert.ok(match, `docs/webhooks.md has a ${language} block`);
  return match[1]!;
}

function hasPython(): boolean {
  try {
    execFileSync('python3', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test('the catalogue in docs/webhooks.md is the audit catalogue, line for line', () => {
  const table = DOC.slice(DOC.indexOf('<!-- catalogue:start -->'), DOC.indexOf('<!-- catalogue:end -->')).split('\n').filter((line) => line.startsWith('| `'));
  assert.deepEqual(table, Object.entries(AUDIT_EVENTS).map(([name, text]) => `| \`${name}\` | ${text.replace(/\|/g, '\\|')} |`));
});

describe('the verification examples against a real delivery', () => {
  const db = DATABASES[0]!;
  let server: RunningServer;
  let clock: ManualClock;
  let receiver: WebhookReceiver;
  let dir: string;
  let secret: string;
  let delivery: ReceivedWebhook;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gatehouse-webhook-docs-'));
    clock = new ManualClock(Date.now());
    receiver = await startWebhookReceiver(() => clock.now());
    server = await startServer(db, { clock, env: { GATEHOUSE_OUTBOUND_LOOPBACK: 'on', GATEHOUSE_OUTBOX_INTERVAL: '0' } });
    await ensureManagementSetup(server);
    const token = await issueManageToken(server);
    const made = await manageCall(server, 'POST', '/webhooks', { token, body: { url: receiver.url('/docs'), events: ['user.updated'] } });
    secret = made.json.secret as string;
    const user = await createTestUser(server.gatehouse.store, { password: 'docs webhook 1' });
    assert.equal((await manageCall(server, 'PATCH', `/users/${user.id}`, { token, body: { given_name: 'Docs' } })).status, 200);
    await server.gatehouse.webhooks.flush();
    await server.gatehouse.outbox.sender.tick();
    assert.equal(receiver.received.length, 1);
    delivery = receiver.received[0]!;
  });
  after(async () => {
    await server.close();
    await receiver.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const headers = () => ({ 'webhook-id': delivery.id, 'webhook-timestamp': delivery.timestamp, 'webhook-signature': delivery.signature });

  test('Node: verifyWebhook accepts the delivery and returns its payload; a changed body or another secret is refused', async () => {
    const file = join(dir, 'verify.mjs');
    writeFileSync(file, codeBlock('js'));
    const { verifyWebhook } = (await import(pathToFileURL(file).href)) as { verifyWebhook: (secret: string, headers: Record<string, string>, body: string, now?: number) => unknown };
    assert.deepEqual(verifyWebhook(secret, headers(), delivery.body, clock.now()), delivery.payload);
    assert.throws(() => verifyWebhook(secret, headers(), delivery.body.replace('user.updated', 'user.deleted'), clock.now()), /no valid signature/);
    assert.throws(() => verifyWebhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`, headers(), delivery.body, clock.now()), /no valid signature/);
    assert.throws(() => verifyWebhook(secret, headers(), delivery.body, clock.now() + 600_000), /too far from now/);
  });

  test('Python: verify_webhook accepts the delivery and refuses a changed body', { skip: hasPython() ? false : 'python3 is not installed' }, () => {
    const file = join(dir, 'verify.py');
    writeFileSync(file, `${codeBlock('python')}\nimport sys\nh = json.loads(sys.argv[2])\ntry:\n    print(json.dumps(verify_webhook(sys.argv[1], h, sys.stdin.buffer.read(), tolerance=10**9)["type"]))\nexcept ValueError as e:\n    print(str(e))\n`);
    const run = (body: string) => execFileSync('python3', [file, secret, JSON.stringify(headers())], { input: body }).toString().trim();
    assert.equal(run(delivery.body), '"user.updated"');
    assert.equal(run(delivery.body.replace('user.updated', 'user.deleted')), 'no valid signature');
  });
});
