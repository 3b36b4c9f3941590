/**
 * The outbox's 'webhook' channel (docs/webhooks.md; decisions WH16–WH20): POSTs a message's
 * payload as JSON to its endpoint through the SSRF-safe poster (src/adapters/outbound-http.ts),
 * signed the way the Standard Webhooks specification describes. `webhook-id` is the outbox
 * message's id — the same on every retry and redelivery, so a receiver can de-duplicate;
 * `webhook-timestamp` is the attempt's time (the specification's replay window is about when it
 * was sent, and the signature covers it).
 *
 * The endpoint is read again at each attempt: its URL as it now is, its secrets, whether it is
 * still enabled. A deleted or disabled endpoint is a permanent failure (dead after the outbox's
 * few permanent attempts; an administrator may redeliver it after enabling the endpoint). Any 2xx
 * is done; other statuses, timeouts and network errors are tried again with the outbox's back-off,
 * and an address the settings refuse is permanent too (it stays refused until the settings change).
 */
import type { OutboxMessage } from '../domain/outbox.ts';
import { toNumericDate, type Clock } from '../lib/clock.ts';
import { DeliveryFailure, type OutboxTransport } from '../oauth/outbox/transport.ts';
import type { WebhookStore } from '../storage/ports.ts';
import { signedHeaders, signingSecrets } from '../webhooks/signing.ts';
import { OutboundRefused, postOutbound, type OutboundSettings } from './outbound-http.ts';

export interface WebhookTransportDeps {
  webhooks: Pick<WebhookStore, 'get'>;
  clock: Clock;
  outbound: OutboundSettings;
  keyEncryptionKey: string | undefined;
}

/** The exact bytes a message's delivery posts (exported for the tests' independent check). */
export function webhookBody(message: Pick<OutboxMessage, 'payload'>): string {
  return JSON.stringify(message.payload);
}

export function webhookTransport(deps: WebhookTransportDeps): OutboxTransport {
  return {
    channel: 'webhook',
    async deliver(message) {
      const endpoint = message.endpointId === undefined ? undefined : await deps.webhooks.get(message.endpointId);
      if (endpoint === undefined) throw new DeliveryFailure(`webhook endpoint ${message.endpointId ?? '(none)'} was deleted`, true);
      if (!endpoint.enabled) throw new DeliveryFailure(`webhook endpoint ${endpoint.id} is disabled`, true);
      const now = deps.clock.now();
      const body = webhookBody(message);
      const headers = signedHeaders(signingSecrets(endpoint, now, deps.keyEncryptionKey), message.id, toNumericDate(now), body);
      let answer;
      try {
        answer = await postOutbound(endpoint.url, body, 'application/json', deps.outbound, headers);
      } catch (error) {
        if (error instanceof OutboundRefused) throw new DeliveryFailure(`refused: ${error.message}`, true, { cause: error });
        // The only abort is the timeout's signal (postOutbound's AbortSignal.timeout).
        const timedOut = ['TimeoutError', 'AbortError'].includes((error as Error).name);
        throw new DeliveryFailure(timedOut ? 'timed out' : (error as Error).message, false, { cause: error });
      }
      if (answer.status >= 200 && answer.status < 300) return { responseStatus: answer.status };
      const said = answer.bodyPrefix.replace(/\s+/g, ' ').trim().slice(0, 120);
      throw new DeliveryFailure(`the endpoint answered ${answer.status}${said === '' ? '' : `: ${said}`}`, false, { responseStatus: answer.status });
    },
  };
}
