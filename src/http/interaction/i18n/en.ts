/** English texts of the login, error and sign-out pages; the other bundles have the same keys. */
export const en = {
  signInTitle: 'Sign in',
  signInTo: 'Sign in to continue to',
  username: 'Username',
  password: 'Password',
  submit: 'Sign in',
  loginFailed: 'The username or password is incorrect, or the account cannot sign in.',
  formExpired: 'The form expired. Please sign in again.',
  tooManyAttempts: 'Too many failed sign-in attempts. Wait {wait} and try again.',
  errorTitle: 'Sign-in error',
  errorIntro: 'The sign-in request cannot be processed. Return to the application and try again.',
  errorCode: 'Error',
  signedOutTitle: 'Signed out',
  signedOut: 'You have been signed out.',
  signOutTitle: 'Sign out',
  signOutQuestion: 'Do you want to sign out? You will be signed out of every application you signed in to with this account in this browser.',
  signOutSubmit: 'Sign out',
  signOutCancel: 'If you did not ask to sign out, close this page: you stay signed in.',
  signOutExpired: 'The form expired. Please confirm again.',
};

export type Messages = typeof en;
