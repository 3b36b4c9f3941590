/**
 * A readable summary of a User-Agent header (RFC 9110 §10.1.5) for the account page's session
 * list: the browser's family and the operating system, nothing finer (decisions AM83). A small,
 * conservative reading of the tokens browsers send, in the order that tells them apart (Edge and
 * Opera also say "Chrome", Chrome also says "Safari"); what it does not recognise is undefined,
 * never a guess. No version numbers: they change with every update and identify nothing for the
 * user.
 */

export interface DeviceSummary {
  browser: string | undefined;
  os: string | undefined;
}

const BROWSERS: readonly [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, 'Edge'],
  [/\b(?:OPR|Opera)\//, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\b(?:Firefox|FxiOS)\//, 'Firefox'],
  [/\b(?:HeadlessChrome|Chrome|CriOS|Chromium)\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

const SYSTEMS: readonly [RegExp, string][] = [
  [/\bWindows\b/, 'Windows'],
  [/\bAndroid\b/, 'Android'],
  [/\b(?:iPhone|iPad|iPod)\b/, 'iOS'],
  [/\bMac OS X\b|\bMacintosh\b/, 'macOS'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bLinux\b/, 'Linux'],
];

export function summariseUserAgent(userAgent: string | undefined): DeviceSummary {
  if (userAgent === undefined) return { browser: undefined, os: undefined };
  const first = (table: readonly [RegExp, string][]) => table.find(([pattern]) => pattern.test(userAgent))?.[1];
  return { browser: first(BROWSERS), os: first(SYSTEMS) };
}
