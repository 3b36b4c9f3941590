/**
 * Signing keys (docs/management-api.md, "Signing keys"): the public facts of the keys the JWKS
 * publishes, and rotation as `gatehouse keys rotate` does it (src/manage/keys.ts). Never any
 * private material, sealed or not: a key is `{ kid, alg, status, created_at, activates_at?,
 * retires_at? }`.
 */
import { DEFAULT_SIGNING_ALG, SIGNING_ALGS, type SigningAlg } from '../../../protocol/constants.ts';
import type { SigningKey } from '../../../domain/signing-key.ts';
import type { PublishedKey } from '../../../manage/keys.ts';
import { decodeCursor, DEFAULT_LIMIT, isStringKey, listQuerySchema, pageSchema, toPage } from '../pagination.ts';
import type { JsonSchema, ManageRoute } from '../route.ts';

const TAG = 'Signing keys';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function keyJson({ key, status, signsFrom }: PublishedKey): Record<string, unknown> {
  return {
    kid: key.kid,
    alg: key.alg,
    status,
    created_at: iso(key.createdAt),
    ...(status === 'next' ? { activates_at: iso(signsFrom) } : {}),
    ...(key.publishUntil === undefined ? {} : { retires_at: iso(key.publishUntil) }),
  };
}

const keySchema: JsonSchema = {
  type: 'object',
  required: ['kid', 'alg', 'status', 'created_at'],
  properties: {
    kid: { type: 'string' },
    alg: { enum: [...SIGNING_ALGS] },
    status: { enum: ['active', 'next', 'retired'], description: '`active` signs now; `next` is published and signs from `activates_at`; `retired` is published until `retires_at`.' },
    created_at: { type: 'string' },
    activates_at: { type: 'string' },
    retires_at: { type: 'string', description: 'Until when the JWKS still publishes the key.' },
  },
};

/** The key list's cursor: the last key's [created_at, kid], newest first. */
const isKeyCursor = (key: unknown): key is [number, string] => Array.isArray(key) && key.length === 2 && Number.isSafeInteger(key[0]) && isStringKey(key[1]);
const newerFirst = (a: SigningKey, b: SigningKey) => b.createdAt - a.createdAt || (a.kid < b.kid ? 1 : a.kid > b.kid ? -1 : 0);

export const keyRoutes: ManageRoute[] = [
  {
    method: 'GET',
    path: '/keys',
    operationId: 'listKeys',
    summary: 'The published signing keys, newest first (public facts only)',
    tag: TAG,
    access: 'read',
    querystring: listQuerySchema(undefined),
    responses: { 200: { description: 'A page of keys.', schema: pageSchema(keySchema) } },
    async handle({ deps, query }) {
      const limit = (query.limit as number | undefined) ?? DEFAULT_LIMIT;
      const after = decodeCursor(query.cursor, isKeyCursor);
      // The published keys are a handful (one or two per algorithm), read whole; the cursor still
      // is the last key's sort key, so a rotation while paging shifts nothing.
      const keys = (await deps.admin.keys.list()).sort((a, b) => newerFirst(a.key, b.key));
      const rest = after === undefined ? keys : keys.filter(({ key: k }) => k.createdAt < after[0] || (k.createdAt === after[0] && k.kid < after[1]));
      return { body: toPage(rest.slice(0, limit + 1), limit, ({ key: k }) => [k.createdAt, k.kid], keyJson) };
    },
  },
  {
    method: 'POST',
    path: '/keys/rotate',
    operationId: 'rotateKey',
    summary: "Rotate one algorithm's signing key",
    description: "Publishes a new key of `alg` (default RS256) at once; it signs once every instance and cached JWKS can know it (`activates_at`), while the algorithm's previous key signs until then and stays published until what it signed has expired. Other algorithms' keys are untouched.",
    tag: TAG,
    access: 'write',
    body: { type: 'object', additionalProperties: false, properties: { alg: { enum: [...SIGNING_ALGS], default: DEFAULT_SIGNING_ALG } } },
    bodyOptional: true,
    responses: { 201: { description: 'The new key.', schema: keySchema } },
    async handle({ deps, body, acting }) {
      const alg = ((body as { alg?: SigningAlg } | undefined)?.alg ?? DEFAULT_SIGNING_ALG);
      return { status: 201, body: keyJson(await deps.admin.keys.rotate(acting, alg)) };
    },
  },
];
