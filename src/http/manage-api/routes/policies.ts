/**
 * Authorization policies (docs/management-api.md, "Policies"; docs/authorization.md): the use
 * cases of src/manage/policies.ts, as `gatehouse policy …` runs them, which emit their audit
 * events. A policy is its document as `gatehouse policy show` prints it, with `version`,
 * `created_at` and `updated_at` (and, for one policy, the `clients` that use it).
 */
import { ConflictError } from '../../../domain/errors.ts';
import { policyDocumentJson, type Policy } from '../../../domain/policy.ts';
import { PolicyInUse } from '../../../manage/policies.ts';
import { conflict } from '../errors.ts';
import { listQuerySchema, pageSchema, stringKeyPage, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';

const TAG = 'Policies';

export function policyJson(policy: Policy, clients?: string[]): Record<string, unknown> {
  return {
    ...policyDocumentJson(policy.document),
    version: policy.version,
    ...(clients === undefined ? {} : { clients }),
    created_at: new Date(policy.createdAt).toISOString(),
    updated_at: new Date(policy.updatedAt).toISOString(),
  };
}

/** The least authentication a sign-in to the policy's clients needs, always essential (docs/authorization.md, "Levels of authentication"). */
const MINIMUM_AUTHENTICATION: JsonSchema = { type: 'string', description: 'The least authentication a sign-in to the clients needs, always essential: `single`, `multi` (two factors), `phr` (a passkey), `phrh` (a device-bound passkey). Absent: whatever the request asks.' };
const nameParam: JsonSchema = { type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 100, description: 'The policy name.' } } };
/** The document's rules are the use case's (parsePolicyDocument), which names the field at fault (`claims[2].from`). */
const documentSchema: JsonSchema = {
  type: 'object',
  description: 'A policy document (docs/authorization.md, "Authorization policies"): `name`, `access`, `claims`, `minimum_authentication`, `require_verified_email` (docs/email-verification.md).',
  properties: { name: { type: 'string', maxLength: 100 }, access: { type: 'object' }, claims: { type: 'array', maxItems: 50, items: { type: 'object' } }, minimum_authentication: MINIMUM_AUTHENTICATION, require_verified_email: { type: 'boolean' } },
};
const policySchema: JsonSchema = {
  type: 'object',
  required: ['name', 'version', 'created_at', 'updated_at'],
  properties: { name: { type: 'string' }, access: { type: 'object' }, claims: { type: 'array' }, minimum_authentication: MINIMUM_AUTHENTICATION, require_verified_email: { type: 'boolean' }, version: { type: 'integer' }, clients: { type: 'array', items: { type: 'string' } }, created_at: { type: 'string' }, updated_at: { type: 'string' } },
};

export const policyRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/policies',
    operationId: 'listPolicies',
    summary: 'List authorization policies by name',
    tag: TAG,
    access: 'read',
    querystring: listQuerySchema('the name'),
    responses: { 200: { description: 'A page of policies.', schema: pageSchema(policySchema) } },
    async handle({ deps, query }) {
      const page = stringKeyPage(query);
      const rows = await deps.admin.policies.page({ after: page.after, limit: page.fetch, q: page.q });
      return { body: toPage(rows, page.limit, (p) => p.document.name, (p) => policyJson(p)) };
    },
  },
  {
    method: 'POST',
    path: '/policies',
    operationId: 'createPolicy',
    summary: 'Create a policy',
    tag: TAG,
    access: 'write',
    body: documentSchema,
    responses: { 201: { description: 'The policy (version 1).', schema: policySchema } },
    async handle({ deps, body, acting }) {
      let created: Policy;
      try {
        created = await deps.admin.policies.create(acting, body);
      } catch (error) {
        if (error instanceof ConflictError) throw conflict(`a policy named ${JSON.stringify((body as { name?: unknown }).name)} already exists`, 'name');
        throw error;
      }
      return { status: 201, body: policyJson(created) };
    },
  },
  {
    method: 'GET',
    path: '/policies/:name',
    operationId: 'getPolicy',
    summary: 'A policy, with the clients that use it',
    tag: TAG,
    access: 'read',
    params: nameParam,
    responses: { 200: { description: 'The policy.', schema: policySchema } },
    async handle({ deps, params }) {
      const { policy, clients } = await deps.admin.policies.get(params.name!);
      return { body: policyJson(policy, clients) };
    },
  },
  {
    method: 'PUT',
    path: '/policies/:name',
    operationId: 'replacePolicy',
    summary: "Replace a policy's document (its version rises by one)",
    description: 'The document may leave out `name`; a different name is refused (a policy cannot be renamed).',
    tag: TAG,
    access: 'write',
    params: nameParam,
    body: documentSchema,
    responses: { 200: { description: 'The policy as stored.', schema: policySchema } },
    async handle({ deps, params, body, acting }) {
      const updated = await deps.admin.policies.update(acting, params.name!, body);
      return { body: policyJson(updated) };
    },
  },
  {
    method: 'DELETE',
    path: '/policies/:name',
    operationId: 'deletePolicy',
    summary: 'Delete a policy no client uses',
    tag: TAG,
    access: 'write',
    params: nameParam,
    responses: { 204: { description: 'Deleted.' } },
    async handle({ deps, params, acting }) {
      const name = params.name!;
      try {
        await deps.admin.policies.delete(acting, name);
      } catch (error) {
        if (!(error instanceof PolicyInUse)) throw error;
        // This API's own words: how to detach it here, not with the CLI.
        const { clients } = error;
        throw conflict(`the policy ${name} is used by ${clients.length === 1 ? 'the client' : 'the clients'} ${clients.join(', ')}; detach it from them first (PATCH /clients/{id} with "authorization_policy": null)`);
      }
      return { status: 204 };
    },
  },
];
