import type { Config } from '../config.ts';
import type { KeyRing } from '../crypto/key-ring.ts';
import type { Clock } from '../lib/clock.ts';
import type { Random } from '../lib/random.ts';
import type { AuditSink } from '../observability/audit.ts';
import type { Store } from '../storage/ports.ts';
import type { ClientAuthDeps } from './client-auth/method.ts';
import type { MailService } from './outbox/mail.ts';

/** What the protocol core is given by the composition root. */
export interface OAuthDeps {
  config: Config;
  store: Store;
  keyRing: KeyRing;
  clock: Clock;
  random: Random;
  /** Where audit events go (src/observability/audit.ts). */
  audit: AuditSink;
  /** What client-authentication methods verify with (client-auth/method.ts), built once in app.ts. */
  clientAuth: ClientAuthDeps;
  /** Mail (docs/mail.md), undefined while GATEHOUSE_SMTP_URL is unset: the features that send mail are off. */
  mail?: MailService | undefined;
}
