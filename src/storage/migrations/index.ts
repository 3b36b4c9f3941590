import type { Migration } from 'kysely/migration';
import * as initial from './001-initial.ts';

/** Every migration, in order. Names sort in the order they run; never rename or edit a shipped one. */
export const migrations: Record<string, Migration> = {
  '001-initial': initial,
};
