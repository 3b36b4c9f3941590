/**
 * The authority a test's setup changes users and groups with (src/identity/administrators.ts):
 * the operator's, as the CLI has it, over the default administrator group names.
 */
import type { Authority } from '../../src/identity/administrators.ts';

export const AS_OPERATOR: Authority = { groups: { admin: 'Administrators', readonly: 'Administrators (read-only)' }, administrator: true };
