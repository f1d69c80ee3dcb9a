//! `/sitemap.xml` and `/robots.txt`, built from the public URL.
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;

use crate::error::AppResult;
use crate::services::blog;
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new().route("/sitemap.xml", get(sitemap)).route("/robots.txt", get(robots))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

async fn sitemap(State(state): State<AppState>) -> AppResult<impl IntoResponse> {
    let origin = state.config.origin();
    let settings = state.settings().await?;
    let terms =
        settings.get("terms_url").map(|s| s.trim()).filter(|s| s.starts_with('/')).unwrap_or("/terms-of-service");
    let posts = blog::sitemap_entries(&state.db).await?;
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\n",
    );
    let mut url = |path: &str, lastmod: Option<String>, freq: &str, priority: &str| {
        xml.push_str("  <url><loc>");
        xml.push_str(&xml_escape(&format!("{origin}{path}")));
        xml.push_str("</loc>");
        if let Some(l) = lastmod {
            xml.push_str(&format!("<lastmod>{l}</lastmod>"));
        }
        xml.push_str(&format!("<changefreq>{freq}</changefreq><priority>{priority}</priority></url>\n"));
    };
    let newest = posts.iter().map(|(_, at)| *at).max().map(|d| d.format("%Y-%m-%d").to_string());
    url("/", None, "weekly", "1.0");
    url("/about", None, "monthly", "0.7");
    url("/blog", newest, "weekly", "0.8");
    for (slug, updated) in &posts {
        url(&format!("/blog/{slug}"), Some(updated.format("%Y-%m-%d").to_string()), "monthly", "0.6");
    }
    url(terms, None, "yearly", "0.3");
    xml.push_str("</urlset>\n");
    Ok(([(header::CONTENT_TYPE, "application/xml; charset=utf-8")], xml))
}

async fn robots(State(state): State<AppState>) -> impl IntoResponse {
    let body = format!(
        "User-agent: *\nAllow: /\nDisallow: /api/\nDisallow: /admin\nDisallow: /profile\nDisallow: /history\n\nSitemap: {}/sitemap.xml\n",
        state.config.origin()
    );
    ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body)
}
