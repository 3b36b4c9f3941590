/**
 * A client in a process of its own that times form posts, as an attacker measuring a server
 * would (test/mail/password-reset.test.ts, the enumeration test). In the test's own process the
 * server's work after an answer would hold up the test's reading of that answer (one event loop,
 * and node:sqlite is synchronous): measured here, an answer's time is the time until its last
 * byte arrives, whatever the server does afterwards.
 *
 * Each message `{ url, form, cookie }` is posted once; the reply is `{ status, ms }`.
 */
import { performance } from 'node:perf_hooks';

interface Ask {
  url: string;
  form: [string, string][];
  cookie: string;
}

process.on('message', (ask: Ask) => {
  void (async () => {
    const start = performance.now();
    const response = await fetch(ask.url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: ask.cookie }, body: new URLSearchParams(ask.form).toString() });
    await response.arrayBuffer();
    process.send!({ status: response.status, ms: performance.now() - start });
  })();
});
process.on('disconnect', () => process.exit(0));
