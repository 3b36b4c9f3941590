/**
 * Input limits, so that one request can cost only so much and a malformed one is refused in the
 * endpoint's own error format instead of being guessed at:
 *
 * | what | limit | answer |
 * |---|---|---|
 * | request line + headers | MAX_HEADER_SIZE (16 KiB, Node's default, set explicitly) — this also bounds the URL | 431 (400 for a request line or header Node cannot parse), JSON `invalid_request`, connection closed |
 * | body | BODY_LIMIT (64 KiB) | 413, the endpoint's `invalid_request` |
 * | parameters in a query or form body | MAX_PARAMS (100) | 400, the endpoint's `invalid_request` |
 * | parameter name / value | MAX_NAME_LENGTH (256) / MAX_VALUE_LENGTH (8192) characters, decoded | 400, the endpoint's `invalid_request` |
 * | percent-encoding and UTF-8 | bad `%` escapes and non-UTF-8 bytes (encoded or raw) are refused | 400, the endpoint's `invalid_request` |
 *
 * "The endpoint's own format" is whatever its error handler renders for an InvalidRequest: JSON
 * at the token, introspection, revocation and status endpoints, a Bearer challenge at userinfo,
 * the HTML error page at the authorization, login and logout endpoints (a request that cannot be
 * parsed has no verified client to redirect to), the identity API's own error document.
 *
 * An `Expect` header other than 100-continue is answered 417 (as Node would) with the headers.
 *
 * Errors Node's HTTP parser raises before a request exists (header overflow, a malformed request
 * line, a timeout) never reach a route; clientErrorHandler answers them with the same JSON and
 * security headers instead of Fastify's default body. Likewise a path the router cannot decode
 * (`/uas/status%`, `%FF`) or whose parameter is over the router's maxParamLength:
 * frameworkErrorHandler, instead of Fastify's default body that echoes the path and lacks every
 * security header.
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../../config.ts';
import { InvalidRequest } from '../../oauth/errors.ts';
import { paramsProblem, parseFormBytes, type ParamLimits } from '../params.ts';
import { securityHeaders } from './security-headers.ts';

export { MAX_NAME_LENGTH, MAX_PARAMS, MAX_VALUE_LENGTH } from '../params.ts';

/** Bytes of a request body, at every endpoint. */
export const BODY_LIMIT = 64 * 1024;
/** Bytes of the request line and headers together (Node's `maxHeaderSize`). */
export const MAX_HEADER_SIZE = 16 * 1024;

/**
 * The form-body parser (replacing @fastify/formbody, whose parser sees the body only after
 * Buffer#toString has already turned invalid UTF-8 into U+FFFD) and the check that refuses a
 * malformed query string. Call on the root instance before the routes: both are inherited.
 */
export function useRequestLimits(app: FastifyInstance, config: Pick<Config, 'issuer'>): void {
  // An `Expect` other than 100-continue: Node would answer 417 itself, bare of every security
  // header (RFC 9110 §10.1.1 allows the 417); this answers the same status with them.
  const expectationHeaders = { ...securityHeaders(config), 'cache-control': 'no-store', 'content-type': 'application/json', connection: 'close' };
  const expectationBody = JSON.stringify({ error: 'invalid_request', error_description: 'Only the expectation 100-continue is supported.' });
  app.server.on('checkExpectation', (_request: IncomingMessage, response: ServerResponse) => {
    response.writeHead(417, { ...expectationHeaders, 'content-length': Buffer.byteLength(expectationBody) }).end(expectationBody);
  });

  // A path in anything but its one normal form is refused before the route group's own hooks
  // run (authentication included), in the format of the endpoint the router found.
  app.addHook('onRequest', async (request) => {
    const problem = pathProblem(request.url);
    if (problem !== undefined) throw new InvalidRequest(`The request path ${problem}.`);
  });

  useFormParser(app);
  // The query string was parsed while routing, where nothing may throw (src/http/params.ts).
  // preValidation runs after a route group's own onRequest hooks (the identity API authenticates
  // there first) and before its handler, and what it throws goes to the group's error handler.
  app.addHook('preValidation', async (request) => {
    const problem = paramsProblem(request.query);
    if (problem !== undefined) throw new InvalidRequest(problem);
  });
}

/**
 * The strict form-body parser (src/http/params.ts) for `app` and its children. A child context
 * may install its own with looser limits (the console's JSON text areas, after removing the
 * inherited one); the body stays bounded by BODY_LIMIT either way.
 */
export function useFormParser(app: FastifyInstance, limits: ParamLimits = {}): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: BODY_LIMIT }, (_request: FastifyRequest, body: string | Buffer, done: (error: Error | null, body?: unknown) => void) => {
    const params = parseFormBytes(typeof body === 'string' ? Buffer.from(body) : body, limits);
    const problem = paramsProblem(params);
    if (problem === undefined) done(null, params);
    else done(new InvalidRequest(problem));
  });
}

/** `%` and two hex digits that encode an unreserved character: ALPHA / DIGIT / "-" / "." / "_" / "~" (RFC 3986 §2.3). */
const ENCODED_UNRESERVED = /%(?:[46][1-9a-f]|[57][0-9a]|3[0-9]|2[de]|5f|7e)/i;
/** A "." or ".." segment (RFC 3986 §3.3), an empty segment inside the path, or a backslash. */
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/;
const NOT_NORMAL = /\/\.\.?(?:\/|$)|\/\/|\\/;

/**
 * Why the path of a request target (`url`, as sent) is refused, or undefined. Decision X3
 * (docs/decisions.md): a reverse proxy that allows or denies by path prefix must read the same
 * path as we do, so every path that a normaliser would rewrite is refused rather than routed:
 *
 * - percent-encoded unreserved characters (`/%63ustomerid-rest/…`, `%2e%2e`): RFC 3986 §6.2.2.2
 *   makes them equal to the decoded form, and our router decodes them, so a proxy rule on
 *   `/customerid-rest/` would be bypassed;
 * - dot-segments (`/uas/oauth2/../../customerid-rest`): RFC 3986 §5.2.4 removes them, Node and
 *   our router do not; a proxy that does would route elsewhere than we do;
 * - `//` (nginx's `merge_slashes` collapses it) and `\` (WHATWG URL reads it as `/`).
 *
 * Left as they are, and matched literally (so they reach no route but the one they name):
 * `%2F` and `%5C`, which the router never splits on and which a path parameter may hold (a group
 * name with a slash); `;`, which is an ordinary character (no servlet-style `;jsessionid`).
 */
export function pathProblem(url: string): string | undefined {
  const query = url.indexOf('?');
  // An absolute-form target (RFC 9112 §3.2.2) is routed by its path: the scheme and authority go.
  const path = (query === -1 ? url : url.slice(0, query)).replace(ABSOLUTE_FORM, '');
  // The descriptions are error_description text: printable ASCII without '"' or '\' (RFC 6749 §5.2).
  if (ENCODED_UNRESERVED.test(path)) return 'percent-encodes a character that needs no encoding (RFC 3986 section 6.2.2.2)';
  if (NOT_NORMAL.test(path)) return 'has a dot-segment, an empty segment or a backslash (RFC 3986 section 6.2.2.3)';
  return undefined;
}

type ClientError = Error & { code?: string };

/**
 * Fastify's clientErrorHandler: the answer to a request Node could not parse. Which endpoint was
 * meant is unknown, so the body is the OAuth JSON error; the security headers are the same as on
 * every other response. The connection is closed, as Node does by default.
 */
export function clientErrorHandler(config: Pick<Config, 'issuer'>): (error: ClientError, socket: Socket) => void {
  const headers = Object.entries({ ...securityHeaders(config), 'cache-control': 'no-store' })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (error, socket) => {
    // A reset connection has nobody left to answer (Node's own default does the same).
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const [status, description] =
      error.code === 'HPE_HEADER_OVERFLOW' ? [431, `The request line and headers are larger than ${MAX_HEADER_SIZE / 1024} KiB.`]
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'The request took too long to arrive.']
      : [400, 'The request is malformed.'];
    const body = JSON.stringify({ error: 'invalid_request', error_description: description });
    if (socket.writable) {
      socket.write(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers}connection: close\r\n\r\n${body}`);
    }
    socket.destroy(error);
  };
}

/**
 * Fastify's frameworkErrors: a path the router could not decode (FST_ERR_BAD_URL) or whose path
 * parameter is over maxParamLength (FST_ERR_MAX_PARAM_LENGTH, 414). No route matched, so no route
 * group's hooks or error handler run: the security headers are set here, and the path is not
 * echoed (Fastify's default body did, which made a reflection of any bytes in the URL).
 */
export function frameworkErrorHandler(config: Pick<Config, 'issuer'>): (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => void {
  const headers = { ...securityHeaders(config), 'cache-control': 'no-store' };
  return (error, _request, reply) => {
    const tooLong = error.code === 'FST_ERR_MAX_PARAM_LENGTH';
    void reply
      .code(tooLong ? 414 : 400)
      .headers(headers)
      .type('application/json')
      .send({ error: 'invalid_request', error_description: tooLong ? 'A path segment is too long.' : 'The request path is malformed.' });
  };
}
