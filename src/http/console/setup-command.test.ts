import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../config.ts';
import { BOOTSTRAP_COMMAND, bootstrapCommandFor } from './setup-command.ts';

test('a server with the default settings shows the bare command', () => {
  assert.deepEqual(bootstrapCommandFor(loadConfig({})), { command: BOOTSTRAP_COMMAND, passwordHidden: false });
  assert.equal(BOOTSTRAP_COMMAND, 'npx gatehouse admin bootstrap --username <name> --password-stdin');
  // The port alone is no setting of the command: the issuer it makes is.
  assert.deepEqual(bootstrapCommandFor(loadConfig({ GATEHOUSE_PORT: '9090' })), { command: `GATEHOUSE_ISSUER=http://127.0.0.1:9090/uas ${BOOTSTRAP_COMMAND}`, passwordHidden: false });
});

test('the issuer, the store (an absolute SQLite path) and the administrator groups that differ from the defaults, shell-quoted', () => {
  const config = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas', GATEHOUSE_DATABASE_URL: 'sqlite:data/other.db', GATEHOUSE_ADMIN_GROUP: 'Ops', GATEHOUSE_ADMIN_READONLY_GROUP: "Ops (it's read-only)" });
  assert.deepEqual(bootstrapCommandFor(config), {
    command: `GATEHOUSE_ISSUER=https://sso.example.com/uas GATEHOUSE_DATABASE_URL=sqlite:${resolve('data/other.db')} GATEHOUSE_ADMIN_GROUP=Ops GATEHOUSE_ADMIN_READONLY_GROUP='Ops (it'\\''s read-only)' ${BOOTSTRAP_COMMAND}`,
    passwordHidden: false,
  });
});

test('a PostgreSQL password, in the URL or as a parameter, is never shown: a placeholder stands for it', () => {
  const withPassword = bootstrapCommandFor(loadConfig({ GATEHOUSE_DATABASE_URL: 'postgres://gatehouse:s3cret@db.internal:5432/gatehouse' }));
  assert.deepEqual(withPassword, { command: `GATEHOUSE_DATABASE_URL='postgres://gatehouse:<password>@db.internal:5432/gatehouse' ${BOOTSTRAP_COMMAND}`, passwordHidden: true });
  const asParameter = bootstrapCommandFor(loadConfig({ GATEHOUSE_DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse?sslmode=require&password=s3cret' }));
  assert.deepEqual(asParameter, { command: `GATEHOUSE_DATABASE_URL='postgres://gatehouse@db.internal/gatehouse?sslmode=require' ${BOOTSTRAP_COMMAND}`, passwordHidden: true });
  const without = bootstrapCommandFor(loadConfig({ GATEHOUSE_DATABASE_URL: 'postgres://gatehouse@db.internal/gatehouse' }));
  assert.deepEqual(without, { command: `GATEHOUSE_DATABASE_URL=postgres://gatehouse@db.internal/gatehouse ${BOOTSTRAP_COMMAND}`, passwordHidden: false });
});
