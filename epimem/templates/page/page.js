// The filter (text, kind, tag, scope) and printing with every detail open. Reads the page only:
// nothing here talks to the network or to the vault.
(function () {
  "use strict";
  var form = document.getElementById("filter");
  if (!form) return;
  form.hidden = false;
  var items = Array.prototype.slice.call(document.querySelectorAll(".belief[data-id]"));
  var total = items.length;
  var text = document.getElementById("f-text"), kind = document.getElementById("f-kind"),
      tag = document.getElementById("f-tag"), scope = document.getElementById("f-scope"),
      count = document.getElementById("f-count");
  var haystack = new Map();
  function words(el) {
    var h = haystack.get(el);
    if (h === undefined) {
      var parts = el.querySelectorAll(".title, .statement");
      h = Array.prototype.map.call(parts, function (p) { return p.textContent; }).join(" ").toLowerCase();
      if (!h) h = el.textContent.toLowerCase();
      haystack.set(el, h);
    }
    return h;
  }
  function apply() {
    var q = text.value.trim().toLowerCase().split(/\s+/).filter(Boolean);
    var k = kind.value, t = tag.value, s = scope.value, shown = 0;
    var filtering = q.length || k || t || s;
    items.forEach(function (el) {
      var ok = (!k || el.dataset.kind === k) && (!s || el.dataset.scope === s) &&
               (!t || el.dataset.tags.indexOf("|" + t + "|") !== -1);
      if (ok && q.length) {
        var h = words(el);
        ok = q.every(function (w) { return h.indexOf(w) !== -1; });
      }
      el.hidden = !ok;
      if (ok) shown++;
    });
    document.querySelectorAll("details.more").forEach(function (d) {
      var any = d.querySelector(".belief:not([hidden])");
      d.hidden = !any;
      if (filtering && any) d.open = true;
    });
    count.value = shown + " of " + total + " shown";
  }
  var timer = null;
  function later() { clearTimeout(timer); timer = setTimeout(apply, 80); }
  text.addEventListener("input", later);
  [kind, tag, scope].forEach(function (el) { el.addEventListener("change", apply); });
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.points").forEach(function (d) { d.open = true; });
  });
})();
// A marker links to its evidence line inside a closed <details>: open it so the line shows.
(function () {
  "use strict";
  function reveal() {
    if (!location.hash) return;
    var el = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (!el) return;
    for (var d = el.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) d.open = true;
    el.scrollIntoView({block: "center"});
  }
  window.addEventListener("hashchange", reveal);
  reveal();
})();
