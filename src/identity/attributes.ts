/**
 * Custom attributes of users and organizations: CustomerID lets an installation add its own
 * fields (`data.organization.fields`, e.g. `vatnumber`), each holding one or more values
 * (`<Attribute name><Value>…</Value></Attribute>`). Names and values are checked here, once,
 * for every adapter.
 */
import type { Attributes } from '../domain/user.ts';
import { IdentityError } from './errors.ts';
import { requiredText } from './text.ts';

/** A letter, then letters, digits, `_`, `.` or `-`: safe as a query parameter, an XML attribute and a JSON key. */
const ATTRIBUTE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;
export const MAX_ATTRIBUTES = 100;
export const MAX_VALUES_PER_ATTRIBUTE = 100;

/** Changes to custom attributes: a list replaces the attribute's values; null (or an empty list) deletes it. */
export type AttributeChanges = Record<string, string[] | null>;

export function isAttributeName(name: string): boolean {
  return ATTRIBUTE_NAME.test(name);
}

export function checkedAttributeName(name: string): string {
  if (!isAttributeName(name)) throw new IdentityError('invalid_argument', `attribute name ${JSON.stringify(name.slice(0, 80))} must be a letter followed by up to 63 letters, digits, "_", "." or "-"`, name);
  return name;
}

/** Values are texts as any other (trimmed, ≤255 characters, no control characters); blank ones are dropped. */
function checkedValues(name: string, values: readonly unknown[]): string[] {
  if (values.length > MAX_VALUES_PER_ATTRIBUTE) throw new IdentityError('invalid_argument', `attribute ${name} may have at most ${MAX_VALUES_PER_ATTRIBUTE} values`, name);
  return values.filter((v) => !(typeof v === 'string' && v.trim() === '')).map((v) => requiredText(v, name));
}

/** New custom attributes: names and values checked, attributes without a value left out. */
export function checkedAttributes(input: Record<string, readonly unknown[]> | undefined): Attributes {
  return applyAttributeChanges({}, input ?? {});
}

/** `current` with `changes` applied: the given names replace or delete, the others stay. */
export function applyAttributeChanges(current: Attributes, changes: Record<string, readonly unknown[] | null>): Attributes {
  const next: Attributes = { ...current };
  for (const [name, values] of Object.entries(changes)) {
    checkedAttributeName(name);
    const checked = values === null ? [] : checkedValues(name, values);
    if (checked.length === 0) delete next[name];
    else next[name] = checked;
  }
  if (Object.keys(next).length > MAX_ATTRIBUTES) throw new IdentityError('invalid_argument', `at most ${MAX_ATTRIBUTES} custom attributes are allowed`);
  return next;
}
