//! Account pages: `/auth`, `/profile`, `/verify-email/{token}`, `/email-verification`,
//! `/email-verification-pending`, `/forgot-password`, `/reset-password/{token}`, `/account`.
//! Each is server HTML that works without JavaScript; most have an island mounted over it
//! (AuthScreen, Profile, VerifyEmail, PendingVerification). The password and account pages
//! are plain forms (the Profile island's Settings tab offers the same with JavaScript).
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::entities::user;
use crate::error::AppResult;
use crate::routes::api::profiles::{ProfileResponse, profile_response};
use crate::routes::api::site::{Availability, availability};
use crate::services::profiles::AI_MODELS;
use crate::services::{password_reset, sessions, verification};
use crate::state::AppState;
use crate::views::page_meta::Page;
use crate::views::{Island, PageCtx};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/auth", get(auth_page))
        .route("/profile", get(profile_page))
        .route("/verify-email", get(|| async { Redirect::to("/auth") }))
        .route("/verify-email/{token}", get(verify_page))
        .route("/email-verification", get(verification_page))
        .route("/email-verification-pending", get(pending_page))
        .route("/forgot-password", get(forgot_page))
        .route("/reset-password", get(|| async { Redirect::to("/forgot-password") }))
        .route("/reset-password/{token}", get(reset_page))
        .route("/account", get(account_page))
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
        "register_throttled" => {
            ("Registration failed", "Too many new accounts from your network. Please try again later.")
        }
        "mail_failed" => ("Registration failed", crate::routes::api::accounts::MAIL_FAILED),
        "failed" => ("Something went wrong", "Please try again."),
        _ => return None,
    })
}

/// The sentence shown for an `?notice=` code on `/auth`.
pub fn notice_message(code: &str) -> Option<(&'static str, &'static str)> {
    Some(match code {
        "password_reset" => ("Password changed", "Sign in with your new password."),
        "password_reset_revoked" => (
            "Password changed",
            "Sign in with your new password. Your API keys were revoked and notifications turned off on your devices; \
             make new keys and turn notifications on again in your account settings when you need them.",
        ),
        "deleted" => ("Account deleted", "Your account and its data have been deleted."),
        _ => return None,
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct AuthQuery {
    error: String,
    tab: String,
    notice: String,
}

/// Props of the `AuthScreen` island.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AuthScreenProps {
    google_enabled: bool,
    error: Option<String>,
    notice: Option<String>,
    initial_tab: AuthTab,
    site_name: String,
}

/// The tab the auth screen opens on.
#[derive(Serialize, TS, Clone, Copy)]
#[serde(rename_all = "lowercase")]
pub enum AuthTab {
    Signin,
    Signup,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/auth.html")]
pub struct AuthPage {
    ctx: PageCtx,
    island: Island,
    error: Option<(&'static str, &'static str)>,
    notice: Option<(&'static str, &'static str)>,
    signup: bool,
}

async fn auth_page(ctx: PageCtx, State(state): State<AppState>, Query(q): Query<AuthQuery>) -> Response {
    if ctx.user.is_some() {
        return Redirect::to("/").into_response();
    }
    let signup = q.tab == "signup";
    let error = error_message(&q.error);
    let notice = notice_message(&q.notice);
    let props = AuthScreenProps {
        google_enabled: state.config.accounts.google_enabled(),
        error: error.map(|_| q.error.clone()),
        notice: notice.map(|_| q.notice.clone()),
        initial_tab: if signup { AuthTab::Signup } else { AuthTab::Signin },
        site_name: ctx.site.name.clone(),
    };
    let ctx = ctx.with_page_meta(Page::Auth);
    AuthPage { ctx, island: Island::new("AuthScreen", &props), error, notice, signup }.into_response()
}

/// Props of the `Profile` island.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProfileProps<'a> {
    user: ProfileUser<'a>,
    initial: &'a ProfileResponse,
    default_ai_model: &'a str,
    ai_models: &'a [&'a str],
    has_password: bool,
}

#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ProfileUser<'a> {
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
    let ctx = ctx.with_page_meta(Page::Profile);
    let Some(me) = ctx.user.clone() else { return Ok(ProfilePage { ctx, data: None }) };
    let Some(u) = me.row(&state.db).await? else {
        return Ok(ProfilePage { ctx, data: None });
    };
    let profile = profile_response(&state, &u).await?;
    let model = u.default_ai_model.clone().unwrap_or_else(|| "auto".into());
    let offered = offered_engines(&availability(&state, &*state.settings().await?).available, &model);
    let island = Island::new(
        "Profile",
        &ProfileProps {
            user: ProfileUser { username: &u.username, email: &u.email, created_at: u.created_at },
            initial: &profile,
            default_ai_model: &model,
            ai_models: &offered,
            has_password: u.password_hash.is_some(),
        },
    );
    Ok(ProfilePage { ctx, data: Some((u, profile, island)) })
}

/// The engines the Settings tab offers as a default: `auto`, then each engine this server
/// can use now, and the person's current choice even when it is not usable any more (so
/// the form shows what is stored; the island marks it).
fn offered_engines(available: &Availability, current: &str) -> Vec<&'static str> {
    AI_MODELS.iter().copied().filter(|&m| m == "auto" || m == current || available.has(m)).collect()
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

/// Props of the `VerifyEmail` island.
#[derive(Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct VerifyEmailProps<'a> {
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
    let island =
        Island::new("VerifyEmail", &VerifyEmailProps { token: &token, contact_email: &ctx.site.contact_email });
    Ok(VerifyPage { ctx, island, outcome }.into_response())
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct PendingQuery {
    email: String,
    sent: String,
    error: String,
}

/// Props of the `PendingVerification` island.
#[derive(Serialize, TS)]
pub struct PendingVerificationProps<'a> {
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
    let island = Island::new("PendingVerification", &PendingVerificationProps { email: &email });
    PendingPage { ctx, island, email, notice }.into_response()
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ForgotQuery {
    sent: String,
    error: String,
    email: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/forgot_password.html")]
pub struct ForgotPage {
    ctx: PageCtx,
    sent: bool,
    error: Option<&'static str>,
    email: String,
}

async fn forgot_page(ctx: PageCtx, Query(q): Query<ForgotQuery>) -> Response {
    let ctx = ctx.titled("Forgot Password", "Choose a new password for your account.").noindex();
    let error = match q.error.as_str() {
        "" => None,
        "throttled" => Some("Too many password reset requests. Please wait a few minutes and try again."),
        _ => Some("Please enter a valid email address."),
    };
    let email: String = q.email.trim().chars().take(254).collect();
    ForgotPage { ctx, sent: q.sent == "1", error, email }.into_response()
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ResetQuery {
    error: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/reset_password.html")]
pub struct ResetPage {
    ctx: PageCtx,
    token: String,
    /// Why the link cannot be used (then no form is shown).
    problem: Option<String>,
    error: Option<&'static str>,
}

/// The sentence for a password form's `?error=` code.
fn password_error(code: &str) -> Option<&'static str> {
    Some(match code {
        "" => return None,
        "weak_password" => "Password must be at least 6 characters long",
        "password_mismatch" => "Passwords do not match",
        "wrong_password" => "Your current password is not correct",
        "no_password" => {
            "Your account signs in with Google and has no password yet. Use \"Forgot password\" to set one."
        }
        "rate_limited" => "Too many attempts with a wrong password. Please wait a few minutes and try again.",
        "last_admin" => "You are the only administrator. Make another account an administrator before deleting yours.",
        "reauth_required" => {
            "For your security, sign in again with Google, then delete your account within 10 minutes."
        }
        "validation_failed" => "Please fill in all required fields",
        _ => "Something went wrong. Please try again.",
    })
}

async fn reset_page(
    ctx: PageCtx,
    State(state): State<AppState>,
    Path(token): Path<String>,
    Query(q): Query<ResetQuery>,
) -> AppResult<Response> {
    let problem = match password_reset::check(&state.db, &token).await {
        Ok(()) => None,
        Err(password_reset::ResetError::Db(e)) => return Err(e.into()),
        Err(e) => Some(e.to_string()),
    };
    let ctx = ctx.titled("Choose a New Password", "Choose a new password for your account.").noindex();
    Ok(ResetPage { ctx, token, problem, error: password_error(&q.error) }.into_response())
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct AccountQuery {
    notice: String,
    error: String,
    /// After a password change: API keys revoked and push devices removed with it.
    keys: u64,
    devices: u64,
}

#[derive(Template, WebTemplate)]
#[template(path = "accounts/account.html")]
pub struct AccountPage {
    ctx: PageCtx,
    username: String,
    email: String,
    has_password: bool,
    sessions: Vec<sessions::SessionView>,
    notice: Option<String>,
    error: Option<&'static str>,
}

async fn account_page(
    ctx: PageCtx,
    State(state): State<AppState>,
    headers: axum::http::HeaderMap,
    Query(q): Query<AccountQuery>,
) -> AppResult<Response> {
    let Some(me) = ctx.user.clone() else { return Ok(Redirect::to("/auth").into_response()) };
    let Some(u) = me.row(&state.db).await? else {
        return Ok(Redirect::to("/auth").into_response());
    };
    let token = crate::middleware::auth::session_token(&headers);
    let sessions = sessions::list_for_user(&state.db, u.id, token.as_deref()).await?;
    let notice = match q.notice.as_str() {
        "password_changed" => {
            let what_else = crate::services::credentials::Revoked {
                sessions: 0,
                api_keys: q.keys.min(1000),
                push_devices: q.devices.min(1000),
            };
            Some(match crate::services::credentials::summary(&what_else) {
                Some(s) => format!("Password changed. Your other sessions have been signed out. {s}"),
                None => "Password changed. Your other sessions have been signed out.".to_owned(),
            })
        }
        "sessions_ended" => Some("You have been signed out everywhere else.".to_owned()),
        "session_ended" => Some("That device has been signed out.".to_owned()),
        _ => None,
    };
    let ctx = ctx.titled("Account Settings", "Your password, sessions and data.").noindex();
    Ok(AccountPage {
        ctx,
        has_password: u.password_hash.is_some(),
        username: u.username,
        email: u.email,
        sessions,
        notice,
        error: password_error(&q.error),
    }
    .into_response())
}
