//! `/docs/api`: the API's introduction, copy-paste examples, its error codes, and the
//! interactive reference (RapiDoc over `/api/openapi.json`, a script only this page loads).
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::State;
use axum::routing::get;

use super::human_list;
use crate::error::{AppResult, ErrorCode};
use crate::services::settings::SettingsExt;
use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new().route("/docs/api", get(api_docs))
}

#[derive(Template, WebTemplate)]
#[template(path = "pages/api_docs.html")]
pub struct ApiDocsPage {
    pub ctx: PageCtx,
    /// Where examples send their requests: this site's public URL.
    pub origin: String,
    pub max_file_size_mb: u64,
    pub file_types: String,
    /// Every error code with its meaning, from the one list the server answers with.
    pub codes: Vec<(&'static str, &'static str)>,
    /// The viewer's bundle (`apiref.js` in the asset manifest); absent before `npm run build`.
    pub viewer_src: Option<String>,
}

async fn api_docs(State(state): State<AppState>, ctx: PageCtx) -> AppResult<ApiDocsPage> {
    let settings = state.settings().await?;
    let name = ctx.site.name.clone();
    let ctx = ctx.titled(
        "API reference",
        format!("Identify films and shows from your own programs with the {name} API: keys, examples, errors and the full reference."),
    );
    Ok(ApiDocsPage {
        ctx,
        origin: state.config.origin(),
        max_file_size_mb: settings.max_file_size_mb(),
        file_types: human_list(&settings.allowed_file_types()),
        codes: ErrorCode::ALL.iter().map(|c| (c.as_str(), c.describe())).collect(),
        viewer_src: state.assets.url("apiref.js").map(str::to_owned),
    })
}
