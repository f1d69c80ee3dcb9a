//! The installable app: the service worker at `/sw.js` (root scope), the web app manifest
//! and the offline fallback page the worker shows when a page cannot be fetched.
//!
//! The worker is written in TypeScript (`islands/src/sw/sw.ts`) and built by esbuild into
//! `assets/dist` (logical name `sw.js` in the asset manifest). This route serves it from the
//! site root with a first line naming what to precache: the offline page, the manifest, the
//! icons and the hashed shell files listed in `assets/dist/precache.json` (the runtime, its
//! static imports and the stylesheet). The cache version is a hash of that list and the
//! worker's own file, so any new build changes `/sw.js` byte for byte, which is what makes
//! browsers install the new worker. The prelude also lists `admin`, the admin islands' chunks
//! (`assets/dist/admin.json`) that the worker caches when it receives PREFETCH_ADMIN.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::error::{AppError, AppResult};
use crate::state::AppState;
use crate::views::{PageCtx, Site};

/// Browser chrome colour: the page background of the dark and light themes.
pub const THEME_COLOR_DARK: &str = "#0a0c11";
pub const THEME_COLOR_LIGHT: &str = "#fbfaf7";

/// Files every installed app needs, whatever the build.
const SHELL: &[&str] = &[
    "/offline",
    "/manifest.webmanifest",
    "/assets/icons/favicon.svg",
    "/assets/icons/icon-192.png",
    "/assets/icons/icon-512.png",
];

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/sw.js", get(service_worker))
        .route("/manifest.webmanifest", get(web_manifest))
        .route("/offline", get(offline))
}

/// `/sw.js`: the service worker, never cached by the browser's HTTP cache (`no-cache`), so
/// the 5-minute update checks see a new build at once.
async fn service_worker(State(state): State<AppState>) -> AppResult<Response> {
    let Some(url) = state.assets.url("sw.js") else { return Err(AppError::NotFound) };
    let dist = state.config.assets_dir.join("dist");
    let Some(file) = url.strip_prefix("/assets/dist/").map(|rel| dist.join(rel)) else {
        return Err(AppError::NotFound);
    };
    let code = tokio::fs::read_to_string(&file).await.map_err(|_| AppError::NotFound)?;
    let mut precache: Vec<String> = SHELL.iter().map(|s| s.to_string()).collect();
    if let Ok(text) = tokio::fs::read_to_string(dist.join("precache.json")).await
        && let Ok(list) = serde_json::from_str::<Vec<String>>(&text)
    {
        precache.extend(list.into_iter().filter(|u| u.starts_with("/assets/dist/")));
    }
    for name in ["runtime.js", "app.css"] {
        if let Some(u) = state.assets.url(name)
            && !precache.iter().any(|p| p == u)
        {
            precache.push(u.to_owned());
        }
    }
    // What PREFETCH_ADMIN caches: the admin islands' chunks (assets/dist/admin.json).
    let admin: Vec<String> = match tokio::fs::read_to_string(dist.join("admin.json")).await {
        Ok(text) => serde_json::from_str::<Vec<String>>(&text)
            .unwrap_or_default()
            .into_iter()
            .filter(|u| u.starts_with("/assets/dist/"))
            .collect(),
        Err(_) => Vec::new(),
    };
    let mut hash = Sha256::new();
    hash.update(code.as_bytes());
    for a in &admin {
        hash.update(a.as_bytes());
        hash.update(b"\n");
    }
    for p in &precache {
        hash.update(p.as_bytes());
        hash.update(b"\n");
    }
    let version = hex::encode(&hash.finalize()[..6]);
    let prelude = json!({ "version": version, "precache": precache, "admin": admin });
    let body = format!("self.__REELFIND_SW__ = {prelude};\n{code}");
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("text/javascript; charset=utf-8")),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        body,
    )
        .into_response())
}

/// `/manifest.webmanifest`: name and description from the site settings.
async fn web_manifest(State(state): State<AppState>) -> AppResult<Response> {
    let settings = state.settings().await?;
    let site = Site::from_settings(&settings, &state.config.origin());
    let short_name: String = site.name.chars().take(12).collect();
    let manifest = json!({
        "id": "/",
        "name": site.name,
        "short_name": short_name,
        "description": site.description,
        "start_url": "/?source=pwa",
        "scope": "/",
        "display": "standalone",
        "orientation": "any",
        "background_color": THEME_COLOR_DARK,
        "theme_color": THEME_COLOR_DARK,
        "categories": ["entertainment", "utilities"],
        "icons": [
            { "src": "/assets/icons/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any" },
            { "src": "/assets/icons/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any" },
            { "src": "/assets/icons/icon-maskable-512.png", "sizes": "512x512", "type": "image/png", "purpose": "maskable" },
            { "src": "/assets/icons/app-icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any" }
        ],
        "shortcuts": [
            { "name": "Identify a scene", "url": "/", "icons": [{ "src": "/assets/icons/icon-192.png", "sizes": "192x192" }] },
            { "name": "History", "url": "/history", "icons": [{ "src": "/assets/icons/icon-192.png", "sizes": "192x192" }] }
        ]
    });
    Ok((
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/manifest+json")),
            (header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300")),
        ],
        manifest.to_string(),
    )
        .into_response())
}

#[derive(Template, WebTemplate)]
#[template(path = "pages/offline.html")]
pub struct OfflinePage {
    pub ctx: PageCtx,
}

/// `/offline`: what the service worker shows for a page it cannot fetch. Rendered as for a
/// visitor (no name in the header), because the worker keeps one copy for everyone.
async fn offline(ctx: PageCtx) -> OfflinePage {
    let mut ctx =
        ctx.titled("You're offline", "This page needs a connection. Check your network and try again.").noindex();
    ctx.user = None;
    OfflinePage { ctx }
}
