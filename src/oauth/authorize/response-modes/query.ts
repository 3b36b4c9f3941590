import { encodeParams, type ResponseMode, type ResponseParams } from './mode.ts';

/**
 * `query` (OAuth 2.0 Multiple Response Type Encoding Practices §2.1): the parameters are added to
 * the query component of the redirect_uri (RFC 6749 §4.1.2), and the browser is redirected there.
 * The default for response_type=code (ibid. §2.1; §5 forbids it only for responses carrying
 * tokens, which this server never returns from the authorization endpoint).
 */
export const query: ResponseMode = {
  name: 'query',
  refuses: () => undefined,
  deliver: (redirectUri, params) => ({ type: 'redirect', location: withParams(redirectUri, params) }),
};

/**
 * Adds response parameters to a redirect URI, keeping any query it already has (RFC 6749 §3.1.2;
 * AZ-10). The URI itself is left byte for byte as registered: re-serialising it through a URL
 * parser could change it. Values are percent-encoded, so `-._~` pass unchanged.
 */
export function withParams(uri: string, params: ResponseParams): string {
  const query = encodeParams(params);
  if (query === '') return uri;
  const separator = !uri.includes('?') ? '?' : uri.endsWith('?') || uri.endsWith('&') ? '' : '&';
  return uri + separator + query;
}
