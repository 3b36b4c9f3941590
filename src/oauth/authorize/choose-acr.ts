/**
 * acr_values (OIDC Core §3.1.2.1) is a voluntary request: the first requested value that an
 * authentication method is configured for wins, else the first configured value. With nothing
 * configured the login records no acr, and the ID token carries none (spec: "present only if a
 * context class is configured"). A request is never refused for its acr_values (§15.1).
 */
export function chooseAcr(requested: string | undefined, configured: readonly string[]): string | undefined {
  const wanted = requested?.split(' ').filter((v) => v !== '') ?? [];
  return wanted.find((value) => configured.includes(value)) ?? configured[0];
}
