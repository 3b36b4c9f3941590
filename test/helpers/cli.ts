/**
 * What the `gatehouse` command writes on stderr before anything else when it opens a store
 * (docs/cli.md, Conventions): `store: SQLite PATH` or `store: PostgreSQL URL`. The test
 * databases' URLs carry no password, so the CLI shows them as they are.
 */
import { join } from 'node:path';
import { DEFAULT_HOME } from '../../src/config.ts';

export function storeLineOf(env: Record<string, string | undefined>): string {
  const url = env.GATEHOUSE_DATABASE_URL;
  if (url === undefined) return `store: SQLite ${join(env.GATEHOUSE_HOME ?? DEFAULT_HOME, 'gatehouse.db')}\n`;
  return url.startsWith('sqlite:') ? `store: SQLite ${url.slice('sqlite:'.length)}\n` : `store: PostgreSQL ${url}\n`;
}
