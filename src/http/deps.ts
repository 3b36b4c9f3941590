import type { Config } from '../config.ts';
import type { KeyRing } from '../crypto/key-ring.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import type { Store } from '../storage/ports.ts';

/** Everything the HTTP layer is given by the composition root (src/app.ts). */
export interface HttpDeps {
  config: Config;
  store: Store;
  keyRing: KeyRing;
  clock: Clock;
  random: Random;
  acrValues: readonly string[];
}
