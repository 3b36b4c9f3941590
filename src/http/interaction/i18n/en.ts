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
};

export type Messages = typeof en;
