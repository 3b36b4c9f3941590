/**
 * Clients (docs/console.md, "Clients"): list and search, register (the secret shown once, with the
 * discovery URL and the settings to paste into an application), view, edit, activate, deactivate,
 * rotate the secret (shown once), export the metadata document, import one, edit every member of
 * it as JSON, delete. Every change is a call of the management API; destructive ones go through a
 * confirmation page first.
 */
import type { FastifyReply } from 'fastify';
import type { ClientAuthMethod } from '../../../domain/client.ts';
import { authMethodsFor, clientAuthSetup, secretOf } from '../../../oauth/client-auth/registry.ts';
import { APPLICATION_TYPES } from '../../../oauth/client-metadata.ts';
import { GRANT_TYPES_SUPPORTED } from '../../../oauth/grants/registry.ts';
import { ACCESS_TOKEN_FORMATS } from '../../../protocol/constants.ts';
import { registrationDefaults } from '../../../oauth/client-metadata.ts';
import { ensureOk, segment } from '../api.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { fill, type ConsoleMessageKey, type ConsoleMessages, type Locale } from '../i18n.ts';
import { field, formErrors, fieldValues, lines, renderDocumentForm, submitDocument, type ConsolePage, type DocumentForm, type PageCall } from '../page.ts';
import { formatTime, listQuery, pager, PAGE_SIZE, type Page } from './shared.ts';

type ClientView = Record<string, unknown> & { client_id: string; client_name?: string; active?: boolean };

const SECTION = 'clients';
const DEFAULT_AUTH_METHOD = 'client_secret_basic' satisfies ClientAuthMethod;

/** The form's values: what the API answered for an edit, what was posted when the API refused it. */
interface ClientForm {
  client_name: string;
  redirect_uris: string;
  post_logout_redirect_uris: string;
  /** Back-Channel Logout 1.0 §2.2 (docs/logout.md). */
  backchannel_logout_uri: string;
  backchannel_logout_session_required: boolean;
  /** Front-Channel Logout 1.0 §2 (docs/logout.md). */
  frontchannel_logout_uri: string;
  frontchannel_logout_session_required: boolean;
  grant_types: string[];
  refresh_tokens: boolean;
  token_endpoint_auth_method: string;
  /** OIDC Registration §2: web (the default) or native, whose loopback redirect URIs take any port (RFC 8252 §7.3). */
  application_type: string;
  scope: string;
  authorization_policy: string;
  logo_uri: string;
  consent_required: boolean;
  /** `client_name#fi`, `client_name#sv` (RFC 7591 §2.2): the name the login page shows in that language. */
  localized_names: Record<string, string>;
  aud: string;
  resource_server: boolean;
  resource_uris: string;
  resource_scopes: string;
  access_token_format: string;
  /** OIDC Registration §2 (docs/authorization.md, "Levels of authentication"): one acr value per line; seconds. */
  default_acr_values: string;
  default_max_age: string;
}

/** The languages of the login page other than the untagged default, whose client_name the form edits. */
const NAME_LOCALES = ['fi', 'sv'] as const;
/** '' = the server's default (GATEHOUSE_ACCESS_TOKEN_FORMAT). */
const TOKEN_FORMATS = ['', ...ACCESS_TOKEN_FORMATS] as const;

function formFromClient(client: ClientView | undefined): ClientForm {
  const list = (value: unknown) => (Array.isArray(value) ? value.filter((v) => typeof v === 'string').join('\n') : '');
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  // A new client starts from what the API registers when neither is given: one default for every front end.
  const defaults = registrationDefaults(DEFAULT_AUTH_METHOD);
  return {
    client_name: text(client?.client_name),
    redirect_uris: list(client?.redirect_uris),
    post_logout_redirect_uris: list(client?.post_logout_redirect_uris),
    backchannel_logout_uri: text(client?.backchannel_logout_uri),
    backchannel_logout_session_required: client?.backchannel_logout_session_required === true,
    frontchannel_logout_uri: text(client?.frontchannel_logout_uri),
    frontchannel_logout_session_required: client?.frontchannel_logout_session_required === true,
    grant_types: client === undefined ? defaults.grantTypes : Array.isArray(client.grant_types) ? (client.grant_types as string[]) : [],
    refresh_tokens: client === undefined ? defaults.refreshTokens : client.refresh_tokens === true,
    token_endpoint_auth_method: text(client?.token_endpoint_auth_method) || DEFAULT_AUTH_METHOD,
    application_type: text(client?.application_type) || 'web',
    scope: text(client?.scope),
    authorization_policy: text(client?.authorization_policy),
    logo_uri: text(client?.logo_uri),
    consent_required: client?.consent_required === true,
    localized_names: Object.fromEntries(NAME_LOCALES.map((l) => [l, text(client?.[`client_name#${l}`])])),
    aud: list(client?.aud),
    resource_server: client?.resource_server === true,
    resource_uris: list(client?.resource_uris),
    resource_scopes: list(client?.resource_scopes),
    access_token_format: text(client?.access_token_format),
    default_acr_values: list(client?.default_acr_values),
    default_max_age: typeof client?.default_max_age === 'number' ? String(client.default_max_age) : '',
  };
}

function formFromPost(form: Record<string, unknown>): ClientForm {
  return {
    client_name: field(form, 'client_name'),
    redirect_uris: field(form, 'redirect_uris'),
    post_logout_redirect_uris: field(form, 'post_logout_redirect_uris'),
    backchannel_logout_uri: field(form, 'backchannel_logout_uri'),
    backchannel_logout_session_required: field(form, 'backchannel_logout_session_required') === 'true',
    frontchannel_logout_uri: field(form, 'frontchannel_logout_uri'),
    frontchannel_logout_session_required: field(form, 'frontchannel_logout_session_required') === 'true',
    grant_types: fieldValues(form, 'grant_types'),
    refresh_tokens: field(form, 'refresh_tokens') === 'true',
    token_endpoint_auth_method: field(form, 'token_endpoint_auth_method'),
    application_type: field(form, 'application_type'),
    scope: field(form, 'scope'),
    authorization_policy: field(form, 'authorization_policy'),
    logo_uri: field(form, 'logo_uri'),
    consent_required: field(form, 'consent_required') === 'true',
    localized_names: Object.fromEntries(NAME_LOCALES.map((l) => [l, field(form, `client_name#${l}`)])),
    aud: field(form, 'aud'),
    resource_server: field(form, 'resource_server') === 'true',
    resource_uris: field(form, 'resource_uris'),
    resource_scopes: field(form, 'resource_scopes'),
    access_token_format: field(form, 'access_token_format'),
    default_acr_values: field(form, 'default_acr_values'),
    default_max_age: field(form, 'default_max_age'),
  };
}

/**
 * The metadata document (RFC 7591 §2) the form stands for. An emptied optional field is sent as
 * null on an edit (the API treats null as "remove") and left out of a registration.
 */
function documentOf(form: ClientForm, editing: boolean): Record<string, unknown> {
  const optional = (value: string) => (value.trim() === '' ? (editing ? null : undefined) : value.trim());
  const optionalList = (value: string) => (lines(value).length === 0 ? (editing ? null : undefined) : lines(value));
  const document: Record<string, unknown> = {
    client_name: form.client_name.trim(),
    redirect_uris: lines(form.redirect_uris),
    post_logout_redirect_uris: lines(form.post_logout_redirect_uris),
    backchannel_logout_uri: optional(form.backchannel_logout_uri),
    backchannel_logout_session_required: form.backchannel_logout_session_required ? true : editing ? null : undefined,
    frontchannel_logout_uri: optional(form.frontchannel_logout_uri),
    frontchannel_logout_session_required: form.frontchannel_logout_session_required ? true : editing ? null : undefined,
    grant_types: form.grant_types,
    // Always sent: with grant_types given, an absent refresh_tokens would follow the list, not the box.
    refresh_tokens: form.refresh_tokens,
    token_endpoint_auth_method: form.token_endpoint_auth_method,
    // web is the default: left out (removed on an edit) rather than stored.
    application_type: form.application_type === '' || form.application_type === 'web' ? (editing ? null : undefined) : form.application_type,
    scope: optional(form.scope),
    authorization_policy: optional(form.authorization_policy),
    logo_uri: optional(form.logo_uri),
    consent_required: form.consent_required ? true : editing ? null : undefined,
    ...Object.fromEntries(NAME_LOCALES.map((l) => [`client_name#${l}`, optional(form.localized_names[l] ?? '')])),
    aud: optionalList(form.aud),
    resource_server: form.resource_server ? true : editing ? null : undefined,
    resource_uris: optionalList(form.resource_uris),
    resource_scopes: optionalList(form.resource_scopes),
    access_token_format: optional(form.access_token_format),
    default_acr_values: optionalList(form.default_acr_values),
    // Digits become the number the metadata holds; anything else goes as typed, for the API to refuse naming the field.
    default_max_age: /^\d{1,10}$/.test(form.default_max_age.trim()) ? Number(form.default_max_age.trim()) : optional(form.default_max_age),
  };
  return Object.fromEntries(Object.entries(document).filter(([, value]) => value !== undefined));
}

/**
 * The policies to choose from (their names, first 200 by name), with the client's current one kept
 * even when it is not among them. A reader never reaches a form; on a 403 the list is just empty.
 */
async function policyNames(call: PageCall, current: string): Promise<string[]> {
  const answer = await call.api.call('GET', '/policies', { query: { limit: 200 } });
  const names = answer.status === 200 ? ((answer.body as Page<{ name?: unknown }>).items ?? []).map((p) => p.name).filter((n): n is string => typeof n === 'string') : [];
  return current !== '' && !names.includes(current) ? [current, ...names] : names;
}

/**
 * The client-authentication methods to choose from: those this configuration serves, as discovery
 * lists them (client_secret_jwt only with GATEHOUSE_KEY_ENCRYPTION_KEY), with the client's current
 * one kept when it is not among them, so that saving the form never changes it silently.
 */
function authMethodChoices(call: PageCall, current: string): string[] {
  const served: string[] = authMethodsFor('token', clientAuthSetup(call.deps.config));
  return current !== '' && !served.includes(current) ? [current, ...served] : served;
}

async function renderForm(call: PageCall, options: { title: string; action: string; submit: string; form: ClientForm; errors?: Record<string, string[]>; status?: number; cancel: string }): Promise<FastifyReply> {
  const { t } = call;
  const errors = options.errors ?? {};
  const policies = await policyNames(call, options.form.authorization_policy);
  return call.render(
    'client-form',
    {
      title: options.title,
      action: options.action,
      submitLabel: options.submit,
      cancel: options.cancel,
      hasErrors: Object.keys(errors).length > 0,
      generalErrors: errors[''] ?? [],
      fields: [
        { name: 'client_name', label: t.clientName, type: 'text', value: options.form.client_name, required: true, errors: errors.client_name },
        ...NAME_LOCALES.map((l) => ({ name: `client_name#${l}`, label: fill(t.clientNameIn, { language: t[`language_${l}`] }), type: 'text', value: options.form.localized_names[l] ?? '', hint: t.clientNameInHint, errors: errors[`client_name#${l}`] })),
        { name: 'redirect_uris', label: t.redirectUris, type: 'textarea', value: options.form.redirect_uris, hint: t.oneUriPerLine, errors: errors.redirect_uris },
        { name: 'post_logout_redirect_uris', label: t.postLogoutRedirectUris, type: 'textarea', value: options.form.post_logout_redirect_uris, hint: t.oneUriPerLine, errors: errors.post_logout_redirect_uris },
        { name: 'backchannel_logout_uri', label: t.backchannelLogoutUri, type: 'text', value: options.form.backchannel_logout_uri, hint: t.backchannelLogoutUriHint, errors: errors.backchannel_logout_uri },
        { name: 'backchannel_logout_session_required', label: t.backchannelLogoutSessionRequired, type: 'checkbox', value: options.form.backchannel_logout_session_required, errors: errors.backchannel_logout_session_required },
        { name: 'frontchannel_logout_uri', label: t.frontchannelLogoutUri, type: 'text', value: options.form.frontchannel_logout_uri, hint: t.frontchannelLogoutUriHint, errors: errors.frontchannel_logout_uri },
        { name: 'frontchannel_logout_session_required', label: t.frontchannelLogoutSessionRequired, type: 'checkbox', value: options.form.frontchannel_logout_session_required, errors: errors.frontchannel_logout_session_required },
        {
          name: 'token_endpoint_auth_method',
          label: t.authMethod,
          type: 'select',
          value: options.form.token_endpoint_auth_method,
          options: authMethodChoices(call, options.form.token_endpoint_auth_method).map((m) => [m, m === 'none' ? t.authMethodNone : m]),
          errors: errors.token_endpoint_auth_method,
        },
        {
          name: 'application_type',
          label: t.applicationType,
          type: 'select',
          value: options.form.application_type,
          options: APPLICATION_TYPES.map((a) => [a, a === 'native' ? t.applicationTypeNative : t.applicationTypeWeb]),
          hint: t.applicationTypeHint,
          errors: errors.application_type,
        },
        { name: 'grant_types', label: t.grantTypes, type: 'checkboxes', value: options.form.grant_types, options: GRANT_TYPES_SUPPORTED.map((g) => [g, g]), errors: errors.grant_types },
        { name: 'refresh_tokens', label: t.refreshTokens, type: 'checkbox', value: options.form.refresh_tokens, hint: t.refreshTokensHint, errors: errors.refresh_tokens },
        { name: 'scope', label: t.scope, type: 'text', value: options.form.scope, hint: t.scopeHint, errors: errors.scope },
        { name: 'aud', label: t.audiences, type: 'textarea', value: options.form.aud, hint: t.audiencesHint, errors: errors.aud },
        {
          name: 'authorization_policy',
          label: t.authorizationPolicy,
          type: 'select',
          value: options.form.authorization_policy,
          options: [['', t.noPolicy], ...policies.map((name) => [name, name])],
          hint: t.authorizationPolicyHint,
          errors: errors.authorization_policy,
        },
        { name: 'logo_uri', label: t.logoUri, type: 'url', value: options.form.logo_uri, errors: errors.logo_uri },
        { name: 'consent_required', label: t.consentRequired, type: 'checkbox', value: options.form.consent_required, errors: errors.consent_required },
        { name: 'resource_server', label: t.resourceServer, type: 'checkbox', value: options.form.resource_server, hint: t.resourceServerHint, errors: errors.resource_server },
        { name: 'resource_uris', label: t.resourceUris, type: 'textarea', value: options.form.resource_uris, hint: t.resourceUrisHint, errors: errors.resource_uris },
        { name: 'resource_scopes', label: t.resourceScopes, type: 'textarea', value: options.form.resource_scopes, hint: t.resourceScopesHint, errors: errors.resource_scopes },
        {
          name: 'access_token_format',
          label: t.accessTokenFormat,
          type: 'select',
          value: options.form.access_token_format,
          options: TOKEN_FORMATS.map((f) => [f, f === '' ? t.accessTokenFormatDefault : f]),
          hint: t.accessTokenFormatHint,
          errors: errors.access_token_format,
        },
        { name: 'default_acr_values', label: t.defaultAcrValues, type: 'textarea', value: options.form.default_acr_values, hint: t.defaultAcrValuesHint, errors: errors.default_acr_values },
        { name: 'default_max_age', label: t.defaultMaxAge, type: 'text', value: options.form.default_max_age, hint: t.defaultMaxAgeHint, errors: errors.default_max_age },
      ],
    },
    options.status ?? 200,
  );
}

/** The settings page after a registration or a secret rotation: the secret, once. */
function renderSecret(call: PageCall, title: string, client: ClientView, secret: string | undefined): FastifyReply {
  const { deps } = call;
  const redirectUris = Array.isArray(client.redirect_uris) ? (client.redirect_uris as string[]) : [];
  // The web SSO example serves http://127.0.0.1:$PORT/callback (examples/web-sso/README.md): shown
  // when the client registered such a redirect URI, with the port it names.
  const examplePort = redirectUris.map((uri) => /^http:\/\/127\.0\.0\.1:(\d{1,5})\/callback$/.exec(uri)?.[1]).find((port) => port !== undefined);
  const exampleLines = [
    `export ISSUER='${deps.config.issuer}'`,
    `export CLIENT_ID='${client.client_id}'`,
    ...(secret === undefined ? [] : [`export CLIENT_SECRET='${secret}'`]),
    ...(examplePort === undefined || examplePort === '3000' ? [] : [`export PORT='${examplePort}'`]),
    'node examples/web-sso/server.ts',
  ];
  return call.render('client-secret', {
    title,
    client,
    secret,
    issuer: deps.config.issuer,
    discoveryUrl: `${deps.config.issuer}/.well-known/openid-configuration`,
    redirectUris,
    authMethod: client.token_endpoint_auth_method ?? DEFAULT_AUTH_METHOD,
    example: exampleLines.join('\n'),
    showExample: examplePort !== undefined && secret !== undefined,
    exampleUri: examplePort === undefined ? '' : `http://127.0.0.1:${examplePort}/callback`,
  });
}

/** The import page: one JSON text area for an exported metadata document. */
function importForm(call: PageCall): Omit<DocumentForm, 'text'> {
  return { title: call.t.importClientTitle, action: `${CONSOLE_PATH}/clients/import`, submit: call.t.importSubmit, label: call.t.clientDocument, hint: call.t.importClientHint, rows: 20, cancel: `${CONSOLE_PATH}/clients` };
}

/** The page that edits every member of a client's metadata as JSON. */
function metadataForm(call: PageCall, id: string, name: string): Omit<DocumentForm, 'text'> {
  const path = `${CONSOLE_PATH}${clientPath(id)}`;
  return { title: fill(call.t.editClientJsonTitle, { name }), action: `${path}/metadata`, submit: call.t.save, label: call.t.clientDocument, hint: call.t.editClientJsonHint, rows: 20, cancel: path };
}

/** A client's metadata document as the JSON editor shows it: the export, without the client_id that cannot change. */
function editableText(document: Record<string, unknown>): string {
  const { client_id: _clientId, ...rest } = document;
  return JSON.stringify(rest, null, 2);
}

/** What the API answers for a client's last back-channel logout delivery (decisions LO13). */
interface LogoutDeliveryView {
  last_delivery: { status: 'delivered' | 'failed'; attempted_at: string; jti: string; error?: string } | null;
}

/** The client page's line on its last back-channel logout delivery: what happened, when, and the error if it failed. */
async function logoutDeliveryRow(call: PageCall, id: string): Promise<{ text: string; error: string | undefined }> {
  const { last_delivery: last } = await call.api.get<LogoutDeliveryView>(`${clientPath(id)}/logout-delivery`);
  if (last === null) return { text: call.t.logoutDeliveryNone, error: undefined };
  const time = formatTime(call.locale, last.attempted_at);
  return { text: fill(last.status === 'delivered' ? call.t.logoutDeliveryDelivered : call.t.logoutDeliveryFailed, { time }), error: last.error };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The label of each metadata member the client page shows; members not named here are shown by their key. */
const SETTING_LABELS: Record<string, ConsoleMessageKey> = {
  redirect_uris: 'redirectUris',
  post_logout_redirect_uris: 'postLogoutRedirectUris',
  backchannel_logout_uri: 'backchannelLogoutUri',
  backchannel_logout_session_required: 'backchannelLogoutSessionRequired',
  frontchannel_logout_uri: 'frontchannelLogoutUri',
  frontchannel_logout_session_required: 'frontchannelLogoutSessionRequired',
  grant_types: 'grantTypes',
  token_endpoint_auth_method: 'authMethod',
  code_challenge_method: 'setting_code_challenge_method',
  scope: 'scope',
  refresh_tokens: 'refreshTokens',
  rotate_refresh_tokens: 'setting_rotate_refresh_tokens',
  access_token_ttl: 'setting_access_token_ttl',
  id_token_signed_response_alg: 'setting_id_token_signed_response_alg',
  userinfo_signed_response_alg: 'setting_userinfo_signed_response_alg',
  authorization_policy: 'authorizationPolicy',
  logo_uri: 'logoUri',
  response_types: 'setting_response_types',
  aud: 'audiences',
  id_token_scope_claims: 'setting_id_token_scope_claims',
  allowed_cors_origins: 'setting_allowed_cors_origins',
  jwks: 'setting_jwks',
  jwks_uri: 'setting_jwks_uri',
  token_endpoint_auth_signing_alg: 'setting_token_endpoint_auth_signing_alg',
  consent_required: 'consentRequired',
  resource_server: 'resourceServer',
  resource_uris: 'resourceUris',
  access_token_format: 'accessTokenFormat',
  access_token_signed_response_alg: 'setting_access_token_signed_response_alg',
  default_acr_values: 'defaultAcrValues',
  default_max_age: 'defaultMaxAge',
};

/** One row of the client page: a label and the value as text, code, a list of codes or a JSON block. */
interface SettingRow {
  key: string;
  label: string;
  text?: string;
  code?: string;
  list?: string[];
  json?: string;
}

/** The label of a member: from SETTING_LABELS, `client_name#<lang>` / `logo_uri#<lang>` by the language's name, else the key. */
function settingLabel(t: ConsoleMessages, locale: Locale, key: string): string {
  const [base, tag] = key.split('#');
  if (tag !== undefined && (base === 'client_name' || base === 'logo_uri')) {
    // The form's names for its languages; any other by Intl (a tag it cannot name as it is).
    let language = (t as Record<string, string | undefined>)[`language_${tag}`] ?? tag;
    try {
      if (language === tag) language = new Intl.DisplayNames([locale], { type: 'language' }).of(tag) ?? tag;
    } catch {
      // keep the tag
    }
    return fill(base === 'client_name' ? t.clientNameIn : t.logoUriIn, { language });
  }
  const label = SETTING_LABELS[key];
  return label === undefined ? key : t[label];
}

/**
 * The client's settings as the page shows them: every member the API answered (so none is
 * hidden), labelled in the page's language; lists as lists, yes/no for booleans; no scope is
 * "not restricted" (grantedScope: the client may ask for every scope).
 */
function settingRows(t: ConsoleMessages, locale: Locale, members: Record<string, unknown>): SettingRow[] {
  const withScope = 'scope' in members && members.scope !== undefined ? members : { ...members, scope: undefined };
  return Object.entries(withScope)
    .filter(([key, value]) => value !== null && (value !== undefined || key === 'scope'))
    .map(([key, value]): SettingRow => {
      const row = { key, label: settingLabel(t, locale, key) };
      if (key === 'scope' && (value === undefined || value === '')) return { ...row, text: t.scopeUnrestricted };
      if (typeof value === 'boolean') return { ...row, text: value ? t.yes : t.no };
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return { ...row, list: value as string[] };
      if (typeof value === 'string' || typeof value === 'number') return { ...row, code: String(value) };
      return { ...row, json: JSON.stringify(value, null, 2) };
    });
}

function nameOf(client: ClientView): string {
  return typeof client.client_name === 'string' && client.client_name !== '' ? client.client_name : client.client_id;
}

const clientPath = (id: string) => `/clients/${segment(id)}`;

/** A confirmation step and the change it confirms, for one client. */
function confirmed(action: string, question: (t: PageCall['t']) => string, submit: (t: PageCall['t']) => string, run: (call: PageCall, id: string, client: ClientView) => Promise<FastifyReply>): ConsolePage[] {
  return [
    {
      method: 'GET',
      path: `/clients/:id/${action}`,
      section: SECTION,
      async handle(call) {
        const id = call.params.id ?? '';
        const client = await call.api.get<ClientView>(clientPath(id));
        return call.render('confirm', {
          title: call.t.confirmTitle,
          question: fill(question(call.t), { name: nameOf(client) }),
          action: `${CONSOLE_PATH}${clientPath(id)}/${action}`,
          submitLabel: submit(call.t),
          cancel: `${CONSOLE_PATH}${clientPath(id)}`,
        });
      },
    },
    {
      method: 'POST',
      path: `/clients/:id/${action}`,
      section: SECTION,
      async handle(call) {
        const id = call.params.id ?? '';
        const client = await call.api.get<ClientView>(clientPath(id));
        return run(call, id, client);
      },
    },
  ];
}

export const clientPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/clients',
    section: SECTION,
    async handle(call) {
      const query = listQuery(call);
      const page = await call.api.get<Page<ClientView>>('/clients', { q: query.q, cursor: query.cursor, limit: PAGE_SIZE });
      return call.render('clients', {
        title: call.t.clientsTitle,
        q: query.q,
        items: page.items.map((c) => ({ ...c, href: `${CONSOLE_PATH}${clientPath(c.client_id)}`, created: formatTime(call.locale, c.created_at) })),
        pager: pager('/clients', query, page.next_cursor),
      });
    },
  },
  {
    method: 'GET',
    path: '/clients/new',
    section: SECTION,
    async handle(call) {
      return renderForm(call, { title: call.t.registerClientTitle, action: `${CONSOLE_PATH}/clients/new`, submit: call.t.register, form: formFromClient(undefined), cancel: `${CONSOLE_PATH}/clients` });
    },
  },
  {
    method: 'POST',
    path: '/clients/new',
    section: SECTION,
    async handle(call) {
      const form = formFromPost(call.form);
      const answer = await call.api.call('POST', '/clients', { body: documentOf(form, false) });
      if (answer.status === 400 || answer.status === 409) {
        const errors = formErrors(answer.body);
        return renderForm(call, { title: call.t.registerClientTitle, action: `${CONSOLE_PATH}/clients/new`, submit: call.t.register, form, errors, status: answer.status, cancel: `${CONSOLE_PATH}/clients` });
      }
      const client = ensureOk<ClientView & { client_secret?: string }>(answer);
      return renderSecret(call, call.t.registeredTitle, client, client.client_secret);
    },
  },
  {
    method: 'GET',
    path: '/clients/import',
    section: SECTION,
    async handle(call) {
      return renderDocumentForm(call, { ...importForm(call), text: '' });
    },
  },
  {
    method: 'POST',
    path: '/clients/import',
    section: SECTION,
    async handle(call) {
      const outcome = await submitDocument<ClientView & { client_secret?: string }>(call, importForm(call), (document) => call.api.call('POST', '/clients/import', { body: document }));
      if (!outcome.ok) return outcome.page;
      const client = outcome.body;
      return renderSecret(call, call.t.importedTitle, client, client.client_secret);
    },
  },
  {
    method: 'GET',
    path: '/clients/:id',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const client = await call.api.get<ClientView>(clientPath(id));
      const { client_id, client_name, active, created_at, updated_at, ...rest } = client;
      return call.render('client', {
        title: fill(call.t.clientDetailTitle, { name: nameOf(client) }),
        client,
        created: formatTime(call.locale, created_at),
        updated: formatTime(call.locale, updated_at),
        settings: settingRows(call.t, call.locale, rest),
        logoutDelivery: typeof rest.backchannel_logout_uri === 'string' ? await logoutDeliveryRow(call, id) : undefined,
        // Rotation only for a client that holds a secret, as its method's handler says (private_key_jwt
        // and none hold none); the API answers the registered method, or none registered.
        hasSecret: secretOf(client.token_endpoint_auth_method as ClientAuthMethod | undefined) !== 'none',
        base: CONSOLE_PATH,
        path: `${CONSOLE_PATH}${clientPath(client_id)}`,
        name: client_name,
        active,
      });
    },
  },
  {
    method: 'GET',
    path: '/clients/:id/edit',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const client = await call.api.get<ClientView>(clientPath(id));
      return renderForm(call, { title: fill(call.t.editClientTitle, { name: nameOf(client) }), action: `${CONSOLE_PATH}${clientPath(id)}/edit`, submit: call.t.save, form: formFromClient(client), cancel: `${CONSOLE_PATH}${clientPath(id)}` });
    },
  },
  {
    method: 'POST',
    path: '/clients/:id/edit',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const form = formFromPost(call.form);
      const answer = await call.api.call('PATCH', clientPath(id), { body: documentOf(form, true) });
      if (answer.status === 400 || answer.status === 409) {
        return renderForm(call, { title: fill(call.t.editClientTitle, { name: form.client_name || id }), action: `${CONSOLE_PATH}${clientPath(id)}/edit`, submit: call.t.save, form, errors: formErrors(answer.body), status: answer.status, cancel: `${CONSOLE_PATH}${clientPath(id)}` });
      }
      const client = ensureOk<ClientView & { client_secret?: string }>(answer);
      // A public client that became confidential got its first secret: shown once, like a registration's.
      if (typeof client.client_secret === 'string') return renderSecret(call, call.t.secretRotatedTitle, client, client.client_secret);
      return call.redirect(clientPath(id), 'saved');
    },
  },
  {
    method: 'GET',
    path: '/clients/:id/metadata',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const client = await call.api.get<ClientView>(clientPath(id));
      const document = await call.api.get<Record<string, unknown>>(`${clientPath(id)}/metadata`);
      return renderDocumentForm(call, { ...metadataForm(call, id, nameOf(client)), text: editableText(document) });
    },
  },
  {
    method: 'POST',
    path: '/clients/:id/metadata',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const current = await call.api.get<ClientView>(clientPath(id));
      // Said here in the page's language; the API refuses both too.
      const check = (document: unknown): string | undefined => {
        if (!isObject(document)) return call.t.documentNotObject;
        return document.client_id === undefined || document.client_id === id ? undefined : fill(call.t.clientIdFixed, { id });
      };
      // The API replaces the registration in one unit of work (members left out are removed).
      const send = (document: unknown) => call.api.call('PUT', `${clientPath(id)}/metadata`, { body: document });
      const outcome = await submitDocument<ClientView & { client_secret?: string }>(call, metadataForm(call, id, nameOf(current)), send, check);
      if (!outcome.ok) return outcome.page;
      const client = outcome.body;
      if (typeof client.client_secret === 'string') return renderSecret(call, call.t.secretRotatedTitle, client, client.client_secret);
      return call.redirect(clientPath(id), 'saved');
    },
  },
  {
    method: 'POST',
    path: '/clients/:id/activate',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      await call.api.send('POST', `${clientPath(id)}/activate`);
      return call.redirect(clientPath(id), 'activated');
    },
  },
  ...confirmed(
    'deactivate',
    (t) => t.confirmDeactivateClient,
    (t) => t.deactivate,
    async (call, id) => {
      await call.api.send('POST', `${clientPath(id)}/deactivate`);
      return call.redirect(clientPath(id), 'deactivated');
    },
  ),
  ...confirmed(
    'rotate-secret',
    (t) => t.confirmRotateSecret,
    (t) => t.rotateSecret,
    async (call, id) => {
      const answer = await call.api.send<Record<string, unknown>>('POST', `${clientPath(id)}/secret`);
      const client = await call.api.get<ClientView>(clientPath(id));
      return renderSecret(call, call.t.secretRotatedTitle, client, typeof answer.client_secret === 'string' ? answer.client_secret : undefined);
    },
  ),
  ...confirmed(
    'delete',
    (t) => t.confirmDeleteClient,
    (t) => t.delete,
    async (call, id) => {
      await call.api.send('DELETE', clientPath(id));
      return call.redirect('/clients', 'deleted');
    },
  ),
  {
    method: 'GET',
    path: '/clients/:id/metadata.json',
    section: SECTION,
    async handle(call) {
      const id = call.params.id ?? '';
      const document = await call.api.get(`${clientPath(id)}/metadata`);
      const filename = `${id.replace(/[^A-Za-z0-9._-]/g, '_')}.json`;
      return call.reply
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${filename}"`)
        .type('application/json; charset=utf-8')
        .send(`${JSON.stringify(document, null, 2)}\n`);
    },
  },
];
