//! Server-rendered public pages: one module per page family.
mod about;
mod blog;
mod docs;
pub(crate) mod home;
mod seo;
pub(crate) mod shells;
mod terms;

use axum::Router;

use crate::state::AppState;

pub use home::{Faq, home_faq};

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(home::router())
        .merge(about::router())
        .merge(blog::router())
        .merge(docs::router())
        .merge(terms::router())
        .merge(shells::router())
        .merge(seo::router())
}

/// One question and answer of an FAQ; the same list feeds the page and its FAQPage JSON-LD.
pub fn faq_json_ld(entries: &[Faq]) -> serde_json::Value {
    serde_json::json!({
        "@context": "https://schema.org",
        "@type": "FAQPage",
        "mainEntity": entries.iter().map(|f| serde_json::json!({
            "@type": "Question",
            "name": f.question,
            "acceptedAnswer": { "@type": "Answer", "text": f.answer },
        })).collect::<Vec<_>>(),
    })
}

/// Display names of the engines, from settings (`{engine}_name`, `{engine}_desc`).
#[derive(Debug, Clone)]
pub struct EngineInfo {
    pub key: &'static str,
    pub name: String,
    pub description: String,
}

pub fn engines(settings: &crate::services::settings::SettingsMap) -> Vec<EngineInfo> {
    use crate::services::settings::SettingsExt;
    crate::identify::engine::Mode::ENGINE_NAMES
        .iter()
        .map(|k| EngineInfo {
            key: k,
            name: non_empty(settings.text(&format!("{k}_name")), k),
            description: settings.text(&format!("{k}_desc")).trim().to_owned(),
        })
        .collect()
}

fn non_empty(v: &str, fallback: &str) -> String {
    let v = v.trim();
    if v.is_empty() { fallback.to_owned() } else { v.to_owned() }
}

/// "JPG, JPEG, PNG, WEBP, MP4 and MOV" for prose.
pub fn human_list(items: &[String]) -> String {
    let items: Vec<String> = items.iter().map(|s| s.to_uppercase()).collect();
    match items.len() {
        0 => String::new(),
        1 => items[0].clone(),
        n => format!("{} and {}", items[..n - 1].join(", "), items[n - 1]),
    }
}
