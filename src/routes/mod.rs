//! Every route of the site, starting point for anyone looking for a handler.
//!
//! Pages (server-rendered HTML) live in one module per resource; JSON lives under `api/`.
pub mod accounts;
pub mod admin;
pub mod api;
pub mod assets;
pub mod cache;
pub mod errors;
pub mod extract;
pub mod health;
pub mod island_types;
pub mod multipart;
pub mod pages;
pub mod public_answers;
pub mod pwa;
pub mod shared;

use axum::Router;

use crate::state::AppState;

/// All page and API routes, without the cross-cutting layers (those are added in `app`, with
/// the probes `/healthz` and `/readyz` of [`health`] outside them).
pub fn router(state: &AppState) -> Router<AppState> {
    Router::new()
        .merge(pages::router())
        .merge(shared::router())
        .merge(accounts::router())
        .merge(admin::router())
        .merge(pwa::router())
        .merge(admin::blog::router())
        .merge(admin::library::router())
        .merge(admin::quotas::router())
        .merge(admin::seo::router())
        .merge(admin::testimonials::router())
        .merge(admin::corrections::router())
        .merge(admin::insight::router())
        .merge(api::openapi::split().0)
        .merge(assets::service(&state.config.assets_dir))
        .fallback(errors::not_found)
}
