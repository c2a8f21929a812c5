// Gatehouse page script: live countdowns and ages, times in the operator's own
// zone, the open count in the title, the connection light, the inbox's
// keyboard shortcuts, and going to the login page when the session ends.
// Loaded as a file: the Content-Security-Policy allows no inline script.
(function () {
  "use strict";

  function plural(n, unit) { return n + " " + unit + (n === 1 ? "" : "s"); }

  function span(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return plural(s, "second");
    var m = Math.floor(s / 60);
    if (m < 60) return plural(m, "minute");
    var h = Math.floor(m / 60);
    if (h < 48) return plural(h, "hour");
    return plural(Math.floor(h / 24), "day");
  }

  // tick refreshes every countdown and age from the timestamps the server wrote.
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-expires]").forEach(function (el) {
      var left = Date.parse(el.getAttribute("data-expires")) - now;
      el.textContent = span(left);
      el.setAttribute("data-urgent", left < 60000 ? "true" : "false");
    });
    document.querySelectorAll("[data-created]").forEach(function (el) {
      el.textContent = span(now - Date.parse(el.getAttribute("data-created"))) + " ago";
    });
  }

  // syncTitle keeps the "(N) " in front of the tab title in step with the live count.
  function syncTitle() {
    var c = document.getElementById("open-count");
    if (!c) return;
    var n = parseInt(c.getAttribute("data-count") || "0", 10);
    var base = document.title.replace(/^\(\d+\) /, "");
    document.title = (n > 0 ? "(" + n + ") " : "") + base;
  }

  // The socket tells the server whether this page is visible: while one is,
  // the operator counts as looking and phone alerts may wait.
  var socket = null;
  function reportVisibility() {
    if (socket) socket.send(JSON.stringify({ visible: document.visibilityState === "visible" }));
  }
  document.addEventListener("visibilitychange", function () {
    reportVisibility();
    // A phone may have dropped the socket while asleep; come back at once.
    if (document.visibilityState === "visible" && socket && !document.body.classList.contains("live")) socket.reconnect();
  });

  document.addEventListener("htmx:wsOpen", function (e) {
    socket = e.detail && e.detail.socketWrapper;
    document.body.classList.add("live");
    reportVisibility();
  });
  // When the socket fails (1006) the session may be over (logout elsewhere, a
  // revoked token): the handshake is refused then, and htmx would keep
  // retrying. One check per failure tells which, and sends the operator to log in.
  var checking = false;
  function checkSession() {
    if (checking) return;
    checking = true;
    fetch("/v1/requests?limit=1", { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { if (r.status === 401) window.location.assign("/login"); })
      .catch(function () { /* the server is down: htmx retries */ })
      .then(function () { checking = false; });
  }

  document.addEventListener("htmx:wsClose", function (e) {
    document.body.classList.remove("live");
    var code = e.detail && e.detail.event && e.detail.event.code;
    if (code === 1008) window.location.assign("/login");
    else if (code === 1006 && document.visibilityState === "visible") checkSession();
  });
  // localTimes shows each server-written time (UTC, "… UTC") in the
  // operator's own zone; the UTC text stays in the title, on hover.
  var localFormat = null;
  try {
    localFormat = new Intl.DateTimeFormat(undefined, {
      year: "numeric", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit", second: "2-digit", timeZoneName: "short",
    });
  } catch (e) { localFormat = null; }
  function localTimes() {
    if (!localFormat) return;
    document.querySelectorAll("time[data-local]").forEach(function (el) {
      var t = Date.parse(el.getAttribute("datetime"));
      if (isNaN(t)) return;
      if (!el.title) el.title = el.textContent;
      el.textContent = localFormat.format(new Date(t));
      el.setAttribute("data-local", "shown");
    });
  }

  function refresh() { syncTitle(); tick(); localTimes(); keys.resync(); }

  // Keyboard shortcuts for the inbox: j/k move between cards, o or Enter opens
  // one, a allows once, d denies, n adds a note, ? lists them. They never fire
  // while the operator types in a field, or with a modifier held.
  var keys = (function () {
    var selected = null, index = -1;
    function cards() { return Array.prototype.slice.call(document.querySelectorAll('#inbox-list [data-testid="card"]')); }
    function mark(el) {
      if (selected) selected.classList.remove("selected");
      selected = el;
      index = el ? cards().indexOf(el) : -1;
      if (el) el.classList.add("selected");
    }
    function select(el) {
      mark(el);
      if (!el) return;
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest" });
    }
    // Focus inside a card (a click on it, Tab to one of its buttons) selects it.
    document.addEventListener("focusin", function (e) {
      var c = e.target.closest && e.target.closest('#inbox-list [data-testid="card"]');
      if (c && c !== selected) mark(c);
    });
    // current is the selected card, or the only card (a request's own page).
    function current() {
      if (selected && document.body.contains(selected)) return selected;
      var list = cards();
      return list.length === 1 ? list[0] : null;
    }
    function move(by) {
      var list = cards();
      if (!list.length) return;
      var i = selected && document.body.contains(selected) ? list.indexOf(selected) + by : (by > 0 ? 0 : list.length - 1);
      select(list[Math.max(0, Math.min(list.length - 1, i))]);
    }
    // resync keeps a selection when the socket redraws or removes its card:
    // the redrawn card, else the one that took its place.
    function resync() {
      if (!selected || document.body.contains(selected)) return;
      var again = document.getElementById(selected.id), list = cards();
      if (again) select(again);
      else if (list.length) select(list[Math.min(index, list.length - 1)]);
      else select(null);
    }
    function allowOnce(card) {
      var b = card.querySelector('button[data-option="once"]');
      if (b) return b;
      var allows = card.querySelectorAll('button[data-testid="option"][data-effect="allow"]');
      return allows.length === 1 ? allows[0] : null; // never guess between two allows
    }
    function typing(t) {
      return t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName));
    }
    var help = document.getElementById("shortcuts"), noteOnKeyUp = null;
    document.addEventListener("keyup", function () {
      if (noteOnKeyUp) noteOnKeyUp.focus();
      noteOnKeyUp = null;
    });
    document.addEventListener("keydown", function (e) {
      if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      if (help && help.open) return; // the dialog handles its own keys (Esc closes it)
      var card = current(), b;
      switch (e.key) {
        case "j": move(1); break;
        case "k": move(-1); break;
        case "?":
          if (help && help.showModal) help.showModal();
          break;
        case "o":
        case "Enter":
          // Enter on a button or link keeps its own meaning.
          if (e.key === "Enter" && e.target !== card && e.target !== document.body) return;
          b = card && card.querySelector('[data-testid="card-link"]');
          if (!b) return;
          window.location.assign(b.getAttribute("href"));
          break;
        case "a":
          b = card && allowOnce(card);
          if (!b) return;
          b.click();
          break;
        case "d":
          b = card && card.querySelector('button[data-testid="option"][data-effect="deny"]');
          if (!b) return;
          b.click();
          break;
        case "n":
          b = card && card.querySelector('textarea[name="note"]');
          if (!b) return;
          if (b.closest("details")) b.closest("details").open = true;
          // Focus on key up, so the "n" itself is not typed into the note.
          noteOnKeyUp = b;
          break;
        default:
          return;
      }
      e.preventDefault();
    });
    return { resync: resync };
  })();

  document.addEventListener("htmx:wsAfterMessage", refresh);
  document.addEventListener("htmx:afterSwap", refresh);

  tick();
  localTimes();
  syncTitle();
  setInterval(tick, 1000);
})();
