// Gatehouse Web Push: lets the operator turn on notifications for this device
// (the page added to the home screen on iOS, or any browser with Push). It
// registers /sw.js, subscribes with the server's VAPID key and sends the
// subscription to POST /v1/webpush/subscribe. The layout draws the button
// ([data-push-toggle]) so it is there from the first paint; without one, one
// is added to the header.
(function () {
  "use strict";
  var supported = "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;

  function csrf() {
    try {
      var h = JSON.parse(document.body.getAttribute("hx-headers") || "{}");
      if (h["X-CSRF-Token"]) return h["X-CSRF-Token"];
    } catch (e) { /* fall through */ }
    var i = document.querySelector("input[name=csrf]");
    return i ? i.value : "";
  }

  function api(method, path, body) {
    return fetch(path, {
      method: method,
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: body ? JSON.stringify(body) : undefined,
    }).then(function (r) {
      if (!r.ok) throw new Error(method + " " + path + ": " + r.status);
      return r.status === 204 ? null : r.json();
    });
  }

  // The VAPID key arrives as base64url; subscribe wants its bytes.
  function keyBytes(b64) {
    var s = (b64 + "===".slice((b64.length + 3) % 4)).replace(/-/g, "+").replace(/_/g, "/");
    var raw = atob(s), out = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
    return out;
  }

  function register() {
    return navigator.serviceWorker.register("/sw.js", { scope: "/" }).then(function () {
      return navigator.serviceWorker.ready;
    });
  }

  function subscribe() {
    return Notification.requestPermission().then(function (perm) {
      if (perm !== "granted") throw new Error("notifications were not allowed");
      return Promise.all([register(), api("GET", "/v1/webpush/key")]);
    }).then(function (r) {
      return r[0].pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(r[1].public_key) });
    }).then(function (sub) {
      return api("POST", "/v1/webpush/subscribe", sub.toJSON()).then(function () { return sub; });
    });
  }

  function unsubscribe(sub) {
    return api("POST", "/v1/webpush/unsubscribe", { endpoint: sub.endpoint }).catch(function () {}).then(function () {
      return sub.unsubscribe();
    });
  }

  function button() {
    var b = document.querySelector("[data-push-toggle]");
    if (b) return b;
    var header = document.querySelector("header.top");
    if (!header || !csrf()) return null; // not logged in
    b = document.createElement("button");
    b.type = "button";
    b.className = "link-button";
    b.setAttribute("data-push-toggle", "");
    b.setAttribute("data-testid", "push-toggle");
    header.appendChild(b);
    return b;
  }

  function start() {
    var b = button();
    if (!b) return;
    if (!supported) {
      // iOS offers push only to a page added to the home screen.
      b.textContent = "Notifications unavailable";
      b.title = "This browser has no Web Push here; on an iPhone, add the page to the home screen first.";
      b.disabled = true;
      return;
    }
    if (Notification.permission === "denied") {
      b.textContent = "Notifications blocked";
      b.disabled = true;
      return;
    }
    var current = null;
    function show(sub) {
      current = sub;
      b.textContent = sub ? "Notifications on" : "Enable notifications";
      b.setAttribute("aria-pressed", sub ? "true" : "false");
      b.disabled = false;
    }
    register().then(function (reg) { return reg.pushManager.getSubscription(); }).then(function (sub) {
      // Re-send a live subscription: registering is idempotent and revives a
      // device the server retired.
      if (sub) api("POST", "/v1/webpush/subscribe", sub.toJSON()).catch(function () {});
      show(sub);
    }).catch(function () { show(null); });
    b.addEventListener("click", function () {
      b.disabled = true;
      (current ? unsubscribe(current).then(function () { return null; }) : subscribe())
        .then(show)
        .catch(function (e) { b.textContent = "Enable notifications (" + e.message + ")"; b.disabled = false; });
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
