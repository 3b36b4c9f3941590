/**
 * `npm run fuzz`: the fuzz suites with many runs and a random seed, printed first so a failure can
 * be replayed. `npm test` runs the same suites with a fixed seed and a few runs each.
 *
 *   npm run fuzz                                   # FUZZ_RUNS=1000 runs per property, a random seed
 *   FUZZ_RUNS=5000 npm run fuzz                    # more
 *   FUZZ_SEED=123 FUZZ_RUNS=1000 npm run fuzz      # replay a seed
 *   npm run fuzz -- test/fuzz/identity-api.test.ts # one suite
 *   GATEHOUSE_TEST_POSTGRES_URL=postgres://… npm run fuzz   # on PostgreSQL too
 *
 * FUZZ_STATS=1 prints, per endpoint, how many answers of each status a run produced.
 */
import { spawnSync } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const seed = process.env.FUZZ_SEED || String(randomInt(1, 2 ** 31 - 1));
const runs = process.env.FUZZ_RUNS || '1000';
const chosen = process.argv.slice(2);
const files = chosen.length > 0 ? chosen : readdirSync(import.meta.dirname).filter((name) => name.endsWith('.test.ts')).map((name) => join(import.meta.dirname, name));

console.log(`fuzz: FUZZ_SEED=${seed} FUZZ_RUNS=${runs}${process.env.GATEHOUSE_TEST_POSTGRES_URL ? ' (SQLite and PostgreSQL)' : ' (SQLite)'}`);
console.log(`replay: FUZZ_SEED=${seed} FUZZ_RUNS=${runs} npm run fuzz${chosen.length > 0 ? ` -- ${chosen.join(' ')}` : ''}`);
const result = spawnSync(process.execPath, ['--test', '--test-reporter=spec', ...files], { stdio: 'inherit', env: { ...process.env, FUZZ_SEED: seed, FUZZ_RUNS: runs } });
process.exit(result.status ?? 1);
