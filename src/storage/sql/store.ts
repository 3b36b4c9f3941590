import type { Kysely } from 'kysely';
import { StoreMissingError, type Store, type StoreTransaction } from '../ports.ts';
import { SqlClientStore } from './client-store.ts';
import { SqlCodeStore } from './code-store.ts';
import { SqlConsentStore } from './consent-store.ts';
import { SqlFactorStore } from './factor-store.ts';
import { SqlDeviceAuthorizationStore } from './device-authorization-store.ts';
import { hasSchema, migrateToLatest, openDatabase, ping, type DialectName, type OpenOptions, type SqlDatabase } from './database.ts';
import { SqlGroupStore } from './group-store.ts';
import { SqlKeyStore } from './key-store.ts';
import { SqlOrganizationStore } from './organization-store.ts';
import { SqlPolicyStore } from './policy-store.ts';
import { SqlRateLimitStore } from './rate-limit-store.ts';
import { SqlRegistrationStore } from './registration-store.ts';
import { SqlAssertionStore } from './assertion-store.ts';
import { SqlPasskeyChallengeStore } from './passkey-challenge-store.ts';
import { SqlPendingSignInStore } from './pending-sign-in-store.ts';
import { SqlSessionClientStore } from './session-client-store.ts';
import { SqlLogoutDeliveryStore } from './logout-delivery-store.ts';
import { SqlPasswordResetStore } from './password-reset-store.ts';
import { SqlEmailCodeStore } from './email-code-store.ts';
import { SqlAccountRegistrationStore } from './account-registration-store.ts';
import { SqlInvitationStore } from './invitation-store.ts';
import { SqlEmailVerificationStore } from './email-verification-store.ts';
import { SqlOutboxStore } from './outbox-store.ts';
import { SqlWebhookStore } from './webhook-store.ts';
import { SqlAuditStore } from './audit-store.ts';
import { SqlSessionStore } from './session-store.ts';
import { SqlThrottleStore } from './throttle-store.ts';
import { SqlTokenStore } from './token-store.ts';
import type { Database } from './schema.ts';
import { runUnitOfWork } from './unit-of-work.ts';
import { SqlUserStore } from './user-store.ts';

export interface SqlStore extends Store {
  database: SqlDatabase;
}

/**
 * Opens the database at `url`, brings its schema up to date, and returns the store over it. With
 * `create: false`, a store that does not exist yet is refused (StoreMissingError) instead.
 */
export async function openSqlStore(url: string, options: OpenOptions = {}): Promise<SqlStore> {
  const database = openDatabase(url, options);
  try {
    if (options.create === false && !(await hasSchema(database))) throw new StoreMissingError('the database holds no gatehouse tables');
    // Migrations may build indexes on big tables: never under the per-query limit.
    if ((options.queryTimeoutMs ?? 0) > 0 && database.dialect === 'postgres') await migrateUnlimited(url, options);
    else await migrateToLatest(database.db);
  } catch (error) {
    await database.close();
    throw error;
  }
  return sqlStoreOver(database);
}

/** Migrations on a connection of their own, without the per-query timeout. */
async function migrateUnlimited(url: string, options: OpenOptions): Promise<void> {
  const migration = openDatabase(url, { ...options, poolSize: 1, queryTimeoutMs: 0 });
  try {
    await migrateToLatest(migration.db);
  } finally {
    await migration.close();
  }
}

export function sqlStoreOver(database: SqlDatabase): SqlStore {
  const stores = storesOver(database.db, database.dialect);
  return {
    database,
    ...stores,
    transaction: (work) => runUnitOfWork(database.db, database.dialect, (trx) => work(storesOver(trx, database.dialect, stores))),
    ping: () => ping(database.db),
    close: () => database.close(),
    audit: new SqlAuditStore(database.db),
  };
}

interface SqlStores extends StoreTransaction {
  clients: SqlClientStore;
  users: SqlUserStore;
  sessions: SqlSessionStore;
  codes: SqlCodeStore;
  tokens: SqlTokenStore;
  throttling: SqlThrottleStore;
  rateLimits: SqlRateLimitStore;
  assertions: SqlAssertionStore;
  policies: SqlPolicyStore;
}

/**
 * The stores over `db` (the database, or a transaction of it). Inside a unit of work they reuse
 * the compiled statements of the database's own stores (`sharing`), so a transaction costs no
 * query compilation.
 */
function storesOver(db: Kysely<Database>, dialect: DialectName, sharing?: SqlStores): SqlStores {
  const clients = new SqlClientStore(db, sharing?.clients);
  return {
    clients,
    users: new SqlUserStore(db, sharing?.users),
    organizations: new SqlOrganizationStore(db, dialect),
    groups: new SqlGroupStore(db),
    policies: new SqlPolicyStore(db, sharing?.policies),
    sessions: new SqlSessionStore(db, sharing?.sessions),
    codes: new SqlCodeStore(db, sharing?.codes),
    tokens: new SqlTokenStore(db, dialect, clients, sharing?.tokens),
    keys: new SqlKeyStore(db, dialect),
    throttling: new SqlThrottleStore(db, dialect, sharing?.throttling),
    rateLimits: new SqlRateLimitStore(db, sharing?.rateLimits),
    assertions: new SqlAssertionStore(db, sharing?.assertions),
    deviceAuthorizations: new SqlDeviceAuthorizationStore(db),
    consents: new SqlConsentStore(db),
    registrations: new SqlRegistrationStore(db),
    factors: new SqlFactorStore(db, dialect),
    pendingSignIns: new SqlPendingSignInStore(db),
    passkeyChallenges: new SqlPasskeyChallengeStore(db),
    outbox: new SqlOutboxStore(db, dialect),
    webhooks: new SqlWebhookStore(db),
    passwordResets: new SqlPasswordResetStore(db),
    sessionClients: new SqlSessionClientStore(db),
    logoutDeliveries: new SqlLogoutDeliveryStore(db),
    emailCodes: new SqlEmailCodeStore(db),
    accountRegistrations: new SqlAccountRegistrationStore(db),
    invitations: new SqlInvitationStore(db),
    emailVerifications: new SqlEmailVerificationStore(db),
  };
}
