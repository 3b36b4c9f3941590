/**
 * The use cases of signing keys: list and rotate: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 */
import type { AdministrationPorts } from './ports.ts';

// Filled in by issue 23's application layer; a resource without use cases yet has none.
export type KeyAdministration = Record<never, never>;

export function keyAdministration(_ports: AdministrationPorts): KeyAdministration {
  return {};
}
