/**
 * The identity API's names, in one place: each built-in attribute's name on the wire and the
 * use cases' field it carries (src/identity), for users and organizations. Input (wire-input.ts),
 * output (representation.ts), listing filters (wire-filters.ts) and error texts (errors.ts) all
 * read these tables, so a wire name is written once. API versions 1.2 and 2.x share the names;
 * only the document shapes differ (legacy-routes.ts).
 *
 * The names follow the product: users `id firstname surname cn login email organization status`
 * (Lab 2.3 "Using the CustomerID REST API") and gatehouse's `emailVerified` (issue 25 item 3); organizations `technicalName friendlyName
 * organizationType/organizationClass parentOrganizationId virtual entityName` (REST API 2.0).
 */
import type { NewOrganization } from '../../identity/organizations.ts';
import type { NewUser } from '../../identity/users.ts';

/** A user's fields (NewUser's and the id; groups have their own routes) → wire names. */
export const USER_WIRE_NAMES = {
  id: 'id',
  username: 'login',
  password: 'password',
  status: 'status',
  givenName: 'firstname',
  familyName: 'surname',
  email: 'email',
  /** `true` or `false`, as `virtual` is; shown only with an address (docs/email-verification.md). */
  emailVerified: 'emailVerified',
  organizationId: 'organization',
} as const satisfies Record<Exclude<keyof NewUser, 'attributes' | 'groups'> | 'id', string>;

/** The user's common name, `firstname surname`: computed by the server, so read-only. */
export const USER_CN = 'cn';

/** An organization's fields (NewOrganization's, and the id) → wire names. */
export const ORGANIZATION_WIRE_NAMES = {
  id: 'id',
  technicalName: 'technicalName',
  friendlyName: 'friendlyName',
  type: 'organizationType',
  parentId: 'parentOrganizationId',
  virtual: 'virtual',
} as const satisfies Record<Exclude<keyof NewOrganization, 'attributes'> | 'id', string>;

/** The product's list filter says organizationType and its entities say organizationClass: one field, two names. */
export const ORGANIZATION_TYPE_ALIAS = 'organizationClass';

/** The path of technical names from the root (`Org/Dept`): computed by the server, so read-only. */
export const ORGANIZATION_ENTITY_NAME = 'entityName';

type UserField = keyof typeof USER_WIRE_NAMES;
type OrganizationField = keyof typeof ORGANIZATION_WIRE_NAMES;

/** The wire names an entity accepts as built-in on input (everything but the computed ones). */
export const USER_INPUT_NAMES: ReadonlySet<string> = new Set(Object.values(USER_WIRE_NAMES));
export const ORGANIZATION_INPUT_NAMES: ReadonlySet<string> = new Set([...Object.values(ORGANIZATION_WIRE_NAMES), ORGANIZATION_TYPE_ALIAS]);

/** The listing's own parameters and the URL-parameter method's credentials: never filters or attributes. */
export const USER_LIST_CONTROLS: ReadonlySet<string> = new Set(['exactMatch', 'maxResults', 'recursive', 'username', 'password']);
export const ORGANIZATION_LIST_CONTROLS: ReadonlySet<string> = new Set(['exactMatch', 'maxResults', 'username', 'password']);

/**
 * The user filters, wire name → the storage port's filter name, which is the field's
 * (UserQuery in src/storage/ports.ts). The password is no filter.
 */
const USER_FILTER_FIELDS = ['id', 'username', 'givenName', 'familyName', 'email', 'emailVerified', 'organizationId', 'status'] as const satisfies UserField[];
export const USER_FILTERS: Readonly<Record<string, string>> = Object.fromEntries(USER_FILTER_FIELDS.map((field) => [USER_WIRE_NAMES[field], field]));

/** The organization filters' names in the storage port (OrganizationQuery); `virtual` is no filter. */
const ORGANIZATION_FILTER_FIELDS = {
  id: 'id',
  technicalName: 'technicalName',
  friendlyName: 'friendlyName',
  type: 'organizationType',
  parentId: 'parentOrganizationId',
} as const satisfies Partial<Record<OrganizationField, string>>;
export const ORGANIZATION_FILTERS: Readonly<Record<string, string>> = Object.fromEntries([
  ...Object.entries(ORGANIZATION_FILTER_FIELDS).map(([field, filter]) => [ORGANIZATION_WIRE_NAMES[field as OrganizationField], filter]),
  [ORGANIZATION_TYPE_ALIAS, ORGANIZATION_FILTER_FIELDS.type],
]);

/** Field → wire name where they differ, for the use cases' error texts (which name fields). */
export const WIRE_NAME_OF_FIELD: Readonly<Record<string, string>> = Object.fromEntries(
  [...Object.entries(USER_WIRE_NAMES), ...Object.entries(ORGANIZATION_WIRE_NAMES)].filter(([field, wire]) => field !== wire),
);

/**
 * Names that are never custom attributes: the built-in ones, the use cases' spellings of them
 * (a filter on `givenName` would otherwise hit the column), the credentials of the URL-parameter
 * method and the listing controls.
 */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([
  ...USER_LIST_CONTROLS,
  ...ORGANIZATION_LIST_CONTROLS,
  ...Object.keys(USER_WIRE_NAMES),
  ...USER_INPUT_NAMES,
  USER_CN,
  ...Object.keys(ORGANIZATION_WIRE_NAMES),
  ...ORGANIZATION_INPUT_NAMES,
  ORGANIZATION_ENTITY_NAME,
]);
