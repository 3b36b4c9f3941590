/**
 * The console's registry: its sections (the main navigation, in order) and every page. Add a
 * resource by adding its section and its pages' line.
 */
import type { ConsolePage, ConsoleSection } from '../page.ts';
import { auditPages } from './audit.ts';
import { clientPages } from './clients.ts';
import { dashboardPages } from './dashboard.ts';
import { groupPages } from './groups.ts';
import { keyPages } from './keys.ts';
import { organizationPages } from './organizations.ts';
import { policyPages } from './policies.ts';
import { registrationTokenPages } from './registration-tokens.ts';
import { outboxPages } from './outbox.ts';
import { registrationPages } from './registrations.ts';
import { invitationPages } from './invitations.ts';
import { webhookPages } from './webhooks.ts';
import { themePages } from './theme.ts';
import { userPages } from './users.ts';

export const CONSOLE_SECTIONS: ConsoleSection[] = [
  { key: 'dashboard', path: '/', label: 'navDashboard' },
  { key: 'clients', path: '/clients', label: 'navClients' },
  { key: 'users', path: '/users', label: 'navUsers' },
  { key: 'groups', path: '/groups', label: 'navGroups' },
  { key: 'organizations', path: '/organizations', label: 'navOrganizations' },
  { key: 'policies', path: '/policies', label: 'navPolicies' },
  { key: 'keys', path: '/keys', label: 'navKeys' },
  { key: 'audit', path: '/audit', label: 'navAudit' },
  { key: 'registration', path: '/registration-tokens', label: 'navRegistration' },
  { key: 'outbox', path: '/outbox', label: 'navOutbox' },
  { key: 'invitations', path: '/invitations', label: 'navInvitations' },
  { key: 'webhooks', path: '/webhooks', label: 'navWebhooks' },
  { key: 'theme', path: '/theme', label: 'navTheme' },
];

export const CONSOLE_PAGES: ConsolePage[] = [
  ...dashboardPages,
  ...clientPages,
  ...policyPages,
  ...keyPages,
  ...userPages,
  ...groupPages,
  ...organizationPages,
  ...auditPages,
  ...registrationTokenPages,
  ...outboxPages,
  ...registrationPages,
  ...invitationPages,
  ...webhookPages,
  ...themePages,
];
