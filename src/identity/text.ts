/** Checks for the short texts of the identity model: names, usernames, descriptions. */
import { IdentityError } from './errors.ts';

export const MAX_TEXT_LENGTH = 255;

/**
 * A trimmed, non-empty text of at most 255 characters (code points) without control
 * characters, which would corrupt logs, terminals and XML output.
 */
export function requiredText(value: unknown, field: string): string {
  const text = optionalText(value, field);
  if (text === undefined) throw new IdentityError('invalid_argument', `${field} is required`, field);
  return text;
}

/** As requiredText, but undefined or blank means "not given". */
export function optionalText(value: unknown, field: string): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new IdentityError('invalid_argument', `${field} must be a string`, field);
  const text = value.trim();
  if (text === '') return undefined;
  if ([...text].length > MAX_TEXT_LENGTH) throw new IdentityError('invalid_argument', `${field} must be at most ${MAX_TEXT_LENGTH} characters`, field);
  if (/\p{Cc}/u.test(text)) throw new IdentityError('invalid_argument', `${field} must not contain control characters`, field);
  return text;
}
