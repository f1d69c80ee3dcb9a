// The installable app and push notifications in headless Chromium against the real binary.
//
// What is real here: the service worker registers from /sw.js and becomes active, it serves
// the offline page when the network is gone, the server's VAPID key reaches the browser,
// the server sends an encrypted, VAPID-signed push to a push service, and the worker's
// push handler shows the notification (delivered through the DevTools protocol).
//
// What is stood in: the browser's push service. Chromium's PushManager.subscribe() needs
// Google's FCM over the network, which tests never have, so the page's PushManager is
// replaced by one that hands out a subscription pointing at a local fake push service
// (with keys generated here, so this test decrypts what the server sent exactly as the
// browser would). The first test records what the real subscribe() answers offline.
import assert from "node:assert/strict";
import crypto from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import http from "node:http";
import { after, before, describe, test } from "node:test";
import { repoRoot, startApp } from "./harness.mjs";

let app;
let push;

/** A local push service: records every request with its body. */
function startPushService() {
  const received = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      received.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(201).end();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}`, received, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** A browser's push keys (P-256 ECDH pair and 16-byte auth secret). */
function browserKeys() {
  const ecdh = crypto.createECDH("prime256v1");
  ecdh.generateKeys();
  return { ecdh, p256dh: ecdh.getPublicKey().toString("base64url"), auth: crypto.randomBytes(16) };
}

/** RFC 8291 / RFC 8188 aes128gcm decryption, as the browser does it. */
function decrypt(body, keys) {
  const salt = body.subarray(0, 16);
  const idlen = body[20];
  const serverPublic = body.subarray(21, 21 + idlen);
  const ciphertext = body.subarray(21 + idlen);
  const shared = keys.ecdh.computeSecret(serverPublic);
  const info = Buffer.concat([Buffer.from("WebPush: info\0"), keys.ecdh.getPublicKey(), serverPublic]);
  const ikm = Buffer.from(crypto.hkdfSync("sha256", shared, keys.auth, info, 32));
  const cek = Buffer.from(crypto.hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: aes128gcm\0"), 16));
  const nonce = Buffer.from(crypto.hkdfSync("sha256", ikm, salt, Buffer.from("Content-Encoding: nonce\0"), 12));
  const decipher = crypto.createDecipheriv("aes-128-gcm", cek, nonce);
  decipher.setAuthTag(ciphertext.subarray(ciphertext.length - 16));
  const padded = Buffer.concat([decipher.update(ciphertext.subarray(0, ciphertext.length - 16)), decipher.final()]);
  const end = padded.lastIndexOf(2); // last-record delimiter, then zero padding
  return JSON.parse(padded.subarray(0, end).toString("utf8"));
}

/** Replaces the page's PushManager with one whose subscriptions point at our push service. */
async function fakePushManager(page, endpoint, keys) {
  await page.addInitScript(
    ({ endpoint, p256dh, auth }) => {
      let current = null;
      const toB64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
      PushManager.prototype.subscribe = async function (opts) {
        window.__applicationServerKey = toB64(opts.applicationServerKey);
        current = {
          endpoint,
          expirationTime: null,
          options: { userVisibleOnly: true, applicationServerKey: null },
          toJSON: () => ({ endpoint, expirationTime: null, keys: { p256dh, auth } }),
          unsubscribe: async () => {
            current = null;
            return true;
          },
        };
        return current;
      };
      PushManager.prototype.getSubscription = async () => current;
    },
    { endpoint, p256dh: keys.p256dh, auth: keys.auth.toString("base64url") },
  );
}

async function registerIn(page, username) {
  const res = await page.evaluate(async (username) => {
    const r = await fetch("/api/register", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ username, email: `${username}@example.com`, password: "popcorn1" }),
    });
    return { status: r.status, body: await r.text() };
  }, username);
  assert.ok(res.status === 200 || res.status === 201, `${res.status}: ${res.body}`);
}

async function swActive(page) {
  await page.locator("[data-sw-status=active]").waitFor({ timeout: 30_000 });
  return page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state);
}

before(async () => {
  push = await startPushService();
  // The local push service listens on loopback, which the strict outbound client refuses
  // unless told it is a test.
  app = await startApp({ env: { REELFIND_PUSH_ALLOW_HTTP: "true", REELFIND_OUTBOUND_ALLOW_PRIVATE: "true" } });
});
after(async () => {
  await app?.stop();
  await push?.close();
});

describe("installable app and push notifications", () => {
  test("the service worker becomes active, serves the offline page, and the manifest is linked", async () => {
    const page = await app.newPage({ width: 1280 });
    await page.context().grantPermissions(["notifications"], { origin: app.url });
    await page.goto(`${app.url}/pwa-settings`);
    assert.equal(await swActive(page), "activated");
    const reg = await page.evaluate(async () => {
      const r = await navigator.serviceWorker.getRegistration("/");
      return { scope: r?.scope, script: r?.active?.scriptURL };
    });
    assert.equal(reg.scope, `${app.url}/`);
    assert.equal(reg.script, `${app.url}/sw.js`);
    assert.equal(await page.locator("link[rel=manifest]").getAttribute("href"), "/manifest.webmanifest");
    // Signed out: the notifications card asks to sign in.
    await page.getByText("Sign in to get notifications").waitFor();

    // The real PushManager, offline: what does Chromium answer? (Recorded, not required.)
    const real = await page.evaluate(async () => {
      try {
        const r = await navigator.serviceWorker.ready;
        const key = Uint8Array.from(atob("BLMbF9ffKBiWQLCKvTHb6LO8Nb6dcUh6TItC455vu2kElga6PQvUmaFyCdykxY2nOSSL3yKgfbmFLRTUaGv4yV8".replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
        const s = await Promise.race([
          r.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key }),
          new Promise((_, rej) => setTimeout(() => rej(new Error("timed out after 10 s")), 10_000)),
        ]);
        return `subscribed: ${s.endpoint}`;
      } catch (e) {
        return `${e.name}: ${e.message}`;
      }
    });
    console.log(`real PushManager.subscribe() offline -> ${real}`);

    // Offline, a page the network cannot give comes from the worker's offline page.
    await page.reload();
    await page.locator("[data-sw-status=active]").waitFor();
    assert.ok(await page.evaluate(() => Boolean(navigator.serviceWorker.controller)), "the page is controlled");
    await page.context().setOffline(true);
    await page.goto(`${app.url}/about`);
    assert.equal((await page.locator("h1").first().textContent()).trim(), "You're offline");
    await page.context().setOffline(false);
    await page.goto(`${app.url}/about`);
    assert.notEqual((await page.locator("h1").first().textContent()).trim(), "You're offline");
    // Chromium logs that it has no Push API in incognito-like contexts (every Playwright context).
    app.assertNoConsoleErrors(page, { allow: [/ERR_INTERNET_DISCONNECTED/, /Push API in incognito mode/] });
  });

  test("PWA settings: enable, send a test push (encrypted, shown by the worker), disable", async () => {
    const keys = browserKeys();
    const page = await app.newPage({ width: 1280 });
    await page.context().grantPermissions(["notifications"], { origin: app.url });
    await fakePushManager(page, `${push.url}/push/settings-device`, keys);
    await page.goto(`${app.url}/`);
    await registerIn(page, "pushfan");
    await page.goto(`${app.url}/pwa-settings`);
    await swActive(page);
    await page.locator("[data-subscription-count='0']").waitFor();
    await app.screenshot(page, "pwa-settings-1280");

    await page.getByRole("button", { name: "Enable notifications" }).click();
    await page.getByText("Notifications Enabled!").first().waitFor();
    await page.locator("[data-push-state=on]").waitFor();
    await page.locator("[data-subscription-count='1']").waitFor();
    const vapid = await page.evaluate(async () => (await (await fetch("/api/notifications/vapid-public-key")).json()).publicKey);
    assert.equal(await page.evaluate(() => window.__applicationServerKey), vapid, "subscribed with the server's VAPID key");
    await app.screenshot(page, "pwa-settings-enabled-1280");
    await app.assertAccessible(page, { include: "[data-island=PwaSettings]" });

    const before = push.received.length;
    await page.getByRole("button", { name: "Send test notification" }).click();
    await page.getByText("Test Notification Sent!").first().waitFor();
    const sent = push.received.slice(before);
    assert.equal(sent.length, 1);
    assert.equal(sent[0].method, "POST");
    assert.equal(sent[0].url, "/push/settings-device");
    assert.equal(sent[0].headers["content-encoding"], "aes128gcm");
    assert.match(sent[0].headers.authorization, /^vapid t=[\w-]+\.[\w-]+\.[\w-]+, k=/);
    assert.ok(sent[0].headers.authorization.endsWith(`k=${vapid}`));
    const payload = decrypt(sent[0].body, keys);
    assert.equal(payload.title, "Test Notification");

    // Deliver that payload to the worker the way a push service would reach Chromium.
    const cdp = await page.context().newCDPSession(page);
    const registrationId = await new Promise((resolve) => {
      cdp.on("ServiceWorker.workerRegistrationUpdated", ({ registrations }) => {
        const r = registrations.find((x) => x.scopeURL === `${app.url}/` && !x.isDeleted);
        if (r) resolve(r.registrationId);
      });
      void cdp.send("ServiceWorker.enable");
    });
    // On a loaded machine the first delivery can reach a worker that is still starting and
    // be dropped by Chromium; a push service redelivers, and so does this test (3 tries).
    let note = null;
    for (let attempt = 0; attempt < 3 && !note; attempt++) {
      await cdp.send("ServiceWorker.deliverPushMessage", { origin: app.url, registrationId, data: JSON.stringify(payload) });
      note = await page.evaluate(async () => {
        const r = await navigator.serviceWorker.ready;
        for (let i = 0; i < 100; i++) {
          const n = await r.getNotifications();
          if (n.length) return { title: n[0].title, body: n[0].body, url: n[0].data?.url };
          await new Promise((ok) => setTimeout(ok, 100));
        }
        return null;
      });
    }
    assert.ok(note, "the worker showed a notification");
    assert.equal(note.title, "Test Notification");
    assert.equal(note.url, "/pwa-settings");

    // Background sync (registered when the connection returns): the worker refreshes the
    // shell and says SYNC_SUCCESS to its pages.
    const synced = page.evaluate(
      () => new Promise((resolve) => window.addEventListener("reelfind:sync_success", (e) => resolve(e.detail), { once: true })),
    );
    await cdp.send("ServiceWorker.dispatchSyncEvent", { origin: app.url, registrationId, tag: "refresh-shell", lastChance: false });
    assert.deepEqual(await synced, { type: "SYNC_SUCCESS", tag: "refresh-shell" });

    await page.getByRole("button", { name: "Disable notifications" }).click();
    await page.getByText("Notifications Disabled").first().waitFor();
    await page.locator("[data-subscription-count='0']").waitFor();
    await page.locator("[data-push-state=off]").waitFor();

    const narrow = await app.newPage({ width: 390 });
    await narrow.context().addCookies(await page.context().cookies());
    await narrow.goto(`${app.url}/pwa-settings`);
    await swActive(narrow);
    await app.screenshot(narrow, "pwa-settings-390");
    app.assertNoConsoleErrors(page);
    app.assertNoConsoleErrors(narrow);
  });

  for (const width of [390, 1280]) {
    test(`sign-up onboarding at ${width}px: benefits, enable, welcome push after 2 s, preferences saved`, async () => {
      const keys = browserKeys();
      const page = await app.newPage({ width });
      await page.context().grantPermissions(["notifications"], { origin: app.url });
      await fakePushManager(page, `${push.url}/push/onboarding-${width}`, keys);
      await page.goto(`${app.url}/auth`);
      await page.waitForSelector("[data-testid=auth-screen]");
      // Let the worker install first, so Enable does not wait for it.
      await page.waitForFunction(async () => Boolean(await navigator.serviceWorker.getRegistration("/")), null, { timeout: 30_000 });
      await page.getByRole("tab", { name: "Sign Up" }).click();
      const username = `onboard${width}`;
      await page.getByLabel("Username", { exact: true }).fill(username);
      await page.getByLabel("Email", { exact: true }).fill(`${username}@example.com`);
      await page.getByLabel("Password", { exact: true }).fill("popcorn1");
      await page.getByLabel("Confirm Password", { exact: true }).fill("popcorn1");
      await page.getByRole("button", { name: "Create Account" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.getByRole("heading", { name: `Welcome to Reelfind, ${username}!` }).waitFor();
      await app.screenshot(page, `onboarding-welcome-${width}`);
      await dialog.getByRole("button", { name: "Next" }).click();
      for (const b of ["Instant Results", "Save Time", "New Features", "Special Offers"]) await dialog.getByText(b).waitFor();
      await app.screenshot(page, `onboarding-benefits-${width}`);
      await app.assertAccessible(page, { include: "dialog[open]" });
      // Keyboard: focus stays inside the dialog.
      await page.keyboard.press("Tab");
      assert.ok(await page.evaluate(() => Boolean(document.activeElement?.closest("dialog"))), "focus stays in the dialog");

      const before = push.received.length;
      await dialog.getByRole("button", { name: "Enable Notifications" }).click();
      await dialog.getByRole("heading", { name: "You're all set!" }).waitFor();
      await app.screenshot(page, `onboarding-success-${width}`);
      // The welcome test notification follows after 2 s.
      const t0 = Date.now();
      while (push.received.length === before && Date.now() - t0 < 10_000) await new Promise((r) => setTimeout(r, 100));
      assert.equal(push.received.length, before + 1, "one welcome push");
      assert.equal(decrypt(push.received.at(-1).body, keys).title, "Welcome to Reelfind!");

      await Promise.all([page.waitForURL(`${app.url}/`), dialog.getByRole("button", { name: "Get Started" }).click()]);
      await page.getByText("Account created!").first().waitFor({ state: "attached" });
      const prefs = await page.evaluate(async () => (await fetch("/api/user/notification-preferences")).json());
      assert.deepEqual(prefs, { pushNotifications: true, emailNotifications: false, onboardingComplete: true });
      app.assertNoConsoleErrors(page);
    });
  }

  test("install card 3 s after beforeinstallprompt; signed in, the notification prompt follows an identification once", async () => {
    for (const [width, label] of [
      [390, "Add to Home Screen"],
      [1280, "Install App"],
    ]) {
      const page = await app.newPage({ width });
      await page.goto(`${app.url}/about`);
      await page.waitForSelector("html[data-pwa=ready]", { state: "attached", timeout: 30_000 });
      const fired = await page.evaluate(() => {
        const e = new Event("beforeinstallprompt", { cancelable: true });
        window.__prompted = false;
        Object.assign(e, {
          prompt: async () => {
            window.__prompted = true;
          },
          userChoice: Promise.resolve({ outcome: "accepted" }),
        });
        window.dispatchEvent(e);
        return { at: performance.now(), prevented: e.defaultPrevented };
      });
      assert.ok(fired.prevented, "the browser's own mini-infobar is held back");
      const card = page.locator("[data-pwa-card=install]");
      await card.waitFor({ timeout: 10_000 });
      const shownAfter = (await page.evaluate(() => performance.now())) - fired.at;
      assert.ok(shownAfter >= 2900, `shown after ${Math.round(shownAfter)} ms`);
      assert.equal((await card.getByRole("button").first().textContent()).trim(), label);
      await app.screenshot(page, `install-card-${width}`);
      await app.assertAccessible(page, { include: "[data-pwa-cards]" });
      await card.getByRole("button", { name: label }).click();
      await card.waitFor({ state: "detached" });
      assert.equal(await page.evaluate(() => window.__prompted), true);
      app.assertNoConsoleErrors(page);
    }

    // A result's pictures are handed to the worker (CACHE_MOVIE_DATA) and kept (CACHE_UPDATED).
    const viewer = await app.newPage({ width: 1280 });
    await viewer.goto(`${app.url}/about`);
    await viewer.waitForSelector("html[data-pwa=ready]", { state: "attached", timeout: 30_000 });
    await viewer.waitForFunction(() => Boolean(navigator.serviceWorker.controller), null, { timeout: 30_000 });
    const updated = await viewer.evaluate(
      () =>
        new Promise((resolve) => {
          window.addEventListener("reelfind:cache_updated", (e) => resolve(e.detail), { once: true });
          const result = { title: "X", posterUrl: "/assets/icons/icon-512.png", cast: [{ name: "A", profileUrl: "/api/user" }] };
          window.dispatchEvent(new CustomEvent("reelfind:identified", { detail: result }));
        }),
    );
    assert.deepEqual(updated, { type: "CACHE_UPDATED", cache: "reelfind-movie-data", count: 1 });
    const kept = await viewer.evaluate(async () => {
      const c = await caches.open("reelfind-movie-data");
      return { poster: Boolean(await c.match("/assets/icons/icon-512.png")), api: Boolean(await c.match("/api/user")) };
    });
    assert.deepEqual(kept, { poster: true, api: false }, "pictures kept, API answers never");

    // Guests are not asked (push needs an account).
    const guest = await app.newPage({ width: 1280 });
    await guest.goto(`${app.url}/about`);
    await guest.waitForSelector("html[data-pwa=ready]", { state: "attached", timeout: 30_000 });
    await guest.evaluate(() => window.dispatchEvent(new CustomEvent("reelfind:identified")));
    await guest.waitForTimeout(300);
    assert.equal(await guest.locator("[data-pwa-card=notifications]").count(), 0);

    const page = await app.newPage({ width: 1280 });
    await page.goto(`${app.url}/about`);
    await registerIn(page, "promptee");
    await page.goto(`${app.url}/about`);
    await page.waitForSelector("html[data-pwa=ready]", { state: "attached", timeout: 30_000 });
    await page.evaluate(() => window.dispatchEvent(new CustomEvent("reelfind:identified")));
    const prompt = page.locator("[data-pwa-card=notifications]");
    await prompt.waitFor();
    assert.deepEqual(
      await page.evaluate(() => [localStorage.getItem("notificationPromptShown"), localStorage.getItem("hasIdentificationHistory")]),
      ["true", "true"],
    );
    await prompt.getByRole("button", { name: "Not Now" }).click();
    await prompt.waitFor({ state: "detached" });
    assert.equal(await page.evaluate(() => localStorage.getItem("notificationPromptDismissed")), "true");
    await page.evaluate(() => window.dispatchEvent(new CustomEvent("reelfind:identified")));
    await page.waitForTimeout(300);
    assert.equal(await prompt.count(), 0, "shown once");
    app.assertNoConsoleErrors(page);
  });
  test("a new build waits as an update; Reload to update activates it and reloads", async () => {
    // Its own server on a copy of the assets, so the test can publish a "new build".
    const assets = await mkdtemp(path.join(os.tmpdir(), "reelfind-pwa-assets-"));
    await cp(path.join(repoRoot, "assets"), assets, { recursive: true, filter: (src) => !src.includes(`${path.sep}demo`) });
    const other = await startApp({ env: { REELFIND_ASSETS_DIR: assets, REELFIND_LIBRARY_DEMO: "false" } });
    try {
      const page = await other.newPage({ width: 1280 });
      await page.goto(`${other.url}/pwa-settings`);
      await swActive(page);
      await page.reload();
      await page.locator("[data-sw-status=active]").waitFor();
      const firstScript = await page.evaluate(async () => (await fetch("/sw.js")).text());

      // Publish a new build: one more file in the shell changes /sw.js byte for byte.
      const precache = path.join(assets, "dist/precache.json");
      const list = JSON.parse(await readFile(precache, "utf8"));
      await writeFile(precache, JSON.stringify([...list, "/assets/dist/manifest.json"]));
      assert.notEqual(await page.evaluate(async () => (await fetch("/sw.js")).text()), firstScript);

      await page.getByRole("button", { name: "Check for updates" }).click();
      await page.locator("[data-sw-status=waiting]").waitFor({ timeout: 30_000 });
      await page.locator("[data-pwa-card=update]").waitFor();
      await other.screenshot(page, "pwa-update-ready-1280");
      const reloaded = page.waitForEvent("load");
      await page.getByRole("button", { name: "Reload to update" }).click();
      await reloaded;
      await page.locator("[data-sw-status=active]").waitFor({ timeout: 30_000 });
      const cached = await page.evaluate(async () => {
        const keys = await caches.keys();
        const statics = keys.filter((k) => k.startsWith("reelfind-static-"));
        const c = await caches.open(statics[0]);
        return { statics: statics.length, hasNewFile: Boolean(await c.match("/assets/dist/manifest.json")) };
      });
      assert.deepEqual(cached, { statics: 1, hasNewFile: true }, "the old cache is gone, the new one has the new file");
      other.assertNoConsoleErrors(page);
    } finally {
      await other.stop();
      await rm(assets, { recursive: true, force: true });
    }
  });
});
