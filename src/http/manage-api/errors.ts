/**
 * The management API's errors: RFC 9457 problem details (`application/problem+json`), rendered in
 * one place (the plugin's error handler). A validation error names each offending field in
 * `errors[].field` (a JSON path such as `redirect_uris[0]`).
 */
export interface FieldError {
  field: string;
  message: string;
}

export class ManageProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly errors: FieldError[] | undefined;
  /** Extra response headers, e.g. WWW-Authenticate on a 401 (RFC 6750 §3). */
  readonly headers: Record<string, string>;

  constructor(status: number, title: string, detail: string, options: { errors?: FieldError[]; headers?: Record<string, string> } = {}) {
    super(detail);
    this.name = 'ManageProblem';
    this.status = status;
    this.title = title;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
  }

  /** The RFC 9457 §3.1 members. */
  toJSON(): Record<string, unknown> {
    return { type: 'about:blank', title: this.title, status: this.status, detail: this.message, ...(this.errors ? { errors: this.errors } : {}) };
  }
}

export const badRequest = (detail: string, errors?: FieldError[]) => new ManageProblem(400, 'Bad Request', detail, errors ? { errors } : {});
export const invalidField = (field: string, message: string) => new ManageProblem(400, 'Bad Request', `${field}: ${message}`, { errors: [{ field, message }] });
export const notFound = (detail: string) => new ManageProblem(404, 'Not Found', detail);
export const conflict = (detail: string, field?: string) => new ManageProblem(409, 'Conflict', detail, field ? { errors: [{ field, message: detail }] } : {});
export const forbidden = (detail: string) => new ManageProblem(403, 'Forbidden', detail);
