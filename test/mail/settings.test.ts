/**
 * The mail settings (src/config.ts; docs/mail.md, "Setting it up"): one URL, smtp:// with STARTTLS
 * required unless GATEHOUSE_SMTP_STARTTLS=off, smtps:// with implicit TLS; a From required with the
 * URL; bad values refused with a message that never repeats the URL's password; and the nodemailer
 * options they mean.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { messageIdOf, smtpOptions } from '../../src/adapters/smtp.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';

const SECRET = 'pa%2Fss%40word';

function refused(env: Record<string, string>, expected: string): void {
  assert.throws(
    () => loadConfig(env),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.equal(error.message, expected);
      assert.equal(error.message.includes('pa%2F') || error.message.includes('pa/ss'), false, 'never the password');
      return true;
    },
  );
}

test('mail is off by default, and the settings default as documented', () => {
  const config = loadConfig({});
  assert.deepEqual([config.smtpUrl, config.mailFrom, config.smtpStarttls, config.smtpTimeout, config.outboxInterval, config.outboxMaxAttempts], [undefined, undefined, 'required', 30, 5, 12]);
});

test('bad mail settings are refused, naming the setting and never the password', () => {
  const from = { GATEHOUSE_MAIL_FROM: 'sso@example.com' };
  refused({ GATEHOUSE_SMTP_URL: `http://user:${SECRET}@mail.example.com`, ...from }, 'GATEHOUSE_SMTP_URL: must start with smtp:// (STARTTLS) or smtps:// (implicit TLS)');
  refused({ GATEHOUSE_SMTP_URL: `smtp://user:${SECRET}@mail example.com`, ...from }, 'GATEHOUSE_SMTP_URL: is not a URL: use smtp://user:password@host:587 or smtps://user:password@host:465');
  refused({ GATEHOUSE_SMTP_URL: `smtp://user:${SECRET}@mail.example.com/?starttls=off`, ...from }, 'GATEHOUSE_SMTP_URL: must have no path, query or fragment: the TLS choice is GATEHOUSE_SMTP_STARTTLS');
  refused({ GATEHOUSE_SMTP_URL: `smtp://user:${SECRET}@mail.example.com` }, 'GATEHOUSE_MAIL_FROM: is required with GATEHOUSE_SMTP_URL: every mail needs a From');
  refused({ GATEHOUSE_SMTP_URL: `smtps://user:${SECRET}@mail.example.com`, GATEHOUSE_SMTP_STARTTLS: 'off', ...from }, 'GATEHOUSE_SMTP_STARTTLS: off cannot go with an smtps:// GATEHOUSE_SMTP_URL, which is TLS from the first byte: use smtp:// for a relay without TLS');
  refused({ GATEHOUSE_SMTP_STARTTLS: 'opportunistic' }, 'GATEHOUSE_SMTP_STARTTLS: must be one of required, off');
  refused({ GATEHOUSE_MAIL_FROM: 'not an address' }, 'GATEHOUSE_MAIL_FROM: must be an address such as sso@example.com or "Example SSO <sso@example.com>"');
  refused({ GATEHOUSE_MAIL_FROM: 'SSO <sso@example.com>\r\nBcc: x@evil.example' }, 'GATEHOUSE_MAIL_FROM: must be one line');
});

test('the URL means: smtp:// STARTTLS required on 587, or not with the opt-out; smtps:// TLS on 465; credentials decoded', () => {
  const base = { GATEHOUSE_MAIL_FROM: 'Example SSO <sso@example.com>', GATEHOUSE_SMTP_TIMEOUT: '7' };
  const options = (env: Record<string, string>) => {
    const c = loadConfig({ ...base, ...env });
    const o = smtpOptions({ ...c, smtpUrl: c.smtpUrl!, mailFrom: c.mailFrom! });
    return [o.host, o.port, o.secure, o.requireTLS, o.ignoreTLS, 'auth' in o ? o.auth : undefined, o.connectionTimeout];
  };
  assert.deepEqual(options({ GATEHOUSE_SMTP_URL: `smtp://user%40example.com:${SECRET}@mail.example.com` }), ['mail.example.com', 587, false, true, false, { user: 'user@example.com', pass: 'pa/ss@word' }, 7000]);
  assert.deepEqual(options({ GATEHOUSE_SMTP_URL: 'smtp://127.0.0.1:25', GATEHOUSE_SMTP_STARTTLS: 'off' }), ['127.0.0.1', 25, false, false, true, undefined, 7000]);
  assert.deepEqual(options({ GATEHOUSE_SMTP_URL: `smtps://u:${SECRET}@[::1]` }), ['::1', 465, true, false, false, { user: 'u', pass: 'pa/ss@word' }, 7000]);
  assert.equal(messageIdOf('0b7d7c46-5a8e-4a55-9b8e-0d7d7c465a8e', 'Example SSO <sso@example.com>'), '<0b7d7c46-5a8e-4a55-9b8e-0d7d7c465a8e@example.com>');
});
