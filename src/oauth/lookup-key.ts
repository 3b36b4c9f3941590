/**
 * Whether a value from a request may be used to look a row up: not too long and free of control
 * characters. A client_id or username with a NUL can name nothing we store, and PostgreSQL
 * refuses NUL in text parameters with an error, which must not turn into a 5xx.
 */
export function isLookupKey(value: string, maxLength = 2048): boolean {
  // eslint-disable-next-line no-control-regex
  return value.length <= maxLength && !/[\x00-\x1f\x7f]/.test(value);
}
