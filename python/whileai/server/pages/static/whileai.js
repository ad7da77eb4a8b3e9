// whileai pages: filters that apply on change, and the conversation page's keyboard labels.
// Plain script, no framework, no request beyond this origin.
(function () {
  "use strict";
  function typing(event) {
    var t = event.target;
    return t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.tagName === "SELECT");
  }
  function go(id) {
    var a = document.getElementById(id);
    if (a) { window.location.href = a.href; }
  }
  function label(box, value) {
    var note = document.getElementById("note");
    var state = document.getElementById("label-state");
    var token = box.querySelector("input[name=csrf]");  // the server's pages carry one
    var body = JSON.stringify({value: value, note: note ? note.value : "",
                               csrf: token ? token.value : ""});
    state.textContent = "saving...";
    fetch(box.dataset.url, {method: "POST", credentials: "same-origin",
                            headers: {"Content-Type": "application/json"}, body: body})
      .then(function (r) { return r.json().then(function (j) { return [r.ok, j]; }); })
      .then(function (res) {
        if (!res[0]) { state.textContent = "not saved: " + (res[1].message || "error"); return; }
        state.textContent = value === 1 ? "pass" : "fail";
        box.dataset.saved = String(value);
      })
      .catch(function () { state.textContent = "not saved: the server did not answer"; });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var facets = document.getElementById("facet-box");
    if (facets && window.matchMedia("(max-width: 800px)").matches) {
      facets.open = false;  // on a phone the rows come first; the filters one tap away
    }
    var form = document.getElementById("filters");
    if (form) {
      form.querySelectorAll("[data-autosubmit]").forEach(function (el) {
        el.addEventListener("change", function () { form.submit(); });
      });
    }
    var box = document.getElementById("labelbox");
    if (box) {
      ["label-pass", "label-fail"].forEach(function (id) {
        var button = document.getElementById(id);
        button.addEventListener("click", function (event) {
          event.preventDefault();
          label(box, id === "label-pass" ? 1 : 0);
        });
      });
    }
    document.addEventListener("keydown", function (event) {
      if (event.ctrlKey || event.metaKey || event.altKey) { return; }
      if (typing(event)) {
        if (event.key === "Escape") { event.target.blur(); }
        return;
      }
      var search = document.getElementById("q");
      if (event.key === "/" && search) { event.preventDefault(); search.focus(); return; }
      if (!box) { return; }
      if (event.key === "y") { label(box, 1); }
      else if (event.key === "n") { label(box, 0); }
      else if (event.key === "e") { event.preventDefault(); document.getElementById("note").focus(); }
      else if (event.key === "j") { go("next-row"); }
      else if (event.key === "k") { go("prev-row"); }
      else if (event.key === "u") { window.location.href = box.dataset.url.replace(/\/rows\/\d+\/label$/, "/rows"); }
    });
  });
})();
