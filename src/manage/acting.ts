/**
 * Who asks for an administrative change, as every use case of the application layer
 * (src/manage/administration.ts) takes it: the actor its audit event names, and the authority the
 * administrators' rules weigh (src/identity/administrators.ts). Each front end builds one per
 * request or command: the CLI's operator, the identity API's caller, the management API's (and so
 * the console's) caller.
 */
import type { Authority } from '../identity/administrators.ts';
import type { Actor } from '../observability/audit.ts';

export interface Acting {
  /** Named by the audit event of the change. */
  actor: Actor;
  /** Whether the caller acts as a management administrator, and the configured administrator groups. */
  authority: Authority;
}
