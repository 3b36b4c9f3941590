import type { onSendHookHandler } from 'fastify';

/** The headers of an answer nothing may cache (RFC 6749 §5.1, RFC 6750 §5.3, OIDC Core §5.3), made once. */
const NO_STORE = Object.freeze({ 'cache-control': 'no-store', pragma: 'no-cache' });

/**
 * An onSend hook that marks every answer of its routes no-store. A callback hook: the token,
 * introspection and UserInfo endpoints pass here on every request, and an async hook cost a
 * promise and an object per answer (issue 27).
 */
export const noStore: onSendHookHandler = (_request, reply, payload, done) => {
  reply.headers(NO_STORE);
  done(null, payload);
};
