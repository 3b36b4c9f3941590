/** E-mail codes for tests: the code in a mail that arrived at the test SMTP server (src/oauth/factors/email-code.ts writes it on a line of its own). */
import assert from 'node:assert/strict';
import type { ReceivedMail } from './smtp.ts';

/** The code in a mail's text part (quoted-printable undone). */
export function codeIn(mail: ReceivedMail): string {
  const decoded = mail.raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  const code = /^([A-Z]{4}-[A-Z]{4})\r?$/m.exec(decoded)?.[1];
  assert.ok(code, 'the mail carries a code on a line of its own');
  return code;
}
