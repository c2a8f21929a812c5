// Gatehouse batch decisions: on the inbox, open cards that ask for the same
// action (the server marks each with its group, data-batch) are offered
// together: "Allow all N once" or "Deny all N". Either first shows the list
// of what it will decide (titles, who asks, ids); confirming sends the ids
// with the versions this page showed, so a request that changed since is
// left open and named in the answer. Nothing here ever saves a rule. The
// groups are redrawn whenever the live socket changes the list, except while
// a confirmation is open: what the operator confirms is what they were shown.
(function () {
  "use strict";

  var root = document.getElementById("batch-groups");
  if (!root) return;
  var confirming = null;

  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function textOf(card, sel) {
    var e = card.querySelector(sel);
    return e ? e.textContent.replace(/\s+/g, " ").trim() : "";
  }
  // whoOf says who asks and where, as the card does.
  function whoOf(card) {
    var parts = [textOf(card, '[data-testid="card-created-by"]')];
    var rt = textOf(card, '[data-testid="card-runtime"]');
    if (rt) parts.push(rt);
    var sess = textOf(card, '[data-testid="card-session"]');
    if (sess) parts.push("session " + sess);
    var cwd = textOf(card, '[data-testid="card-cwd"]');
    if (cwd) parts.push("in " + cwd);
    return parts.join(" · ");
  }

  function groups() {
    var byKey = {}, order = [];
    document.querySelectorAll('#inbox-list [data-testid="card"][data-status="open"][data-batch]').forEach(function (c) {
      var k = c.getAttribute("data-batch");
      if (!byKey[k]) { byKey[k] = []; order.push(k); }
      byKey[k].push(c);
    });
    return order.map(function (k) { return byKey[k]; }).filter(function (cards) { return cards.length >= 2; });
  }

  function render() {
    if (confirming) return;
    root.replaceChildren.apply(root, groups().map(groupView));
  }

  function groupView(cards) {
    var first = cards[0], n = cards.length;
    var box = el("div", { "class": "batch-group", "data-testid": "batch-group", "data-batch": first.getAttribute("data-batch"), "data-count": String(n) });
    var what = el("p", { "class": "batch-what" });
    what.appendChild(el("strong", {}, n + " requests ask for the same thing: "));
    var tool = textOf(first, '[data-testid="card-tool"]'), cmd = textOf(first, '[data-testid="card-command"] code');
    if (cmd) what.appendChild(el("code", {}, (tool ? tool + " " : "") + cmd));
    else what.appendChild(el("span", {}, textOf(first, '[data-testid="card-title"]')));
    var cwd = textOf(first, '[data-testid="card-cwd"]');
    if (cwd) {
      what.appendChild(document.createTextNode(" in "));
      what.appendChild(el("code", {}, cwd));
    }
    box.appendChild(what);
    var row = el("div", { "class": "options" });
    // Allow all only when the viewer may allow every card of the group; one
    // they may only refuse (outside a policy's groups) leaves "deny all".
    var once = cards.every(function (c) { return c.getAttribute("data-batch-once") === first.getAttribute("data-batch-once"); }) ? first.getAttribute("data-batch-once") : "";
    var deny = first.getAttribute("data-batch-deny");
    if (once) row.appendChild(offer("allow", "Allow all " + n + " once", "each request once; saves nothing", function () { ask(box, cards, once, "allow"); }));
    if (deny) row.appendChild(offer("deny", "Deny all " + n, "each request is refused", function () { ask(box, cards, deny, "deny"); }));
    box.appendChild(row);
    return box;
  }

  function offer(effect, label, says, onclick) {
    var b = el("button", { type: "button", "data-effect": effect, "data-testid": "batch-" + effect });
    b.appendChild(el("span", { "class": "label" }, label));
    b.appendChild(el("span", { "class": "effect" }, says));
    b.addEventListener("click", onclick);
    return b;
  }

  // ask shows what the batch will decide, on the versions shown now, and
  // sends it only when the operator confirms.
  function ask(box, cards, option, effect) {
    var n = cards.length;
    var form = el("form", {
      "class": "batch-confirm decide", method: "post", action: "/decisions", "hx-post": "/decisions",
      "hx-target": "#flash", "hx-swap": "innerHTML", "data-testid": "batch-confirm", "data-effect": effect,
    });
    form.appendChild(el("h2", {}, effect === "allow" ? "Allow these " + n + " once?" : "Deny these " + n + "?"));
    var what = box.querySelector(".batch-what");
    if (what) form.appendChild(what.cloneNode(true));
    var list = el("ol", { "class": "batch-list" });
    form.appendChild(el("input", { type: "hidden", name: "csrf", value: root.getAttribute("data-csrf") || "" }));
    // The group is the batch digest the server grouped by: it refuses any
    // request that no longer asks for the same action.
    form.appendChild(el("input", { type: "hidden", name: "group", value: box.getAttribute("data-batch") || "" }));
    cards.forEach(function (c) {
      var id = c.getAttribute("data-request-id"), version = c.getAttribute("data-version");
      var li = el("li", { "data-testid": "batch-item", "data-request-id": id, "data-version": version });
      li.appendChild(el("strong", {}, textOf(c, '[data-testid="card-title"]')));
      li.appendChild(el("span", { "class": "batch-who" }, whoOf(c)));
      li.appendChild(el("code", { "class": "id" }, id));
      list.appendChild(li);
      form.appendChild(el("input", { type: "hidden", name: "id", value: id }));
      form.appendChild(el("input", { type: "hidden", name: "version", value: version }));
      form.appendChild(el("input", { type: "hidden", name: "decision", value: option }));
    });
    form.appendChild(list);
    var note = el("details");
    note.appendChild(el("summary", {}, "Add a note for the agents"));
    note.appendChild(el("label", { "for": "batch-note" }, "Note (reaches each agent with the decision)"));
    note.appendChild(el("textarea", { id: "batch-note", name: "note", rows: "2", maxlength: "2000", "data-testid": "batch-note" }));
    form.appendChild(note);
    var row = el("div", { "class": "options" });
    var go = el("button", { type: "submit", "data-effect": effect, "data-testid": "batch-send" });
    go.appendChild(el("span", { "class": "label" }, effect === "allow" ? "Confirm: allow all " + n + " once" : "Confirm: deny all " + n));
    go.appendChild(el("span", { "class": "effect" }, "on the versions listed; a request changed since stays open"));
    var cancel = el("button", { type: "button", "data-testid": "batch-cancel" });
    cancel.appendChild(el("span", { "class": "label" }, "Cancel"));
    cancel.addEventListener("click", function () { confirming = null; render(); });
    row.appendChild(go);
    row.appendChild(cancel);
    form.appendChild(row);
    form.addEventListener("htmx:afterRequest", function () { confirming = null; render(); });
    box.replaceChildren(form);
    confirming = form;
    if (window.htmx) window.htmx.process(form);
    go.focus({ preventScroll: true });
  }

  document.addEventListener("htmx:wsAfterMessage", render);
  document.addEventListener("htmx:afterSwap", render);
  render();
})();
