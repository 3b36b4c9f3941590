/**
 * The use cases of a user's SSO sessions: list and end: each takes who acts (acting.ts) and its input, runs the rules and the
 * unit of work of the change, and emits its audit event. Every front end calls these.
 */
import type { AdministrationPorts } from './ports.ts';

// Filled in by issue 23's application layer; a resource without use cases yet has none.
export type SessionAdministration = Record<never, never>;

export function sessionAdministration(_ports: AdministrationPorts): SessionAdministration {
  return {};
}
