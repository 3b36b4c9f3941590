/**
 * The management API's errors: RFC 9457 problem details (`application/problem+json`), rendered in
 * one place (the plugin's error handler). A validation error names each offending field in
 * `errors[].field` (a JSON path such as `redirect_uris[0]`).
 */
import type { FastifyError, FastifyRequest } from 'fastify';
import { ConflictError, MissingReferenceError, OrganizationInUseError, PolicyInUseError, ProtectedClientError, TreeShapeError } from '../../domain/errors.ts';
import { MailNotConfiguredError, OutboxStateError } from '../../domain/outbox.ts';
import { WebhookInvalid } from '../../domain/webhook.ts';
import { PolicyDocumentError } from '../../domain/policy.ts';
import { IdentityError, type IdentityErrorCode } from '../../identity/errors.ts';
import { ClientIdIsUserId, ClientNotFound, InvalidClientMetadata } from '../../oauth/client-registration.ts';
import { PayloadTooLarge, TemporarilyUnavailable } from '../../oauth/errors.ts';
import { PolicyNotFound, PolicyRenamed } from '../../oauth/policy/manage.ts';
import { toOAuthError } from '../render/errors.ts';

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

export const unsupportedMediaType = () => new ManageProblem(415, 'Unsupported Media Type', 'The request body must be JSON (content-type: application/json).');

/** The field-level message of an error whose message is `field: message`. */
function fieldMessage(field: string, message: string): string {
  return message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
}

/** A 4xx that names the field the use case said was at fault. */
function fieldProblem(status: number, title: string, field: string | undefined, message: string): ManageProblem {
  return new ManageProblem(status, title, message, field === undefined ? {} : { errors: [{ field, message: fieldMessage(field, message) }] });
}

/** The identity use cases' codes (src/identity/errors.ts) as HTTP statuses. */
const IDENTITY_STATUS: Record<IdentityErrorCode, [number, string]> = {
  invalid_argument: [400, 'Bad Request'],
  invalid_reference: [400, 'Bad Request'],
  not_found: [404, 'Not Found'],
  already_exists: [409, 'Conflict'],
  in_use: [409, 'Conflict'],
  inconsistent: [409, 'Conflict'],
  last_administrator: [409, 'Conflict'],
  administrators_only: [403, 'Forbidden'],
};

/**
 * The identity use cases' domain names of fields as the wire (snake_case) names them; any other
 * field an identity error names is a custom attribute (src/identity/attributes.ts), `attributes.<name>`.
 */
const WIRE_FIELDS: Record<string, string> = {
  username: 'username',
  password: 'password',
  email: 'email',
  status: 'status',
  givenName: 'given_name',
  familyName: 'family_name',
  organizationId: 'organization_id',
  groups: 'groups',
  name: 'name',
  description: 'description',
  technicalName: 'technical_name',
  friendlyName: 'name',
  parentId: 'parent_id',
  type: 'type',
  virtual: 'virtual',
  secret: 'secret',
  digits: 'digits',
  period: 'period',
  algorithm: 'algorithm',
};

function wireField(field: string | undefined): string | undefined {
  if (field === undefined) return undefined;
  return Object.hasOwn(WIRE_FIELDS, field) ? WIRE_FIELDS[field] : `attributes.${field}`;
}

/**
 * The one table of known use-case errors and the problem each is (docs/management-api.md,
 * "Errors"). A helper adding a use case whose errors the API must answer adds its row here.
 */
const PROBLEM_MAPPINGS: { matches(error: unknown): boolean; problem(error: never): ManageProblem }[] = [
  { matches: (e) => e instanceof InvalidClientMetadata, problem: (e: InvalidClientMetadata) => fieldProblem(400, 'Bad Request', e.field, e.message) },
  { matches: (e) => e instanceof ClientNotFound, problem: (e: ClientNotFound) => notFound(e.message) },
  { matches: (e) => e instanceof ClientIdIsUserId, problem: (e: ClientIdIsUserId) => conflict(e.message, 'client_id') },
  { matches: (e) => e instanceof ProtectedClientError, problem: (e: ProtectedClientError) => conflict(e.message) },
  { matches: (e) => e instanceof PolicyNotFound, problem: (e: PolicyNotFound) => notFound(e.message) },
  { matches: (e) => e instanceof PolicyDocumentError, problem: (e: PolicyDocumentError) => fieldProblem(400, 'Bad Request', e.field, e.message) },
  { matches: (e) => e instanceof PolicyRenamed, problem: (e: PolicyRenamed) => fieldProblem(400, 'Bad Request', 'name', e.message) },
  { matches: (e) => e instanceof PolicyInUseError, problem: (e: PolicyInUseError) => conflict(e.message) },
  { matches: (e) => e instanceof IdentityError, problem: (e: IdentityError) => fieldProblem(IDENTITY_STATUS[e.code][0], IDENTITY_STATUS[e.code][1], wireField(e.field), e.message) },
  { matches: (e) => e instanceof ConflictError, problem: (e: ConflictError) => conflict(e.message) },
  { matches: (e) => e instanceof MissingReferenceError, problem: (e: MissingReferenceError) => badRequest(e.message) },
  { matches: (e) => e instanceof OrganizationInUseError, problem: (e: OrganizationInUseError) => conflict(e.message) },
  { matches: (e) => e instanceof TreeShapeError, problem: (e: TreeShapeError) => conflict(e.message) },
  { matches: (e) => e instanceof OutboxStateError, problem: (e: OutboxStateError) => conflict(e.message) },
  { matches: (e) => e instanceof WebhookInvalid, problem: (e: WebhookInvalid) => fieldProblem(400, 'Bad Request', e.field, e.message) },
  // Mail off is the deployment's state, not the request's fault: 409 with what to set (docs/mail.md).
  { matches: (e) => e instanceof MailNotConfiguredError, problem: (e: MailNotConfiguredError) => conflict(e.message) },
];

/** Ajv's instancePath (`/redirect_uris/0`) as a field (`redirect_uris[0]`). */
export function fieldOf(instancePath: string, member?: string): string {
  const parts = instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (member !== undefined) parts.push(member);
  return parts.reduce((out, part) => (/^\d+$/.test(part) ? `${out}[${part}]` : out === '' ? part : `${out}.${part}`), '');
}

interface AjvError {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** At most this many field errors are listed: a hostile body cannot make the answer grow with it. */
const MAX_FIELD_ERRORS = 20;

/** Fastify's validation error as a 400 naming each field. */
function validationProblem(errors: AjvError[], context: string | undefined): ManageProblem {
  const fieldErrors: FieldError[] = [];
  for (const e of errors.slice(0, MAX_FIELD_ERRORS)) {
    if (e.keyword === 'required') fieldErrors.push({ field: fieldOf(e.instancePath, String(e.params.missingProperty)), message: 'is required' });
    else if (e.keyword === 'additionalProperties') fieldErrors.push({ field: fieldOf(e.instancePath, String(e.params.additionalProperty)), message: context === 'querystring' ? 'is not a parameter of this request' : 'is not a member this resource has' });
    else fieldErrors.push({ field: fieldOf(e.instancePath) || (context ?? 'body'), message: e.message ?? 'is invalid' });
  }
  // One error per field: Ajv may report a field once per failed keyword.
  const unique = fieldErrors.filter((e, i) => fieldErrors.findIndex((o) => o.field === e.field) === i);
  const where = context === 'querystring' ? 'query parameters' : context === 'params' ? 'path' : 'request body';
  return badRequest(`The ${where} ${unique.length === 1 ? 'has an invalid field' : 'have invalid fields'}: ${unique.map((e) => `${e.field} ${e.message}`).join('; ')}.`, unique);
}

/**
 * Anything thrown, as a problem: ours as they are, known use-case errors through the table,
 * Fastify's validation errors naming the fields, the server's own classification for the rest
 * (a malformed request stays a 4xx; an unavailable store a 503). Nothing internal reaches a body.
 */
export function toProblem(error: unknown, request: FastifyRequest): ManageProblem {
  if (error instanceof ManageProblem) return error;
  const mapping = PROBLEM_MAPPINGS.find((m) => m.matches(error));
  if (mapping) return mapping.problem(error as never);
  const e = error as FastifyError;
  if (Array.isArray(e.validation) && e.validation.length > 0) return validationProblem(e.validation as AjvError[], e.validationContext);
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return unsupportedMediaType();
  if (e.code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return badRequest('The request body is empty; send a JSON document or no content-type.');
  if (error instanceof SyntaxError || e.code === 'FST_ERR_CTP_INVALID_JSON_BODY') return badRequest('The request body is not valid JSON.');
  const oauth = toOAuthError(error, request);
  if (oauth instanceof PayloadTooLarge) return new ManageProblem(413, 'Content Too Large', `The request body is larger than ${MANAGE_BODY_LIMIT / 1024} KiB.`);
  if (oauth instanceof TemporarilyUnavailable) return new ManageProblem(503, 'Service Unavailable', 'The service is temporarily unavailable; try again shortly.', { headers: { 'retry-after': '5' } });
  if (oauth.status < 500) return new ManageProblem(oauth.status, 'Bad Request', oauth.description);
  return new ManageProblem(500, 'Internal Server Error', 'The server could not complete the request.');
}

/** The largest request body the API reads. */
export const MANAGE_BODY_LIMIT = 256 * 1024;
