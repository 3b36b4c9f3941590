/**
 * The composition root: the only module that knows the concrete store. It opens the store,
 * makes sure a signing key exists, and builds the HTTP server over the abstract dependencies.
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from './config.ts';
import { KeyRing } from './crypto/key-ring.ts';
import type { HttpDeps } from './http/deps.ts';
import { buildHttpServer, type ServerOptions } from './http/server.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { cryptoRandom, type Random } from './lib/random.ts';
import { migrateToLatest, openDatabase } from './storage/sql/database.ts';
import { openSqlStore } from './storage/sql/store.ts';
import type { Store } from './storage/ports.ts';

export interface Runtime {
  clock?: Clock;
  random?: Random;
}

/** Opens the configured store (migrating it to the latest schema). */
export async function openStore(config: Config): Promise<Store> {
  return openSqlStore(config.databaseUrl, { poolSize: config.databasePoolSize });
}

/** Brings the configured store's schema up to date; the names of the migrations that ran (`gatehouse migrate`). */
export async function migrateStore(config: Config): Promise<string[]> {
  const database = openDatabase(config.databaseUrl, { poolSize: 1 });
  try {
    return await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
}

export function keyRingFor(config: Config, store: Store, clock: Clock = systemClock): KeyRing {
  return new KeyRing(store.keys, clock, {
    encryptionSecret: config.keyEncryptionKey,
    // A retired key stays published while anything it signed may still be verified.
    retiredKeyGraceMs: (Math.max(config.idTokenTtl, config.accessTokenTtl) + 300) * 1000,
  });
}

export interface Gatehouse {
  app: FastifyInstance;
  store: Store;
  deps: HttpDeps;
  close(): Promise<void>;
}

/** Everything a running server needs, wired; `close()` stops HTTP and then the store. */
export async function createGatehouse(config: Config, runtime: Runtime = {}, options: ServerOptions = {}): Promise<Gatehouse> {
  const clock = runtime.clock ?? systemClock;
  const random = runtime.random ?? cryptoRandom;
  const store = await openStore(config);
  try {
    const keyRing = keyRingFor(config, store, clock);
    await keyRing.ensureActiveKey();
    const deps: HttpDeps = { config, store, keyRing, clock, random, acrValues: config.acr === undefined ? [] : [config.acr] };
    const app = await buildHttpServer(deps, options);
    return {
      app,
      store,
      deps,
      async close() {
        await app.close();
        await store.close();
      },
    };
  } catch (error) {
    await store.close();
    throw error;
  }
}
