// Gatehouse service worker: shows the generic notifications the server pushes
// (Web Push, payload {type, title, body, url, request_id, request_ids?, badge?,
// resolved?}), removes them when their request is decided anywhere, and opens
// the request's page on a tap. It must be served at /sw.js so its scope is the
// whole site.
"use strict";

self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (event) { event.waitUntil(self.clients.claim()); });

function setBadge(n) {
  if (typeof n !== "number" || !self.navigator) return Promise.resolve();
  if (n > 0 && self.navigator.setAppBadge) return self.navigator.setAppBadge(n).catch(function () {});
  if (n === 0 && self.navigator.clearAppBadge) return self.navigator.clearAppBadge().catch(function () {});
  return Promise.resolve();
}

// clear closes every notification about the request: its own (tagged with its
// id) and a burst's that names it.
function clear(id) {
  return self.registration.getNotifications().then(function (list) {
    list.forEach(function (n) {
      var ids = (n.data && n.data.request_ids) || [];
      if (n.tag === id || ids.indexOf(id) >= 0) n.close();
    });
  });
}

function show(d) {
  var ids = d.request_ids || (d.request_id ? [d.request_id] : []);
  return Promise.all([
    setBadge(d.badge),
    self.registration.showNotification(d.title || "Gatehouse", {
      body: d.body || "An agent needs your decision",
      tag: d.request_id || "gatehouse",
      renotify: true,
      icon: "/static/icons/icon-192.png",
      badge: "/static/icons/icon-192.png",
      data: { url: d.url || "/", request_ids: ids },
    }),
  ]);
}

self.addEventListener("push", function (event) {
  var d = {};
  try { d = event.data ? event.data.json() : {}; } catch (e) { d = {}; }
  event.waitUntil(d.resolved && d.request_id ? clear(d.request_id) : show(d));
});

// A tap opens the request on this site (only the path of the pushed URL is
// used, so a notification can never send the operator elsewhere), reusing an
// open Gatehouse window when there is one.
self.addEventListener("notificationclick", function (event) {
  event.notification.close();
  var path = "/";
  try { path = new URL((event.notification.data && event.notification.data.url) || "/", self.location.origin).pathname; } catch (e) { path = "/"; }
  var target = self.location.origin + path;
  event.waitUntil(self.clients.matchAll({ type: "window", includeUncontrolled: true }).then(function (list) {
    for (var i = 0; i < list.length; i++) {
      var c = list[i];
      if (new URL(c.url).origin === self.location.origin && c.focus) {
        return (c.navigate ? c.navigate(target) : Promise.resolve(c)).then(function (w) { return (w || c).focus(); });
      }
    }
    return self.clients.openWindow(target);
  }));
});
