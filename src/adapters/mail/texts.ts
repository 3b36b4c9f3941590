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
    email_code_sign_in: {
      subject: 'Your {product} sign-in code',
      paragraphs: ['Someone signed in to the account {username} at {issuer} with its password and asked for a code. If it was you, type this code:', '{code}', 'The code works once, for {minutes} minutes. If you did not sign in, someone knows your password: change it.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    email_code_enrol: {
      subject: 'Your {product} code to add e-mail codes',
      paragraphs: ['Someone asked to receive sign-in codes for the account {username} at {issuer} at this address. If it was you, type this code:', '{code}', 'The code works once, for {minutes} minutes. If you did not ask, ignore this message: nothing changes.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    email_code_verify_email: {
      subject: 'Your {product} verification code',
      paragraphs: ['Someone asked to verify this address for the account {username} at {issuer}. If it was you, type this code:', '{code}', 'The code works once, for {minutes} minutes. If you did not ask, ignore this message: nothing changes.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    registration: {
      subject: 'Finish creating your {product} account',
      paragraphs: ['Someone asked to create an account at {issuer} with this e-mail address. If it was you, choose your password here:', '{link}', 'The link works once, for {minutes} minutes. If you did not ask, ignore this message: no account is created.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    registration_exists: {
      subject: 'You already have a {product} account',
      paragraphs: ['Someone asked to create an account at {issuer} with this e-mail address, but it already has one, so no new account was created.', 'If you have forgotten your password, you can choose a new one here:', '{link}', 'If you did not ask, ignore this message.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    registration_approved: {
      subject: 'Your {product} account is ready',
      paragraphs: ['An administrator approved your account {username} at {issuer}. You can now sign in with the password you chose.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    registration_rejected: {
      subject: 'Your {product} registration was not approved',
      paragraphs: ['An administrator did not approve the account you asked for at {issuer}, and it has been removed.'],
      footer: 'This message was sent automatically; please do not reply.',
    },
    invitation: {
      subject: 'You are invited to {product}',
      paragraphs: [
        'You are invited to make an account at {issuer}, with this e-mail address ({email}) as its username. Choose your password here:',
        '{link}',
        'The link works once, for {days} days. If you did not expect this invitation, ignore this message: no account is made.',
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
    email_changed: {
      subject: 'The e-mail address of your {product} account was changed',
      paragraphs: [
        'The e-mail address of the account {username} at {issuer} was changed from this address to {email} at {time}. Password reset links now go to the new address.',
        'If it was you, there is nothing to do. If it was not, someone is using your account: contact your administrator at once.',
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
    email_code_sign_in: {
      subject: 'Palvelun {product} kirjautumiskoodi',
      paragraphs: ['Tilille {username} kirjauduttiin osoitteessa {issuer} sen salasanalla ja pyydettiin koodia. Jos se olit sinä, kirjoita tämä koodi:', '{code}', 'Koodi toimii kerran ja {minutes} minuutin ajan. Jos et kirjautunut, joku tietää salasanasi: vaihda se.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    email_code_enrol: {
      subject: 'Palvelun {product} koodi sähköpostikoodien käyttöönottoon',
      paragraphs: ['Tilille {username} osoitteessa {issuer} pyydettiin kirjautumiskoodeja tähän osoitteeseen. Jos pyysit sitä itse, kirjoita tämä koodi:', '{code}', 'Koodi toimii kerran ja {minutes} minuutin ajan. Jos et pyytänyt, voit jättää viestin huomiotta: mikään ei muutu.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    email_code_verify_email: {
      subject: 'Palvelun {product} vahvistuskoodi',
      paragraphs: ['Tämän osoitteen vahvistamista pyydettiin tilille {username} osoitteessa {issuer}. Jos pyysit sitä itse, kirjoita tämä koodi:', '{code}', 'Koodi toimii kerran ja {minutes} minuutin ajan. Jos et pyytänyt, voit jättää viestin huomiotta: mikään ei muutu.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    registration: {
      subject: 'Viimeistele tilisi luominen palveluun {product}',
      paragraphs: ['Tällä sähköpostiosoitteella pyydettiin tilin luomista osoitteessa {issuer}. Jos pyysit sitä itse, valitse salasanasi täällä:', '{link}', 'Linkki toimii kerran ja {minutes} minuutin ajan. Jos et pyytänyt tiliä, voit jättää viestin huomiotta: tiliä ei luoda.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    registration_exists: {
      subject: 'Sinulla on jo tili palvelussa {product}',
      paragraphs: ['Tällä sähköpostiosoitteella pyydettiin tilin luomista osoitteessa {issuer}, mutta osoitteella on jo tili, joten uutta tiliä ei luotu.', 'Jos olet unohtanut salasanasi, voit valita uuden täällä:', '{link}', 'Jos et pyytänyt tiliä, voit jättää viestin huomiotta.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    registration_approved: {
      subject: 'Tilisi palveluun {product} on valmis',
      paragraphs: ['Ylläpitäjä hyväksyi tilisi {username} osoitteessa {issuer}. Voit nyt kirjautua valitsemallasi salasanalla.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    registration_rejected: {
      subject: 'Rekisteröitymistäsi palveluun {product} ei hyväksytty',
      paragraphs: ['Ylläpitäjä ei hyväksynyt tiliä, jota pyysit osoitteessa {issuer}, ja se on poistettu.'],
      footer: 'Tämä viesti on lähetetty automaattisesti; älä vastaa siihen.',
    },
    invitation: {
      subject: 'Kutsu palveluun {product}',
      paragraphs: [
        'Sinut on kutsuttu luomaan tili osoitteessa {issuer}. Käyttäjätunnukseksi tulee tämä sähköpostiosoite ({email}). Valitse salasanasi täällä:',
        '{link}',
        'Linkki toimii kerran ja {days} päivän ajan. Jos et odottanut kutsua, voit jättää viestin huomiotta: tiliä ei luoda.',
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
    email_changed: {
      subject: 'Palvelun {product} tilisi sähköpostiosoite vaihdettiin',
      paragraphs: [
        'Tilin {username} sähköpostiosoite osoitteessa {issuer} vaihdettiin tästä osoitteesta osoitteeseen {email} {time}. Salasanan palautuslinkit lähetetään nyt uuteen osoitteeseen.',
        'Jos vaihdoit sen itse, sinun ei tarvitse tehdä mitään. Jos et vaihtanut, joku käyttää tiliäsi: ota heti yhteyttä ylläpitäjään.',
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
    email_code_sign_in: {
      subject: 'Din inloggningskod till {product}',
      paragraphs: ['Någon loggade in på kontot {username} på {issuer} med dess lösenord och bad om en kod. Om det var du, skriv den här koden:', '{code}', 'Koden fungerar en gång, i {minutes} minuter. Om du inte loggade in känner någon till ditt lösenord: byt det.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    email_code_enrol: {
      subject: 'Din kod till {product} för att lägga till e-postkoder',
      paragraphs: ['Någon bad om att få inloggningskoder för kontot {username} på {issuer} till den här adressen. Om det var du, skriv den här koden:', '{code}', 'Koden fungerar en gång, i {minutes} minuter. Om du inte bad om det kan du bortse från meddelandet: inget ändras.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    email_code_verify_email: {
      subject: 'Din verifieringskod till {product}',
      paragraphs: ['Någon bad om att verifiera den här adressen för kontot {username} på {issuer}. Om det var du, skriv den här koden:', '{code}', 'Koden fungerar en gång, i {minutes} minuter. Om du inte bad om det kan du bortse från meddelandet: inget ändras.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    registration: {
      subject: 'Slutför ditt konto hos {product}',
      paragraphs: ['Någon bad om att skapa ett konto på {issuer} med den här e-postadressen. Om det var du, välj ditt lösenord här:', '{link}', 'Länken fungerar en gång, i {minutes} minuter. Om du inte bad om det kan du bortse från meddelandet: inget konto skapas.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    registration_exists: {
      subject: 'Du har redan ett konto hos {product}',
      paragraphs: ['Någon bad om att skapa ett konto på {issuer} med den här e-postadressen, men adressen har redan ett konto, så inget nytt skapades.', 'Om du har glömt ditt lösenord kan du välja ett nytt här:', '{link}', 'Om du inte bad om det kan du bortse från meddelandet.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    registration_approved: {
      subject: 'Ditt konto hos {product} är klart',
      paragraphs: ['En administratör har godkänt ditt konto {username} på {issuer}. Du kan nu logga in med lösenordet du valde.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    registration_rejected: {
      subject: 'Din registrering hos {product} godkändes inte',
      paragraphs: ['En administratör godkände inte kontot du bad om på {issuer}, och det har tagits bort.'],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
    invitation: {
      subject: 'Du är inbjuden till {product}',
      paragraphs: [
        'Du är inbjuden att skapa ett konto på {issuer}, med den här e-postadressen ({email}) som användarnamn. Välj ditt lösenord här:',
        '{link}',
        'Länken fungerar en gång, i {days} dagar. Om du inte väntade dig inbjudan kan du bortse från meddelandet: inget konto skapas.',
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
    email_changed: {
      subject: 'E-postadressen för ditt {product}-konto har ändrats',
      paragraphs: [
        'E-postadressen för kontot {username} på {issuer} ändrades från den här adressen till {email} {time}. Länkar för att återställa lösenordet skickas nu till den nya adressen.',
        'Om det var du behöver du inte göra något. Om inte använder någon ditt konto: kontakta din administratör genast.',
      ],
      footer: 'Meddelandet skickades automatiskt; svara inte på det.',
    },
  },
};
