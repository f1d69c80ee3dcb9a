// Test media and fake providers for the identification browser tests.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import zlib from "node:zlib";

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/** A real PNG: a width x height picture with a colour gradient (so it is not blank). */
export function makePng(width = 320, height = 180, seed = 0) {
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    const row = y * (width * 3 + 1);
    raw[row] = 0;
    for (let x = 0; x < width; x++) {
      const i = row + 1 + x * 3;
      raw[i] = (x * 255) / width + seed;
      raw[i + 1] = (y * 255) / height;
      raw[i + 2] = ((x + y + seed * 7) * 3) & 255;
    }
  }
  return encodePng(width, height, raw);
}

/** A PNG file of 8-bit RGB rows (`raw`: each row a filter byte 0, then width * 3 bytes). */
function encodePng(width, height, raw, level = zlib.constants.Z_DEFAULT_COMPRESSION) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 2;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", zlib.deflateSync(raw, { level })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** Starts a small HTTP server on 127.0.0.1; `handler(req, body, res)` answers. */
export async function fakeServer(handler) {
  const requests = [];
  const server = createServer((req, res) => {
    const parts = [];
    req.on("data", (d) => parts.push(d));
    req.on("end", () => {
      const body = Buffer.concat(parts);
      requests.push({ method: req.method, url: req.url, headers: req.headers, body });
      Promise.resolve(handler(req, body, res)).catch((e) => {
        res.statusCode = 500;
        res.end(String(e));
      });
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  const { port } = server.address();
  return { url: `http://127.0.0.1:${port}`, requests, close: () => new Promise((r) => server.close(r)) };
}

/** The server's environment for an OpenAI fake and a TMDB fake (`fakeServer`s): their keys
 * and base URLs, posters from the TMDB fake, identifications not rate-limited in a test,
 * and no demo clip (it would make the Library engine available and recommended). */
export function engineFakesEnv(openai, tmdb) {
  return {
    OPENAI_API_KEY: "test-openai-key",
    OPENAI_BASE_URL: `${openai.url}/v1`,
    TMDB_API_KEY: "test-tmdb-key",
    TMDB_BASE_URL: `${tmdb.url}/3`,
    TMDB_IMAGE_BASE_URL: `${tmdb.url}/t/p/`,
    REELFIND_IDENTIFY_PER_MINUTE: "100",
    REELFIND_LIBRARY_DEMO: "false",
  };
}

export function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/**
 * The page templates own the island marks (home hero: Uploader; /history: History). While a
 * template does not have its mark yet, this puts one in, as the islands runtime test does;
 * once the template has it, this changes nothing.
 */
export async function ensureMarks(page, appUrl) {
  if (page.marksInstalled) return;
  page.marksInstalled = true;
  await page.route(
    (url) => url.origin === appUrl && (url.pathname === "/" || url.pathname === "/history"),
    async (route) => {
      if (route.request().resourceType() !== "document") return route.continue();
      const res = await route.fetch();
      let body = await res.text();
      const url = new URL(route.request().url());
      if (url.pathname === "/" && !body.includes('data-island="Uploader"')) {
        const signedIn = /data-user-menu|user-menu/.test(body);
        const props = JSON.stringify({ maxFileSizeMb: 10, allowedFileTypes: ["jpg", "jpeg", "png", "webp", "mp4", "mov"], sharedId: url.searchParams.get("id"), signedIn }).replace(/'/g, "&#39;");
        body = body.replace(/<main[^>]*>/, (m) => `${m}<section class="hero"><div class="container hero-grid"><div class="hero-copy"><h1>Identify</h1></div><div class="hero-panel"><div data-island="Uploader" data-props='${props}'></div></div></div></section>`);
      }
      if (url.pathname === "/" && !body.includes('data-island="RecentIdentifications"')) {
        body = body.replace("</main>", `<section class="container"><h2>Recent Identifications</h2><div data-island="RecentIdentifications" data-props='{"limit":3}'></div></section></main>`);
      }
      if (url.pathname === "/history" && !body.includes('data-island="History"')) {
        body = body.replace(/<main[^>]*>[\s\S]*<\/main>/, (m) => `${m.slice(0, m.indexOf(">") + 1)}<div class="container"><div data-island="History" data-props='{"pageSize":20}'></div></div></main>`);
        return route.fulfill({ status: 200, headers: { "content-type": "text/html; charset=utf-8" }, body });
      }
      await route.fulfill({ response: res, body });
    },
  );
}


/** A real PNG of random pixels: it does not compress, so its size is about width * height * 3 bytes. */
export function makeNoisePng(width, height) {
  const raw = randomBytes((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) raw[y * (width * 3 + 1)] = 0;
  return encodePng(width, height, raw, 1);
}
