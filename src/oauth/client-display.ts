/**
 * What the login, consent and device pages show of a client, in the page's language: its name and
 * logo, from the language-tagged metadata (RFC 7591 §2.2, `client_name#fi`, `logo_uri#sv-FI`).
 * Read from the stored client at each use; the parser (client-metadata.ts) validated what it stored.
 */
import type { Client } from '../domain/client.ts';
import { LOCALIZED_LOGO, LOCALIZED_NAME } from './client-metadata-keys.ts';

/**
 * The client's name in `language` (a locale of the login page, e.g. `fi`): `client_name#<tag>`
 * whose tag is the language exactly (case-insensitively), else one whose primary subtag is it
 * (`client_name#fi-FI`), else `client_name` (RFC 7591 §2.2: the untagged value is the default).
 */
export function clientNameFor(client: Pick<Client, 'name' | 'metadata'>, language: string): string {
  return localized(client.metadata, LOCALIZED_NAME, language) ?? client.name;
}

/** The value of `<base>#<tag>` for `language`: exact tag first, then by primary subtag; undefined when none is a string. */
function localized(metadata: Client['metadata'], base: string, language: string): string | undefined {
  const tagged = Object.entries(metadata).filter((entry): entry is [string, string] => entry[0].startsWith(`${base}#`) && typeof entry[1] === 'string');
  const wanted = language.toLowerCase();
  const tagOf = (key: string) => key.slice(base.length + 1).toLowerCase();
  return (tagged.find(([key]) => tagOf(key) === wanted) ?? tagged.find(([key]) => tagOf(key).split('-')[0] === wanted))?.[1];
}

/**
 * The client's registered `logo_uri`, when it is a string (a row stored before it was validated
 * may hold anything); with `language`, its `logo_uri#<tag>` for that language first (RFC 7591
 * §2.2, chosen as clientNameFor chooses the name).
 */
export function logoUriOf(client: Pick<Client, 'metadata'>, language?: string): string | undefined {
  const tagged = language === undefined ? undefined : localized(client.metadata, LOCALIZED_LOGO, language);
  return tagged ?? (typeof client.metadata.logo_uri === 'string' ? client.metadata.logo_uri : undefined);
}
