// Gatehouse page script: live countdowns and ages, the open count in the title,
// the connection light, and going to the login page when the session ends.
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
      el.textContent = left > 0 ? "expires in " + span(left) : "expiring";
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
  document.addEventListener("htmx:wsAfterMessage", function () { syncTitle(); tick(); });
  document.addEventListener("htmx:afterSwap", tick);

  tick();
  syncTitle();
  setInterval(tick, 1000);
})();
