// The portal's only script, served from the portal itself (the
// Content-Security-Policy allows no other and no inline script): the copy
// buttons of a signing secret, and the reload of a page that waits for a
// delivery or a recovery (data-refresh on the body, set by the server
// only while it waits). Everything else works without it.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  var refresh = Number(document.body.getAttribute("data-refresh"));
  if (refresh > 0) {
    setTimeout(function () { window.location.reload(); }, refresh * 1000);
  }
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var field = document.getElementById(button.getAttribute("data-copy"));
      var status = document.getElementById("copy-status");
      var done = function (text) { if (status) { status.textContent = text; } };
      if (!field) { return; }
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(field.value).then(
          function () { done("Copied to the clipboard."); },
          function () { field.select(); done("Press Ctrl+C (or Cmd+C) to copy the selected secret."); });
      } else {
        field.select();
        done(document.execCommand && document.execCommand("copy") ? "Copied to the clipboard." : "Press Ctrl+C (or Cmd+C) to copy the selected secret.");
      }
    });
  });
});
