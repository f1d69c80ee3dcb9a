/**
 * Reelfind's service worker, served at /sw.js with root scope (src/routes/pwa.rs prepends
 * `self.__REELFIND_SW__ = {version, precache, admin}`).
 *
 * - install: precaches the app shell (offline page, manifest, icons, runtime, stylesheet);
 *   it waits until the page says SKIP_WAITING, so an update is applied when the person
 *   clicks "Reload", never under their feet (the very first install activates at once).
 * - fetch: see `strategyFor` in ../pwa/rules.ts. Pages network-first with the offline
 *   page as fallback; hashed bundles cache-first; /api is never touched.
 * - push → showNotification; notificationclick → focus an open tab (navigated to the
 *   notification's URL) or open one.
 * - messages in: SKIP_WAITING, CACHE_MOVIE_DATA {urls}, PREFETCH_ADMIN {urls?};
 *   out: CACHE_UPDATED {cache, count}, SYNC_SUCCESS {tag}. PREFETCH_ADMIN (sent by the page
 *   when an admin signs in) warms the admin pages: their islands' code (the build's `admin`
 *   list: the chunks, React's mount chunk, Chart.js) goes into the static cache, so the
 *   dashboard's tabs open without downloading code. The admin pages' HTML is never cached:
 *   it is private and always fetched fresh.
 */
import { cacheableDataUrl, parsePushPayload, strategyFor } from "../pwa/rules";

declare const self: ServiceWorkerGlobalScope & {
  __REELFIND_SW__?: { version: string; precache: string[]; admin?: string[] };
};

const build = self.__REELFIND_SW__ ?? { version: "dev", precache: ["/offline"], admin: [] };
const STATIC_CACHE = `reelfind-static-${build.version}`;
const MOVIE_CACHE = "reelfind-movie-data";
const MOVIE_CACHE_LIMIT = 40;
const OFFLINE_URL = "/offline";

async function broadcast(message: Record<string, unknown>): Promise<void> {
  const clients = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
  for (const client of clients) client.postMessage(message);
}

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(STATIC_CACHE);
      await cache.addAll(build.precache.map((u) => new Request(u, { cache: "reload", credentials: "same-origin" })));
      // First install: nothing to replace, so take over at once.
      if (!self.registration.active) await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const key of await caches.keys()) {
        if (key.startsWith("reelfind-static-") && key !== STATIC_CACHE) await caches.delete(key);
      }
      if (self.registration.navigationPreload) await self.registration.navigationPreload.enable().catch(() => {});
      await self.clients.claim();
    })(),
  );
});

async function page(event: FetchEvent): Promise<Response> {
  try {
    const preloaded = (await event.preloadResponse) as Response | undefined;
    return preloaded ?? (await fetch(event.request));
  } catch {
    const offline = await caches.match(OFFLINE_URL);
    return offline ?? new Response("You're offline.", { status: 503, headers: { "Content-Type": "text/plain" } });
  }
}

async function immutable(request: Request): Promise<Response> {
  const cached = await caches.match(request);
  if (cached) return cached;
  const res = await fetch(request);
  if (res.ok) {
    const cache = await caches.open(STATIC_CACHE);
    await cache.put(request, res.clone());
  }
  return res;
}

async function staleWhileRevalidate(event: FetchEvent): Promise<Response> {
  const cache = await caches.open(STATIC_CACHE);
  const cached = await cache.match(event.request);
  const refresh = fetch(event.request).then(async (res) => {
    if (res.ok) await cache.put(event.request, res.clone());
    return res;
  });
  if (cached) {
    event.waitUntil(refresh.catch(() => undefined));
    return cached;
  }
  return refresh;
}

self.addEventListener("fetch", (event) => {
  const strategy = strategyFor(event.request, self.location.origin);
  if (strategy === "page") event.respondWith(page(event));
  else if (strategy === "immutable") event.respondWith(immutable(event.request));
  else if (strategy === "static") event.respondWith(staleWhileRevalidate(event));
  else if (event.request.destination === "image" && event.request.method === "GET" && cacheableDataUrl(event.request.url, self.location.origin)) {
    // Posters and photos kept by CACHE_MOVIE_DATA: the network first, the kept copy offline.
    event.respondWith(
      fetch(event.request).catch(async () => (await (await caches.open(MOVIE_CACHE)).match(event.request.url)) ?? Response.error()),
    );
  }
  // Otherwise "bypass": not handled, the browser goes to the network as if there were no worker.
});

/** Stores the given URLs (posters, stills, bundles) for offline viewing; answers CACHE_UPDATED. */
async function cacheUrls(cacheName: string, urls: unknown, limit?: number, skipCached = false): Promise<number> {
  const list = Array.isArray(urls) ? urls.filter((u): u is string => typeof u === "string") : [];
  const wanted = [...new Set(list.filter((u) => cacheableDataUrl(u, self.location.origin)))].slice(0, 50);
  const cache = await caches.open(cacheName);
  let count = 0;
  for (const u of wanted) {
    try {
      // Hashed bundles never change: one already kept counts as warm.
      if (skipCached && (await cache.match(u))) {
        count++;
        continue;
      }
      // CORS only: opaque copies cost browsers megabytes of quota each.
      const res = await fetch(u, { mode: "cors", credentials: "omit" });
      if (res.ok) {
        await cache.put(u, res);
        count++;
      }
    } catch {
      /* offline or refused: skip it */
    }
  }
  if (limit) {
    const keys = await cache.keys();
    for (const old of keys.slice(0, Math.max(0, keys.length - limit))) await cache.delete(old);
  }
  await broadcast({ type: "CACHE_UPDATED", cache: cacheName, count });
  return count;
}

self.addEventListener("message", (event) => {
  const data = (event.data ?? {}) as { type?: string; urls?: unknown; data?: { urls?: unknown } };
  switch (data.type) {
    case "SKIP_WAITING":
      void self.skipWaiting();
      break;
    case "CACHE_MOVIE_DATA":
      event.waitUntil(cacheUrls(MOVIE_CACHE, data.urls ?? data.data?.urls, MOVIE_CACHE_LIMIT));
      break;
    case "PREFETCH_ADMIN": {
      const extra = data.urls ?? data.data?.urls;
      const urls = [...(build.admin ?? []), ...(Array.isArray(extra) ? extra : [])];
      event.waitUntil(cacheUrls(STATIC_CACHE, urls, undefined, true));
      break;
    }
  }
});

/** Background sync (registered by the page when the connection returns): refresh the shell. */
self.addEventListener("sync", (event: Event) => {
  const e = event as ExtendableEvent & { tag?: string };
  e.waitUntil(
    (async () => {
      const cache = await caches.open(STATIC_CACHE);
      await cache.addAll(build.precache.map((u) => new Request(u, { cache: "reload", credentials: "same-origin" })));
      await broadcast({ type: "SYNC_SUCCESS", tag: e.tag ?? "" });
    })(),
  );
});

self.addEventListener("push", (event) => {
  const note = parsePushPayload(event.data ? event.data.text() : null);
  event.waitUntil(
    self.registration.showNotification(note.title, {
      body: note.body,
      icon: note.icon ?? "/assets/icons/icon-192.png",
      badge: "/assets/icons/icon-192.png",
      tag: note.tag,
      data: { url: note.url },
    }),
  );
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const target = new URL((event.notification.data as { url?: string } | null)?.url ?? "/", self.location.origin);
  if (target.origin !== self.location.origin) target.href = self.location.origin + "/";
  event.waitUntil(
    (async () => {
      const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
      const exact = windows.find((c) => c.url === target.href);
      const any = exact ?? windows[0];
      if (any) {
        const focused = await any.focus();
        if (!exact) await focused.navigate(target.href).catch(() => undefined);
        return;
      }
      await self.clients.openWindow(target.href);
    })(),
  );
});
