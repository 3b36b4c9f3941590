/**
 * `gatehouse client …`: register and manage OAuth clients through the client use cases of the
 * application layer (src/manage/clients.ts), which run the rules — the protected management
 * clients included (docs/decisions.md MA5a) — and emit the audit events with the operator as actor.
 */
import { Option, type Command } from 'commander';
import type { Client } from '../domain/client.ts';
import type { ClientAuthSetup } from '../oauth/client-auth/method.ts';
import { authMethodsFor, authSigningAlgsFor, CLIENT_AUTH_METHOD_NAMES, CLIENT_AUTH_METHODS } from '../oauth/client-auth/registry.ts';
import { ACCESS_TOKEN_FORMATS, SIGNING_ALGS } from '../protocol/constants.ts';
import { APPLICATION_TYPES, clientWarnings } from '../oauth/client-metadata.ts';
import { GRANT_TYPES_SUPPORTED } from '../oauth/grants/registry.ts';
import { clientView } from '../oauth/client-view.ts';
import { readJsonFile, UsageError, wholeNumber, withStore } from './context.ts';
import { printFields, printJson, printLine, printTable } from './output.ts';

interface MetadataFlags {
  metadataFile?: string;
  name?: string;
  redirectUri?: string[];
  postLogoutRedirectUri?: string[];
  grantType?: string[];
  resourceServer?: boolean;
  resourceUri?: string[];
  resourceScope?: string[];
  tokenEndpointAuthMethod?: string;
  codeChallengeMethod?: string;
  scope?: string;
  aud?: string[];
  allowedCorsOrigin?: string[];
  accessTokenTtl?: string;
  refreshTokens?: boolean;
  rotateRefreshTokens?: boolean;
  jwksFile?: string;
  jwksUri?: string;
  tokenEndpointAuthSigningAlg?: string;
  idTokenSignedResponseAlg?: string;
  userinfoSignedResponseAlg?: string;
  consentRequired?: boolean;
  applicationType?: string;
  accessTokenFormat?: string;
  accessTokenSignedResponseAlg?: string;
  authorizationPolicy?: string;
  defaultAcrValue?: string[];
  defaultMaxAge?: string;
  backchannelLogoutUri?: string;
  backchannelLogoutSessionRequired?: boolean;
  frontchannelLogoutUri?: string;
  frontchannelLogoutSessionRequired?: boolean;
}

interface JsonFlag {
  json?: boolean;
}

/** Repeatable options accumulate; no default, so help shows none. */
const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/**
 * The options that set client metadata; shared by `create` and `update`. The authentication
 * methods and assertion algorithms offered are those discovery lists for the token endpoint under
 * this configuration (`clientAuth`: client_secret_jwt and HS256 only with GATEHOUSE_KEY_ENCRYPTION_KEY),
 * so a choice the server cannot serve is refused before the store is opened; every method when the
 * configuration could not be read (the command then fails on it, naming the setting).
 */
function withMetadataOptions(command: Command, clientAuth: ClientAuthSetup | undefined): Command {
  const methods = clientAuth === undefined ? CLIENT_AUTH_METHOD_NAMES : authMethodsFor('token', clientAuth);
  const signingAlgs = clientAuth === undefined ? [...new Set(CLIENT_AUTH_METHODS.flatMap((method) => method.signingAlgs))] : authSigningAlgsFor('token', clientAuth);
  return command
    .option('--metadata-file <file>', 'a JSON client metadata document (snake_case keys); the flags below override it')
    .option('--name <name>', 'client_name, shown on the login page')
    .option('--redirect-uri <uri>', 'a redirect URI (repeatable): https, http on a loopback host, or a private-use scheme such as com.example.app:/path', collect)
    .addOption(
      new Option('--token-endpoint-auth-method <method>', 'how the client authenticates; none: a public client without a secret; private_key_jwt: a JWT signed with its key (needs --jwks-file or --jwks-uri); client_secret_jwt: a JWT MACed with its secret (offered only with GATEHOUSE_KEY_ENCRYPTION_KEY)').choices(methods),
    )
    .option('--jwks-file <file>', "a JSON file holding the client's public keys as a JWK Set (jwks), for private_key_jwt")
    .option('--jwks-uri <uri>', "where the client publishes its public keys (jwks_uri), for private_key_jwt: https, or http on a loopback host")
    .addOption(new Option('--token-endpoint-auth-signing-alg <alg>', 'the one algorithm the client signs its assertions with (token_endpoint_auth_signing_alg)').choices(signingAlgs))
    .addOption(new Option('--code-challenge-method <method>', 'require PKCE with this method').choices(['S256', 'plain']))
    .option('--grant-type <grant>', `a grant the client may use (repeatable): ${GRANT_TYPES_SUPPORTED.join(', ')}; client_credentials needs no redirect URI and a confidential client; password only for a confidential client migrating from Ubisecure (RFC 9700 §2.4: never a default)`, collect)
    .option('--resource-server', "a resource server (resource_server: true): a confidential client other clients' aud may name, with no grants unless --grant-type gives some; it introspects and revokes tokens")
    .option('--no-resource-server', 'not a resource server (resource_server: false); it must have no --resource-uri')
    .option('--resource-uri <uri>', 'a resource indicator (RFC 8707) clients may send as resource to get tokens for this resource server (repeatable): https (http on a loopback host), no fragment, unique across clients; resource servers only', collect)
    .option('--resource-scope <value>', 'a scope value this resource server understands (repeatable), e.g. orders.read: clients in whose aud it is ask for it to get a token for it with that value; an RFC 6749 scope-token, no OpenID Connect value, unique across clients; resource servers only', collect)
    .option('--scope <scope>', "space-separated scope values the client may request: openid, profile, email, and resource servers' client_ids or --resource-scope values within its --aud")
    .option('--aud <client_id>', "another client's client_id this client may request as its tokens' audience (repeatable), e.g. GATEHOUSE_API_CLIENT_ID to call the identity API", collect)
    .option('--allowed-cors-origin <origin>', 'a browser origin (scheme://host[:port]) whose single-page app may call the token, revocation and UserInfo endpoints (repeatable); without it, the origins of the redirect URIs', collect)
    .option('--access-token-ttl <seconds>', 'access token lifetime for this client')
    .option('--refresh-tokens', 'issue refresh tokens to this client')
    .option('--no-refresh-tokens', 'issue no refresh tokens')
    .option('--rotate-refresh-tokens', 'replace the refresh token on each use (the default)')
    .option('--no-rotate-refresh-tokens', 'keep the refresh token on use (confidential clients only)')
    .option('--post-logout-redirect-uri <uri>', 'where to return after logout (repeatable)', collect)
    // Not .choices(): registration refuses an unknown algorithm, and `none`, with its reason.
    .option('--id-token-signed-response-alg <alg>', `what its ID tokens are signed with: ${SIGNING_ALGS.join(', ')} (default RS256)`)
    .option('--userinfo-signed-response-alg <alg>', `answer its UserInfo requests with a JWT signed with this: ${SIGNING_ALGS.join(', ')} (default: plain JSON)`)
    .addOption(new Option('--application-type <type>', 'web (the default) or native (OIDC Registration §2): only a native app\'s http loopback redirect URIs accept any port (RFC 8252 §7.3)').choices(APPLICATION_TYPES))
    .option('--consent-required', 'a third-party client: ask each user for consent before the first code (consent_required)')
    .option('--no-consent-required', 'a first-party client: no consent page (the default)')
    // JWT access tokens (RFC 9068): what the tokens meant for this client, as a resource server, look like.
    .addOption(new Option('--access-token-format <format>', 'the form of the access tokens whose audience is this client: jwt (RFC 9068, validated locally) or opaque (introspected); default GATEHOUSE_ACCESS_TOKEN_FORMAT').choices([...ACCESS_TOKEN_FORMATS]))
    .option('--access-token-signed-response-alg <alg>', `what the JWT access tokens meant for this client are signed with: ${SIGNING_ALGS.join(', ')} (default RS256)`)
    .option('--authorization-policy <name>', 'the authorization policy (gatehouse policy create) that decides who may use the client and which extra claims it gets; "" removes it')
    // Levels of authentication (docs/authorization.md): OIDC Registration §2 defaults a request can override.
    .option('--default-acr-value <acr>', 'an acr value asked for when a request names none (repeatable, in order of preference; default_acr_values)', collect)
    .option('--default-max-age <seconds>', 'the max_age of a request that sends none: an older sign-in is asked for again (default_max_age)')
    .option('--backchannel-logout-uri <uri>', 'where gatehouse POSTs a logout token when a session this client got tokens in ends (backchannel_logout_uri; docs/logout.md); "" removes it')
    .option('--backchannel-logout-session-required', 'the client needs sid in its logout tokens (backchannel_logout_session_required)')
    .option('--frontchannel-logout-uri <uri>', 'the page the signed-out page loads in an iframe when a session this client got tokens in ends (frontchannel_logout_uri; docs/logout.md); "" removes it')
    .option('--frontchannel-logout-session-required', 'the client needs iss and sid on its front-channel logout URI (frontchannel_logout_session_required)')
    .option('--json', 'print JSON only');
}

/** The metadata document of the file (if any) with the flags applied over it. */
async function metadataFrom(flags: MetadataFlags): Promise<Record<string, unknown>> {
  const file = flags.metadataFile === undefined ? {} : await readJsonFile(flags.metadataFile);
  if (typeof file !== 'object' || file === null || Array.isArray(file)) throw new UsageError(`${flags.metadataFile} must hold a JSON object`);
  const doc: Record<string, unknown> = { ...file };
  if (flags.name !== undefined) doc.client_name = flags.name;
  if (flags.redirectUri) doc.redirect_uris = flags.redirectUri;
  if (flags.postLogoutRedirectUri) doc.post_logout_redirect_uris = flags.postLogoutRedirectUri;
  if (flags.grantType) doc.grant_types = flags.grantType;
  if (flags.resourceServer !== undefined) doc.resource_server = flags.resourceServer;
  if (flags.resourceUri) doc.resource_uris = flags.resourceUri;
  if (flags.resourceScope) doc.resource_scopes = flags.resourceScope;
  if (flags.tokenEndpointAuthMethod !== undefined) doc.token_endpoint_auth_method = flags.tokenEndpointAuthMethod;
  if (flags.codeChallengeMethod !== undefined) doc.code_challenge_method = flags.codeChallengeMethod;
  if (flags.scope !== undefined) doc.scope = flags.scope;
  if (flags.aud) doc.aud = flags.aud;
  if (flags.allowedCorsOrigin) doc.allowed_cors_origins = flags.allowedCorsOrigin;
  if (flags.accessTokenTtl !== undefined) doc.access_token_ttl = wholeNumber(flags.accessTokenTtl, '--access-token-ttl');
  if (flags.refreshTokens !== undefined) doc.refresh_tokens = flags.refreshTokens;
  if (flags.rotateRefreshTokens !== undefined) doc.rotate_refresh_tokens = flags.rotateRefreshTokens;
  if (flags.jwksFile !== undefined) doc.jwks = await readJsonFile(flags.jwksFile);
  if (flags.jwksUri !== undefined) doc.jwks_uri = flags.jwksUri;
  if (flags.tokenEndpointAuthSigningAlg !== undefined) doc.token_endpoint_auth_signing_alg = flags.tokenEndpointAuthSigningAlg;
  if (flags.idTokenSignedResponseAlg !== undefined) doc.id_token_signed_response_alg = flags.idTokenSignedResponseAlg;
  if (flags.userinfoSignedResponseAlg !== undefined) doc.userinfo_signed_response_alg = flags.userinfoSignedResponseAlg;
  if (flags.consentRequired !== undefined) doc.consent_required = flags.consentRequired;
  if (flags.applicationType !== undefined) doc.application_type = flags.applicationType;
  if (flags.accessTokenFormat !== undefined) doc.access_token_format = flags.accessTokenFormat;
  if (flags.accessTokenSignedResponseAlg !== undefined) doc.access_token_signed_response_alg = flags.accessTokenSignedResponseAlg;
  if (flags.defaultAcrValue) doc.default_acr_values = flags.defaultAcrValue;
  if (flags.defaultMaxAge !== undefined) doc.default_max_age = wholeNumber(flags.defaultMaxAge, '--default-max-age');
  if (flags.backchannelLogoutUri !== undefined) doc.backchannel_logout_uri = flags.backchannelLogoutUri === '' ? null : flags.backchannelLogoutUri;
  if (flags.backchannelLogoutSessionRequired !== undefined) doc.backchannel_logout_session_required = flags.backchannelLogoutSessionRequired;
  if (flags.frontchannelLogoutUri !== undefined) doc.frontchannel_logout_uri = flags.frontchannelLogoutUri === '' ? null : flags.frontchannelLogoutUri;
  if (flags.frontchannelLogoutSessionRequired !== undefined) doc.frontchannel_logout_session_required = flags.frontchannelLogoutSessionRequired;
  // "" removes the policy (null: the key's default, none).
  if (flags.authorizationPolicy !== undefined) doc.authorization_policy = flags.authorizationPolicy === '' ? null : flags.authorizationPolicy;
  return doc;
}

/**
 * What the operator should know about a client just registered or changed, on stderr so that
 * `--json` still prints one document on stdout.
 */
function warn(client: Client): void {
  for (const warning of clientWarnings(client)) process.stderr.write(`gatehouse: warning: ${warning}\n`);
}

/** The client as printed: its metadata view, with the secret first when one was just generated. */
function show(client: Client, clientSecret: string | undefined, json: boolean | undefined): void {
  const { client_id, ...rest } = clientView(client);
  if (json) return printJson({ client_id, ...(clientSecret === undefined ? {} : { client_secret: clientSecret }), ...rest });
  const fields: [string, unknown][] = [['client_id', client_id]];
  if (clientSecret !== undefined) fields.push(['client_secret', `${clientSecret}  (shown once: store it now)`]);
  printFields([...fields, ...Object.entries(rest)]);
}

/** `clientAuth`: what this configuration gives the client-authentication methods; undefined when it cannot be read. */
export function registerClientCommands(program: Command, clientAuth: ClientAuthSetup | undefined): void {
  const client = program.command('client').description('register and manage OAuth clients');

  withMetadataOptions(client.command('create').description('register a client; prints its client_id and, once, its client_secret'), clientAuth)
    .option('--inactive', 'register it deactivated')
    .action((flags: MetadataFlags & JsonFlag & { inactive?: boolean }) =>
      withStore(async (env) => {
        const { client, clientSecret } = await env.admin.clients.create(env.acting, await metadataFrom(flags), flags.inactive ? { active: false } : {});
        warn(client);
        show(client, clientSecret, flags.json);
      }),
    );

  client
    .command('list')
    .description('list registered clients')
    .option('--json', 'print JSON only')
    .action((flags: JsonFlag) =>
      withStore(async (env) => {
        const clients = await env.admin.clients.list();
        if (flags.json) return printJson(clients.map(clientView));
        printTable(
          ['CLIENT_ID', 'ACTIVE', 'AUTH', 'NAME', 'REDIRECT_URIS'],
          clients.map((c) => [c.clientId, c.active, c.tokenEndpointAuthMethod ?? 'client_secret_basic|post', c.name, c.redirectUris]),
          'No clients registered.',
        );
      }),
    );

  client
    .command('show')
    .description("show a client's metadata")
    .argument('<client_id>')
    .option('--json', 'print JSON only')
    .action((clientId: string, flags: JsonFlag) => withStore(async (env) => show(await env.admin.clients.get(clientId), undefined, flags.json)));

  withMetadataOptions(client.command('update').description('change a client: given values replace the registered ones').argument('<client_id>'), clientAuth)
    .action((clientId: string, flags: MetadataFlags & JsonFlag) =>
      withStore(async (env) => {
        const { client, clientSecret } = await env.admin.clients.update(env.acting, clientId, await metadataFrom(flags));
        warn(client);
        show(client, clientSecret, flags.json);
      }),
    );

  client
    .command('rotate-secret')
    .description('generate a new client_secret; the old one stops working at once')
    .argument('<client_id>')
    .option('--json', 'print JSON only')
    .action((clientId: string, flags: JsonFlag) =>
      withStore(async (env) => {
        const { client, clientSecret } = await env.admin.clients.rotateSecret(env.acting, clientId);
        if (flags.json) return printJson({ client_id: client.clientId, client_secret: clientSecret });
        printFields([
          ['client_id', client.clientId],
          ['client_secret', `${clientSecret}  (shown once: store it now)`],
        ]);
      }),
    );

  for (const [name, active] of [['activate', true], ['deactivate', false]] as const) {
    client
      .command(name)
      .description(active ? 'let the client use gatehouse again' : 'refuse the client everywhere until activated')
      .argument('<client_id>')
      .option('--json', 'print JSON only')
      .action((clientId: string, flags: JsonFlag) =>
        withStore(async (env) => {
          const updated = await env.admin.clients.setActive(env.acting, clientId, active);
          if (flags.json) return printJson(clientView(updated));
          printLine(`Client ${updated.clientId} is ${active ? 'active' : 'inactive'}.`);
        }),
      );
  }

  client
    .command('delete')
    .description('delete a client for good')
    .argument('<client_id>')
    .option('--json', 'print JSON only')
    .action((clientId: string, flags: JsonFlag) =>
      withStore(async (env) => {
        await env.admin.clients.delete(env.acting, clientId);
        if (flags.json) return printJson({ client_id: clientId, deleted: true });
        printLine(`Deleted client ${clientId}.`);
      }),
    );
}
