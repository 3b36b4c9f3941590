/**
 * Which initial access token registered a client can be told from the audit trail (issue 22,
 * item 5; docs/authorization.md "Dynamic client registration"): `client.registered` names the
 * token's id — not a secret — in the audit file and in the audit store alike, while every secret
 * of the registration and of the client's first token stays out of both (the store keeps
 * fingerprints only, decision AU4).
 */
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { cryptoRandom } from '../../src/lib/random.ts';
import { mintInitialAccessToken } from '../../src/oauth/dynamic-registration.ts';
import { fingerprint } from '../../src/observability/audit.ts';
import { basic, postForm } from '../helpers/back-channel.ts';
import { DATABASES } from '../helpers/databases.ts';
import { startServer } from '../helpers/server.ts';

for (const db of DATABASES) {
  describe(`the audit trail names the initial access token a client registered with, on ${db.name}`, () => {
    test('client.registered carries initialAccessTokenId in the file and the store; the secrets are in neither', async () => {
      const folder = await mkdtemp(join(tmpdir(), 'gatehouse-audit-'));
      const file = join(folder, 'audit.log');
      const server = await startServer(db, { env: { GATEHOUSE_DYNAMIC_REGISTRATION: 'initial_access_token', GATEHOUSE_AUDIT_LOG: file } });
      let stored: Record<string, unknown>[];
      let secrets: string[];
      let clientId: string;
      let tokenId: string;
      let accessToken: string;
      try {
        const { token, value } = await mintInitialAccessToken({ registrations: server.gatehouse.store.registrations, clock: { now: () => Date.now() }, random: cryptoRandom }, { expiresIn: 3600, uses: 1, createdBy: 'test' });
        tokenId = token.id;
        const response = await fetch(`${server.url}/uas/oauth2/register`, { method: 'POST', headers: { authorization: `Bearer ${value}`, 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Audited', grant_types: ['client_credentials'] }) });
        assert.equal(response.status, 201);
        const body = (await response.json()) as Record<string, string>;
        clientId = body.client_id!;
        const issued = await postForm(`${server.url}/uas/oauth2/token`, { grant_type: 'client_credentials' }, { authorization: basic(clientId, body.client_secret!) });
        assert.equal(issued.status, 200);
        accessToken = issued.body.access_token as string;
        secrets = [value, body.client_secret!, body.registration_access_token!, accessToken];
        await server.gatehouse.auditStore!.flush();
        stored = (await server.gatehouse.store.audit.page({ clientId, limit: 10 })).map((record) => ({ event: record.event, clientId: record.clientId, actorId: record.actorId, data: record.data }));
      } finally {
        await server.close();
      }
      const lines = (await readFile(file, 'utf8')).trim().split('\n');
      await rm(folder, { recursive: true });

      const actor = { via: 'dcr', clientId };
      const registered = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((event) => event.event === 'client.registered');
      assert.deepEqual(
        registered.map(({ clientId: id, initialAccessTokenId, actor: who, ip }) => ({ id, initialAccessTokenId, who, ip })),
        [{ id: clientId, initialAccessTokenId: tokenId, who: actor, ip: '127.0.0.1' }],
        'the file names the token by its id',
      );
      assert.deepEqual(
        stored.filter((record) => record.event === 'client.registered'),
        [{ event: 'client.registered', clientId, actorId: undefined, data: { initialAccessTokenId: tokenId, actor, ip: '127.0.0.1' } }],
        'the store names it too, not its fingerprint',
      );
      // The token.issued event keeps the access token's fingerprint, and no secret is anywhere.
      assert.deepEqual(stored.filter((record) => record.event === 'token.issued').map((record) => (record.data as Record<string, unknown>).accessToken), [fingerprint(accessToken)]);
      const everything = `${lines.join('\n')}\n${JSON.stringify(stored)}`;
      for (const secret of secrets) assert.ok(!everything.includes(secret), `a secret (${secret.slice(0, 6)}…) is in the audit trail`);
    });
  });
}
