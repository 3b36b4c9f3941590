/**
 * The console's registry: its sections (the main navigation, in order) and every page. Add a
 * resource by adding its section and its pages' line.
 */
import type { ConsolePage, ConsoleSection } from '../page.ts';
import { clientPages } from './clients.ts';
import { dashboardPages } from './dashboard.ts';
import { keyPages } from './keys.ts';
import { policyPages } from './policies.ts';

export const CONSOLE_SECTIONS: ConsoleSection[] = [
  { key: 'dashboard', path: '/', label: 'navDashboard' },
  { key: 'clients', path: '/clients', label: 'navClients' },
  { key: 'policies', path: '/policies', label: 'navPolicies' },
  { key: 'keys', path: '/keys', label: 'navKeys' },
];

export const CONSOLE_PAGES: ConsolePage[] = [
  ...dashboardPages,
  ...clientPages,
  ...policyPages,
  ...keyPages,
];
