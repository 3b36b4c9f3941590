/** The overview: who is signed in with which role, how many of each thing there are, and the discovery URL. */
import { CONSOLE_PATH, issuerOrigin } from '../../../manage/management-clients.ts';
import type { ConsolePage, PageCall } from '../page.ts';
import { fill, type ConsoleMessageKey } from '../i18n.ts';

/** The lists the overview counts; one that the API does not offer (404) is left out. */
const COUNTED: { path: string; label: ConsoleMessageKey; link: string }[] = [
  { path: '/clients', label: 'navClients', link: '/clients' },
  { path: '/users', label: 'navUsers', link: '/users' },
  { path: '/groups', label: 'navGroups', link: '/groups' },
  { path: '/policies', label: 'navPolicies', link: '/policies' },
  { path: '/keys', label: 'navKeys', link: '/keys' },
];

/** Counts up to the API's largest page; beyond it "200 or more". */
const COUNT_LIMIT = 200;

export const dashboardPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/',
    section: 'dashboard',
    async handle(call: PageCall) {
      const { t, deps } = call;
      const counts = await Promise.all(
        COUNTED.map(async (entry) => {
          const answer = await call.api.call('GET', entry.path, { query: { limit: COUNT_LIMIT } });
          if (answer.status !== 200) return undefined;
          const body = answer.body as { items?: unknown[]; next_cursor?: unknown };
          const n = Array.isArray(body.items) ? body.items.length : 0;
          return { label: t[entry.label], href: `${CONSOLE_PATH}${entry.link}`, count: typeof body.next_cursor === 'string' ? fill(t.atLeast, { n }) : String(n) };
        }),
      );
      return call.render('dashboard', {
        title: t.dashboardTitle,
        counts: counts.filter((c) => c !== undefined),
        issuer: deps.config.issuer,
        discoveryUrl: `${deps.config.issuer}/.well-known/openid-configuration`,
        origin: issuerOrigin(deps.config),
      });
    },
  },
];
