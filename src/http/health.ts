import type { FastifyInstance } from 'fastify';
import { storeReady } from '../oauth/readiness.ts';
import type { HttpDeps } from './deps.ts';

const READY_TIMEOUT_MS = 2000;

/**
 * Liveness says the process serves HTTP; readiness that it can do its work: the store answers and
 * the active signing key loads (an instance that cannot sign would fail every token request, so
 * it leaves the balancer). The key is read through the key ring's cache, so a probe costs a store
 * read at most once per GATEHOUSE_KEY_CACHE_TTL; a read that failed is tried again at the next probe.
 */
export async function healthRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.get('/health/live', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/health/ready', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      await withTimeout(storeReady(deps), READY_TIMEOUT_MS);
    } catch (error) {
      request.log.warn({ err: error }, 'store not ready');
      return reply.code(503).send({ status: 'unavailable' });
    }
    try {
      await withTimeout(deps.keyRing.activeKey(), READY_TIMEOUT_MS);
    } catch (error) {
      // The reason (no key, a key that does not decrypt with GATEHOUSE_KEY_ENCRYPTION_KEY) goes to
      // the log only: the probe is public.
      request.log.error({ err: error }, 'the active signing key cannot be loaded: not ready');
      return reply.code(503).send({ status: 'unavailable' });
    }
    return reply.send({ status: 'ok' });
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
