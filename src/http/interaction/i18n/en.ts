/** English texts of the login, error, sign-out and landing pages; the other bundles have the same keys. */
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
  signOutErrorTitle: 'Sign-out error',
  errorCode: 'Error code',
  backToApplication: 'Back to the application',
  signedOutTitle: 'Signed out',
  signedOut: 'You have been signed out.',
  signOutTitle: 'Sign out',
  signOutQuestion: 'Do you want to sign out? You will be signed out of every application you signed in to with this account in this browser.',
  signOutSubmit: 'Sign out',
  signOutCancel: 'If you did not ask to sign out, close this page: you stay signed in.',
  signOutExpired: 'The form expired. Please confirm again.',
  landingTitle: 'gatehouse single sign-on',
  landingIntro: 'This is a single sign-on service. Applications send you here to sign in, and you are sent back to them afterwards; there is nothing to do on this page itself.',
  landingForDevelopers: 'For developers and operators',
  landingDiscovery: 'OpenID Connect discovery document',
  landingJwks: 'Signing keys (JWK set)',
  landingHealth: 'Health: is the service ready?',
  landingApiDocs: 'Identity API description (OpenAPI)',
  /** The form_post page (OAuth 2.0 Form Post Response Mode): the answer travels to the application by a form the page submits. */
  formPostTitle: 'Returning to the application',
  formPostReturning: 'Returning you to the application…',
  formPostNoScript: 'JavaScript is turned off in your browser. Select Continue to return to the application.',
  formPostContinue: 'Continue',
  /** What went wrong while signing in, in plain words, by the error code shown in small print. */
  signInErrors: {
    invalid_client: 'The application that sent you here is not known to this sign-in service, or it has been switched off. Contact the application’s support.',
    invalid_redirect_uri: 'The application sent you here with a return address that is not registered for it, so you cannot be sent back safely. Contact the application’s support.',
    invalid_request: 'The sign-in request is incomplete or malformed. Go back to the application and try again.',
    server_error: 'Something went wrong on our side. Try again in a moment.',
    temporarily_unavailable: 'The sign-in service is busy or unavailable right now. Try again in a moment.',
    other: 'The sign-in request cannot be processed. Go back to the application and try again.',
  },
  /** The same for a sign-out request: the user may still be signed in. */
  signOutErrors: {
    invalid_request: 'The sign-out request is incomplete or malformed, so nothing was done: you may still be signed in. To be sure, close the browser.',
    server_error: 'Something went wrong on our side, so you may still be signed in. Try again in a moment, or close the browser.',
    temporarily_unavailable: 'The sign-in service is busy or unavailable right now, so you may still be signed in. Try again in a moment, or close the browser.',
    other: 'The sign-out request cannot be processed, so you may still be signed in. To be sure, close the browser.',
  },
};

export type Messages = typeof en;
