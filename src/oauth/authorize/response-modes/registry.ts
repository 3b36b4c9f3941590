import { formPost } from './form-post.ts';
import { fragment } from './fragment.ts';
import type { ResponseMode } from './mode.ts';
import { query } from './query.ts';

/** Every response mode the authorization endpoint offers; discovery's response_modes_supported. */
export const RESPONSE_MODES: readonly ResponseMode[] = [query, fragment, formPost];

/**
 * The mode used when the request names none, or names one that cannot be used: the default for
 * response_type=code is the query encoding (OAuth 2.0 Multiple Response Type Encoding Practices
 * §2.1; RFC 6749 §4.1.2, §4.1.2.1).
 */
export const DEFAULT_RESPONSE_MODE: ResponseMode = query;

export function findResponseMode(name: string): ResponseMode | undefined {
  return RESPONSE_MODES.find((mode) => mode.name === name);
}
