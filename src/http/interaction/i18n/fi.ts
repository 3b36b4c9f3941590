import type { Messages } from './en.ts';

export const fi: Messages = {
  signInTitle: 'Kirjaudu sisään',
  signInTo: 'Kirjaudu jatkaaksesi palveluun',
  username: 'Käyttäjätunnus',
  password: 'Salasana',
  submit: 'Kirjaudu',
  loginFailed: 'Käyttäjätunnus tai salasana on väärin, tai tili ei voi kirjautua.',
  formExpired: 'Lomake vanheni. Kirjaudu uudelleen.',
  tooManyAttempts: 'Liian monta epäonnistunutta kirjautumisyritystä. Odota {wait} ja yritä sitten uudelleen.',
  errorTitle: 'Kirjautumisvirhe',
  errorIntro: 'Kirjautumispyyntöä ei voida käsitellä. Palaa sovellukseen ja yritä uudelleen.',
  errorCode: 'Virhe',
  signedOutTitle: 'Uloskirjautunut',
  signedOut: 'Olet kirjautunut ulos.',
  signOutTitle: 'Kirjaudu ulos',
  signOutQuestion: 'Haluatko kirjautua ulos? Sinut kirjataan ulos kaikista sovelluksista, joihin kirjauduit tällä tunnuksella tässä selaimessa.',
  signOutSubmit: 'Kirjaudu ulos',
  signOutCancel: 'Jos et pyytänyt uloskirjautumista, sulje tämä sivu: pysyt kirjautuneena.',
  signOutExpired: 'Lomake vanheni. Vahvista uudelleen.',
};
