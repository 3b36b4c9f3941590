/**
 * Records, for each SSO session a sign-in starts, the browser's User-Agent and the client address
 * (migration 033; the account page's session list, docs/account.md; decisions AM83). Done once,
 * where every sign-in of every page ends — the reply that sets the session cookie — so that no
 * use case needs to carry the browser's headers: one UPDATE by the session's primary key, before
 * the answer leaves, so the session list is right by the time the browser can ask for it.
 */
import type { FastifyInstance } from 'fastify';
import { describeSession } from '../oauth/sessions.ts';
import { clientAddress } from './client-address.ts';
import type { HttpDeps } from './deps.ts';
import { sessionStartedBy } from './interaction/cookies.ts';

export function recordSessionDevices(app: FastifyInstance, deps: Pick<HttpDeps, 'store'>): void {
  // A callback hook, not an async one: every reply passes here (the token endpoint and userinfo
  // too), and for all but a sign-in's it is one WeakMap lookup, no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    const cookieValue = sessionStartedBy(reply);
    if (cookieValue === undefined) return done(null, payload);
    const header = request.headers['user-agent'];
    const userAgent = typeof header === 'string' && header !== '' ? header : undefined;
    const ip = clientAddress(request);
    describeSession(deps, cookieValue, { userAgent, ip: ip === 'unknown' ? undefined : ip }).then(
      () => done(null, payload),
      (error: unknown) => {
        // What the list shows is a convenience: a failed write must not fail the sign-in it follows.
        request.log.warn({ err: error }, "could not record the session's browser and address");
        done(null, payload);
      },
    );
  });
}
