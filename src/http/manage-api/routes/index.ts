/**
 * The management API's route registry: each resource is one file that declares its routes; the
 * plugin registers this list and openapi.ts documents it. Add a resource by adding its line.
 */
import type { ManageRoute } from '../route.ts';
import { meRoutes } from './me.ts';
import { auditRoutes } from './audit.ts';

export const MANAGE_ROUTES: ManageRoute[] = [
  ...meRoutes,
  ...auditRoutes,
];
