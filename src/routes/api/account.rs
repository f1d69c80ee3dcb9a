//! A person's own account: forgotten and changed passwords, sessions, their data, deletion.
//!
//! * `POST /api/forgot-password` `{email}`: the same answer whether or not the address has an
//!   account; the mail goes out in the background (one a minute per address, 5 requests per
//!   15 minutes per client address, then 429).
//! * `POST /api/reset-password` `{token, password, confirmPassword?}`: single use; every
//!   session of the account ends.
//! * `POST /api/account/password` `{currentPassword, newPassword, confirmPassword?}`: every
//!   other session ends.
//! * `GET /api/account/sessions`, `DELETE /api/account/sessions/{id}`,
//!   `POST /api/account/sessions/revoke-others`.
//! * `GET /api/account/export`: everything stored about the person, as a JSON download.
//! * `POST /api/account/delete` `{password}` (accounts without a password: `{confirm:
//!   username}` within 10 minutes of signing in).
//!
//! Each `POST` also takes a plain HTML form (`/account`, `/forgot-password`,
//! `/reset-password/{token}` work without JavaScript) and then answers with a redirect
//! carrying a fixed code, never our text, in `?notice=` or `?error=`.
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Extension, Json};
use serde::Deserialize;

use super::Message;
use crate::routes::extract::{JsonOrForm, is_form};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::error::{AppError, AppResult, ErrorBody, ErrorCode};
use crate::middleware::auth::{self, ClientAddr, RequireUser, SessionInfo};
use crate::services::account::{self, AccountError};
use crate::services::account_limits::{REAUTH_USER, RESET_ADDR, RESET_EMAIL};
use crate::services::password_reset::{self, ResetError};
use crate::services::throttle::address_subject;
use crate::services::{sessions, users};
use crate::state::AppState;
use crate::views::Site;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(forgot_password))
        .routes(routes!(reset_password))
        .routes(routes!(change_password))
        .routes(routes!(list_sessions))
        .routes(routes!(revoke_session))
        .routes(routes!(revoke_session_form))
        .routes(routes!(revoke_others))
        .routes(routes!(export))
        .routes(routes!(delete_account))
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PasswordChanged {
    message: String,
    /// How many other sessions were signed out.
    signed_out_sessions: u64,
    /// How many API keys were revoked with them.
    revoked_api_keys: u64,
    /// How many devices stopped getting push notifications.
    removed_push_devices: u64,
}

/// The answer to a password reset.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct PasswordReset {
    message: String,
    /// How many API keys were revoked with the sessions.
    revoked_api_keys: u64,
    /// How many devices stopped getting push notifications.
    removed_push_devices: u64,
}

/// `message`, then what else ended, in one sentence each.
fn with_summary(message: &str, revoked: &crate::services::credentials::Revoked) -> String {
    match crate::services::credentials::summary(revoked) {
        Some(s) => format!("{message} {s}"),
        None => message.to_owned(),
    }
}

#[derive(serde::Serialize, utoipa::ToSchema)]
struct SessionEnded {
    success: bool,
    /// It was the session of this request (its cookie is cleared).
    current: bool,
}

#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
struct SessionsEnded {
    success: bool,
    signed_out_sessions: u64,
}

/// A signed-in person must have signed in this recently to delete an account that has no
/// password to confirm with.
pub const RECENT_SIGN_IN: chrono::Duration = chrono::Duration::minutes(10);

pub const FORGOT_SENT: &str = "If an account uses this email address, we have sent it a link to choose a new password. The link works for 1 hour.";

fn redirect(to: &str) -> Response {
    Redirect::to(to).into_response()
}

/// The `?error=` code of an error for the account page's plain forms: the API's own
/// [`ErrorCode`], so the page and a script see the same case.
fn error_code(e: &AppError) -> &'static str {
    e.code().as_str()
}

impl From<AccountError> for AppError {
    fn from(e: AccountError) -> Self {
        match e {
            AccountError::WrongPassword => AppError::Unauthorized(e.to_string()).with_code(ErrorCode::WrongPassword),
            // The only invalid input the service refuses is the new password.
            AccountError::Invalid(m) => AppError::BadRequest(m).with_code(ErrorCode::WeakPassword),
            AccountError::NoPassword => AppError::BadRequest(e.to_string()).with_code(ErrorCode::NoPassword),
            AccountError::LastAdmin => AppError::Conflict(e.to_string()).with_code(ErrorCode::LastAdmin),
            AccountError::Gone => AppError::NotAuthenticated,
            AccountError::Hash => AppError::Internal(anyhow::anyhow!("password hashing failed")),
            AccountError::Db(e) => e.into(),
        }
    }
}

impl From<ResetError> for AppError {
    fn from(e: ResetError) -> Self {
        match e {
            ResetError::Invalid | ResetError::Expired => {
                AppError::BadRequest(e.to_string()).with_code(ErrorCode::ResetLinkInvalid)
            }
            ResetError::WeakPassword(m) => AppError::BadRequest(m).with_code(ErrorCode::WeakPassword),
            ResetError::Hash => AppError::Internal(anyhow::anyhow!("password hashing failed")),
            ResetError::Db(e) => e.into(),
        }
    }
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
struct ForgotBody {
    email: String,
}

/// Ask for a password reset link
///
/// Anyone may call it. If the address (`email`) belongs to an account, a link that works
/// once and expires in 1 hour is mailed to it. The answer is the same
/// whether or not the address has an account, so it cannot be used to find out who is
/// registered. One mail per address a minute and a few requests per client address are
/// allowed; beyond that, 429 with `Retry-After`. A plain HTML form post gets a redirect.
#[utoipa::path(post, path = "/forgot-password", tag = "accounts", request_body(content((ForgotBody = "application/json"), (ForgotBody = "application/x-www-form-urlencoded"))),
    responses((status = 200, description = "The same answer whether or not the address has an account", body = Message),
        (status = 400, description = "No valid address", body = ErrorBody), (status = 429, description = "Too many requests", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn forgot_password(
    State(state): State<AppState>,
    ClientAddr(addr): ClientAddr,
    JsonOrForm { body: b, form }: JsonOrForm<ForgotBody>,
) -> AppResult<Response> {
    let outcome = request_reset(&state, &address_subject(addr), &b.email).await;
    if form {
        let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", b.email.trim()).finish();
        return Ok(redirect(&match outcome {
            Ok(()) => format!("/forgot-password?sent=1&{q}"),
            Err(e) => format!("/forgot-password?error={}&{q}", if e.status() == 429 { "throttled" } else { "missing" }),
        }));
    }
    outcome?;
    Ok(Message::json(FORGOT_SENT).into_response())
}

async fn request_reset(state: &AppState, addr: &str, email: &str) -> AppResult<()> {
    let email = email.trim().to_ascii_lowercase();
    if email.is_empty() {
        return Err(AppError::BadRequest("Please enter your email address".into()));
    }
    if email.len() > 254 || !email.contains('@') {
        return Err(AppError::BadRequest("Please enter a valid email address".into()));
    }
    let budget = RESET_ADDR.consume(&state.db, addr).await?;
    if !budget.allowed {
        return Err(AppError::throttled(
            "Too many password reset requests. Please wait a few minutes and try again.",
            &budget,
        ));
    }
    // One mail a minute per address, whether or not it has an account; past that the answer
    // is the same and nothing is sent, so the answer never tells which addresses exist.
    if !RESET_EMAIL.consume(&state.db, &email).await?.allowed {
        return Ok(());
    }
    let state = state.clone();
    // In the background, so the answer takes the same time either way.
    state.background.clone().spawn(async move {
        let found = match users::find_by_email(&state.db, &email).await {
            Ok(u) => u,
            Err(e) => {
                tracing::error!(error = %e, "password reset: lookup failed");
                return;
            }
        };
        let Some(u) = found else { return };
        let site_name = match state.settings().await {
            Ok(s) => Site::from_settings(&s, &state.config.origin()).name,
            Err(_) => "Reelfind".into(),
        };
        // Within SMTP_TIMEOUT_SECS; a mail that fails leaves no new link behind (an earlier
        // one still works) and gives the address's minute back, so asking again works.
        match password_reset::send_link(&state.db, &state.mailer, &site_name, &state.config.origin(), &u).await {
            Ok(()) => tracing::info!(user_id = u.id, "password reset mail sent"),
            Err(e) => {
                tracing::error!(error = format!("{e:#}"), user_id = u.id, "password reset mail not sent");
                if let Err(e) = RESET_EMAIL.refund(&state.db, &email, 1).await {
                    tracing::warn!(error = %e, "password reset: could not give the minute back");
                }
            }
        }
    });
    Ok(())
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase")]
struct ResetBody {
    token: String,
    password: String,
    confirm_password: Option<String>,
}

/// Choose a new password with a reset link
///
/// Anyone holding the `token` from a reset mail may call it, once. Sets `password` (checked
/// like a new one; `confirmPassword`, if sent, must match), marks the email verified, and
/// signs the account out everywhere (this browser's session cookie is cleared too), revokes
/// its API keys and forgets its push subscriptions (the answer says how many). An unknown,
/// used or expired link is refused with 400 and says which. A plain HTML form post gets a
/// redirect.
#[utoipa::path(post, path = "/reset-password", tag = "accounts", request_body(content((ResetBody = "application/json"), (ResetBody = "application/x-www-form-urlencoded"))),
    responses((status = 200, description = "Changed; every session, API key and push subscription of the account ended", body = PasswordReset),
        (status = 400, description = "Bad link, weak password or mismatch (see `code`)", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn reset_password(
    State(state): State<AppState>,
    JsonOrForm { body: b, form }: JsonOrForm<ResetBody>,
) -> AppResult<Response> {
    let outcome = async {
        if b.password.is_empty() {
            return Err(AppError::BadRequest("Please enter a new password".into()));
        }
        if b.confirm_password.as_deref().is_some_and(|c| c != b.password) {
            return Err(AppError::BadRequest("Passwords do not match".into()).with_code(ErrorCode::PasswordMismatch));
        }
        let (u, revoked) = password_reset::reset(&state.db, &b.token, &b.password).await?;
        // The account's guessing budget starts afresh with its new password.
        crate::services::account_limits::forget_account(&state.db, &u.username).await?;
        tracing::info!(
            user_id = u.id,
            api_keys_revoked = revoked.api_keys,
            push_devices_removed = revoked.push_devices,
            "password reset with a mailed link"
        );
        Ok(revoked)
    }
    .await;
    if form {
        let token: String = url::form_urlencoded::byte_serialize(b.token.trim().as_bytes()).collect();
        return Ok(match outcome {
            Ok(r) if r.api_keys + r.push_devices > 0 => {
                with_cleared_session(&state, redirect("/auth?notice=password_reset_revoked"))
            }
            Ok(_) => with_cleared_session(&state, redirect("/auth?notice=password_reset")),
            Err(e) if e.code() == ErrorCode::ResetLinkInvalid => redirect(&format!("/reset-password/{token}")),
            Err(e) => redirect(&format!("/reset-password/{token}?error={}", error_code(&e))),
        });
    }
    let revoked = outcome?;
    let res = Json(PasswordReset {
        message: with_summary("Your password has been changed. You can now sign in with it.", &revoked),
        revoked_api_keys: revoked.api_keys,
        removed_push_devices: revoked.push_devices,
    })
    .into_response();
    Ok(with_cleared_session(&state, res))
}

/// Every session ended: this browser's cookie goes too.
fn with_cleared_session(state: &AppState, mut res: Response) -> Response {
    res.headers_mut().append(header::SET_COOKIE, auth::clear_session_cookie(&state.config));
    res
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default, rename_all = "camelCase")]
struct PasswordBody {
    current_password: String,
    new_password: String,
    confirm_password: Option<String>,
}

/// Counts a re-authentication attempt against the account; 429 past [`REAUTH_USER`].
async fn reauth_attempt(state: &AppState, user_id: i64) -> AppResult<()> {
    let t = REAUTH_USER.hit(&state.db, &user_id.to_string()).await?;
    if t.count > u64::from(REAUTH_USER.max) {
        return Err(AppError::retry_later(
            "Too many attempts with a wrong password. Please wait a few minutes and try again.",
            t.reset_after.as_secs().max(1),
        ));
    }
    Ok(())
}

/// Change your password
///
/// For a signed-in person: `currentPassword` must be right, `newPassword` strong enough
/// (and equal to `confirmPassword`, if sent). Every other session of the account is signed
/// out (this one stays), every API key revoked and every push subscription forgotten: a key
/// or device someone else added with the old password stops working. Returns how many of
/// each ended. Repeated wrong current passwords
/// are answered with 429 and `Retry-After`. A plain HTML form post gets a redirect.
#[utoipa::path(post, path = "/account/password", tag = "accounts", security(("session" = [])), request_body(content((PasswordBody = "application/json"), (PasswordBody = "application/x-www-form-urlencoded"))),
    responses((status = 200, description = "Changed; other sessions ended", body = PasswordChanged),
        (status = 400, description = "Missing, weak or mismatched (see `code`)", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 429, description = "Too many wrong passwords", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn change_password(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    headers: HeaderMap,
    JsonOrForm { body: b, form }: JsonOrForm<PasswordBody>,
) -> AppResult<Response> {
    let current_token = auth::session_token(&headers);
    let outcome = async {
        if b.current_password.is_empty() || b.new_password.is_empty() {
            return Err(AppError::BadRequest("Please fill in all required fields".into()));
        }
        if b.confirm_password.as_deref().is_some_and(|c| c != b.new_password) {
            return Err(AppError::BadRequest("Passwords do not match".into()).with_code(ErrorCode::PasswordMismatch));
        }
        reauth_attempt(&state, me.id).await?;
        let ended =
            account::change_password(&state.db, me.id, &b.current_password, &b.new_password, current_token.as_deref())
                .await?;
        REAUTH_USER.clear(&state.db, &me.id.to_string()).await?;
        tracing::info!(
            user_id = me.id,
            other_sessions_ended = ended.sessions,
            api_keys_revoked = ended.api_keys,
            push_devices_removed = ended.push_devices,
            "password changed"
        );
        Ok(ended)
    }
    .await;
    if form {
        return Ok(match outcome {
            Ok(r) if r.api_keys + r.push_devices > 0 => {
                redirect(&format!("/account?notice=password_changed&keys={}&devices={}", r.api_keys, r.push_devices))
            }
            Ok(_) => redirect("/account?notice=password_changed"),
            Err(e) => redirect(&format!("/account?error={}", error_code(&e))),
        });
    }
    let ended = outcome?;
    Ok(Json(PasswordChanged {
        message: with_summary("Your password has been changed. Your other sessions have been signed out.", &ended),
        signed_out_sessions: ended.sessions,
        revoked_api_keys: ended.api_keys,
        removed_push_devices: ended.push_devices,
    })
    .into_response())
}

/// List your sessions
///
/// The signed-in person's open sessions (the browsers and devices signed in to the
/// account), each with an id, when it started and was last used, what it was opened from,
/// and whether it is the one making this request.
#[utoipa::path(get, path = "/account/sessions", tag = "accounts", security(("session" = [])),
    responses((status = 200, description = "Your sessions", body = Vec<sessions::SessionView>), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn list_sessions(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    headers: HeaderMap,
) -> AppResult<Json<Vec<sessions::SessionView>>> {
    let token = auth::session_token(&headers);
    Ok(Json(sessions::list_for_user(&state.db, me.id, token.as_deref()).await?))
}

/// End one of your sessions
///
/// Signs the session with this `id` (from the list of your sessions) out. Ending the
/// session that makes the request signs this browser out as well (`current: true`). 404
/// when you have no such session.
#[utoipa::path(delete, path = "/account/sessions/{id}", tag = "accounts", security(("session" = [])), params(("id" = String, Path, description = "The session id from the list")),
    responses((status = 200, description = "Ended", body = SessionEnded), (status = 404, description = "No such session", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn revoke_session(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> AppResult<Response> {
    let id = id.to_ascii_lowercase();
    let current =
        id.len() == 16 && auth::session_token(&headers).is_some_and(|t| sessions::hash_token(&t).starts_with(&id));
    let found = sessions::revoke(&state.db, me.id, &id).await?;
    if is_form(&headers) {
        let to = if current { "/auth" } else { "/account?notice=session_ended" };
        let res = redirect(to);
        return Ok(if current { with_cleared_session(&state, res) } else { res });
    }
    if !found {
        return Err(AppError::NotFoundMsg("No such session".into()));
    }
    let res = Json(SessionEnded { success: true, current }).into_response();
    Ok(if current { with_cleared_session(&state, res) } else { res })
}

/// End one of your sessions (form)
///
/// The same as `DELETE /api/account/sessions/{id}`, for HTML forms that can only post:
/// a plain form post is answered with a redirect to the account page.
#[utoipa::path(post, path = "/account/sessions/{id}/revoke", tag = "accounts", security(("session" = [])), params(("id" = String, Path, description = "The session id from the list")),
    responses((status = 200, description = "Ended", body = SessionEnded), (status = 404, description = "No such session", body = ErrorBody), (status = 401, description = "Not signed in", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn revoke_session_form(
    state: State<AppState>,
    me: RequireUser,
    headers: HeaderMap,
    id: Path<String>,
) -> AppResult<Response> {
    revoke_session(state, me, headers, id).await
}

/// Sign out everywhere else
///
/// Ends every session of the signed-in person except the one making the request, and
/// returns how many ended. A plain HTML form post gets a redirect.
#[utoipa::path(post, path = "/account/sessions/revoke-others", tag = "accounts", security(("session" = [])),
    responses((status = 200, description = "Every other session ended", body = SessionsEnded), (status = 401, description = "Not signed in", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn revoke_others(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    headers: HeaderMap,
) -> AppResult<Response> {
    let token = auth::session_token(&headers);
    let ended = sessions::delete_others(&state.db, me.id, token.as_deref()).await?;
    tracing::info!(user_id = me.id, ended, "signed out of other sessions");
    if is_form(&headers) {
        return Ok(redirect("/account?notice=sessions_ended"));
    }
    Ok(Json(SessionsEnded { success: true, signed_out_sessions: ended }).into_response())
}

/// Download your data
///
/// Everything Reelfind stores about the signed-in person (account, sessions,
/// identifications, collection, reviews, notification settings and devices, usage events)
/// as one JSON file, sent as a download (`Content-Disposition: attachment`).
#[utoipa::path(get, path = "/account/export", tag = "accounts", security(("session" = [])),
    responses((status = 200, description = "Everything stored about you, as a JSON download", body = Object), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn export(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Response> {
    let data = account::export(&state.db, me.id).await?;
    let body = serde_json::to_vec_pretty(&data).map_err(|e| AppError::Internal(e.into()))?;
    let date = chrono::Utc::now().format("%Y-%m-%d");
    let name: String = me.username.chars().filter(|c| c.is_ascii_alphanumeric() || "-_.".contains(*c)).collect();
    let mut res = (StatusCode::OK, body).into_response();
    let h = res.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&format!("attachment; filename=\"reelfind-data-{name}-{date}.json\"")) {
        h.insert(header::CONTENT_DISPOSITION, v);
    }
    tracing::info!(user_id = me.id, "account data exported");
    Ok(res)
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
struct DeleteBody {
    password: String,
    /// Accounts without a password type their username instead.
    confirm: String,
}

/// Delete your account
///
/// Deletes the signed-in person's account and everything that is theirs, then signs them
/// out. Confirm with `password`; an account without a password (Google sign-in) types its
/// username in `confirm` and must have signed in recently. The last administrator cannot
/// delete their account (409). A plain HTML form post gets a redirect.
#[utoipa::path(post, path = "/account/delete", tag = "accounts", security(("session" = [])), request_body(content((DeleteBody = "application/json"), (DeleteBody = "application/x-www-form-urlencoded"))),
    responses((status = 200, description = "Deleted, signed out", body = Message), (status = 400, description = "Confirmation missing", body = ErrorBody),
        (status = 401, description = "Not signed in", body = ErrorBody), (status = 403, description = "Sign in again first (Google accounts)", body = ErrorBody),
        (status = 409, description = "The last administrator", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: back to its page with `?notice=` or `?error=<code>`", headers(("location" = String)))))]
async fn delete_account(
    State(state): State<AppState>,
    RequireUser(me): RequireUser,
    session: Option<Extension<SessionInfo>>,
    JsonOrForm { body: b, form }: JsonOrForm<DeleteBody>,
) -> AppResult<Response> {
    let outcome = async {
        let u = me.row(&state.db).await?.ok_or(AppError::NotAuthenticated)?;
        if u.password_hash.is_some() {
            if b.password.is_empty() {
                return Err(AppError::BadRequest("Please enter your password to delete your account".into()));
            }
            reauth_attempt(&state, me.id).await?;
            if b.password.len() > users::MAX_PASSWORD_LEN || !users::check_password(&b.password, Some(&u)).await {
                return Err(
                    AppError::Unauthorized("Your password is not correct".into()).with_code(ErrorCode::WrongPassword)
                );
            }
        } else {
            let recent = session.is_some_and(|Extension(s)| chrono::Utc::now() - s.signed_in_at <= RECENT_SIGN_IN);
            if b.confirm.trim() != u.username {
                return Err(AppError::BadRequest("Type your username to confirm".into()));
            }
            if !recent {
                return Err(AppError::Forbidden(
                    "For your security, sign in again with Google, then delete your account within 10 minutes.".into(),
                )
                .with_code(ErrorCode::ReauthRequired));
            }
        }
        account::delete(&state.db, me.id).await?;
        Ok(())
    }
    .await;
    if form {
        return Ok(match outcome {
            Ok(()) => with_cleared_session(&state, redirect("/auth?notice=deleted")),
            Err(e) => redirect(&format!("/account?error={}", error_code(&e))),
        });
    }
    outcome?;
    Ok(with_cleared_session(&state, Message::json("Your account has been deleted.").into_response()))
}
