/**
 * Passkeys in the administrators' front ends (issue 24 item 6; docs/second-factors.md,
 * "Passkeys"): the management API and the CLI list a user's passkey as kind `passkey`, with
 * whether it is synced (`backup_eligible`) and never its credential ID, public key or user
 * handle; it is removed and reset by the same rules and audit events as the other factors.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import type { PasskeyFactor } from '../../../src/domain/factor.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import type { Store } from '../../../src/storage/ports.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { addUser } from '../../helpers/back-channel.ts';
import { runGatehouse as gatehouse } from '../../helpers/cli.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { manageCall, manageTokens, type ManageTokens } from '../../helpers/manage.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';

const CREDENTIAL_ID = 'Y3JlZGVudGlhbC1pZC1vZi10aGUtdGVzdA';
const PUBLIC_KEY = 'pQECAyYgASFYIHB1YmxpYy1rZXktb2YtdGhlLXRlc3Q';

const handleOf = (userId: string) => Buffer.from(`handle of ${userId}`).toString('base64url');

async function givePasskey(store: Store, userId: string, createdAt: number, backupEligible: boolean, credentialId = `${CREDENTIAL_ID}${randomUUID().slice(0, 4)}`): Promise<PasskeyFactor> {
  const passkey: PasskeyFactor = {
    factor: { id: randomUUID(), userId, kind: 'passkey', name: backupEligible ? 'Password manager' : 'Security key', createdAt, lastUsedAt: undefined, backupEligible },
    credentialId,
    publicKey: PUBLIC_KEY,
    signCount: 0,
    transports: ['usb'],
    backedUp: backupEligible,
    aaguid: '00000000-0000-0000-0000-000000000000',
  };
  await store.factors.insertPasskey(passkey);
  await store.factors.userHandle(userId, handleOf(userId));
  return passkey;
}

for (const db of DATABASES) {
  describe(`passkeys in the management API and the CLI (${db.name})`, () => {
    let server: RunningServer;
    let tokens: ManageTokens;
    const audit = new AuditCapture();
    const clock = new ManualClock(Date.UTC(2026, 10, 27, 12, 0, 0));
    before(async () => {
      server = await startServer(db, { audit, clock });
      tokens = await manageTokens(server);
    });
    after(async () => server.close());

    const call = (method: string, path: string, token = tokens.admin) => manageCall(server, method, path, { token });

    test('listed as kind passkey with backup_eligible, never the credential ID, key or user handle; removed and reset as any factor, audited', async () => {
      const user = await addUser(server.gatehouse.store);
      const bound = await givePasskey(server.gatehouse.store, user.id, clock.now() - 2000, false);
      const synced = await givePasskey(server.gatehouse.store, user.id, clock.now() - 1000, true);
      const listed = await call('GET', `/users/${user.id}/factors`, tokens.reader);
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(listed.json.items, [
        { id: bound.factor.id, kind: 'passkey', name: 'Security key', created_at: new Date(clock.now() - 2000).toISOString(), last_used_at: null, backup_eligible: false },
        { id: synced.factor.id, kind: 'passkey', name: 'Password manager', created_at: new Date(clock.now() - 1000).toISOString(), last_used_at: null, backup_eligible: true },
      ]);
      for (const secret of [CREDENTIAL_ID, PUBLIC_KEY, handleOf(user.id)]) assert.equal(listed.text.includes(secret), false, secret);

      audit.clear();
      assert.equal((await call('DELETE', `/users/${user.id}/factors/${bound.factor.id}`)).status, 204);
      assert.deepEqual(audit.all().map((e) => [e.event, 'kind' in e ? e.kind : undefined]), [['factor.removed', 'passkey']]);
      assert.equal(await server.gatehouse.store.factors.passkeyByCredentialId(bound.credentialId), undefined);
      const reset = await call('POST', `/users/${user.id}/factors/reset`);
      assert.deepEqual([reset.status, reset.json], [200, { removed: 1 }]);
      assert.deepEqual(await server.gatehouse.store.factors.passkeys(user.id), []);
    });

    test('`gatehouse user factors` shows the kind passkey; remove-factor removes it', async () => {
      const user = await addUser(server.gatehouse.store, { username: `cli-${randomUUID()}` });
      const passkey = await givePasskey(server.gatehouse.store, user.id, clock.now(), false);
      const env = { GATEHOUSE_DATABASE_URL: server.database.url, GATEHOUSE_ISSUER: server.issuer };
      const text = await gatehouse(['user', 'factors', user.username], env);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, new RegExp(`Security key\\s+passkey\\s+${passkey.factor.id}`));
      const json = JSON.parse((await gatehouse(['user', 'factors', user.username, '--json'], env)).stdout) as Record<string, unknown>[];
      assert.deepEqual(json.map((f) => [f.kind, f.backup_eligible]), [['passkey', false]]);
      const removed = await gatehouse(['user', 'remove-factor', user.username, passkey.factor.id], env);
      assert.equal(removed.stdout, 'Removed passkey factor "Security key".\n');
    });
  });
}
