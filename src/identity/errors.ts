/**
 * The failures of the identity use cases, one code per kind, so every adapter maps them the same
 * way: the REST API to an HTTP status and Ubisecure's error codes, the CLI to one line on stderr.
 *
 * | code             | HTTP | CustomerID error code |
 * |------------------|------|-----------------------|
 * | invalid_argument | 400  | Invalid arguments     |
 * | invalid_reference| 400  | Invalid reference / Parent not found |
 * | not_found        | 404  | Entity not found      |
 * | already_exists   | 409  | Already exists        |
 * | in_use           | 409  | Client error (e.g. deleting an organization that still has members) |
 * | inconsistent     | 409  | Client error (stored rows break a rule, e.g. an organization tree deeper than the bound) |
 * | last_administrator | 409 | Client error (the change would leave no enabled administrator: administrators.ts) |
 * | administrators_only | 403 | Unauthorized (an administrator group or its member, changed by someone who is not an administrator: administrators.ts) |
 */
export type IdentityErrorCode = 'invalid_argument' | 'invalid_reference' | 'not_found' | 'already_exists' | 'in_use' | 'inconsistent' | 'last_administrator' | 'administrators_only';

export class IdentityError extends Error {
  readonly code: IdentityErrorCode;
  /** The input field at fault, when there is one (e.g. `username`, `organizationId`). */
  readonly field: string | undefined;
  constructor(code: IdentityErrorCode, message: string, field?: string) {
    super(message);
    this.name = 'IdentityError';
    this.code = code;
    this.field = field;
  }
}
