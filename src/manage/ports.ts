/**
 * What the application layer is given by the composition root (src/app.ts, and the CLI's
 * `withStore`): the store's ports, the services, the audit sink and the settings the management
 * rules read. Each resource's use cases take the narrow part they need (`Pick<AdministrationPorts, …>`).
 */
import type { Config } from '../config.ts';
import type { KeyRing } from '../crypto/key-ring.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import type { AuditSink } from '../observability/audit.ts';
import type { Store } from '../storage/ports.ts';
import type { MailService } from '../oauth/outbox/mail.ts';

/** The settings the management rules read. */
export type AdministrationSettings = Pick<Config, 'issuer' | 'keyEncryptionKey' | 'apiClientId' | 'manageAdminGroup' | 'manageReadonlyGroup' | 'auditRetention' | 'backchannelLogoutOnExpiry' | 'passwordResetLifetime' | 'passwordMinLength' | 'invitationLifetime' | 'emailVerificationLifetime' | 'webhookSecretOverlap' | 'outboundLoopback' | 'outboundPrivate'>;

export interface AdministrationPorts {
  store: Store;
  clock: Clock;
  random: Random;
  /** Where each use case emits the audit event of its change, after its unit of work commits. */
  audit: AuditSink;
  keyRing: KeyRing;
  settings: AdministrationSettings;
  /** Mail (docs/mail.md): undefined when it is off (GATEHOUSE_SMTP_URL unset), and the use cases that need it say so. */
  mail?: MailService | undefined;
  /** Called after a webhook endpoint changes: this process's subscription snapshot reads them again (src/webhooks/subscriptions.ts). */
  webhooksChanged?: (() => Promise<void>) | undefined;
}
