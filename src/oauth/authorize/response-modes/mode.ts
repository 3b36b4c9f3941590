/**
 * A response mode: how the authorization endpoint's answer — a code, or an error — reaches the
 * client's verified redirect_uri (OAuth 2.0 Multiple Response Type Encoding Practices §2; OAuth
 * 2.0 Form Post Response Mode §2). Each mode is one file in this folder that declares its
 * `response_mode` name and how it delivers; registry.ts lists them, and discovery's
 * `response_modes_supported` is that list. The HTTP layer (src/http/render/authorization.ts)
 * turns a Delivery into a redirect or the auto-submitting page.
 */

/** The response parameters in the order they are sent; undefined values are left out. */
export type ResponseParams = Readonly<Record<string, string | undefined>>;

/** What the browser is given: a redirect to a URL, or a form it posts to the redirect_uri. */
export type Delivery =
  | { type: 'redirect'; location: string }
  /** An HTML form with these fields, posted to `action` (the verified redirect_uri) as application/x-www-form-urlencoded. */
  | { type: 'form_post'; action: string; fields: readonly (readonly [string, string])[] };

export interface ResponseMode {
  /** The `response_mode` value (IANA OAuth Authorization Endpoint Response Modes). */
  readonly name: string;
  /**
   * Why this mode cannot deliver to `redirectUri`, or undefined when it can. Asked once the
   * redirect_uri is verified, before any other check, so that every later error travels the way
   * the client asked.
   */
  refuses(redirectUri: string): string | undefined;
  deliver(redirectUri: string, params: ResponseParams): Delivery;
}

/** The parameters that have a value, as name–value pairs in order. */
export function presentParams(params: ResponseParams): [string, string][] {
  return Object.entries(params).filter((entry): entry is [string, string] => entry[1] !== undefined);
}

/** application/x-www-form-urlencoded style, with every reserved character percent-encoded (`-._~` pass unchanged). */
export function encodeParams(params: ResponseParams): string {
  return presentParams(params)
    .map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`)
    .join('&');
}
