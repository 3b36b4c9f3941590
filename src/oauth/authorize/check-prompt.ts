import { InvalidRequest } from '../errors.ts';
import { PROMPT_VALUES, type Prompt } from './request.ts';

/**
 * prompt (OIDC Core §3.1.2.1): a space-delimited list. `none` with any other value is an error;
 * values outside the defined set are ignored (the specification allows either; ignoring keeps
 * requests from newer clients working).
 */
export function checkPrompt(value: string | undefined): ReadonlySet<Prompt> {
  if (value === undefined) return new Set();
  const values = value.split(' ').filter((v) => v !== '');
  if (values.includes('none') && values.some((v) => v !== 'none')) throw new InvalidRequest('prompt=none cannot be combined with other prompt values.');
  return new Set(values.filter((v): v is Prompt => (PROMPT_VALUES as readonly string[]).includes(v)));
}

/** Ten digits are more than a century of seconds: enough, and safe from overflow. */
const MAX_AGE = /^[0-9]{1,10}$/;

/** max_age (OIDC Core §3.1.2.1): a non-negative whole number of seconds. */
export function checkMaxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!MAX_AGE.test(value)) throw new InvalidRequest('max_age must be a non-negative whole number of seconds.');
  return Number(value);
}
