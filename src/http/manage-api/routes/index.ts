/**
 * The management API's route registry: each resource is one file that declares its routes; the
 * plugin registers this list and openapi.ts documents it. Add a resource by adding its line.
 */
import type { ManageRoute } from '../route.ts';
import { clientRoutes } from './clients.ts';
import { consentRoutes } from './consents.ts';
import { factorRoutes } from './factors.ts';
import { groupRoutes } from './groups.ts';
import { initialAccessTokenRoutes } from './initial-access-tokens.ts';
import { keyRoutes } from './keys.ts';
import { meRoutes } from './me.ts';
import { organizationRoutes } from './organizations.ts';
import { policyRoutes } from './policies.ts';
import { sessionRoutes } from './sessions.ts';
import { userRoutes } from './users.ts';
import { auditRoutes } from './audit.ts';
import { outboxRoutes } from './outbox.ts';
import { registrationRoutes } from './registrations.ts';
import { invitationRoutes } from './invitations.ts';
import { webhookRoutes } from './webhooks.ts';

export const MANAGE_ROUTES: ManageRoute[] = [
  ...meRoutes,
  ...clientRoutes,
  ...policyRoutes,
  ...keyRoutes,
  ...userRoutes,
  ...sessionRoutes,
  ...factorRoutes,
  ...consentRoutes,
  ...groupRoutes,
  ...organizationRoutes,
  ...auditRoutes,
  ...initialAccessTokenRoutes,
  ...outboxRoutes,
  ...registrationRoutes,
  ...invitationRoutes,
  ...webhookRoutes,
];
