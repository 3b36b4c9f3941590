/**
 * The initial-access-token use cases (src/manage/registration-tokens.ts) on every database: the
 * token names its creator from who acts (the CLI's `cli:<account>`, the management API's user or
 * client: each front end wrote it on its own before issue 23), the events name the actor, an
 * unknown id is refused (InitialAccessTokenNotFound) and emits nothing, and the list reads past
 * one batch.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InitialAccessTokenNotFound } from '../../src/manage/registration-tokens.ts';
import { actingAs, eventsOf, onEveryDatabase } from '../helpers/administration.ts';

onEveryDatabase('initial access token use cases', (suite) => {
  test('created_by is read from the actor: cli:<account>, cli, the administrator, a client’s own token', async () => {
    const { admin } = suite();
    const creators = [];
    for (const actor of [{ via: 'cli', caller: 'alice' }, { via: 'cli' }, { via: 'manage-api', caller: 'user-1', clientId: 'console' }, { via: 'manage-api', clientId: 'robot' }] as const) {
      const { token } = await admin.registrationTokens.create(actingAs(actor), { expiresIn: 60, uses: 1 });
      creators.push(token.createdBy);
    }
    assert.deepEqual(creators, ['cli:alice', 'cli', 'user-1', 'robot']);
  });

  test('create and revoke emit their events with the actor; revoking an unknown id is refused and emits nothing', async () => {
    const { admin, audit } = suite();
    audit.clear();
    const acting = actingAs();
    const { token, value } = await admin.registrationTokens.create(acting, { expiresIn: 3600, uses: 2, description: 'for tests' });
    assert.ok(value.length > 20 && !JSON.stringify(audit.all()).includes(value));
    await admin.registrationTokens.revoke(acting, token.id);
    await assert.rejects(admin.registrationTokens.revoke(acting, token.id), (e: unknown) => e instanceof InitialAccessTokenNotFound && e.message === `no initial access token has the id ${JSON.stringify(token.id)}`);
    assert.deepEqual(
      eventsOf(audit, 'initial_access_token.', ['id', 'expiresAt', 'uses']),
      [
        { event: 'initial_access_token.created', id: token.id, expiresAt: token.expiresAt, uses: 2, actor: { via: 'cli', caller: 'alice' } },
        { event: 'initial_access_token.revoked', id: token.id, actor: { via: 'cli', caller: 'alice' } },
      ],
    );
  });

  test('list reads every token, past one batch of 200', async () => {
    const { admin } = suite();
    const before = (await admin.registrationTokens.list()).length;
    for (let i = 0; i < 201; i++) await admin.registrationTokens.create(actingAs(), { expiresIn: 60, uses: 1 });
    assert.equal((await admin.registrationTokens.list()).length, before + 201);
  });
});
