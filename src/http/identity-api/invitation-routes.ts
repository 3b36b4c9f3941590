/**
 * `/{identity_rest}/services/{2.0|2.1}/invitations/…` (docs/identity-api.md, "Invitations";
 * docs/invitations.md): gatehouse's own resource in CustomerID's style — ids in collections,
 * entities as named multi-valued attributes, attributes in the query string or the body. Invite
 * an address, list ids (by `status`), read one, resend it (a new link; the old one dies), revoke it.
 * The link is never shown: it exists only in the mail.
 */
import { INVITATION_STATUSES } from '../../domain/invitation.ts';
import type { InvitationView } from '../../manage/invitations.ts';
import type { ApiResult } from './render.ts';
import type { Entity, WireAttributes } from './representation.ts';
import { listing, pathId, requestAttributes, type ApiRoute } from './route.ts';
import { attributeQuery, collectionResponse, entityBody, entityResponse, idParams } from './schemas.ts';
import { invalidArguments } from './errors.ts';

const invitations = collectionResponse('invitations', 'An invitation id.');

/** Wire names of an invitation's attributes (a user's names where they are the account's). */
const WIRE = { email: 'email', givenName: 'firstname', familyName: 'surname', organizationId: 'organization', locale: 'locale' } as const;
const ACCEPTED_INPUT = new Set<string>(Object.values(WIRE));

function affected(id: string, status = 200, location?: string): ApiResult {
  return { status, location, body: { kind: 'collection', collection: 'Invitations', ids: [id] } };
}

function invitationEntity(i: InvitationView): Entity {
  const pairs: [string, string | undefined][] = [
    [WIRE.email, i.email],
    [WIRE.givenName, i.givenName],
    [WIRE.familyName, i.familyName],
    [WIRE.organizationId, i.organizationId],
    ['status', i.status],
    [WIRE.locale, i.locale],
    ['invitedBy', i.invitedBy],
    ['created', new Date(i.createdAt).toISOString()],
    ['expires', new Date(i.expiresAt).toISOString()],
    ['ended', i.endedAt === undefined ? undefined : new Date(i.endedAt).toISOString()],
    ['user', i.userId],
  ];
  return { type: 'invitation', id: i.id, attributes: pairs.filter((p): p is [string, string] => p[1] !== undefined).map(([name, value]) => [name, [value]]) };
}

/** One value of each attribute; an unknown name is refused (an invitation has no custom attributes). */
function single(attributes: WireAttributes, name: string): string | undefined {
  const values = attributes[name];
  if (values === undefined) return undefined;
  if (values.length !== 1) throw invalidArguments(`${name} takes one value`);
  return values[0];
}

export function invitationRoutes(version: '2.0' | '2.1'): ApiRoute[] {
  const base = `/${version}/invitations`;
  const v = version.replace('.', '');
  return [
    {
      method: 'GET',
      path: `${base}/`,
      operationId: `listInvitations${v}`,
      summary: 'List invitation ids, newest first',
      description: 'status=pending|accepted|revoked|expired lists only those; maxResults as for users.',
      tag: 'Invitations',
      // Other parameters are the URL-parameter credentials (username, password): strings, as for the other listings.
      querystring: { type: 'object', properties: { status: { type: 'string', enum: [...INVITATION_STATUSES] }, maxResults: { type: 'integer', minimum: 0 } }, additionalProperties: { type: 'string', maxLength: 1024 } },
      responses: { 200: { description: 'The ids of the invitations.', schema: invitations } },
      async handle(call) {
        const { limit, check } = listing(call);
        const rows = await call.deps.admin.invitations.page({ status: call.query.status as string | undefined, limit: limit - 1 });
        return { body: { kind: 'collection', collection: 'Invitations', ids: check(rows).map((i) => i.id) } };
      },
    },
    {
      method: 'POST',
      path: `${base}/`,
      operationId: `createInvitation${v}`,
      summary: 'Invite an e-mail address',
      description:
        'Attributes from the query string and/or the body: email (required), firstname, surname, organization (an organization id), locale (en, fi, sv). The mail with the link is queued with the invitation; 409 when mail is off, when an account has the address, or when a pending invitation to it exists.',
      tag: 'Invitations',
      querystring: attributeQuery,
      body: entityBody('invitation'),
      responses: { 201: { description: 'Invited; the collection holds the new id.', schema: invitations } },
      async handle(call) {
        const attributes = requestAttributes(call, 'invitation');
        const unknown = Object.keys(attributes).filter((name) => !ACCEPTED_INPUT.has(name));
        if (unknown.length > 0) throw invalidArguments(`an invitation has no attribute ${unknown.join(', ')}`);
        const sent = await call.deps.admin.invitations.invite(await call.acting(), {
          email: single(attributes, WIRE.email) ?? '',
          givenName: single(attributes, WIRE.givenName),
          familyName: single(attributes, WIRE.familyName),
          organizationId: single(attributes, WIRE.organizationId),
          locale: single(attributes, WIRE.locale),
        });
        return affected(sent.invitation.id, 201, `${call.path}${sent.invitation.id}`);
      },
    },
    {
      method: 'GET',
      path: `${base}/:id`,
      operationId: `getInvitation${v}`,
      summary: 'Read an invitation',
      tag: 'Invitations',
      params: idParams,
      responses: { 200: { description: 'The invitation (never its link).', schema: entityResponse } },
      async handle(call) {
        return { body: { kind: 'entity', entity: invitationEntity(await call.deps.admin.invitations.get(pathId(call))) } };
      },
    },
    {
      method: 'POST',
      path: `${base}/:id/resend`,
      operationId: `resendInvitation${v}`,
      summary: 'Resend a pending invitation',
      description: 'A new link with a new lifetime in a new mail; the old link stops working. 409 unless it is pending (an expired one may be resent).',
      tag: 'Invitations',
      params: idParams,
      responses: { 200: { description: 'Resent; the collection holds its id.', schema: invitations } },
      async handle(call) {
        const sent = await call.deps.admin.invitations.resend(await call.acting(), pathId(call));
        return affected(sent.invitation.id);
      },
    },
    {
      method: 'DELETE',
      path: `${base}/:id`,
      operationId: `revokeInvitation${v}`,
      summary: 'Revoke a pending invitation',
      description: 'Its link stops working; it stays listed with status revoked. 409 unless it is pending.',
      tag: 'Invitations',
      params: idParams,
      responses: { 200: { description: 'Revoked; the collection holds its id.', schema: invitations } },
      async handle(call) {
        const revoked = await call.deps.admin.invitations.revoke(await call.acting(), pathId(call));
        return affected(revoked.id);
      },
    },
  ];
}
