/**
 * Ceiling R2: RS256 signatures per second on the cores this process may use (the benchmark pins
 * it to the server's core). It signs an ID-token-sized payload with a 2048-bit key through
 * gatehouse's own signJwt (jose), with several signatures in flight as a busy server has.
 * Prints one JSON line: {"perSecond": …, "perCpuSecond": …, "count": …, "seconds": …}.
 */
import { parseArgs } from 'node:util';
import { exportJWK, generateKeyPair, importJWK, type CryptoKey } from 'jose';
import { signJwt } from '../../src/crypto/jwt.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '8' } } });
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

const { privateKey } = await generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
const key = { kid: 'bench', alg: 'RS256' as const, privateKey: (await importJWK(await exportJWK(privateKey), 'RS256')) as CryptoKey, createdAt: 0 };
const now = Math.floor(Date.now() / 1000);
const payload = {
  iss: 'http://127.0.0.1:8080/uas',
  sub: '6f1c1f53-7c4e-4a55-9d0b-3c3f4c1c2b1a',
  aud: '0b6b7d1e-2f1f-4d5e-8a9b-1c2d3e4f5a6b',
  exp: now + 3600,
  iat: now,
  auth_time: now - 5,
  amr: ['pwd'],
  session_index: '_0123456789abcdef0123456789abcdef01234567',
  azp: '0b6b7d1e-2f1f-4d5e-8a9b-1c2d3e4f5a6b',
  at_hash: 'x4Xb6QgmwqAyKQpBCN2pjw',
};

async function run(ms: number): Promise<number> {
  const end = performance.now() + ms;
  let count = 0;
  const lane = async () => {
    while (performance.now() < end) {
      await signJwt(payload, key);
      count++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return count;
}

await run(500); // warm-up
const started = performance.now();
const cpu = process.cpuUsage();
const count = await run(seconds * 1000);
const elapsed = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
const cpuSeconds = (used.user + used.system) / 1e6;
process.stdout.write(`${JSON.stringify({ perSecond: count / elapsed, perCpuSecond: count / cpuSeconds, count, seconds: elapsed, cpuSeconds })}\n`);
