/**
 * Ceiling R4: verifications per second of an ES256 client assertion (S8's private_key_jwt), with
 * jose on the cores this process may use (the benchmark pins it to the server's core), several in
 * flight as a busy server has. Each verification checks the signature and the claims a token
 * endpoint checks (issuer, audience, expiry), as `jwtVerify` does; nothing is cached between them.
 * Prints one JSON line: {"perSecond": …, "perCpuSecond": …, "count": …, "seconds": …}.
 */
import { parseArgs } from 'node:util';
import { importJWK, jwtVerify } from 'jose';
import { ASSERTION_ALG, generateClientKey, mintAssertions } from '../lib/assertions.ts';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '3' }, concurrency: { type: 'string', default: '8' } } });
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);

const CLIENT_ID = '0b6b7d1e-2f1f-4d5e-8a9b-1c2d3e4f5a6b';
const AUDIENCE = 'http://127.0.0.1:8080/uas/oauth2/token';
const key = await generateClientKey();
const verifyKey = await importJWK(key.publicJwk, ASSERTION_ALG);
const assertions = await mintAssertions(key, CLIENT_ID, AUDIENCE, 256);

async function run(ms: number): Promise<number> {
  const end = performance.now() + ms;
  let count = 0;
  const lane = async (lane: number) => {
    let i = lane;
    while (performance.now() < end) {
      await jwtVerify(assertions[i++ % assertions.length]!, verifyKey, { issuer: CLIENT_ID, subject: CLIENT_ID, audience: AUDIENCE, algorithms: [ASSERTION_ALG] });
      count++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => lane(i)));
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
