/**
 * The management API's route registry: each resource is one file that declares its routes; the
 * plugin registers this list and openapi.ts documents it. Add a resource by adding its line.
 */
import type { ManageRoute } from '../route.ts';
import { clientRoutes } from './clients.ts';
import { keyRoutes } from './keys.ts';
import { meRoutes } from './me.ts';
import { policyRoutes } from './policies.ts';

export const MANAGE_ROUTES: ManageRoute[] = [
  ...meRoutes,
  ...clientRoutes,
  ...policyRoutes,
  ...keyRoutes,
];
