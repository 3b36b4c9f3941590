/**
 * `/organizations`: list (keyset by technical name then id, since technical names are unique only
 * among siblings; `?q=` over the technical and the friendly name), create, read, change and
 * delete, through the use cases the identity API and the CLI call (src/manage/organizations.ts).
 * On the wire `name` is the friendly name (docs/management-api.md).
 */
import type { Organization } from '../../../domain/organization.ts';
import type { OrganizationChanges } from '../../../manage/organizations.ts';
import { isUuid } from '../../../lib/uuid.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import { MANAGE_API_PATH } from '../../../manage/management-clients.ts';
import type { JsonSchema, ManageCall, ManageRoute } from '../route.ts';
import { attributeChangesSchema, attributesSchema, isoTime, nullableText, pageLimit, pageSearch, text, uuidSchema } from './identity-shared.ts';

export const organizationSchema: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'technical_name', 'parent_id', 'virtual', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    name: { type: 'string', description: 'The friendly name (defaults to the technical name).' },
    technical_name: { type: 'string', description: 'Unique among its siblings.' },
    parent_id: { type: ['string', 'null'] },
    type: { type: ['string', 'null'] },
    virtual: { type: 'boolean', description: 'A virtual organization groups others and holds no users.' },
    attributes: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
};

export function organizationView(o: Organization): Record<string, unknown> {
  return {
    id: o.id,
    name: o.friendlyName,
    technical_name: o.technicalName,
    parent_id: o.parentId ?? null,
    type: o.type ?? null,
    virtual: o.virtual,
    attributes: o.attributes,
    created_at: isoTime(o.createdAt),
    updated_at: isoTime(o.updatedAt),
  };
}

const idParams: JsonSchema = { type: 'object', required: ['id'], properties: { id: uuidSchema } };

/** The organization a path's `:id` names; 404 for anything else (an id is a UUID). */
function pathId(call: ManageCall): string {
  const id = call.params.id ?? '';
  if (!isUuid(id)) throw notFound(`no organization has the id ${JSON.stringify(id.slice(0, 80))}`);
  return id.toLowerCase();
}

function isOrganizationKey(key: unknown): key is { t: string; i: string } {
  const k = key as { t?: unknown; i?: unknown } | null;
  return typeof k === 'object' && k !== null && typeof k.t === 'string' && k.t.length <= 1024 && typeof k.i === 'string' && k.i.length <= 64;
}

export const organizationRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/organizations',
    operationId: 'listOrganizations',
    summary: 'List organizations',
    description: 'In technical-name order (then id), paged by a keyset cursor; `q` matches a substring of the technical or friendly name, case-insensitively.',
    tag: 'Organizations',
    access: 'read',
    querystring: listQuerySchema('the technical or friendly name'),
    responses: { 200: { description: 'A page of organizations.', schema: pageSchema(organizationSchema) } },
    async handle(call) {
      const limit = pageLimit(call);
      const key = decodeCursor(call.query.cursor, isOrganizationKey);
      const rows = await call.deps.admin.organizations.page({ after: key && { technicalName: key.t, id: key.i }, limit: limit + 1, q: pageSearch(call) });
      return { body: toPage(rows, limit, (o) => ({ t: o.technicalName, i: o.id }), organizationView) };
    },
  },
  {
    method: 'POST',
    path: '/organizations',
    operationId: 'createOrganization',
    summary: 'Create an organization',
    description: 'The technical name defaults to the new id, the friendly name (`name`) to the technical name; without `parent_id` it sits at the root. 409 when the technical name is taken among its siblings.',
    tag: 'Organizations',
    access: 'write',
    bodyOptional: true,
    body: {
      type: 'object',
      additionalProperties: false,
      properties: { name: text, technical_name: text, parent_id: text, type: text, virtual: { type: 'boolean' }, attributes: attributesSchema },
    },
    responses: { 201: { description: 'The new organization.', schema: organizationSchema } },
    async handle(call) {
      const body = (call.body ?? {}) as Record<string, unknown>;
      const created = await call.deps.admin.organizations.create(call.acting, {
        friendlyName: body.name as string | undefined,
        technicalName: body.technical_name as string | undefined,
        parentId: body.parent_id as string | undefined,
        type: body.type as string | undefined,
        virtual: body.virtual as boolean | undefined,
        attributes: body.attributes as Record<string, string[]> | undefined,
      });
      return { status: 201, body: organizationView(created), headers: { location: `${MANAGE_API_PATH}/organizations/${created.id}` } };
    },
  },
  {
    method: 'GET',
    path: '/organizations/:id',
    operationId: 'getOrganization',
    summary: 'Read an organization',
    tag: 'Organizations',
    access: 'read',
    params: idParams,
    responses: { 200: { description: 'The organization.', schema: organizationSchema } },
    async handle(call) {
      const id = pathId(call);
      return { body: organizationView(await call.deps.admin.organizations.get(id)) };
    },
  },
  {
    method: 'PATCH',
    path: '/organizations/:id',
    operationId: 'updateOrganization',
    summary: 'Change an organization',
    description: 'The members given replace the stored values; `name: null` resets the friendly name to the technical name, `parent_id: null` moves it to the root. A move that would make a cycle or a tree too deep is 400 naming `parent_id`. For `attributes`, a list replaces and null deletes; the others stay.',
    tag: 'Organizations',
    access: 'write',
    params: idParams,
    body: {
      type: 'object',
      minProperties: 1,
      additionalProperties: false,
      properties: { name: nullableText, technical_name: text, parent_id: nullableText, type: nullableText, virtual: { type: 'boolean' }, attributes: attributeChangesSchema },
    },
    responses: { 200: { description: 'The organization as changed.', schema: organizationSchema } },
    async handle(call) {
      const id = pathId(call);
      const body = call.body as Record<string, unknown>;
      const changes: OrganizationChanges = {
        friendlyName: body.name as string | null | undefined,
        technicalName: body.technical_name as string | undefined,
        parentId: body.parent_id as string | null | undefined,
        type: body.type as string | null | undefined,
        virtual: body.virtual as boolean | undefined,
        attributes: body.attributes as OrganizationChanges['attributes'],
      };
      const updated = await call.deps.admin.organizations.update(call.acting, id, changes);
      return { body: organizationView(updated) };
    },
  },
  {
    method: 'DELETE',
    path: '/organizations/:id',
    operationId: 'deleteOrganization',
    summary: 'Delete an organization that holds nothing',
    description: 'An organization with sub-organizations or users is refused (409, the detail says which): deleting cannot be undone, and its users would lose their place.',
    tag: 'Organizations',
    access: 'write',
    params: idParams,
    responses: { 204: { description: 'Deleted.' } },
    async handle(call) {
      const id = pathId(call);
      await call.deps.admin.organizations.delete(call.acting, id);
      return { status: 204 };
    },
  },
];
