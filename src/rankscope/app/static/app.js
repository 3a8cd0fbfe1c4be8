// rankscope grading keys: digits grade, j/k next/previous, u undo, l judge later,
// ? can't tell (asks why), e explanation, h the list of keys, Esc leaves a field.
// Every key presses a real button or follows a real link, so the page works the same
// without this script (Tab and Enter).
(function () {
  "use strict";
  function $(selector) { return document.querySelector(selector); }
  function press(el) { if (el) { el.click(); return true; } return false; }
  function typing(target) {
    var tag = target && target.tagName ? target.tagName.toLowerCase() : "";
    return tag === "input" || tag === "textarea" || tag === "select" || target.isContentEditable;
  }
  function toggleHelp(show) {
    var help = $("#help");
    if (!help) { return; }
    help.hidden = show === undefined ? !help.hidden : !show;
  }
  document.addEventListener("click", function (event) {
    var t = event.target;
    if (t && t.getAttribute && t.getAttribute("data-action") === "help") { toggleHelp(); }
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key;
    if (typing(event.target)) {
      if (key === "Escape") { event.target.blur(); event.preventDefault(); }
      if (key === "Enter" && event.target.id === "reason" && event.target.value.trim()) {
        event.preventDefault();
        press($("#cant-tell"));
      }
      return;
    }
    if (key === "Escape") { toggleHelp(false); return; }
    var done = false;
    if (/^[0-9]$/.test(key)) {
      done = press(document.querySelector('#grade-form button[data-key="' + key + '"]'));
    } else if (key === "j") {
      done = press($("#next-link"));
    } else if (key === "k") {
      done = press($("#prev-link"));
    } else if (key === "u") {
      var undo = $("#undo-form");
      if (undo) { undo.requestSubmit(); done = true; }
    } else if (key === "l") {
      var later = $("#later-form");
      if (later) { later.requestSubmit(); done = true; }
    } else if (key === "?") {
      var reason = $("#reason");
      if (reason) { reason.focus(); done = true; }
    } else if (key === "e") {
      var text = $("#explanation");
      if (text) { text.focus(); done = true; }
    } else if (key === "h") {
      toggleHelp(); done = true;
    }
    if (done) { event.preventDefault(); }
  });
})();
