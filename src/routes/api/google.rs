//! `GET /api/auth/google` and its callback. Every outcome is a redirect: to Google, to `/`
//! when signed in, or back to `/auth?error=...` where the auth screen shows a toast —
//! never an error page.
use axum::extract::{Query, State};
use axum::http::{HeaderMap, header};
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::middleware::auth;
use crate::services::{google, sessions};
use crate::state::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(start)).routes(routes!(callback))
}

const UNAVAILABLE: &str = "/auth?error=google_unavailable";
const FAILED: &str = "/auth?error=google_failed";

/// Starts Google sign-in (a browser navigation, not for scripts).
#[utoipa::path(get, path = "/auth/google", tag = "accounts",
    responses((status = 303, description = "To Google, or back to `/auth?error=google_unavailable`",
        headers(("location" = String, description = "Where to go")))))]
async fn start(State(state): State<AppState>) -> Response {
    if !state.config.accounts.google_enabled() {
        return Redirect::to(UNAVAILABLE).into_response();
    }
    match google::start(&state.db, &state.config).await {
        Ok((url, oauth_state)) => {
            let mut res = Redirect::to(&url).into_response();
            let max_age = google::STATE_TTL.num_seconds();
            let cookie = auth::build_cookie(&state.config, google::STATE_COOKIE, &oauth_state, max_age);
            res.headers_mut().append(header::SET_COOKIE, cookie);
            res
        }
        Err(e) => {
            tracing::error!(error = format!("{e:#}"), "could not start Google sign-in");
            Redirect::to(UNAVAILABLE).into_response()
        }
    }
}

#[derive(Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
struct CallbackQuery {
    code: String,
    state: String,
    error: Option<String>,
}

/// Where Google sends the browser back; signs in and redirects.
#[utoipa::path(get, path = "/auth/google/callback", tag = "accounts", params(CallbackQuery),
    responses((status = 303, description = "To `/` when signed in, else to `/auth?error=google_failed`",
        headers(("location" = String, description = "Where to go")))))]
async fn callback(State(state): State<AppState>, headers: HeaderMap, Query(q): Query<CallbackQuery>) -> Response {
    let mut res = finish(&state, &headers, q).await;
    // The pending sign-in is over whatever happened.
    res.headers_mut().append(header::SET_COOKIE, auth::build_cookie(&state.config, google::STATE_COOKIE, "", 0));
    res
}

async fn finish(state: &AppState, headers: &HeaderMap, q: CallbackQuery) -> Response {
    if !state.config.accounts.google_enabled() {
        return Redirect::to(UNAVAILABLE).into_response();
    }
    if let Some(err) = q.error {
        tracing::info!(error = err, "Google sign-in was not completed");
        return Redirect::to(FAILED).into_response();
    }
    let cookie_state = auth::cookie_value(headers, google::STATE_COOKIE);
    let user = match google::finish(&state.db, &state.config, cookie_state.as_deref(), &q.state, &q.code).await {
        Ok(u) => u,
        Err(e) => {
            tracing::warn!(error = format!("{e:#}"), "Google sign-in failed");
            return Redirect::to(FAILED).into_response();
        }
    };
    if let Some(old) = auth::session_token(headers)
        && let Err(e) = sessions::delete(&state.db, &old).await
    {
        tracing::error!(error = %e, "could not end the previous session");
    }
    let ua = headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok());
    match sessions::create(&state.db, user.id, ua).await {
        Ok(token) => {
            tracing::info!(user_id = user.id, "signed in with Google");
            // An account made by this sign-in (not an earlier one signing in again).
            if chrono::Utc::now() - user.created_at < chrono::Duration::minutes(2) {
                let was_guest = auth::guest_id(state, headers).is_some();
                crate::services::analytics::record_sign_up(&state.db, user.id, "google", was_guest).await;
            }
            let mut res = Redirect::to("/").into_response();
            res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "could not create a session");
            Redirect::to(FAILED).into_response()
        }
    }
}
