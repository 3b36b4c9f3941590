/** Signing keys (docs/console.md, "Signing keys"): the key ring's public side, and rotation after a confirmation. */
import type { ConsolePage } from '../page.ts';
import { CONSOLE_PATH } from '../../../manage/management-clients.ts';
import { formatTime, type Page } from './shared.ts';

type KeyView = { kid: string; alg: string; status: string; created_at?: string; activates_at?: string; retires_at?: string };

export const keyPages: ConsolePage[] = [
  {
    method: 'GET',
    path: '/keys',
    section: 'keys',
    async handle(call) {
      const page = await call.api.get<Page<KeyView> | KeyView[]>('/keys', { limit: 200 });
      const items = Array.isArray(page) ? page : page.items;
      const t = call.t as unknown as Record<string, string>;
      return call.render('keys', {
        title: call.t.keysTitle,
        items: items.map((k) => ({
          ...k,
          statusText: t[`keyStatus_${k.status}`] ?? k.status,
          created: formatTime(call.locale, k.created_at),
          activates: formatTime(call.locale, k.activates_at),
          retires: formatTime(call.locale, k.retires_at),
        })),
      });
    },
  },
  {
    method: 'GET',
    path: '/keys/rotate',
    section: 'keys',
    async handle(call) {
      return call.render('confirm', { title: call.t.confirmTitle, question: call.t.confirmRotateKeys, action: `${CONSOLE_PATH}/keys/rotate`, submitLabel: call.t.rotateKeys, cancel: `${CONSOLE_PATH}/keys` });
    },
  },
  {
    method: 'POST',
    path: '/keys/rotate',
    section: 'keys',
    async handle(call) {
      await call.api.send('POST', '/keys/rotate', {});
      return call.redirect('/keys', 'rotated');
    },
  },
];
