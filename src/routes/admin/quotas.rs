//! The dashboard's API quota overrides (under "Developer API"): one plain form for a person,
//! one for a key, and the overrides in force, each with Edit (fills the form) and Remove.
//! Server HTML like the rest of the dashboard, so it works without JavaScript; the same
//! writes as `PUT /api/admin/users/{id}/api-quota` and `PUT /api/admin/api-keys/{id}/quota`.
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::post;
use axum::{Form, Router};
use serde::Deserialize;

use crate::error::AppResult;
use crate::routes::admin::{AdminPage, build_dashboard};
use crate::services::api_quota::{MAX_CONCURRENT, MAX_PER_DAY, MAX_PER_MINUTE, Overrides};
use crate::services::quota_overrides::{self as overrides, KeyQuota, PersonQuota};
use crate::services::users;
use crate::state::AppState;
use crate::views::PageCtx;

pub fn router() -> Router<AppState> {
    Router::new().route("/admin/api-quotas/person", post(save_person)).route("/admin/api-quotas/key", post(save_key))
}

/// The three values as typed in a form (empty: not overridden).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Values {
    pub per_minute: String,
    pub per_day: String,
    pub concurrent: String,
}

impl Values {
    fn of(o: &Overrides) -> Self {
        let s = |v: Option<u32>| v.map(|n| n.to_string()).unwrap_or_default();
        Self { per_minute: s(o.per_minute), per_day: s(o.per_day), concurrent: s(o.concurrent) }
    }

    /// The override these values ask for, or the sentence saying which box is wrong.
    fn parse(&self) -> Result<Overrides, String> {
        let one = |raw: &str, what: &str, max: u32| -> Result<Option<u32>, String> {
            let raw = raw.trim();
            if raw.is_empty() {
                return Ok(None);
            }
            match raw.parse::<u32>() {
                Ok(n) if (1..=max).contains(&n) => Ok(Some(n)),
                _ => Err(format!("{what} must be a whole number between 1 and {max}, or empty for the default")),
            }
        };
        Ok(Overrides {
            per_minute: one(&self.per_minute, "Requests per minute", MAX_PER_MINUTE)?,
            per_day: one(&self.per_day, "Requests per day", MAX_PER_DAY)?,
            concurrent: one(&self.concurrent, "Requests at once", MAX_CONCURRENT)?,
        })
    }
}

/// What the override section of the dashboard shows.
pub struct QuotaPanel {
    pub default_minute: u32,
    pub default_day: u32,
    pub default_concurrent: u32,
    pub people: Vec<PersonQuota>,
    /// Every live key listed (for the key form's choice), most recently used first.
    pub keys: Vec<KeyQuota>,
    /// The person form's contents.
    pub person_name: String,
    pub person_values: Values,
    /// The key form's contents.
    pub key_choice: Option<i64>,
    pub key_values: Values,
}

impl QuotaPanel {
    /// Keys with a value of their own.
    pub fn overridden_keys(&self) -> impl Iterator<Item = &KeyQuota> {
        self.keys.iter().filter(|k| k.overridden())
    }

    /// Whether the key form has key `id` chosen.
    pub fn is_chosen(&self, id: &i64) -> bool {
        self.key_choice == Some(*id)
    }

    /// A value for a table cell.
    pub fn shown(&self, v: &Option<u32>) -> String {
        v.map(|n| n.to_string()).unwrap_or_else(|| "default".to_owned())
    }
}

/// What to put in the two forms: `edit_user` / `edit_key` (the Edit links) fill them with
/// the override in force; `sent` keeps what the admin typed when it was refused.
#[derive(Default)]
pub struct Prefill {
    pub edit_user: Option<String>,
    pub edit_key: Option<i64>,
    pub person: Option<PersonForm>,
    pub key: Option<KeyForm>,
}

pub async fn panel(state: &AppState, fill: Prefill) -> AppResult<QuotaPanel> {
    let settings = state.settings().await?;
    let ov = overrides::overview(&state.db, &settings).await?;
    let d = ov.defaults;
    let (person_name, person_values) = match (fill.person, fill.edit_user) {
        (Some(f), _) => (f.username, f.values),
        (None, Some(name)) => {
            let found = ov.people.iter().find(|p| p.username.eq_ignore_ascii_case(&name));
            (found.map(|p| p.username.clone()).unwrap_or(name), found.map(|p| Values::of(&p.quota)).unwrap_or_default())
        }
        (None, None) => (String::new(), Values::default()),
    };
    let (key_choice, key_values) = match (fill.key, fill.edit_key) {
        (Some(f), _) => (f.key_id.trim().parse().ok(), f.values),
        (None, Some(id)) => {
            (Some(id), ov.keys.iter().find(|k| k.id == id).map(|k| Values::of(&k.quota)).unwrap_or_default())
        }
        (None, None) => (None, Values::default()),
    };
    Ok(QuotaPanel {
        default_minute: d.per_minute.unwrap_or_default(),
        default_day: d.per_day.unwrap_or_default(),
        default_concurrent: d.concurrent.unwrap_or_default(),
        people: ov.people,
        keys: ov.keys,
        person_name,
        person_values,
        key_choice,
        key_values,
    })
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PersonForm {
    pub username: String,
    #[serde(flatten)]
    pub values: Values,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct KeyForm {
    pub key_id: String,
    #[serde(flatten)]
    pub values: Values,
}

const BACK: &str = "/admin/dashboard?quota=saved#api-quotas";

/// The dashboard again with `error` and the form as it was sent (400).
async fn refused(ctx: PageCtx, state: &AppState, error: String, fill: Prefill) -> AppResult<Response> {
    let page = build_dashboard(ctx, state, "settings", None, Some(error), None, fill).await?;
    Ok((StatusCode::BAD_REQUEST, page).into_response())
}

/// `POST /admin/api-quotas/person`: sets (or, all empty, removes) a person's override.
async fn save_person(
    ctx: PageCtx,
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    Form(f): Form<PersonForm>,
) -> AppResult<Response> {
    let o = match f.values.parse() {
        Ok(o) => o,
        Err(m) => return refused(ctx, &state, m, Prefill { person: Some(f), ..Default::default() }).await,
    };
    let Some(user) = users::find_by_username(&state.db, &f.username).await? else {
        let m = if f.username.trim().is_empty() {
            "Enter the username of the person whose quota you want to change".to_owned()
        } else {
            format!("There is no user named “{}”", f.username.trim())
        };
        return refused(ctx, &state, m, Prefill { person: Some(f), ..Default::default() }).await;
    };
    if !overrides::set_person(&state.db, user.id, &o).await? {
        return refused(ctx, &state, "That user no longer exists".into(), Prefill::default()).await;
    }
    tracing::info!(admin = me.id, user_id = user.id, ?o, "API quota of a person changed from the dashboard");
    Ok(Redirect::to(BACK).into_response())
}

/// `POST /admin/api-quotas/key`: sets (or, all empty, removes) a key's own values.
async fn save_key(
    ctx: PageCtx,
    AdminPage(me): AdminPage,
    State(state): State<AppState>,
    Form(f): Form<KeyForm>,
) -> AppResult<Response> {
    let o = match f.values.parse() {
        Ok(o) => o,
        Err(m) => return refused(ctx, &state, m, Prefill { key: Some(f), ..Default::default() }).await,
    };
    let id = f.key_id.trim().parse::<i64>().ok();
    let found = match id {
        Some(id) => overrides::set_key(&state.db, id, &o).await?,
        None => false,
    };
    if !found {
        let m = "Choose one of the live keys: that key does not exist or was revoked".to_owned();
        return refused(ctx, &state, m, Prefill { key: Some(f), ..Default::default() }).await;
    }
    tracing::info!(admin = me.id, key_id = ?id, ?o, "API quota of a key changed from the dashboard");
    Ok(Redirect::to(BACK).into_response())
}
