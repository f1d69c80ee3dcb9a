//! `/shared/{id}`: a shared identification as a server-rendered page whose Open Graph and
//! Twitter card tags (poster, title, year, description) make the link unfurl in chat apps,
//! with a way into the app (`/?id={id}`). It shows the public shape (`identify::public`),
//! never the stored record; an unknown or unshared id answers 404 with the SPEC's text
//! (the owner still sees an unshared result).
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::error::AppResult;
use crate::identify::public::PublicResult;
use crate::identify::store;
use crate::routes::api::identify::GONE;
use crate::routes::errors::ErrorPage;
use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new().route("/shared/{id}", get(show))
}

#[derive(Template, WebTemplate)]
#[template(path = "shared/show.html")]
pub struct SharedPage {
    pub ctx: PageCtx,
    pub r: PublicResult,
    pub app_link: String,
    /// Rating out of 5, e.g. "4.1".
    pub stars: Option<String>,
    pub match_percent: u32,
    pub heading: String,
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_owned();
    }
    let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
    out.push('…');
    out
}

async fn show(State(state): State<AppState>, ctx: PageCtx, Path(id): Path<String>) -> AppResult<Response> {
    let stored = store::find(&state.db, &id).await?;
    let viewer = ctx.user.as_ref().map(|u| u.id);
    let Some(stored) = stored.filter(|s| s.shared || s.is_owner(viewer)) else {
        let ctx = ctx.titled("Link no longer available", GONE).noindex();
        let page =
            ErrorPage { ctx, status: 404, heading: "Link no longer available".into(), message: format!("{GONE}.") };
        return Ok((StatusCode::NOT_FOUND, page).into_response());
    };
    let r = PublicResult::from(stored.result);
    let heading = match &r.year {
        Some(y) => format!("{} ({y})", r.title),
        None => r.title.clone(),
    };
    let description = r
        .description
        .as_deref()
        .map(|d| clip(d, 200))
        .unwrap_or_else(|| format!("Identified with {}: {heading}.", ctx.site.name));
    let mut ctx = ctx.titled(heading.clone(), description);
    ctx.meta.og_type = if r.media_type == "tv" { "video.tv_show" } else { "video.movie" };
    ctx.meta.og_image = r.poster_url.clone();
    // The share page is a thin copy of a result: keep it out of search indexes.
    ctx = ctx.noindex();
    let schema_type = if r.media_type == "tv" { "TVSeries" } else { "Movie" };
    let ctx = ctx.with_json_ld(&json!({
        "@context": "https://schema.org",
        "@type": schema_type,
        "name": r.title,
        "image": r.poster_url,
        "description": r.description,
        "dateCreated": r.year,
        "director": r.director,
    }));
    Ok(SharedPage {
        app_link: format!("/?id={}", r.identification_id),
        stars: r.rating.map(|x| format!("{:.1}", x / 2.0)),
        match_percent: (r.confidence_score * 100.0).round() as u32,
        heading,
        ctx,
        r,
    }
    .into_response())
}
