//! `/sitemap.xml`, `/robots.txt` and `/blog/feed.xml` (RSS 2.0), built from the public URL.
//!
//! All three read the posts visible at the moment of the request, like the blog list, so a
//! scheduled post enters them together when its time comes.
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use chrono::{DateTime, Utc};

use crate::error::AppResult;
use crate::routes::api::blog::default_author;
use crate::services::settings::SettingsExt;
use crate::services::{blog, seo};
use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/sitemap.xml", get(sitemap))
        .route("/robots.txt", get(robots))
        .route("/blog/feed.xml", get(feed))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&apos;")
}

/// The body, never kept by caches without asking again: a post that is unpublished or
/// deleted must leave the feed and the sitemap as fast as a scheduled one enters them.
fn fresh(content_type: &'static str, body: String) -> Response {
    ([(header::CONTENT_TYPE, content_type), (header::CACHE_CONTROL, "no-cache")], body).into_response()
}

async fn sitemap(State(state): State<AppState>) -> AppResult<Response> {
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
    let newest = posts.iter().map(|(_, at)| *at).max();
    url("/", None, "weekly", "1.0");
    url("/about", None, "monthly", "0.7");
    url("/blog", newest.map(|d| d.format("%Y-%m-%d").to_string()), "weekly", "0.8");
    for (slug, updated) in &posts {
        let lastmod = updated.format("%Y-%m-%d").to_string();
        url(&format!("/blog/{slug}"), Some(lastmod), "monthly", "0.6");
    }
    url(terms, None, "yearly", "0.3");
    xml.push_str("</urlset>\n");
    Ok(fresh("application/xml; charset=utf-8", xml))
}

async fn robots(State(state): State<AppState>) -> AppResult<impl IntoResponse> {
    let settings = state.settings().await?;
    let body = seo::robots_txt(&settings, &state.config.origin());
    Ok(([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body))
}

/// Posts in the feed, newest first.
const FEED_SIZE: u64 = 20;

/// RSS 2.0 of the newest posts: title, link, summary, the full sanitised article
/// (`content:encoded`), author, category and publication date.
async fn feed(State(state): State<AppState>) -> AppResult<Response> {
    let origin = state.config.origin();
    let settings = state.settings().await?;
    let site = settings.text("site_name").trim().to_owned();
    let site = if site.is_empty() { "Reelfind".to_owned() } else { site };
    let author = default_author(&site);
    let posts = blog::feed_entries(&state.db, FEED_SIZE).await?;
    let newest = posts.iter().map(blog::last_modified).max();
    let rfc2822 = |d: DateTime<Utc>| d.format("%a, %d %b %Y %H:%M:%S +0000").to_string();
    let mut xml = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<rss version=\"2.0\" xmlns:atom=\"http://www.w3.org/2005/Atom\" xmlns:content=\"http://purl.org/rss/1.0/modules/content/\" xmlns:dc=\"http://purl.org/dc/elements/1.1/\">\n<channel>\n",
    );
    xml.push_str(&format!("  <title>{} Blog</title>\n", xml_escape(&site)));
    xml.push_str(&format!("  <link>{}</link>\n", xml_escape(&format!("{origin}/blog"))));
    xml.push_str(&format!(
        "  <atom:link href=\"{}\" rel=\"self\" type=\"application/rss+xml\"/>\n",
        xml_escape(&format!("{origin}/blog/feed.xml"))
    ));
    xml.push_str(&format!("  <description>{}</description>\n", xml_escape(settings.text("site_description"))));
    xml.push_str("  <language>en</language>\n");
    if let Some(n) = newest {
        xml.push_str(&format!("  <lastBuildDate>{}</lastBuildDate>\n", rfc2822(n)));
    }
    for p in &posts {
        let link = format!("{origin}/blog/{}", p.slug);
        let by = p.author_name.clone().filter(|a| !a.trim().is_empty()).unwrap_or_else(|| author.clone());
        xml.push_str("  <item>\n");
        xml.push_str(&format!("    <title>{}</title>\n", xml_escape(&p.title)));
        xml.push_str(&format!("    <link>{}</link>\n", xml_escape(&link)));
        xml.push_str(&format!("    <guid isPermaLink=\"true\">{}</guid>\n", xml_escape(&link)));
        xml.push_str(&format!("    <pubDate>{}</pubDate>\n", rfc2822(p.published_at.unwrap_or(p.created_at))));
        xml.push_str(&format!("    <dc:creator>{}</dc:creator>\n", xml_escape(&by)));
        if !p.category.trim().is_empty() {
            xml.push_str(&format!("    <category>{}</category>\n", xml_escape(&p.category)));
        }
        xml.push_str(&format!("    <description>{}</description>\n", xml_escape(&blog::excerpt(p))));
        xml.push_str(&format!(
            "    <content:encoded>{}</content:encoded>\n",
            xml_escape(&blog::render_markdown(&p.content))
        ));
        xml.push_str("  </item>\n");
    }
    xml.push_str("</channel>\n</rss>\n");
    Ok(fresh("application/rss+xml; charset=utf-8", xml))
}
