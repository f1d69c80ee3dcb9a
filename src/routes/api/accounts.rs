//! Registration, sign-in, sign-out, the current user, and email verification
//! (SPEC sections 5, 7 and 8).
//!
//! Errors are JSON `{error, message}` with the same human sentence in both fields; the
//! browser shows that sentence (SPEC 7 reads error bodies "as plain text": the client takes
//! `error` from the JSON, or the raw text when the body is not JSON).
use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Utc};
use sea_orm::EntityTrait;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::auth::{self, RequireUser};
use crate::entities::user;
use crate::error::{AppError, AppResult};
use crate::services::throttle::Verdict;
use crate::services::users::{self, CreateUserError, NewUser};
use crate::services::{sessions, verification};
use crate::state::AppState;
use crate::views::Site;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/register", post(register))
        .route("/login", post(login))
        .route("/logout", post(logout))
        .route("/user", get(current_user))
        .route("/verify-email/{token}", get(verify_email))
        .route("/resend-verification", post(resend_verification))
}

/// The user as the browser sees it.
#[derive(Serialize, Debug)]
#[serde(rename_all = "camelCase")]
pub struct UserResponse {
    pub id: i64,
    pub username: String,
    pub email: String,
    pub created_at: DateTime<Utc>,
    pub role: String,
    pub is_admin: bool,
    pub email_verified: bool,
    pub display_name: Option<String>,
    pub profile_picture: Option<String>,
}

impl From<&user::Model> for UserResponse {
    fn from(u: &user::Model) -> Self {
        Self {
            id: u.id,
            username: u.username.clone(),
            email: u.email.clone(),
            created_at: u.created_at,
            role: u.role.clone(),
            is_admin: u.role == "admin",
            email_verified: u.email_verified,
            display_name: u.display_name.clone(),
            profile_picture: u.profile_picture.clone(),
        }
    }
}

/// A JSON body, or 400 with our error shape when it is not valid JSON of the right shape.
pub fn json_body<T>(body: Result<Json<T>, JsonRejection>) -> AppResult<T> {
    body.map(|Json(b)| b).map_err(|e| AppError::BadRequest(format!("Invalid request body: {}", e.body_text())))
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct RegisterBody {
    pub username: String,
    pub email: String,
    pub password: String,
}

/// `POST /api/register`: JSON for the islands; a plain HTML form (no JavaScript) gets
/// redirects like [`login`], and its `confirmPassword` field is checked too.
async fn register(State(state): State<AppState>, headers: HeaderMap, body: axum::body::Bytes) -> AppResult<Response> {
    if is_form(&headers) {
        let f = form_fields(&body);
        let get = |k: &str| f.get(k).cloned().unwrap_or_default();
        let back = "/auth?tab=signup";
        if get("password") != get("confirmPassword") {
            return Ok(Redirect::to(&format!("{back}&error=mismatch")).into_response());
        }
        let body = RegisterBody { username: get("username"), email: get("email"), password: get("password") };
        return Ok(match create_account(&state, &headers, body).await {
            Ok(Registered::SignedIn(_, token)) => {
                let mut res = Redirect::to("/").into_response();
                res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
                res
            }
            Ok(Registered::VerificationRequired(u)) => {
                let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", &u.email).finish();
                Redirect::to(&format!("/email-verification-pending?{q}")).into_response()
            }
            Err(AppError::BadRequest(m)) if m.starts_with("Password must") => {
                Redirect::to(&format!("{back}&error=weak")).into_response()
            }
            Err(e) => form_error_redirect(back, &e),
        });
    }
    let body: RegisterBody =
        serde_json::from_slice(&body).map_err(|e| AppError::BadRequest(format!("Invalid request body: {e}")))?;
    Ok(match create_account(&state, &headers, body).await? {
        Registered::SignedIn(u, token) => {
            let mut res = (StatusCode::CREATED, Json(UserResponse::from(&u))).into_response();
            res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
            res
        }
        Registered::VerificationRequired(u) => {
            let body = json!({ "emailVerificationRequired": true, "email": u.email, "username": u.username });
            (StatusCode::CREATED, Json(body)).into_response()
        }
    })
}

enum Registered {
    /// Signed in at once; the session token for the cookie.
    SignedIn(user::Model, String),
    /// A verification mail went out; no session yet.
    VerificationRequired(user::Model),
}

async fn create_account(state: &AppState, headers: &HeaderMap, body: RegisterBody) -> AppResult<Registered> {
    if body.username.trim().is_empty() || body.email.trim().is_empty() || body.password.is_empty() {
        return Err(AppError::BadRequest("Please fill in all required fields".into()));
    }
    let settings = state.settings().await?;
    let required = verification::required(state.accounts.mailer.is_smtp(), &settings);
    let created = users::create(
        &state.db,
        NewUser {
            username: &body.username,
            email: &body.email,
            password: Some(&body.password),
            role: "user",
            email_verified: false,
        },
    )
    .await;
    let u = match created {
        Ok(u) => u,
        Err(CreateUserError::Invalid(m)) => return Err(AppError::BadRequest(m)),
        Err(e @ (CreateUserError::UsernameTaken | CreateUserError::EmailTaken)) => {
            return Err(AppError::Conflict(e.to_string()));
        }
        Err(CreateUserError::Db(e)) if matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))) => {
            // Lost a race with an identical registration.
            return Err(AppError::Conflict("Username is already taken".into()));
        }
        Err(e) => return Err(AppError::Internal(anyhow::anyhow!("registration failed: {e}"))),
    };
    tracing::info!(user_id = u.id, verification = required, "account registered");
    if required {
        send_verification(state, &u, &Site::from_settings(&settings, &state.config.origin()).name).await;
        return Ok(Registered::VerificationRequired(u));
    }
    let token = sessions::create(&state.db, u.id, user_agent(headers)).await?;
    Ok(Registered::SignedIn(u, token))
}

/// Issues a token and mails it. Delivery problems are logged, not shown: the account exists
/// and the person can ask for another mail.
async fn send_verification(state: &AppState, u: &user::Model, site_name: &str) {
    let token = match verification::issue(&state.db, u.id).await {
        Ok(t) => t,
        Err(e) => {
            tracing::error!(error = %e, "could not store a verification token");
            return;
        }
    };
    let mail = verification::mail(site_name, &state.config.origin(), u, &token);
    if let Err(e) = state.accounts.mailer.send(mail).await {
        tracing::error!(error = format!("{e:#}"), user_id = u.id, "verification mail not sent");
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct LoginBody {
    pub username: String,
    pub password: String,
}

const TOO_MANY_LOGINS: &str = "Too many login attempts. Please wait a few minutes and try again.";
const BAD_LOGIN: &str = "Invalid username or password";

/// `POST /api/login`: JSON for the islands; an HTML form post (no JavaScript, or the admin
/// login) gets a redirect instead: to `next` (a local path) on success, back to the form's
/// page with `?error=code` on failure.
async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    extensions: axum::http::Extensions,
    body: axum::body::Bytes,
) -> AppResult<Response> {
    let addr = auth::client_addr(&state.config, &extensions, &headers);
    if is_form(&headers) {
        let f = form_fields(&body);
        let body = LoginBody {
            username: f.get("username").cloned().unwrap_or_default(),
            password: f.get("password").cloned().unwrap_or_default(),
        };
        let back = local_path(f.get("from").map(String::as_str)).unwrap_or("/auth");
        let next = local_path(f.get("next").map(String::as_str)).unwrap_or("/");
        return Ok(match sign_in(&state, &headers, &addr, body).await {
            Ok((u, token)) => {
                let mut res = Redirect::to(next).into_response();
                res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
                tracing::debug!(user_id = u.id, "signed in by form");
                res
            }
            Err(e) => form_error_redirect(back, &e),
        });
    }
    let body: LoginBody =
        serde_json::from_slice(&body).map_err(|e| AppError::BadRequest(format!("Invalid request body: {e}")))?;
    let (u, token) = sign_in(&state, &headers, &addr, body).await?;
    let mut res = Json(UserResponse::from(&u)).into_response();
    res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
    Ok(res)
}

/// Checks the credentials under the throttle, and on success rotates this browser's
/// session. Returns the user and the new session token.
async fn sign_in(
    state: &AppState,
    headers: &HeaderMap,
    addr: &str,
    body: LoginBody,
) -> AppResult<(user::Model, String)> {
    let name = body.username.trim();
    if name.is_empty() || body.password.is_empty() {
        return Err(AppError::BadRequest("Please enter both username and password".into()));
    }
    match state.accounts.login_throttle.check(name, addr) {
        Verdict::Blocked => {
            tracing::warn!(addr, "login refused: too many failed attempts");
            return Err(AppError::TooManyRequests(TOO_MANY_LOGINS.into()));
        }
        Verdict::Proceed(wait) if !wait.is_zero() => tokio::time::sleep(wait).await,
        Verdict::Proceed(_) => {}
    }
    let found = users::find_for_login(&state.db, name).await?;
    if body.password.len() > users::MAX_PASSWORD_LEN || !users::check_password(&body.password, found.as_ref()).await {
        state.accounts.login_throttle.record_failure(name, addr);
        return Err(AppError::Unauthorized(BAD_LOGIN.into()));
    }
    let Some(u) = found else { return Err(AppError::Unauthorized(BAD_LOGIN.into())) };
    state.accounts.login_throttle.record_success(name);
    let settings = state.settings().await?;
    if !u.email_verified && verification::required(state.accounts.mailer.is_smtp(), &settings) {
        return Err(AppError::with_body(
            StatusCode::FORBIDDEN,
            "Please verify your email address before signing in. Check your inbox for the verification link.",
            json!({ "emailVerificationRequired": true, "email": u.email }),
        ));
    }
    // Rotate: this browser's previous session (if any) ends, a new token starts.
    if let Some(old) = auth::session_token(headers) {
        sessions::delete(&state.db, &old).await?;
    }
    let token = sessions::create(&state.db, u.id, user_agent(headers)).await?;
    Ok((u, token))
}

fn is_form(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
}

fn wants_html(headers: &HeaderMap) -> bool {
    is_form(headers)
        || headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"))
}

fn form_fields(body: &[u8]) -> std::collections::HashMap<String, String> {
    url::form_urlencoded::parse(body).into_owned().collect()
}

/// A same-site path (`/x`, never `//host` or a full URL), for redirects after a form.
pub fn local_path(p: Option<&str>) -> Option<&str> {
    p.filter(|p| p.starts_with('/') && !p.starts_with("//") && !p.contains('\\'))
}

/// Where a failed form post goes: back to its page with a fixed error code (never our
/// message in the URL), or to the pending-verification screen.
fn form_error_redirect(back: &str, e: &AppError) -> Response {
    if let AppError::WithBody { status, extra, .. } = e {
        if *status == StatusCode::FORBIDDEN {
            let email = extra.get("email").and_then(|v| v.as_str()).unwrap_or("");
            let q: String = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", email).finish();
            return Redirect::to(&format!("/email-verification-pending?{q}")).into_response();
        }
    }
    let code = match e.status().as_u16() {
        400 => "missing",
        401 => "invalid",
        409 => "taken",
        429 => "throttled",
        _ => "failed",
    };
    let sep = if back.contains('?') { '&' } else { '?' };
    Redirect::to(&format!("{back}{sep}error={code}")).into_response()
}

/// `POST /api/logout`: JSON for scripts; the header's plain form (no JavaScript) gets a
/// redirect to `/`.
async fn logout(State(state): State<AppState>, headers: HeaderMap) -> AppResult<Response> {
    if let Some(token) = auth::session_token(&headers) {
        sessions::delete(&state.db, &token).await?;
    }
    let mut res = if wants_html(&headers) {
        Redirect::to("/").into_response()
    } else {
        Json(json!({ "message": "You have been successfully logged out." })).into_response()
    };
    res.headers_mut().append(header::SET_COOKIE, auth::clear_session_cookie(&state.config));
    Ok(res)
}

async fn current_user(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<UserResponse>> {
    let u = user::Entity::find_by_id(me.id)
        .one(&state.db)
        .await?
        .ok_or_else(|| AppError::Unauthorized("Not authenticated".into()))?;
    Ok(Json(UserResponse::from(&u)))
}

async fn verify_email(State(state): State<AppState>, Path(token): Path<String>) -> AppResult<Json<serde_json::Value>> {
    match verification::verify(&state.db, &token).await {
        Ok(u) => {
            tracing::info!(user_id = u.id, "email verified");
            Ok(Json(json!({ "message": "Your email has been verified. You can now sign in." })))
        }
        Err(verification::VerifyError::Db(e)) => Err(e.into()),
        Err(e) => Err(AppError::BadRequest(e.to_string())),
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct ResendBody {
    pub email: String,
}

/// `POST /api/resend-verification`: JSON; the pending page's plain form gets a redirect back.
async fn resend_verification(
    State(state): State<AppState>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> AppResult<Response> {
    if is_form(&headers) {
        let email = form_fields(&body).get("email").cloned().unwrap_or_default();
        let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", email.trim()).finish();
        let outcome = match resend(&state, &email).await {
            Ok(_) => "sent=1",
            Err(e) if e.status() == StatusCode::TOO_MANY_REQUESTS => "error=cooldown",
            Err(_) => "error=failed",
        };
        return Ok(Redirect::to(&format!("/email-verification-pending?{q}&{outcome}")).into_response());
    }
    let body: ResendBody =
        serde_json::from_slice(&body).map_err(|e| AppError::BadRequest(format!("Invalid request body: {e}")))?;
    Ok(Json(resend(&state, &body.email).await?).into_response())
}

async fn resend(state: &AppState, email: &str) -> AppResult<serde_json::Value> {
    let email = email.trim().to_ascii_lowercase();
    if email.is_empty() {
        return Err(AppError::BadRequest("Please enter your email address".into()));
    }
    if email.len() > 254 || !email.contains('@') {
        return Err(AppError::BadRequest("Please enter a valid email address".into()));
    }
    // The cooldown is per address whether or not it belongs to anyone, so the answer never
    // tells which addresses have accounts.
    if let Err(secs) = state.accounts.resend_cooldown.try_start(&email) {
        return Err(AppError::with_body(
            StatusCode::TOO_MANY_REQUESTS,
            format!("Please wait {secs} seconds before requesting another email."),
            json!({ "retryAfter": secs }),
        ));
    }
    if let Some(u) = users::find_by_email(&state.db, &email).await? {
        if !u.email_verified {
            let settings = state.settings().await?;
            let site_name = Site::from_settings(&settings, &state.config.origin()).name;
            // Sent in the background so that the answer takes the same time either way.
            let state = state.clone();
            tokio::spawn(async move { send_verification(&state, &u, &site_name).await });
        }
    }
    Ok(json!({
        "message": "If an account with this email is waiting for verification, a new link is on its way."
    }))
}

fn user_agent(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok())
}
