/**
 * The identity API's invitations resource (docs/identity-api.md, "Invitations") on every
 * database: invite by query string and by JSON body (201 with the id and Location), list ids by
 * status, read the entity (never its link), resend, revoke; refusals in CustomerID's error codes:
 * an unknown attribute, a second pending invitation, an invitation not pending, mail off.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DATABASES } from '../../helpers/databases.ts';
import type { RunningServer } from '../../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../../helpers/smtp.ts';
import { call, startApiServer } from './helpers.ts';

for (const kind of DATABASES) {
  describe(`identity API invitations on ${kind.name}`, () => {
    let smtp: TestSmtpServer;
    let server: RunningServer;
    before(async () => {
      smtp = await startSmtpServer();
      server = await startApiServer(kind, { GATEHOUSE_SMTP_URL: smtp.url, GATEHOUSE_SMTP_STARTTLS: 'off', GATEHOUSE_MAIL_FROM: 'sso@mail.example', GATEHOUSE_OUTBOX_INTERVAL: '0' });
    });
    after(async () => {
      await server.close();
      await smtp.stop();
    });

    test('invite, list, read, resend, revoke; the mail sent each time', async () => {
      const created = await call(server, 'POST', '/2.0/invitations/?email=iida@example.com&firstname=Iida&locale=fi');
      assert.equal(created.status, 201, created.text);
      const [id] = created.json.invitations as string[];
      assert.equal(created.headers.get('location'), `/customerid-rest/services/2.0/invitations/${id}`);
      const byBody = await call(server, 'POST', '/2.1/invitations/', { contentType: 'application/json', body: JSON.stringify({ type: 'invitation', attributes: { email: ['jari@example.com'] } }) });
      assert.equal(byBody.status, 201, byBody.text);

      const read = await call(server, 'GET', `/2.0/invitations/${id}`);
      assert.equal(read.status, 200, read.text);
      const attributes = read.json.attributes as Record<string, string[]>;
      assert.deepEqual([read.json.type, attributes.email, attributes.firstname, attributes.status, attributes.locale], ['invitation', ['iida@example.com'], ['Iida'], ['pending'], ['fi']]);
      assert.doesNotMatch(read.text, /token/i, 'never the link');

      const pending = await call(server, 'GET', '/2.0/invitations/?status=pending');
      assert.ok((pending.json.invitations as string[]).includes(id!));

      assert.equal((await call(server, 'POST', `/2.0/invitations/${id}/resend`)).status, 200);
      await server.gatehouse.outbox.sender.tick();
      assert.deepEqual(smtp.received.filter((m) => m.to[0] === 'iida@example.com').map((m) => m.subject), ['Kutsu palveluun gatehouse', 'Kutsu palveluun gatehouse']);

      const revoked = await call(server, 'DELETE', `/2.0/invitations/${id}`);
      assert.deepEqual([revoked.status, revoked.json], [200, { invitations: [id] }]);
      const again = await call(server, 'DELETE', `/2.0/invitations/${id}`);
      assert.deepEqual([again.status, again.json], [409, { error: { code: 'Client error', message: 'the invitation to iida@example.com is revoked: only a pending invitation can be revoked' } }]);
    });

    test('refusals in CustomerID error codes', async () => {
      await call(server, 'POST', '/2.0/invitations/?email=kalle@example.com');
      const twice = await call(server, 'POST', '/2.0/invitations/?email=kalle@example.com');
      assert.deepEqual([twice.status, twice.json.error?.code], [409, 'Already exists']);
      const unknown = await call(server, 'POST', '/2.0/invitations/?email=lotta@example.com&shoeSize=42');
      assert.deepEqual([unknown.status, unknown.json.error], [400, { code: 'Invalid arguments', message: 'an invitation has no attribute shoeSize' }]);
      const missing = await call(server, 'POST', '/2.0/invitations/?firstname=Nobody');
      assert.deepEqual([missing.status, missing.json.error?.message], [400, 'email is required: the address the invitation goes to']);
      assert.equal((await call(server, 'GET', '/2.0/invitations/00000000-0000-4000-8000-000000000000')).status, 404);
    });
  });
}

describe('identity API invitations with mail off', () => {
  test('inviting is refused: 409 Client error naming the setting', async () => {
    const server = await startApiServer(DATABASES[0]!);
    try {
      const refused = await call(server, 'POST', '/2.0/invitations/?email=off@example.com');
      assert.deepEqual([refused.status, refused.json.error], [409, { code: 'Client error', message: 'mail is not configured, so no invitation can be sent: set GATEHOUSE_SMTP_URL and GATEHOUSE_MAIL_FROM (docs/mail.md)' }]);
    } finally {
      await server.close();
    }
  });
});
