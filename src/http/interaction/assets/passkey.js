/* global window, document, FormData, PublicKeyCredential */
// Passkey ceremonies of the login page, the second factor's page and the account page (issue 24,
// docs/second-factors.md). A file served from our origin ('self'), never inline, so the strict
// CSP stays; it drives @simplewebauthn/browser's bundle (webauthn.js, loaded before it).
//
// Each passkey form (data-passkey="register" or "authenticate") is hidden until this script shows
// it, so without JavaScript the pages are exactly the password ones. On submit: the form's fields
// go to its data-options URL, which answers the ceremony's options (JSON); the browser asks the
// authenticator; the answer goes into the form's `response` field and the form is submitted, so
// the server answers with a page as for any other form. A form with data-conditional also starts
// the browser's passkey autofill (conditional mediation) on the username field where supported.
'use strict';
(function () {
  const webauthn = window.SimpleWebAuthnBrowser;
  if (!webauthn || !webauthn.browserSupportsWebAuthn()) return;

  function fail(form, error) {
    // The user cancelling or the autofill being replaced by a button press is no error to show.
    if (error && error.name === 'AbortError') return;
    const message = form.querySelector('[data-passkey-error]');
    if (message) {
      message.textContent = form.dataset.errorText || '';
      message.hidden = false;
    }
  }

  async function ceremony(form, autofill) {
    const fields = new FormData(form);
    fields.delete('response');
    const answer = await fetch(form.dataset.options, { method: 'POST', body: new URLSearchParams(fields), credentials: 'same-origin' });
    if (!answer.ok) throw new Error('options: ' + answer.status);
    const optionsJSON = await answer.json();
    const result = form.dataset.passkey === 'register' ? await webauthn.startRegistration({ optionsJSON: optionsJSON }) : await webauthn.startAuthentication({ optionsJSON: optionsJSON, useBrowserAutofill: autofill });
    form.elements.namedItem('response').value = JSON.stringify(result);
    form.dataset.ready = 'true';
    // The prototype's submit: a field named "submit" could not shadow it.
    window.HTMLFormElement.prototype.submit.call(form);
  }

  for (const form of document.querySelectorAll('form[data-passkey]')) {
    form.hidden = false;
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      ceremony(form, false).catch(function (error) {
        fail(form, error);
      });
    });
    if (form.dataset.conditional === 'true' && typeof PublicKeyCredential !== 'undefined' && typeof PublicKeyCredential.isConditionalMediationAvailable === 'function') {
      PublicKeyCredential.isConditionalMediationAvailable().then(function (available) {
        if (available) ceremony(form, true).catch(function () {});
      });
    }
  }
})();
