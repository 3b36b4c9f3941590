/**
 * `node bench/audit-sink-cost.ts [URL] [EVENTS] [MAX_BATCH|default] [PER_10_MS] [user|client]`: the CPU the
 * audit store sink (src/observability/audit-store-sink.ts) costs per event over a real store,
 * alone: EVENTS `token.issued` events of 50 users are emitted, PER_10_MS every 10 ms (40: 4 000
 * events/s, as S7 issues tokens, so the 100 ms timer decides the batch sizes; 0: as fast as
 * possible, 50 between turns of the event loop), then flushed. Prints this process's CPU per event
 * (process.cpuUsage) and the wall time. SUBJECT `client` makes them S7's shape, without a user. Use a fresh database each run; pin it (`taskset -c 0`) and
 * alternate the trees you compare (docs/performance.md, "Audit events in the store (issue 14)").
 */
import { systemClock } from '../src/lib/clock.ts';
import type { AuditEvent } from '../src/observability/audit.ts';
import { storeAuditSink } from '../src/observability/audit-store-sink.ts';
import { openSqlStore } from '../src/storage/sql/store.ts';

const [url = 'sqlite:bench/results/audit-sink-cost.db', events = '20000', batch = 'default', perTick = '40', subject = 'user'] = process.argv.slice(2);
const n = Number(events);
const pace = Number(perTick);
const store = await openSqlStore(url, { poolSize: 4 });
const sink = storeAuditSink(store.audit, systemClock, { error: (fields, message) => console.error(message, fields) }, batch === 'default' ? {} : { maxBatch: Number(batch) });
const event = (i: number) =>
  ({ event: 'token.issued', grantType: 'authorization_code', clientId: 'bench-rp', userId: subject === 'client' ? undefined : `u-${i % 50}`, scope: 'openid profile', family: 'abcdefabcdef', accessToken: 'Zk3jd8s0dk2l', idToken: true, ip: '127.0.0.1' }) as AuditEvent;
const pause = () => new Promise((resolve) => (pace > 0 ? setTimeout(resolve, 10) : setImmediate(resolve)));

const run = async (count: number) => {
  for (let i = 0; i < count; i++) {
    sink.emit(event(i));
    if (i % (pace > 0 ? pace : 50) === 0) await pause();
  }
  await sink.flush();
};
await run(2000); // warm-up
const cpu0 = process.cpuUsage();
const wall0 = performance.now();
await run(n);
const cpu = process.cpuUsage(cpu0);
const wall = performance.now() - wall0;
process.stdout.write(`${url.split(':')[0]}, MAX_BATCH ${batch}, ${n} events${pace > 0 ? ` at ${pace * 100}/s` : ''}: ${((cpu.user + cpu.system) / n).toFixed(2)} µs CPU per event (user ${(cpu.user / n).toFixed(2)}, system ${(cpu.system / n).toFixed(2)}), wall ${((wall * 1000) / n).toFixed(1)} µs per event\n`);
await store.close();
