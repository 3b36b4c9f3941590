/* global document, HTMLFormElement */
// The form_post page (OAuth 2.0 Form Post Response Mode §2): submit the response form at once.
// A file rather than an inline script, so the page's Content-Security-Policy allows no inline
// script; without JavaScript the page's <noscript> button submits the same form.
'use strict';
const form = document.getElementById('form-post');
// The prototype's submit: a field named "submit" could not shadow it.
if (form) HTMLFormElement.prototype.submit.call(form);
