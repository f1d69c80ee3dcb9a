//! Every route of the site, starting point for anyone looking for a handler.
//!
//! Pages (server-rendered HTML) live in one module per resource; JSON lives under `api/`.
pub mod accounts;
pub mod admin;
pub mod admin_blog;
pub mod admin_corrections;
pub mod admin_insight;
pub mod admin_library;
pub mod admin_quotas;
pub mod admin_seo;
pub mod admin_testimonials;
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
        .merge(admin_blog::router())
        .merge(admin_library::router())
        .merge(admin_quotas::router())
        .merge(admin_seo::router())
        .merge(admin_testimonials::router())
        .merge(admin_corrections::router())
        .merge(admin_insight::router())
        .merge(api::openapi::split().0)
        .merge(assets::service(&state.config.assets_dir))
        .fallback(errors::not_found)
}
