/**
 * The application layer (src/manage/administration.ts) over a test store, as the composition root
 * binds it: a manual clock, a captured audit sink and a key ring whose rotated-in keys sign after
 * ACTIVATION_DELAY_MS. The tests of the use cases call it as every front end does.
 */
import { loadConfig } from '../../src/config.ts';
import { KeyRing } from '../../src/crypto/key-ring.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { cryptoRandom } from '../../src/lib/random.ts';
import { administration, type Acting, type Administration } from '../../src/manage/administration.ts';
import type { Actor } from '../../src/observability/audit.ts';
import type { Store } from '../../src/storage/ports.ts';
import { after, before, describe } from 'node:test';
import type { SqlStore } from '../../src/storage/sql/store.ts';
import { AuditCapture } from './audit.ts';
import { AS_OPERATOR } from './authority.ts';
import { DATABASES } from './databases.ts';
import { openTestStore, T0, type TestStore } from './store.ts';

/** How long a rotated-in key is only published before it signs: two key-cache periods of a minute. */
export const ACTIVATION_DELAY_MS = 120_000;

export interface AdministrationHarness {
  admin: Administration;
  audit: AuditCapture;
  clock: ManualClock;
}

export function administrationOver(store: Store): AdministrationHarness {
  const clock = new ManualClock(T0);
  const audit = new AuditCapture();
  const keyRing = new KeyRing(store.keys, clock, { encryptionSecret: undefined, retiredKeyGraceMs: 3_600_000, cacheMs: ACTIVATION_DELAY_MS / 2 });
  const settings = loadConfig({ GATEHOUSE_ISSUER: 'https://sso.example.com/uas' });
  return { admin: administration({ store, clock, random: cryptoRandom, audit, keyRing, settings }), audit, clock };
}

/** Who acts in a test: the operator, named by `actor` (default: the CLI's account `alice`). */
export function actingAs(actor: Actor = { via: 'cli', caller: 'alice' }): Acting {
  return { actor, authority: AS_OPERATOR };
}

/** A suite of use-case tests on every database: `tests` reads the store and the use cases over it with `suite()`. */
export function onEveryDatabase(name: string, tests: (suite: () => AdministrationHarness & { store: SqlStore }) => void): void {
  for (const kind of DATABASES) {
    describe(`${name} on ${kind.name}`, () => {
      let harness: TestStore;
      let current: AdministrationHarness & { store: SqlStore };
      before(async () => {
        harness = await openTestStore(kind);
        current = { ...administrationOver(harness.store), store: harness.store };
      });
      after(async () => harness.close());
      tests(() => current);
    });
  }
}

/** The captured events whose name starts with `prefix`, each as `event`, `actor` and the `facts` named (absent ones left out). */
export function eventsOf(audit: AuditCapture, prefix: string, facts: readonly string[]): object[] {
  return audit
    .all()
    .filter((e) => e.event.startsWith(prefix))
    .map((e) => {
      const fields = e as unknown as Record<string, unknown>;
      return JSON.parse(JSON.stringify(Object.fromEntries(['event', ...facts, 'actor'].map((name) => [name, fields[name]])))) as object;
    });
}
