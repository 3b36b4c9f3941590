/**
 * Ceiling R3: argon2id hashes per second at gatehouse's configured parameters on the cores this
 * process may use (the benchmark pins it to the server's core). Hashes run on the libuv thread
 * pool, as in the server, with as many in flight as the pool has threads.
 * Prints one JSON line: {"perSecond": …, "perCpuSecond": …, "count": …, "seconds": …, "parameters": {…}}.
 */
import { parseArgs } from 'node:util';
import { ARGON2_PARAMETERS, hashPassword } from '../../src/identity/passwords.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '4' } } });
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

async function run(ms: number): Promise<number> {
  const end = performance.now() + ms;
  let count = 0;
  const lane = async (i: number) => {
    while (performance.now() < end) {
      await hashPassword(`correct horse battery staple ${i}`);
      count++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => lane(i)));
  return count;
}

await run(300); // warm-up
const started = performance.now();
const cpu = process.cpuUsage();
const count = await run(seconds * 1000);
const elapsed = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
process.stdout.write(`${JSON.stringify({ perSecond: count / elapsed, perCpuSecond: count / cpuSeconds, count, seconds: elapsed, cpuSeconds, parameters: ARGON2_PARAMETERS })}\n`);
