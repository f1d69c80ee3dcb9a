//! Admin pages. `/admin` is the admin sign-in, open to anyone; the others redirect anyone
//! who is not an administrator to `/admin` (checked here on the server, SPEC section 6).
//! The dashboard is server HTML with plain forms, so it works without JavaScript. Each
//! other tab of the studio is a file of `routes/admin/`, as its template is one of
//! `templates/admin/`; their JSON twins are under `routes/api/admin/`.
pub mod blog;
pub mod corrections;
pub mod insight;
pub mod library;
pub mod quotas;
pub mod seo;
pub mod testimonials;
use std::collections::BTreeMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{FromRequestParts, Query, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use serde::Deserialize;

use crate::error::AppResult;
use crate::routes::accounts::error_message;
use crate::services::admin::{self, ENGINES, Integrity, UpdateError, UserList};
use crate::services::analytics_tag;
use crate::services::profiles::AI_MODELS;
use crate::services::settings::registry::Form;
use crate::services::settings::{SETTINGS, SettingsExt};
use crate::services::users::CurrentUser;
use crate::state::AppState;
use crate::views::PageCtx;
use quotas::{Prefill, QuotaPanel};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin", get(login_page))
        .route("/admin/dashboard", get(dashboard))
        .route("/admin/settings", post(save_settings))
        .route("/admin/data-integrity", get(data_integrity))
        .route("/admin/data-integrity/purge", post(purge))
}

/// A signed-in administrator; anyone else is sent to `/admin`.
pub struct AdminPage(pub CurrentUser);

impl<S: Send + Sync> FromRequestParts<S> for AdminPage {
    type Rejection = Redirect;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        match parts.extensions.get::<CurrentUser>() {
            Some(u) if u.is_admin() => Ok(Self(u.clone())),
            _ => Err(Redirect::to("/admin")),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct Flash {
    error: String,
    saved: String,
    purged: Option<u64>,
    /// `saved` after an API quota override was saved.
    quota: String,
    /// Edit links of the quota overrides: fill the person's or the key's form.
    edit_user: Option<String>,
    edit_key: Option<i64>,
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/login.html")]
pub struct AdminLoginPage {
    ctx: PageCtx,
    error: Option<(&'static str, &'static str)>,
}

async fn login_page(ctx: PageCtx, Query(f): Query<Flash>) -> Response {
    if ctx.user.as_ref().is_some_and(CurrentUser::is_admin) {
        return Redirect::to("/admin/dashboard").into_response();
    }
    let ctx = ctx.titled("Admin Login", "Sign in to the administration dashboard.").noindex();
    AdminLoginPage { ctx, error: error_message(&f.error) }.into_response()
}

/// One field of the settings form.
pub struct Field {
    pub key: &'static str,
    pub label: &'static str,
    pub kind: &'static str,
    pub value: String,
}

/// The studio's analytics tag fieldset: the three settings and what they make of the pages.
pub struct TagForm {
    /// (value, label, selected)
    pub providers: Vec<(&'static str, &'static str, bool)>,
    pub id: String,
    pub host: String,
    /// What visitors' pages load now, in words; `None` when no tag is chosen.
    pub status: Option<String>,
}

impl TagForm {
    fn new(provider: &str, id: &str, host: &str) -> Self {
        let chosen = analytics_tag::Provider::parse(provider);
        let providers = [("", "None"), ("ga4", "Google Analytics 4"), ("plausible", "Plausible"), ("matomo", "Matomo")]
            .into_iter()
            .map(|(v, l)| (v, l, analytics_tag::Provider::parse(v) == chosen))
            .collect();
        let status = chosen.map(|p| match analytics_tag::validate_together(provider, id, host) {
            Ok(Some(tag)) => format!(
                "{} is loaded on every page from {} (the Content-Security-Policy allows {}), unless the visitor's browser asks not to be tracked.",
                p.label(),
                tag.script_src(),
                tag.connect_hosts().join(" ")
            ),
            Ok(None) => String::new(),
            Err(m) => format!("Not loaded: {m}."),
        });
        Self { providers, id: id.to_owned(), host: host.to_owned(), status }
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/dashboard.html")]
pub struct DashboardPage {
    ctx: PageCtx,
    tab: &'static str,
    fields: Vec<Field>,
    api_fields: Vec<Field>,
    engines: Vec<(&'static str, bool)>,
    models: Vec<(&'static str, bool)>,
    require_verification: bool,
    tag: TagForm,
    smtp: bool,
    users: UserList,
    quotas: QuotaPanel,
    notice: Option<String>,
    error: Option<String>,
}

/// The dashboard; `overrides` refills the settings form, `fill` the quota override forms.
pub(crate) async fn build_dashboard(
    ctx: PageCtx,
    state: &AppState,
    tab: &'static str,
    notice: Option<String>,
    error: Option<String>,
    overrides: Option<&BTreeMap<String, String>>,
    fill: Prefill,
) -> AppResult<DashboardPage> {
    let settings = state.settings().await?;
    let value = |k: &str| overrides.and_then(|o| o.get(k)).cloned().unwrap_or_else(|| settings.text(k).to_owned());
    // The fields of one fieldset, as the settings' table lists them.
    let fields_of = |form: Form| -> Vec<Field> {
        SETTINGS
            .iter()
            .filter(|s| s.form == form)
            .map(|s| Field { key: s.key, label: s.label, kind: s.field.as_str(), value: value(s.key) })
            .collect()
    };
    let (fields, api_fields) = (fields_of(Form::Site), fields_of(Form::Api));
    let allowed: Vec<String> = value("allowed_engines").split(',').map(|s| s.trim().to_owned()).collect();
    let engines = ENGINES.iter().map(|e| (*e, allowed.iter().any(|a| a == e))).collect();
    let primary = value("ai_primary_model");
    let models = AI_MODELS.iter().map(|m| (*m, *m == primary)).collect();
    let require_verification = matches!(value("require_email_verification").as_str(), "true" | "on" | "1");
    let tag = TagForm::new(
        &value(analytics_tag::PROVIDER_KEY),
        &value(analytics_tag::ID_KEY),
        &value(analytics_tag::HOST_KEY),
    );
    let users = admin::list_users(&state.db, 200).await?;
    let quotas = quotas::panel(state, fill).await?;
    let ctx = ctx.titled("Admin Dashboard", "").noindex();
    Ok(DashboardPage {
        ctx,
        tab,
        fields,
        api_fields,
        engines,
        models,
        require_verification,
        tag,
        smtp: state.mailer.is_smtp(),
        users,
        quotas,
        notice,
        error,
    })
}

async fn dashboard(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(f): Query<Flash>,
) -> AppResult<DashboardPage> {
    let notice = if f.saved == "1" {
        Some("Settings saved.".to_owned())
    } else {
        (f.quota == "saved").then(|| "API quota override saved.".to_owned())
    };
    let fill = Prefill { edit_user: f.edit_user, edit_key: f.edit_key, ..Default::default() };
    build_dashboard(ctx, &state, "settings", notice, None, None, fill).await
}

/// The settings form: every text field, the engine checkboxes, the primary model and the
/// verification switch (an unchecked checkbox sends nothing, so absence means off).
async fn save_settings(
    ctx: PageCtx,
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> AppResult<Response> {
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(&body).into_owned().collect();
    let mut changes: BTreeMap<String, String> = BTreeMap::new();
    // The fieldsets' own fields; the engines, models and flags below have controls of their own.
    for s in SETTINGS.iter().filter(|s| s.form != Form::Own) {
        if let Some((_, v)) = pairs.iter().find(|(k, _)| k == s.key) {
            changes.insert(s.key.to_owned(), v.clone());
        }
    }
    let engines: Vec<&str> = pairs.iter().filter(|(k, _)| k == "allowed_engines").map(|(_, v)| v.as_str()).collect();
    changes.insert("allowed_engines".into(), engines.join(","));
    if let Some((_, m)) = pairs.iter().find(|(k, _)| k == "ai_primary_model") {
        changes.insert("ai_primary_model".into(), m.clone());
    }
    let verify = pairs.iter().any(|(k, _)| k == "require_email_verification");
    changes.insert("require_email_verification".into(), verify.to_string());
    let tag_keys = [analytics_tag::PROVIDER_KEY, analytics_tag::ID_KEY, analytics_tag::HOST_KEY];
    for key in tag_keys {
        if let Some((_, v)) = pairs.iter().find(|(k, _)| k == key) {
            changes.insert(key.to_owned(), v.clone());
        }
    }
    match admin::update_settings(&state.db, &state.settings, &changes).await {
        Ok(()) => {
            tracing::info!(admin = me.id, "settings saved from the dashboard");
            Ok(Redirect::to("/admin/dashboard?saved=1").into_response())
        }
        Err(UpdateError::Invalid(m)) => {
            let page =
                build_dashboard(ctx, &state, "settings", None, Some(m), Some(&changes), Prefill::default()).await?;
            Ok((StatusCode::BAD_REQUEST, page).into_response())
        }
        Err(UpdateError::Db(e)) => Err(e.into()),
    }
}

#[derive(Template, WebTemplate)]
#[template(path = "admin/data_integrity.html")]
pub struct IntegrityPage {
    ctx: PageCtx,
    counts: Integrity,
    purged: Option<u64>,
}

async fn data_integrity(
    ctx: PageCtx,
    _: AdminPage,
    State(state): State<AppState>,
    Query(f): Query<Flash>,
) -> AppResult<IntegrityPage> {
    let counts = admin::integrity(&state.db).await?;
    let ctx = ctx.titled("Data Integrity", "").noindex();
    Ok(IntegrityPage { ctx, counts, purged: f.purged })
}

async fn purge(AdminPage(me): AdminPage, State(state): State<AppState>) -> AppResult<Redirect> {
    let n = admin::purge_expired(&state.db).await?;
    tracing::info!(admin = me.id, removed = n, "expired account rows purged");
    Ok(Redirect::to(&format!("/admin/data-integrity?purged={n}")))
}
