//! Account pages: `/auth`, `/profile`, `/verify-email/{token}`, `/email-verification`,
//! `/email-verification-pending`. Each is server HTML that works without JavaScript, with
//! an island mounted over it (AuthScreen, Profile, VerifyEmail, PendingVerification).
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use sea_orm::EntityTrait;
use serde::{Deserialize, Serialize};

use crate::entities::user;
use crate::error::AppResult;
use crate::routes::api::profiles::{ProfileResponse, profile_response};
use crate::services::profiles::AI_MODELS;
use crate::services::verification;
use crate::state::AppState;
use crate::views::{Island, PageCtx};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth", get(auth_page))
        .route("/profile", get(profile_page))
        .route("/verify-email", get(|| async { Redirect::to("/auth") }))
        .route("/verify-email/{token}", get(verify_page))
        .route("/email-verification", get(verification_page))
        .route("/email-verification-pending", get(pending_page))
}

/// The sentence shown for an `?error=` code (codes, not text, travel in URLs).
pub fn error_message(code: &str) -> Option<(&'static str, &'static str)> {
    Some(match code {
        "google_unavailable" => {
            ("Authentication Error", "Google authentication is currently unavailable. Please try again later.")
        }
        "google_failed" => ("Authentication Error", "Google sign-in did not complete. Please try again."),
        "missing" => ("Missing Information", "Please fill in all required fields"),
        "invalid" => ("Login failed", "Invalid username or password"),
        "taken" => ("Registration failed", "That username or email is already registered"),
        "weak" => ("Weak Password", "Password must be at least 6 characters long"),
        "mismatch" => ("Password Mismatch", "Passwords do not match"),
        "throttled" => ("Login failed", "Too many login attempts. Please wait a few minutes and try again."),
        "failed" => ("Something went wrong", "Please try again."),
        _ => return None,
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct AuthQuery {
    error: String,
    tab: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AuthProps {
    google_enabled: bool,
    error: Option<String>,
    initial_tab: &'static str,
    site_name: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/auth.html")]
pub struct AuthPage {
    ctx: PageCtx,
    island: Island,
    error: Option<(&'static str, &'static str)>,
    signup: bool,
}

async fn auth_page(ctx: PageCtx, State(state): State<AppState>, Query(q): Query<AuthQuery>) -> Response {
    if ctx.user.is_some() {
        return Redirect::to("/").into_response();
    }
    let signup = q.tab == "signup";
    let error = error_message(&q.error);
    let props = AuthProps {
        google_enabled: state.config.accounts.google_enabled(),
        error: error.map(|_| q.error.clone()),
        initial_tab: if signup { "signup" } else { "signin" },
        site_name: ctx.site.name.clone(),
    };
    let ctx = ctx.titled("Sign In or Sign Up", "Sign in to Reelfind or create a free account.").noindex();
    AuthPage { ctx, island: Island::new("AuthScreen", &props), error, signup }.into_response()
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProfileProps<'a> {
    user: ProfileUser<'a>,
    initial: &'a ProfileResponse,
    default_ai_model: &'a str,
    ai_models: &'a [&'a str],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProfileUser<'a> {
    username: &'a str,
    email: &'a str,
    created_at: chrono::DateTime<chrono::Utc>,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/profile.html")]
pub struct ProfilePage {
    ctx: PageCtx,
    data: Option<(user::Model, ProfileResponse, Island)>,
}

impl ProfilePage {
    fn initial(&self) -> String {
        self.data
            .as_ref()
            .map(|(u, _, _)| u.username.chars().next().unwrap_or('?').to_uppercase().collect())
            .unwrap_or_default()
    }
}

async fn profile_page(ctx: PageCtx, State(state): State<AppState>) -> AppResult<ProfilePage> {
    let ctx = ctx.titled("Profile", "Your Reelfind profile and settings.").noindex();
    let Some(me) = ctx.user.clone() else { return Ok(ProfilePage { ctx, data: None }) };
    let Some(u) = user::Entity::find_by_id(me.id).one(&state.db).await? else {
        return Ok(ProfilePage { ctx, data: None });
    };
    let profile = profile_response(&state, &u).await?;
    let model = u.default_ai_model.clone().unwrap_or_else(|| "auto".into());
    let island = Island::new(
        "Profile",
        &ProfileProps {
            user: ProfileUser { username: &u.username, email: &u.email, created_at: u.created_at },
            initial: &profile,
            default_ai_model: &model,
            ai_models: AI_MODELS,
        },
    );
    Ok(ProfilePage { ctx, data: Some((u, profile, island)) })
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/verify_email.html")]
pub struct VerifyPage {
    ctx: PageCtx,
    island: Island,
    /// Set when the server already verified (the no-JavaScript path): Ok(message) or Err(error).
    outcome: Option<Result<String, String>>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct VerifyQuery {
    token: String,
    confirm: String,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct VerifyProps<'a> {
    token: &'a str,
    contact_email: &'a str,
}

async fn verify_page(
    ctx: PageCtx,
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(q): Query<VerifyQuery>,
) -> AppResult<Response> {
    render_verify(ctx, &state, token, q.confirm == "1").await
}

async fn verification_page(
    ctx: PageCtx,
    State(state): State<AppState>,
    Query(q): Query<VerifyQuery>,
) -> AppResult<Response> {
    if q.token.trim().is_empty() {
        return Ok(Redirect::to("/auth").into_response());
    }
    render_verify(ctx, &state, q.token, q.confirm == "1").await
}

async fn render_verify(ctx: PageCtx, state: &AppState, token: String, confirm: bool) -> AppResult<Response> {
    let outcome = if confirm {
        Some(match verification::verify(&state.db, &token).await {
            Ok(_) => Ok("Your email has been verified. You can now sign in.".to_owned()),
            Err(verification::VerifyError::Db(e)) => return Err(e.into()),
            Err(e) => Err(e.to_string()),
        })
    } else {
        None
    };
    let ctx = ctx.titled("Verify Email", "Confirm your email address.").noindex();
    let island = Island::new("VerifyEmail", &VerifyProps { token: &token, contact_email: &ctx.site.contact_email });
    Ok(VerifyPage { ctx, island, outcome }.into_response())
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct PendingQuery {
    email: String,
    sent: String,
    error: String,
}

#[derive(Serialize)]
struct PendingProps<'a> {
    email: &'a str,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/pending.html")]
pub struct PendingPage {
    ctx: PageCtx,
    island: Island,
    email: String,
    notice: Option<&'static str>,
}

async fn pending_page(ctx: PageCtx, Query(q): Query<PendingQuery>) -> Response {
    let email = q.email.trim().to_owned();
    if email.is_empty() {
        return Redirect::to("/auth").into_response();
    }
    let notice = match (q.sent.as_str(), q.error.as_str()) {
        ("1", _) => Some("Email Sent: check your inbox for the new link."),
        (_, "cooldown") => Some("Please wait a minute before requesting another email."),
        (_, "") => None,
        _ => Some("Resend Failed: Failed to resend verification email."),
    };
    let ctx = ctx.titled("Check Your Email", "Confirm your email address to finish signing up.").noindex();
    let island = Island::new("PendingVerification", &PendingProps { email: &email });
    PendingPage { ctx, island, email, notice }.into_response()
}
