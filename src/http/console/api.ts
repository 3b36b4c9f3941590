/**
 * The console's only way to read or change anything: the management API, called in-process with
 * `inject` and the signed-in administrator's bearer token, exactly as an outside client would call
 * it over HTTP. Authorization therefore lives only in the API (docs/decisions.md CO1): the console
 * hides buttons a reader cannot use, but what decides is the API's answer.
 *
 * `inject` on any Fastify instance runs the request through the root instance's router (Fastify
 * keeps one HTTP handler for the whole tree), so the console's encapsulated plugin reaches the
 * API's routes.
 */
import type { FastifyInstance } from 'fastify';
import { MANAGE_API_PATH } from '../../manage/management-clients.ts';

/** A field error of an RFC 9457 problem (`errors[]`), as the management API names it. */
export interface ApiFieldError {
  field: string;
  message: string;
}

export interface ApiAnswer {
  status: number;
  body: unknown;
  headers: Record<string, unknown>;
}

/** An answer the page cannot go on with (401, 403, 404, 5xx, …): the page handler turns it into a page. */
export class ApiError extends Error {
  readonly status: number;
  readonly detail: string;
  readonly fieldErrors: ApiFieldError[];

  constructor(answer: ApiAnswer) {
    const problem = (answer.body ?? {}) as { title?: unknown; detail?: unknown; errors?: unknown };
    const detail = typeof problem.detail === 'string' ? problem.detail : typeof problem.title === 'string' ? problem.title : `HTTP ${answer.status}`;
    super(`management API answered ${answer.status}: ${detail}`);
    this.name = 'ApiError';
    this.status = answer.status;
    this.detail = detail;
    this.fieldErrors = fieldErrorsOf(answer.body);
  }
}

/** The problem's `errors[]`, keeping only well-formed entries. */
export function fieldErrorsOf(body: unknown): ApiFieldError[] {
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return [];
  return errors.filter((e): e is ApiFieldError => typeof e === 'object' && e !== null && typeof e.field === 'string' && typeof e.message === 'string');
}

export type Query = Record<string, string | number | undefined>;

export interface ManageApi {
  /** Any answer, as it came. */
  call(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, options?: { query?: Query; body?: unknown }): Promise<ApiAnswer>;
  /** A 2xx answer's body, else ApiError. */
  get<T = Record<string, unknown>>(path: string, query?: Query): Promise<T>;
  send<T = Record<string, unknown>>(method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
}

/**
 * The API as the holder of `token` sees it. `remoteAddress` is the browser's address, so the API
 * (its logs, throttling, audit) sees who is really calling rather than the loopback.
 */
export function manageApi(app: Pick<FastifyInstance, 'inject'>, token: string, remoteAddress: string): ManageApi {
  const call: ManageApi['call'] = async (method, path, options = {}) => {
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(options.query ?? {})) if (value !== undefined && value !== '') query.set(name, String(value));
    const search = query.size > 0 ? `?${query}` : '';
    const hasBody = options.body !== undefined;
    const response = await app.inject({
      method,
      url: `${MANAGE_API_PATH}${path}${search}`,
      remoteAddress,
      headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(hasBody ? { 'content-type': 'application/json' } : {}) },
      ...(hasBody ? { payload: JSON.stringify(options.body) } : {}),
    });
    let body: unknown;
    try {
      body = response.body === '' ? undefined : JSON.parse(response.body);
    } catch {
      body = undefined;
    }
    return { status: response.statusCode, body, headers: response.headers };
  };
  return {
    call,
    get: async (path, query) => ensureOk(await call('GET', path, { query })),
    send: async (method, path, body) => ensureOk(await call(method, path, { body })),
  };
}

/** A 2xx answer's body, else ApiError (which the page wrapper turns into a page). */
export function ensureOk<T = Record<string, unknown>>(answer: ApiAnswer): T {
  if (answer.status < 200 || answer.status >= 300) throw new ApiError(answer);
  return answer.body as T;
}

/** A path segment of an id or name taken from the console's own URL, encoded for the API's URL. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
