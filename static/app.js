// Gatehouse page script: live countdowns and ages, times in the operator's own
// zone, the open count in the title, the connection state in words, the
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

  // connection says in words whether the page is live, reconnecting or
  // offline; the element is a live region, so a screen reader hears it change.
  function connection(state) {
    document.body.classList.toggle("live", state === "live");
    var el = document.querySelector('[data-testid="connection"]');
    if (!el) return;
    el.setAttribute("data-state", state);
    var w = el.querySelector(".conn-word");
    if (w && w.textContent !== state) w.textContent = state;
  }
  window.addEventListener("offline", function () { connection("offline"); });
  window.addEventListener("online", function () { if (!document.body.classList.contains("live")) connection("reconnecting"); });

  document.addEventListener("htmx:wsOpen", function (e) {
    socket = e.detail && e.detail.socketWrapper;
    connection("live");
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
      .catch(function () { connection("offline"); /* the server is gone: htmx retries */ })
      .then(function () { checking = false; });
  }

  document.addEventListener("htmx:wsClose", function (e) {
    connection(navigator.onLine === false ? "offline" : "reconnecting");
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

  // Keyboard shortcuts: j/k move between cards, o or Enter opens one, a allows
  // once, d denies, n adds a note, ? lists them. A key acts only on the card
  // that holds the focus (the card itself or an element inside it): a key
  // pressed anywhere else decides nothing. Allowing a high-risk request by key
  // asks to confirm first. They never fire while the operator types in a
  // field or holds a modifier, and the operator can turn them all off (the
  // switch at the foot of the page, kept in this browser's localStorage).
  var keys = (function () {
    var CARD = '#inbox-list [data-testid="card"]', STORE = "gatehouse.shortcuts";
    var selected = null, index = -1;
    function cards() { return Array.prototype.slice.call(document.querySelectorAll(CARD)); }
    function cardOf(el) { return el && el.closest ? el.closest(CARD) : null; }
    // focused is the only card a key may act on.
    function focused() { return cardOf(document.activeElement); }
    function mark(el) {
      if (selected) selected.classList.remove("selected");
      selected = el;
      if (el) {
        index = cards().indexOf(el);
        el.classList.add("selected");
      }
    }
    function select(el) {
      mark(el);
      if (!el) return;
      el.focus({ preventScroll: true });
      el.scrollIntoView({ block: "nearest" });
    }
    // Focus inside a card (a click on it, Tab to one of its buttons) selects
    // it; focus anywhere else leaves no card selected.
    document.addEventListener("focusin", function (e) {
      var c = cardOf(e.target);
      if (c !== selected) mark(c);
    });
    document.addEventListener("focusout", function (e) {
      // Focus given to nothing (a click on the background, another window)
      // clears the selection once the focus has settled; a card removed
      // meanwhile is resync's.
      if (e.relatedTarget) return;
      setTimeout(function () {
        if (selected && document.body.contains(selected) && !selected.contains(document.activeElement)) mark(null);
      }, 0);
    });
    function move(by) {
      var list = cards(), from = focused();
      if (!list.length) return;
      var i = from ? list.indexOf(from) + by : index >= 0 ? Math.min(index, list.length - 1) : (by > 0 ? 0 : list.length - 1);
      select(list[Math.max(0, Math.min(list.length - 1, i))]);
    }
    // resync keeps the focus on a card that a swap redraws or removes while
    // it holds the focus: the redrawn card, else the one that took its
    // place. Focus the operator moved elsewhere stays where it is.
    var before = null, beforeIndex = -1; // the focused card when a swap began
    function noteFocus() {
      before = focused();
      beforeIndex = before ? cards().indexOf(before) : -1;
    }
    document.addEventListener("htmx:wsBeforeMessage", noteFocus);
    document.addEventListener("htmx:beforeSwap", noteFocus);
    function resync() {
      var lost = before;
      before = null;
      if (selected && !document.body.contains(selected)) mark(null);
      if (!lost || document.body.contains(lost)) return;
      var a = document.activeElement;
      if (a && a !== document.body && a !== document.documentElement) return;
      var again = document.getElementById(lost.id), list = cards();
      if (again && cardOf(again)) select(again);
      else if (list.length) select(list[Math.min(beforeIndex, list.length - 1)]);
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
    function words(el) { return el ? el.textContent.replace(/\s+/g, " ").trim() : ""; }

    // confirm asks before a key allows a high-risk request, naming what it
    // allows; the allow is sent only if the card still shows the version the
    // operator confirmed. Cancel has the focus, so a second stray key or
    // Enter sends nothing.
    var confirmBox = document.getElementById("confirm-key"), pending = null;
    function decide(card, b) {
      if (card.getAttribute("data-risk") !== "high" || b.getAttribute("data-effect") !== "allow") {
        b.click();
        return;
      }
      if (!confirmBox || !confirmBox.showModal) return; // no way to ask: do nothing
      pending = { id: card.id, version: card.getAttribute("data-version"), option: b.getAttribute("data-option") };
      confirmBox.querySelector('[data-testid="confirm-key-what"]').textContent = words(card.querySelector('[data-testid="card-title"]'));
      var cmd = words(card.querySelector('[data-testid="card-command"]'));
      confirmBox.querySelector('[data-testid="confirm-key-command"]').textContent = cmd;
      confirmBox.querySelector('[data-testid="confirm-key-command"]').parentNode.hidden = !cmd;
      confirmBox.querySelector('[data-testid="confirm-key-allow"]').textContent =
        words(b.querySelector('[data-testid="option-label"]')) + " — " + words(b.querySelector('[data-testid="option-effect"]'));
      confirmBox.returnValue = "";
      confirmBox.showModal();
    }
    if (confirmBox) confirmBox.addEventListener("close", function () {
      var p = pending;
      pending = null;
      if (!p || confirmBox.returnValue !== "allow") return;
      var card = document.getElementById(p.id);
      var b = card && card.getAttribute("data-version") === p.version && card.querySelector('button[data-testid="option"][data-option="' + CSS.escape(p.option) + '"]');
      if (b && !b.disabled) {
        b.click();
        return;
      }
      var flash = document.getElementById("flash");
      if (flash) flash.textContent = "The request changed or was decided before you confirmed: nothing was sent.";
    });

    // The switch: on unless this browser turned them off.
    var toggle = document.getElementById("shortcuts-on"), on = true;
    try { on = window.localStorage.getItem(STORE) !== "off"; } catch (e) { on = true; }
    if (toggle) {
      toggle.checked = on;
      toggle.addEventListener("change", function () {
        on = toggle.checked;
        try { window.localStorage.setItem(STORE, on ? "on" : "off"); } catch (e) { /* kept for this page only */ }
      });
      var foot = document.getElementById("shortcuts-foot");
      if (foot) foot.hidden = false;
    }

    var help = document.getElementById("shortcuts"), noteOnKeyUp = null;
    document.addEventListener("keyup", function () {
      if (noteOnKeyUp) noteOnKeyUp.focus();
      noteOnKeyUp = null;
    });
    document.addEventListener("keydown", function (e) {
      if (!on || e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || typing(e.target)) return;
      // An open dialog handles its own keys (Esc closes it).
      if ((help && help.open) || (confirmBox && confirmBox.open)) return;
      var card = focused(), b;
      switch (e.key) {
        case "j": move(1); break;
        case "k": move(-1); break;
        case "?":
          if (help && help.showModal) help.showModal();
          break;
        case "o":
        case "Enter":
          // Enter on a button or link inside the card keeps its own meaning.
          if (e.key === "Enter" && e.target !== card) return;
          b = card && card.querySelector('[data-testid="card-link"]');
          if (!b) return;
          window.location.assign(b.getAttribute("href"));
          break;
        case "a":
          b = card && allowOnce(card);
          if (!b || b.disabled) return;
          decide(card, b);
          break;
        case "d":
          b = card && card.querySelector('button[data-testid="option"][data-effect="deny"]');
          if (!b || b.disabled) return;
          decide(card, b);
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
