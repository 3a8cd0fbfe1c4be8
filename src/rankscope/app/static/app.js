// rankscope: the keys of the grading pages and the sortable, filterable tables.
// A key presses the element that declares it (data-key): a button, a link, a form
// (submitted), a field (focused). In the list mode the selected row is looked in
// first, and j/k move the selection. Keys never type into a field: Escape leaves it.
// Everything works without this script too (Tab and Enter; plain forms and links).
(function () {
  "use strict";
  var $ = function (sel, root) { return (root || document).querySelector(sel); };
  var $$ = function (sel, root) { return Array.prototype.slice.call((root || document).querySelectorAll(sel)); };

  function typing(el) {
    var tag = el && el.tagName ? el.tagName.toLowerCase() : "";
    return tag === "input" || tag === "textarea" || tag === "select" || (el && el.isContentEditable);
  }
  function shown(el) { return el && !el.disabled && !el.closest("[hidden]"); }
  function listMode() { return document.body.getAttribute("data-mode") === "list"; }

  // -- the list mode's selected row -------------------------------------------------
  function rows() { return $$("[data-row]"); }
  function selected() { return $("[data-row][aria-selected='true']"); }
  function select(row, focus) {
    rows().forEach(function (r) { r.removeAttribute("aria-selected"); });
    if (!row) { return; }
    row.setAttribute("aria-selected", "true");
    if (focus !== false) { row.focus({ preventScroll: true }); }
    row.scrollIntoView({ block: "nearest" });
  }
  function move(step) {
    var all = rows(), at = all.indexOf(selected());
    var next = all[Math.max(0, Math.min(all.length - 1, at < 0 ? 0 : at + step))];
    select(next);
    return true;
  }

  // -- overlays: the keys (h) and the guidelines (g) ----------------------------------
  function toggle(sel, show) {
    var el = $(sel);
    if (!el) { return false; }
    el.hidden = show === undefined ? !el.hidden : !show;
    if (!el.hidden && el.tagName.toLowerCase() === "aside") { el.focus({ preventScroll: true }); }
    if (el.hidden) { home(); }
    return true;
  }
  function closeAll() { $$(".overlay, .drawer").forEach(function (el) { el.hidden = true; }); }

  // Where the keyboard goes back to: the selected row, else the task.
  function home() {
    var target = selected() || $("#task") || $("#done");
    if (target) { target.focus({ preventScroll: true }); }
  }

  function act(el) {
    if (typing(el)) { el.focus(); if (el.select) { el.select(); } return; }
    if (el.tagName.toLowerCase() === "form") { el.requestSubmit(); return; }
    var toggles = el.getAttribute("data-toggle");
    if (toggles) { toggle(toggles); return; }
    el.classList.add("pressed");
    el.click();
  }

  function target(key) {
    var scopes = [selected(), $("#task-area"), document];
    for (var i = 0; i < scopes.length; i++) {
      if (!scopes[i]) { continue; }
      var found = $$("[data-key]", scopes[i]).filter(function (el) {
        return el.getAttribute("data-key") === key && shown(el);
      });
      if (found.length) { return found[0]; }
    }
    return null;
  }

  document.addEventListener("click", function (event) {
    var el = event.target.closest && event.target.closest("[data-toggle]");
    if (el) { toggle(el.getAttribute("data-toggle")); }
    var row = event.target.closest && event.target.closest("[data-row]");
    if (row && row !== selected()) { select(row, false); }
  });

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) { return; }
    var key = event.key, el = event.target;
    if (typing(el)) {
      if (key === "Escape") { event.preventDefault(); el.blur(); home(); }
      else if (key === "Enter" && el.getAttribute("data-enter")) {
        event.preventDefault();  // Enter in "can't tell" sends it, with a reason only
        if (el.value.trim()) { act($(el.getAttribute("data-enter"))); }
      }
      return;
    }
    if (key === "Escape") { closeAll(); home(); return; }
    // while an answer is on its way a key would act on what is about to be replaced
    if (document.body.hasAttribute("aria-busy")) { event.preventDefault(); return; }
    if (listMode() && (key === "j" || key === "k")) {
      event.preventDefault();
      move(key === "j" ? 1 : -1);
      return;
    }
    var found = target(key);
    if (found) { event.preventDefault(); act(found); }
  });

  function idle() { document.body.removeAttribute("aria-busy"); }
  document.addEventListener("htmx:beforeRequest", function () {
    document.body.setAttribute("aria-busy", "true");
  });
  ["htmx:responseError", "htmx:sendError", "htmx:timeout"].forEach(function (name) {
    document.addEventListener(name, idle);
  });
  // After a swap: the keyboard stays on the page (never in a field by accident).
  document.addEventListener("htmx:afterSettle", function (event) {
    idle();
    var swapped = event.detail && event.detail.elt;
    if (listMode() && swapped && swapped.matches && swapped.matches("[data-row]")) {
      var all = rows(), at = all.indexOf(swapped);
      select(all[Math.min(all.length - 1, at + 1)]);
      return;
    }
    home();
  });
  document.addEventListener("DOMContentLoaded", function () {
    if (listMode()) {
      var first = rows().filter(function (r) { return !r.classList.contains("graded"); })[0];
      var hash = location.hash && $(location.hash);
      select(hash && hash.matches("[data-row]") ? hash : first || rows()[0]);
    } else if (!document.activeElement || document.activeElement === document.body) {
      home();
    }
    $$("table[data-sortable]").forEach(sortable);
    $$("input[data-filter]").forEach(filterable);
  });

  // -- tables: click a header to sort, type to filter ---------------------------------
  function cellValue(row, index) {
    var cell = row.cells[index];
    if (!cell) { return ""; }
    var raw = cell.getAttribute("data-value");
    if (raw === null) { raw = cell.textContent.trim(); }
    var number = parseFloat(raw);
    return raw !== "" && !isNaN(number) && /^-?[\d.]+(e-?\d+)?$/i.test(raw) ? number : raw.toLowerCase();
  }
  function sortable(table) {
    $$("thead th", table).forEach(function (th, index) {
      if (th.hasAttribute("data-nosort")) { return; }
      var button = document.createElement("button");
      button.type = "button";
      button.className = "sort";
      button.innerHTML = th.innerHTML;
      th.innerHTML = "";
      th.appendChild(button);
      th.setAttribute("aria-sort", "none");
      button.addEventListener("click", function () {
        var up = th.getAttribute("aria-sort") !== "ascending";
        $$("thead th", table).forEach(function (other) { other.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        var body = table.tBodies[0];
        var sorted = Array.prototype.slice.call(body.rows).sort(function (a, b) {
          var x = cellValue(a, index), y = cellValue(b, index);
          var blankX = x === "" || x === "–", blankY = y === "" || y === "–";
          if (blankX !== blankY) { return blankX ? 1 : -1; }  // no value: always last
          if (x === y) { return 0; }
          var less = typeof x === typeof y ? x < y : String(x) < String(y);
          return (less ? -1 : 1) * (up ? 1 : -1);
        });
        sorted.forEach(function (row) { body.appendChild(row); });
      });
    });
  }
  function filterable(input) {
    var table = $(input.getAttribute("data-filter"));
    var count = $(input.getAttribute("data-count") || "#nothing");
    input.addEventListener("input", function () {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean), n = 0;
      Array.prototype.forEach.call(table.tBodies[0].rows, function (row) {
        var text = row.textContent.toLowerCase();
        var keep = words.every(function (w) { return text.indexOf(w) >= 0; });
        row.hidden = !keep;
        n += keep ? 1 : 0;
      });
      if (count) { count.textContent = n; }
    });
  }
})();
