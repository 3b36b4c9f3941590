import { encodeParams, type ResponseMode } from './mode.ts';

/**
 * `fragment` (OAuth 2.0 Multiple Response Type Encoding Practices §2.1): the parameters are the
 * fragment of the redirect_uri. Legal with response_type=code (the spec forbids only `query` for
 * responses that carry tokens, §5), and what a browser application that reads the response in
 * script may ask for: the code then never reaches a server log or a Referer. A registered
 * redirect_uri never has a fragment of its own (RFC 6749 §3.1.2, checked in check-redirect-uri.ts),
 * so there is nothing to merge with. Decision RM-D1 in docs/decisions.md.
 */
export const fragment: ResponseMode = {
  name: 'fragment',
  refuses: () => undefined,
  deliver: (redirectUri, params) => ({ type: 'redirect', location: `${redirectUri}#${encodeParams(params)}` }),
};
