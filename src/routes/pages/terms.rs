//! `/terms-of-service`. The footer links to the `terms_url` setting, which defaults here.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::State;
use axum::routing::get;

use super::human_list;
use crate::error::AppResult;
use crate::services::analytics_tag::AnalyticsTag;
use crate::services::settings::SettingsExt;
use crate::state::AppState;
use crate::views::PageCtx;
use crate::views::page_meta::Page;

pub fn router() -> Router<AppState> {
    Router::new().route("/terms-of-service", get(terms))
}

#[derive(Template, WebTemplate)]
#[template(path = "pages/terms.html")]
pub struct TermsPage {
    pub ctx: PageCtx,
    pub max_file_size_mb: u64,
    pub file_types: String,
    /// The third-party analytics tag in use, by name (the privacy section says so).
    pub analytics_provider: Option<&'static str>,
}

async fn terms(State(state): State<AppState>, ctx: PageCtx) -> AppResult<TermsPage> {
    let settings = state.settings().await?;
    let ctx = ctx.with_page_meta(Page::Terms);
    Ok(TermsPage {
        ctx,
        max_file_size_mb: settings.max_file_size_mb(),
        file_types: human_list(&settings.allowed_file_types()),
        analytics_provider: AnalyticsTag::from_settings(&settings).map(|t| t.provider.label()),
    })
}
