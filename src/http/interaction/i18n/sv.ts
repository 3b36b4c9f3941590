import type { Messages } from './en.ts';

export const sv: Messages = {
  signInTitle: 'Logga in',
  signInTo: 'Logga in för att fortsätta till',
  username: 'Användarnamn',
  password: 'Lösenord',
  submit: 'Logga in',
  loginFailed: 'Användarnamnet eller lösenordet är fel, eller så kan kontot inte logga in.',
  formExpired: 'Formuläret har gått ut. Logga in igen.',
  tooManyAttempts: 'För många misslyckade inloggningsförsök. Vänta {wait} och försök sedan igen.',
  errorTitle: 'Inloggningsfel',
  errorIntro: 'Inloggningsbegäran kan inte behandlas. Gå tillbaka till tjänsten och försök igen.',
  errorCode: 'Fel',
  signedOutTitle: 'Utloggad',
  signedOut: 'Du har loggats ut.',
  signOutTitle: 'Logga ut',
  signOutQuestion: 'Vill du logga ut? Du loggas ut från alla tjänster som du loggat in på med det här kontot i den här webbläsaren.',
  signOutSubmit: 'Logga ut',
  signOutCancel: 'Om du inte bad om att logga ut, stäng den här sidan: du förblir inloggad.',
  signOutExpired: 'Formuläret har gått ut. Bekräfta igen.',
};
