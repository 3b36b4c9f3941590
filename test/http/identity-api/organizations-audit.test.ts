/**
 * The identity API's organization changes are audited (issue 23: the use cases of
 * src/manage/organizations.ts emit the event whichever front end asks; before, only the
 * management API's changes were): created, updated with the names of the fields given, deleted,
 * each naming the identity API and how its caller authenticated; a refused change emits nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventsOf } from '../../helpers/administration.ts';
import { AuditCapture } from '../../helpers/audit.ts';
import { DATABASES } from '../../helpers/databases.ts';
import { startServer, type RunningServer } from '../../helpers/server.ts';
import { API_PASSWORD, API_USERNAME, call, create } from './helpers.ts';

const db = DATABASES[0]!;

describe(`identity API organization changes are audited, on ${db.name}`, () => {
  const audit = new AuditCapture();
  let server: RunningServer;
  before(async () => {
    server = await startServer(db, { env: { GATEHOUSE_API_USERNAME: API_USERNAME, GATEHOUSE_API_PASSWORD: API_PASSWORD }, audit });
  });
  after(async () => server.close());

  test('create, update and delete: one event each, naming the identity API; a refused delete none', async () => {
    const parent = await create(server, 'organizations', { technicalName: 'audited-parent' });
    const child = await create(server, 'organizations', { technicalName: 'audited-child', parentOrganizationId: parent });
    const updated = await call(server, 'PUT', `/2.0/organizations/${child}`, { contentType: 'application/json', body: JSON.stringify({ attributes: { friendlyName: ['Child Oy'], vatnumber: ['1'] } }) });
    assert.equal(updated.status, 200, updated.text);
    assert.equal((await call(server, 'DELETE', `/2.0/organizations/${parent}`)).status, 409);
    assert.equal((await call(server, 'DELETE', `/2.0/organizations/${child}`)).status, 200);
    const actor = { via: 'identity-api', method: 'basic' };
    assert.deepEqual(
      eventsOf(audit, 'organization.', ['organizationId', 'technicalName', 'fields']),
      [
        { event: 'organization.created', organizationId: parent, technicalName: 'audited-parent', actor },
        { event: 'organization.created', organizationId: child, technicalName: 'audited-child', actor },
        { event: 'organization.updated', organizationId: child, technicalName: 'audited-child', fields: ['friendlyName', 'attributes'], actor },
        { event: 'organization.deleted', organizationId: child, technicalName: 'audited-child', actor },
      ],
    );
  });
});
