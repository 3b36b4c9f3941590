/* global document, navigator, window */
// The console's one script (served as /manage/assets/console.js: the pages' Content-Security-Policy
// allows no inline script). It only adds copy buttons: every page works without it, and the
// buttons stay hidden when it does not run or the browser has no clipboard.
'use strict';
function setUp() {
  if (!navigator.clipboard || !window.isSecureContext) return;
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.getAttribute('data-copy'));
    if (!source) continue;
    const label = button.textContent;
    const name = button.getAttribute('aria-label');
    button.hidden = false;
    button.addEventListener('click', () => {
      navigator.clipboard.writeText(source.textContent.trim()).then(
        () => {
          // Screen readers read the button's name: it says "Copied" too, until it reverts.
          button.textContent = button.getAttribute('data-copied') || label;
          if (name) button.setAttribute('aria-label', button.textContent);
          window.setTimeout(() => {
            button.textContent = label;
            if (name) button.setAttribute('aria-label', name);
          }, 2000);
        },
        () => {},
      );
    });
  }
}
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
else setUp();
