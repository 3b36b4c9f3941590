/**
 * Work a page runs once its answer has left (password reset AM40, self-registration AM61): the
 * answer — status, body, headers and when it leaves — must not depend on what the work finds
 * (whether an account exists), so the lookup and the mail follow the response. 'close' comes after
 * 'finish', and also when the client went away first. Closing the server waits for the work still
 * running, before the store closes.
 */
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Runs `work` after `reply` is sent; a failure is logged as `failure`, never reaches anyone. */
export type AfterAnswer = (reply: FastifyReply, work: () => Promise<void>, failure: string) => void;

export function afterAnswer(app: FastifyInstance): AfterAnswer {
  const working = new Set<Promise<void>>();
  app.addHook('onClose', async () => {
    await Promise.allSettled([...working]);
  });
  return (reply, work, failure) => {
    reply.raw.once('close', () => {
      const running = work().catch((error: unknown) => reply.request.log.error({ err: error }, failure));
      working.add(running);
      void running.finally(() => working.delete(running));
    });
  };
}
