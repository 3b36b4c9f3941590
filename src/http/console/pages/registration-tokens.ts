/**
 * Initial access tokens of RFC 7591 dynamic client registration (docs/console.md, "Registration
 * tokens"): list (paged), mint (expiry, uses, description; the value shown once with the
 * registration endpoint and a curl example), revoke after a confirmation. When
 * GATEHOUSE_DYNAMIC_REGISTRATION is off the page says so and how to turn it on; tokens can still
 * be minted ahead of that (docs/decisions.md CO9).
 */
import type { FastifyReply } from 'fastify';
import { ENDPOINT_PATHS } from '../../../oauth/discovery.ts';
import { ensureOk, segment } from '../api.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill } from '../i18n.ts';
import { field, formErrors, type ConsolePage, type PageCall } from '../page.ts';
import { confirmedChange, formatTime, listQuery, pager, PAGE_SIZE, type Page } from './shared.ts';

const SECTION = 'registration';
const PATH = '/registration-tokens';

type TokenView = { id: string; description?: string; expires_at: string; uses_left: number; created_at: string; created_by: string };

/** The validity choices of the mint form, in seconds (the API allows 1 s … one year). */
const VALIDITIES = [3600, 86_400, 7 * 86_400, 30 * 86_400, 90 * 86_400, 365 * 86_400] as const;
const DEFAULT_VALIDITY = 86_400;

interface MintForm {
  expires_in: string;
  uses: string;
  description: string;
}

function registrationEndpoint(call: PageCall): string {
  return `${call.deps.config.issuer}${ENDPOINT_PATHS.registration}`;
}

/** The list page with the mint form (administrators), refilled with `form` and its errors when refused. */
async function renderList(call: PageCall, form: MintForm, errors: Record<string, string[]> = {}, status = 200): Promise<FastifyReply> {
  const { t } = call;
  const query = listQuery(call);
  const page = await call.api.get<Page<TokenView>>('/initial-access-tokens', { cursor: query.cursor, limit: PAGE_SIZE });
  const validity = (seconds: number) => (seconds < 86_400 ? fill(t.validityHours, { n: seconds / 3600 }) : fill(t.validityDays, { n: seconds / 86_400 }));
  return call.render(
    'registration-tokens',
    {
      title: t.registrationTokensTitle,
      enabled: call.deps.config.dynamicRegistration !== 'off',
      endpoint: registrationEndpoint(call),
      items: page.items.map((token) => ({
        ...token,
        expires: formatTime(call.locale, token.expires_at),
        created: formatTime(call.locale, token.created_at),
        expired: Date.parse(token.expires_at) <= call.deps.clock.now() || token.uses_left <= 0,
        revoke: `${CONSOLE_PATH}${PATH}/${segment(token.id)}/revoke`,
      })),
      pager: pager(PATH, { q: '', cursor: query.cursor }, page.next_cursor),
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [
        { name: 'expires_in', label: t.tokenValidity, type: 'select', value: form.expires_in, options: VALIDITIES.map((s) => [String(s), validity(s)]), errors: errors.expires_in },
        { name: 'uses', label: t.tokenUses, type: 'number', value: form.uses, hint: t.tokenUsesHint, required: true, errors: errors.uses },
        { name: 'description', label: t.description, type: 'text', value: form.description, hint: t.tokenDescriptionHint, errors: errors.description },
      ],
    },
    status,
  );
}

/** An integer form value as a number; anything else is left as text, so the API's schema names the field. */
function integer(text: string): number | string {
  return /^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : text;
}

export const registrationTokenPages: ConsolePage[] = [
  {
    method: 'GET',
    path: PATH,
    section: SECTION,
    async handle(call) {
      return renderList(call, { expires_in: String(DEFAULT_VALIDITY), uses: '1', description: '' });
    },
  },
  {
    method: 'POST',
    path: `${PATH}/new`,
    section: SECTION,
    async handle(call) {
      const form: MintForm = { expires_in: field(call.form, 'expires_in'), uses: field(call.form, 'uses'), description: field(call.form, 'description').trim() };
      const body: Record<string, unknown> = { expires_in: integer(form.expires_in), uses: integer(form.uses) };
      if (form.description !== '') body.description = form.description;
      const answer = await call.api.call('POST', '/initial-access-tokens', { body });
      if (answer.status === 400) return renderList(call, form, formErrors(answer.body), 400);
      const token = ensureOk<TokenView & { token: string }>(answer);
      const endpoint = registrationEndpoint(call);
      // The example names the client (optional since DR13; the login page shows the name) and works as pasted.
      return call.render('registration-token', {
        title: call.t.tokenMintedTitle,
        token: token.token,
        expires: formatTime(call.locale, token.expires_at),
        uses: token.uses_left,
        endpoint,
        enabled: call.deps.config.dynamicRegistration !== 'off',
        curl: `curl -H "Authorization: Bearer ${token.token}" -H 'content-type: application/json' -d '{"client_name":"Example app","redirect_uris":["https://app.example/cb"]}' ${endpoint}`,
      });
    },
  },
  ...confirmedChange({
    path: `${PATH}/:id/revoke`,
    section: SECTION,
    question: async (call) => fill(call.t.confirmRevokeToken, { id: call.params.id ?? '' }),
    submit: (t) => t.revoke,
    back: () => PATH,
    async run(call) {
      await call.api.send('DELETE', `/initial-access-tokens/${segment(call.params.id ?? '')}`);
      return call.redirect(PATH, 'revoked');
    },
  }),
];
