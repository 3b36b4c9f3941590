import type { Migration } from 'kysely/migration';
import * as initial from './001-initial.ts';
import * as throttling from './002-throttling.ts';
import * as codeSessionIndex from './003-code-session-index.ts';
import * as tokenUserIndex from './004-token-user-index.ts';
import * as tokenFamilies from './005-token-families.ts';
import * as throttleReservations from './007-throttle-reservations.ts';
import * as clientSubjectTokens from './008-client-subject-tokens.ts';
import * as clientAssertions from './009-client-assertions.ts';
import * as deviceAuthorizations from './010-device-authorizations.ts';
import * as clientSigningAlgs from './011-client-signing-algs.ts';
import * as policies from './012-policies.ts';
import * as consents from './013-consents.ts';
import * as clientResourceUris from './014-client-resource-uris.ts';
import * as auditEvents from './015-audit-events.ts';
import * as dynamicRegistration from './016-dynamic-registration.ts';
import * as auditEventsPersonIndexes from './017-audit-events-person-indexes.ts';
import * as nativeClients from './018-native-clients.ts';
import * as clientResourceScopes from './019-client-resource-scopes.ts';
import * as codeRefusals from './020-code-refusals.ts';
import * as administratorGroups from './021-administrator-groups.ts';
import * as userFactors from './022-user-factors.ts';
import * as pendingSignIns from './023-pending-sign-ins.ts';
import * as passkeys from './024-passkeys.ts';
import * as outbox from './027-outbox.ts';
import * as passwordResets from './028-password-resets.ts';
import * as emailVerification from './029-email-verification.ts';
import * as emailCodes from './030-email-codes.ts';
import * as accountRegistrations from './031-account-registrations.ts';
import * as invitations from './032-invitations.ts';
import * as sessionDevices from './033-session-devices.ts';
import * as sessionClients from './034-session-clients.ts';
import * as registrationLocale from './035-registration-locale.ts';
import * as webhooks from './036-webhooks.ts';
import * as logoutDeliveries from './037-logout-deliveries.ts';

/** Every migration, in order. Names sort in the order they run; never rename or edit a shipped one. */
export const migrations: Record<string, Migration> = {
  '001-initial': initial,
  '002-throttling': throttling,
  '003-code-session-index': codeSessionIndex,
  '004-token-user-index': tokenUserIndex,
  '005-token-families': tokenFamilies,
  '007-throttle-reservations': throttleReservations,
  '008-client-subject-tokens': clientSubjectTokens,
  '009-client-assertions': clientAssertions,
  '010-device-authorizations': deviceAuthorizations,
  '011-client-signing-algs': clientSigningAlgs,
  '012-policies': policies,
  '013-consents': consents,
  '014-client-resource-uris': clientResourceUris,
  '015-audit-events': auditEvents,
  '016-dynamic-registration': dynamicRegistration,
  '017-audit-events-person-indexes': auditEventsPersonIndexes,
  '018-native-clients': nativeClients,
  '019-client-resource-scopes': clientResourceScopes,
  '020-code-refusals': codeRefusals,
  '021-administrator-groups': administratorGroups,
  '022-user-factors': userFactors,
  '023-pending-sign-ins': pendingSignIns,
  '024-passkeys': passkeys,
  '027-outbox': outbox,
  '028-password-resets': passwordResets,
  '029-email-verification': emailVerification,
  '030-email-codes': emailCodes,
  '031-account-registrations': accountRegistrations,
  '032-invitations': invitations,
  '033-session-devices': sessionDevices,
  '034-session-clients': sessionClients,
  '035-registration-locale': registrationLocale,
  '036-webhooks': webhooks,
  '037-logout-deliveries': logoutDeliveries,
};
