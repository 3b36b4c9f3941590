/**
 * The texts of every mail, by language (docs/mail.md, "Templates"). Placeholders `{name}` are
 * filled from the mail's data and the brand (`{product}`), escaped for HTML by the templates.
 */
import type { MailKind, MailLocale } from '../../oauth/outbox/mail.ts';

export interface MailTexts {
  subject: string;
  /** Paragraphs of the body. */
  paragraphs: string[];
  /** The closing line. */
  footer: string;
}

export const MAIL_TEXTS: Record<MailLocale, Record<MailKind, MailTexts>> = {
  en: {
    test: {
      subject: 'Test message from {product}',
      paragraphs: ['This is a test message from {product} at {issuer}.', 'If you can read it, mail from {product} reaches this address. It was sent by {actor} at {time}.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    password_reset: {
      subject: 'Reset your {product} password',
      paragraphs: [
        'Someone asked to reset the password of the account {username} at {issuer}. If it was you, choose a new password here:',
        '{link}',
        'The link works once, for {minutes} minutes. If you did not ask, ignore this message: your password stays as it is.',
      ],
      footer: 'This message was sent automatically; please do not reply.',
    },
    email_verification: {
      subject: 'Confirm your e-mail address for {product}',
      paragraphs: [
        'Someone asked to confirm {email} as the e-mail address of the account {username} at {issuer}. If it was you, confirm it here:',
        '{link}',
        'The link works once, for {minutes} minutes. If you did not ask, ignore this message: nothing changes.',
      ],
      footer: 'This message was sent automatically; please do not reply.',
    },
  },
  fi: {
    test: {
      subject: 'Testiviesti palvelusta {product}',
      paragraphs: ['Tämä on testiviesti palvelusta {product} osoitteessa {issuer}.', 'Jos luet tätä, palvelun {product} sähköposti tulee perille tähän osoitteeseen. Viestin lähetti {actor} {time}.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    password_reset: {
      subject: 'Palvelun {product} salasanan vaihto',
      paragraphs: [
        'Tilin {username} salasanan vaihtoa pyydettiin osoitteessa {issuer}. Jos pyysit sitä itse, valitse uusi salasana täällä:',
        '{link}',
        'Linkki toimii kerran ja {minutes} minuutin ajan. Jos et pyytänyt vaihtoa, voit jättää viestin huomiotta: salasanasi pysyy ennallaan.',
      ],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    email_verification: {
      subject: 'Vahvista sähköpostiosoitteesi palveluun {product}',
      paragraphs: [
        'Osoitteessa {issuer} pyydettiin vahvistamaan {email} tilin {username} sähköpostiosoitteeksi. Jos pyysit sitä itse, vahvista osoite täällä:',
        '{link}',
        'Linkki toimii kerran ja {minutes} minuutin ajan. Jos et pyytänyt vahvistusta, voit jättää viestin huomiotta: mikään ei muutu.',
      ],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
  },
  sv: {
    test: {
      subject: 'Testmeddelande från {product}',
      paragraphs: ['Det här är ett testmeddelande från {product} på {issuer}.', 'Om du kan läsa det når e-post från {product} den här adressen. Det skickades av {actor} {time}.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    password_reset: {
      subject: 'Återställ ditt lösenord till {product}',
      paragraphs: [
        'Någon bad om att återställa lösenordet för kontot {username} på {issuer}. Om det var du, välj ett nytt lösenord här:',
        '{link}',
        'Länken fungerar en gång, i {minutes} minuter. Om du inte bad om det kan du bortse från meddelandet: ditt lösenord förblir oförändrat.',
      ],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    email_verification: {
      subject: 'Bekräfta din e-postadress för {product}',
      paragraphs: [
        'Någon bad om att bekräfta {email} som e-postadress för kontot {username} på {issuer}. Om det var du, bekräfta den här:',
        '{link}',
        'Länken fungerar en gång, i {minutes} minuter. Om du inte bad om det kan du bortse från meddelandet: ingenting ändras.',
      ],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
  },
};
