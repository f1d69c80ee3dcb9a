//! Pages whose content is an island: the server renders the frame, the heading and a
//! useful fallback, the island does the rest.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::routing::get;
use serde::Serialize;
use ts_rs::TS;

use crate::views::page_meta::Page;
use crate::views::{Island, PageCtx};

pub fn router() -> Router<AppState> {
    Router::new().route("/test", get(test)).route("/pwa-settings", get(pwa_settings)).route("/history", get(history))
}

use crate::state::AppState;

/// Props of the `TestPage` island: none.
#[derive(Serialize, TS)]
pub struct TestPageProps {}

#[derive(Template, WebTemplate)]
#[template(path = "pages/test.html")]
pub struct TestPage {
    pub ctx: PageCtx,
    pub island: Island,
}

/// `/test`: production checks of API connectivity and interactivity.
async fn test(ctx: PageCtx) -> TestPage {
    let ctx = ctx
        .titled(
            "Production Test",
            "Check that the API answers and the interactive parts of the site work in your browser.",
        )
        .noindex();
    TestPage { ctx, island: Island::new("TestPage", &TestPageProps {}) }
}

#[derive(Template, WebTemplate)]
#[template(path = "pages/pwa_settings.html")]
pub struct PwaSettingsPage {
    pub ctx: PageCtx,
    pub island: Island,
}

/// Props of the `PwaSettings` island.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PwaSettingsProps {
    signed_in: bool,
    site_name: String,
}

/// `/pwa-settings`: install the app and manage notifications.
async fn pwa_settings(ctx: PageCtx) -> PwaSettingsPage {
    let props = PwaSettingsProps { signed_in: ctx.user.is_some(), site_name: ctx.site.name.clone() };
    let ctx = ctx.with_page_meta(Page::PwaSettings);
    PwaSettingsPage { ctx, island: Island::new("PwaSettings", &props) }
}

#[derive(Template, WebTemplate)]
#[template(path = "pages/history.html")]
pub struct HistoryPage {
    pub ctx: PageCtx,
    pub island: Island,
}

/// Props of the `History` island.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct HistoryProps {
    page_size: u8,
}

/// `/history`: signed out, an invitation to sign in; signed in, the history island.
async fn history(ctx: PageCtx) -> HistoryPage {
    let ctx = ctx.with_page_meta(Page::History);
    HistoryPage { ctx, island: Island::new("History", &HistoryProps { page_size: 20 }) }
}
