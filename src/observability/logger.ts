import type { FastifyServerOptions } from 'fastify';
import { stdTimeFunctions } from 'pino';
import type { LogLevel, LogTime } from '../config.ts';

/**
 * The query parameters whose values a log line may show (decision X4, docs/decisions.md): only
 * these, which say what was asked and never who asked or with what proof. Every other value is
 * `[redacted]` — codes, tokens, verifiers, secrets and passwords; replay-relevant values (`nonce`,
 * `state`, `code_challenge`, which equals the verifier with the `plain` method); and whatever
 * identifies a user (`login_hint`, `id_token_hint`, `sessionindex`, the identity API's listing
 * filters such as `email` or any attribute). An allowlist, because a denylist misses the
 * parameter nobody thought of.
 */
const LOGGED_PARAMS = new Set([
  'client_id',
  'response_type',
  'response_mode',
  'redirect_uri',
  'post_logout_redirect_uri',
  'scope',
  'prompt',
  'max_age',
  'display',
  'ui_locales',
  'claims_locales',
  'acr_values',
  'code_challenge_method',
  'grant_type',
  'token_type_hint',
  'entityid',
  'exactmatch',
  'maxresults',
  'recursive',
]);

/**
 * The URL with every parameter value not on the allowlist replaced by `[redacted]`; a parameter
 * without `=` that is not on it is redacted whole. Names compare case-insensitively, after
 * percent-decoding (`pass%77ord` is `password`).
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url.slice(q + 1).split('&').map((pair) => {
    if (pair === '') return pair;
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // A malformed name is on no allowlist.
    }
    if (LOGGED_PARAMS.has(name.toLowerCase())) return pair;
    return eq < 0 ? '[redacted]' : `${rawName}=[redacted]`;
  });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** pino's `timestamp` option for GATEHOUSE_LOG_TIME: epoch milliseconds, or an ISO 8601 string. */
export function logTimestamp(time: LogTime): () => string {
  return time === 'iso' ? stdTimeFunctions.isoTime : stdTimeFunctions.epochTime;
}

/** pino options for Fastify: JSON lines, request URLs redacted, credentials headers never logged. */
export function loggerOptions(level: LogLevel, time: LogTime = 'epoch'): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    timestamp: logTimestamp(time),
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip, reqId: req.id }),
    },
  };
}
