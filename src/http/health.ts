import type { FastifyInstance } from 'fastify';
import type { HttpDeps } from './deps.ts';

const READY_TIMEOUT_MS = 2000;

/** Liveness says the process serves HTTP; readiness that the store answers too. */
export async function healthRoutes(app: FastifyInstance, deps: HttpDeps): Promise<void> {
  app.get('/health/live', async (_request, reply) => reply.header('cache-control', 'no-store').send({ status: 'ok' }));

  app.get('/health/ready', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      await withTimeout(deps.store.ping(), READY_TIMEOUT_MS);
      return reply.send({ status: 'ok' });
    } catch (error) {
      request.log.warn({ err: error }, 'store not ready');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
