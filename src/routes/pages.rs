//! Server-rendered public pages.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::routing::get;
use serde_json::json;

use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(home))
}

#[derive(Template, WebTemplate)]
#[template(path = "home/index.html")]
pub struct HomePage {
    pub ctx: PageCtx,
}

async fn home(ctx: PageCtx) -> HomePage {
    let site = ctx.site.clone();
    let mut ctx = ctx;
    ctx.meta.title =
        if site.tagline.is_empty() { site.name.clone() } else { format!("{} - {}", site.name, site.tagline) };
    let ctx = ctx.with_json_ld(&json!({
        "@context": "https://schema.org",
        "@type": "WebSite",
        "name": site.name,
        "url": site.origin,
        "description": site.description,
    }));
    HomePage { ctx }
}
