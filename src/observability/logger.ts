import type { FastifyServerOptions } from 'fastify';
import type { LogLevel } from '../config.ts';

/** Query and form parameters whose values never reach a log line. */
const SECRET_PARAMS = new Set([
  'password',
  'username',
  'client_secret',
  'code',
  'code_verifier',
  'token',
  'access_token',
  'refresh_token',
  'id_token_hint',
  'sessionindex',
]);

/** The URL with secret parameter values replaced by `[redacted]`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const parts = url.slice(q + 1).split('&').map((pair) => {
    const eq = pair.indexOf('=');
    const rawName = eq < 0 ? pair : pair.slice(0, eq);
    let name = rawName;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, ' '));
    } catch {
      // A malformed name is kept as it was sent.
    }
    return SECRET_PARAMS.has(name.toLowerCase()) && eq >= 0 ? `${rawName}=[redacted]` : pair;
  });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}

/** pino options for Fastify: JSON lines, request URLs redacted, credentials headers never logged. */
export function loggerOptions(level: LogLevel): NonNullable<FastifyServerOptions['logger']> {
  return {
    level,
    redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'res.headers["set-cookie"]'], censor: '[redacted]' },
    serializers: {
      req: (req: { method: string; url: string; ip?: string; id?: string }) => ({ method: req.method, url: redactUrl(req.url), remoteAddress: req.ip, reqId: req.id }),
    },
  };
}
