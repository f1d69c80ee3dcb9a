//! Registration, sign-in, sign-out, the current user, and email verification
//! (SPEC sections 5, 7 and 8).
//!
//! Errors are JSON `{error, message}` with the same human sentence in both fields; the
//! browser shows that sentence (SPEC 7 reads error bodies "as plain text": the client takes
//! `error` from the JSON, or the raw text when the body is not JSON).
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::Message;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::entities::user;
use crate::error::{AppError, AppResult, ErrorBody, ErrorCode};
use crate::middleware::auth::{self, ClientAddr, RequireUser};
use crate::routes::extract::{JsonOrForm, is_form};
use crate::services::account_limits::{self, Verdict};
use crate::services::throttle::address_subject;
use crate::services::users::{self, CreateUserError, NewUser};
use crate::services::{sessions, verification};
use crate::state::AppState;
use crate::views::Site;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(register))
        .routes(routes!(login))
        .routes(routes!(logout))
        .routes(routes!(current_user))
        .routes(routes!(verify_email))
        .routes(routes!(resend_verification))
}

/// `POST /api/register` when the site asks new accounts to verify their address first.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct VerificationPending {
    pub email_verification_required: bool,
    pub email: String,
    pub username: String,
}

/// What `POST /api/register` answers: the signed-in user, or a pending verification.
#[derive(Serialize, utoipa::ToSchema)]
#[serde(untagged)]
#[allow(dead_code)]
enum Registration {
    SignedIn(UserResponse),
    VerificationRequired(VerificationPending),
}

/// The user as the browser sees it.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UserResponse {
    pub id: i64,
    pub username: String,
    pub email: String,
    pub created_at: DateTime<Utc>,
    pub role: user::Role,
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
            role: u.role,
            is_admin: u.role.is_admin(),
            email_verified: u.email_verified,
            display_name: u.display_name.clone(),
            profile_picture: u.profile_picture.clone(),
        }
    }
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
pub struct RegisterBody {
    pub username: String,
    pub email: String,
    pub password: String,
    /// The plain sign-up form's confirmation (checked on form posts only).
    #[serde(rename = "confirmPassword")]
    pub confirm_password: String,
}

/// Create an account
///
/// Anyone may call it. Makes an account from `username`, `email` and `password` (a plain
/// HTML form's `confirmPassword` must match it). When the site asks for email verification, a
/// verification mail goes out and the answer says so; otherwise the new person is signed
/// in at once (session cookie set). 409 when the username is taken, or the email when the
/// site does not verify addresses; with verification on, an address that already has an
/// account is answered exactly like a new one and its owner gets a mail saying someone tried
/// (so the answer tells nobody which addresses have accounts). A few sign-ups per client
/// address an hour. A plain HTML form post gets a redirect.
#[utoipa::path(post, path = "/register", tag = "accounts", request_body(content((RegisterBody = "application/json"), (RegisterBody = "application/x-www-form-urlencoded"))),
    responses((status = 201, description = "Created: signed in (session cookie set), or waiting for email verification", body = Registration),
        (status = 400, description = "A field is refused (`validation_failed`, `weak_password`)", body = ErrorBody),
        (status = 409, description = "Username or email taken", body = ErrorBody), (status = 429, description = "Too many sign-ups", body = ErrorBody),
        (status = 503, description = "The verification mail could not be sent; the account was not created (`service_unavailable`, with `Retry-After`)", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: a redirect (with `?error=<code>` on failure)", headers(("location" = String)))))]
async fn register(
    State(state): State<AppState>,
    ClientAddr(addr): ClientAddr,
    headers: HeaderMap,
    JsonOrForm { body, form }: JsonOrForm<RegisterBody>,
) -> AppResult<Response> {
    let addr = address_subject(addr);
    if form {
        let back = "/auth?tab=signup";
        if body.password != body.confirm_password {
            return Ok(Redirect::to(&format!("{back}&error=mismatch")).into_response());
        }
        return Ok(match create_account(&state, &headers, &addr, body).await {
            Ok(Registered::SignedIn(_, token)) => {
                let mut res = Redirect::to("/").into_response();
                res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
                res
            }
            Ok(
                Registered::VerificationRequired(user::Model { email, .. }) | Registered::AddressTaken { email, .. },
            ) => {
                let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", &email).finish();
                Redirect::to(&format!("/email-verification-pending?{q}")).into_response()
            }
            Err(e) if e.code() == ErrorCode::WeakPassword => {
                Redirect::to(&format!("{back}&error=weak")).into_response()
            }
            Err(e) if e.status() == StatusCode::TOO_MANY_REQUESTS => {
                Redirect::to(&format!("{back}&error=register_throttled")).into_response()
            }
            Err(e) if e.status() == StatusCode::SERVICE_UNAVAILABLE => {
                Redirect::to(&format!("{back}&error=mail_failed")).into_response()
            }
            Err(e) => form_error_redirect(back, &e),
        });
    }
    Ok(match create_account(&state, &headers, &addr, body).await? {
        Registered::SignedIn(u, token) => {
            let mut res = (StatusCode::CREATED, Json(UserResponse::from(&u))).into_response();
            res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
            res
        }
        Registered::VerificationRequired(user::Model { email, username, .. })
        | Registered::AddressTaken { email, username } => {
            let body = VerificationPending { email_verification_required: true, email, username };
            (StatusCode::CREATED, Json(body)).into_response()
        }
    })
}

enum Registered {
    /// Signed in at once; the session token for the cookie.
    SignedIn(user::Model, String),
    /// A verification mail went out; no session yet.
    VerificationRequired(user::Model),
    /// The address already has an account: answered as [`Registered::VerificationRequired`]
    /// would be, and its owner mailed.
    AddressTaken { username: String, email: String },
}

const TOO_MANY_SIGNUPS: &str = "Too many new accounts from your network. Please try again later.";

async fn create_account(
    state: &AppState,
    headers: &HeaderMap,
    addr: &str,
    body: RegisterBody,
) -> AppResult<Registered> {
    if body.username.trim().is_empty() || body.email.trim().is_empty() || body.password.is_empty() {
        return Err(AppError::BadRequest("Please fill in all required fields".into()));
    }
    // Every attempt that gets this far counts, taken names too (they would otherwise let
    // anyone probe which usernames and addresses exist at full speed).
    let budget = account_limits::REGISTER_ADDR.consume(&state.db, addr).await?;
    if !budget.allowed {
        tracing::warn!(addr, "registration refused: too many from this address");
        return Err(AppError::throttled(TOO_MANY_SIGNUPS, &budget));
    }
    let settings = state.settings().await?;
    let required = verification::required(state.mailer.is_smtp(), &settings);
    let created = users::create(
        &state.db,
        NewUser {
            username: &body.username,
            email: &body.email,
            password: Some(&body.password),
            role: user::Role::User,
            email_verified: false,
        },
    )
    .await;
    let u = match created {
        Ok(u) => u,
        Err(CreateUserError::Invalid(m)) => {
            account_limits::REGISTER_ADDR.refund(&state.db, addr, 1).await?;
            return Err(AppError::BadRequest(m));
        }
        Err(CreateUserError::WeakPassword(m)) => {
            account_limits::REGISTER_ADDR.refund(&state.db, addr, 1).await?;
            return Err(AppError::BadRequest(m).with_code(ErrorCode::WeakPassword));
        }
        // With verification on, a taken address is answered like a new one (nobody learns
        // which addresses have accounts) and its owner gets a mail saying so instead.
        // Usernames are public (profiles, reviews), so a taken one is said.
        Err(CreateUserError::EmailTaken) if required => {
            if let Some(owner) = users::find_by_email(&state.db, &body.email).await? {
                let site = Site::from_settings(&settings, &state.config.origin()).name;
                let mail = verification::already_registered_mail(&site, &state.config.origin(), &owner);
                if let Err(e) = state.mailer.send(mail).await {
                    // The same answer a new address gets when its mail fails: uniform here too.
                    tracing::error!(error = %e, "could not mail an address that is already registered");
                    account_limits::REGISTER_ADDR.refund(&state.db, addr, 1).await?;
                    return Err(AppError::RetryLater {
                        status: StatusCode::SERVICE_UNAVAILABLE,
                        message: MAIL_FAILED.into(),
                        secs: 60,
                    }
                    .with_code(ErrorCode::ServiceUnavailable));
                }
            }
            tracing::info!("registration with an address that already has an account; its owner was told");
            return Ok(Registered::AddressTaken {
                username: body.username.trim().to_owned(),
                email: body.email.trim().to_ascii_lowercase(),
            });
        }
        Err(e @ (CreateUserError::UsernameTaken | CreateUserError::EmailTaken)) => {
            return Err(AppError::Conflict(e.to_string()).with_code(ErrorCode::AlreadyRegistered));
        }
        Err(e) => return Err(AppError::Internal(anyhow::anyhow!("registration failed: {e}"))),
    };
    tracing::info!(user_id = u.id, verification = required, "account registered");
    let was_guest = auth::guest_id(state, headers).is_some();
    crate::services::analytics::record_sign_up(&state.db, u.id, "password", was_guest).await;
    if required {
        let site_name = Site::from_settings(&settings, &state.config.origin()).name;
        if let Err(e) = send_verification(state, &u, &site_name).await {
            // Nothing half-written: an account whose link never left could not be used, and
            // its name and address could not be signed up again. It goes, and the try is
            // given back to the address.
            tracing::error!(
                error = format!("{e:#}"),
                user_id = u.id,
                "verification mail not sent; the new account is removed"
            );
            if let Err(e) = crate::services::account::delete(&state.db, u.id).await {
                tracing::error!(error = %e, user_id = u.id, "could not remove the account whose mail failed");
            }
            account_limits::REGISTER_ADDR.refund(&state.db, addr, 1).await?;
            return Err(AppError::RetryLater {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: MAIL_FAILED.into(),
                secs: 60,
            }
            .with_code(ErrorCode::ServiceUnavailable));
        }
        return Ok(Registered::VerificationRequired(u));
    }
    let token = sessions::create(&state.db, u.id, user_agent(headers)).await?;
    Ok(Registered::SignedIn(u, token))
}

/// What a sign-up hears when its verification mail could not be sent (the account is not kept).
pub const MAIL_FAILED: &str =
    "We could not send the verification email, so your account was not created. Please try again in a few minutes.";

/// Mails `u` a verification link (within `SMTP_TIMEOUT_SECS`). When it fails, no new link
/// is left behind and an earlier link still works.
async fn send_verification(state: &AppState, u: &user::Model, site_name: &str) -> anyhow::Result<()> {
    verification::send_link(&state.db, &state.mailer, site_name, &state.config.origin(), u).await
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
pub struct LoginBody {
    pub username: String,
    pub password: String,
    /// A plain form's own page (a local path), to go back to when sign-in fails.
    pub from: Option<String>,
    /// A plain form's next page (a local path) after signing in.
    pub next: Option<String>,
}

const TOO_MANY_LOGINS: &str = "Too many login attempts. Please wait a few minutes and try again.";
const BAD_LOGIN: &str = "Invalid username or password";

/// Sign in
///
/// Anyone may call it. Checks the username (or email) and password and, when they are
/// right, sets the session cookie and returns the account. Repeated failures are answered
/// with 429 and `Retry-After`; an account that must still verify its email gets 403. A
/// plain HTML form post gets a redirect instead: to `next` (a path on this site) on
/// success, back to the form's page with `?error=<code>` on failure.
#[utoipa::path(post, path = "/login", tag = "accounts", request_body(content((LoginBody = "application/json"), (LoginBody = "application/x-www-form-urlencoded"))),
    responses((status = 200, description = "Signed in; the session cookie is set", body = UserResponse,
            headers(("set-cookie" = String, description = "The session cookie"))),
        (status = 400, description = "Missing fields", body = ErrorBody), (status = 401, description = "Wrong username or password", body = ErrorBody),
        (status = 403, description = "Email not verified yet", body = ErrorBody), (status = 429, description = "Too many attempts", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: a redirect (with `?error=<code>` on failure)", headers(("location" = String)))))]
async fn login(
    State(state): State<AppState>,
    headers: HeaderMap,
    ClientAddr(addr): ClientAddr,
    JsonOrForm { body, form }: JsonOrForm<LoginBody>,
) -> AppResult<Response> {
    let addr = address_subject(addr);
    if form {
        let back = local_path(body.from.as_deref()).unwrap_or("/auth").to_owned();
        let next = local_path(body.next.as_deref()).unwrap_or("/").to_owned();
        return Ok(match sign_in(&state, &headers, &addr, body).await {
            Ok((u, token)) => {
                let mut res = Redirect::to(&next).into_response();
                res.headers_mut().append(header::SET_COOKIE, auth::session_cookie(&state.config, &token));
                tracing::debug!(user_id = u.id, "signed in by form");
                res
            }
            Err(e) => form_error_redirect(&back, &e),
        });
    }
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
    // The attempt counts before the password is checked, so attempts in flight count too.
    match account_limits::login_attempt(&state.db, name, addr).await? {
        Verdict::Blocked(left) => {
            tracing::warn!(addr, "login refused: too many attempts");
            return Err(AppError::retry_later(TOO_MANY_LOGINS, left.as_secs().max(1)));
        }
        Verdict::Proceed(wait) if !wait.is_zero() => tokio::time::sleep(wait).await,
        Verdict::Proceed(_) => {}
    }
    let found = users::find_for_login(&state.db, name).await?;
    if body.password.len() > users::MAX_PASSWORD_LEN || !users::check_password(&body.password, found.as_ref()).await {
        return Err(AppError::Unauthorized(BAD_LOGIN.into()).with_code(ErrorCode::InvalidCredentials));
    }
    let Some(u) = found else {
        return Err(AppError::Unauthorized(BAD_LOGIN.into()).with_code(ErrorCode::InvalidCredentials));
    };
    account_limits::login_succeeded(&state.db, name, addr).await?;
    let settings = state.settings().await?;
    if !u.email_verified && verification::required(state.mailer.is_smtp(), &settings) {
        return Err(AppError::EmailNotVerified { email: u.email });
    }
    // Rotate: this browser's previous session (if any) ends, a new token starts.
    if let Some(old) = auth::session_token(headers) {
        sessions::delete(&state.db, &old).await?;
    }
    let token = sessions::create(&state.db, u.id, user_agent(headers)).await?;
    Ok((u, token))
}

fn wants_html(headers: &HeaderMap) -> bool {
    is_form(headers)
        || headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"))
}

/// A same-site path (`/x`, never `//host` or a full URL), for redirects after a form.
pub fn local_path(p: Option<&str>) -> Option<&str> {
    p.filter(|p| p.starts_with('/') && !p.starts_with("//") && !p.contains('\\'))
}

/// Where a failed form post goes: back to its page with a fixed error code (never our
/// message in the URL), or to the pending-verification screen.
fn form_error_redirect(back: &str, e: &AppError) -> Response {
    if let AppError::EmailNotVerified { email } = e.unwrapped() {
        let q: String = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", email).finish();
        return Redirect::to(&format!("/email-verification-pending?{q}")).into_response();
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

/// Sign out
///
/// Ends the session of the request, if any, and clears the session cookie. Always
/// succeeds. A plain HTML form post gets a redirect to the home page.
#[utoipa::path(post, path = "/logout", tag = "accounts",
    responses((status = 200, description = "Signed out; the cookie is cleared", body = Message), (status = 303, description = "A plain HTML form was posted: a redirect (with `?error=<code>` on failure)", headers(("location" = String)))))]
async fn logout(State(state): State<AppState>, headers: HeaderMap) -> AppResult<Response> {
    if let Some(token) = auth::session_token(&headers) {
        sessions::delete(&state.db, &token).await?;
    }
    let mut res = if wants_html(&headers) {
        Redirect::to("/").into_response()
    } else {
        super::Message::json("You have been successfully logged out.").into_response()
    };
    res.headers_mut().append(header::SET_COOKIE, auth::clear_session_cookie(&state.config));
    Ok(res)
}

#[utoipa::path(get, path = "/user", tag = "accounts", security(("session" = [])),
    responses((status = 200, description = "The signed-in user", body = UserResponse), (status = 401, description = "Not signed in", body = ErrorBody)))]
async fn current_user(State(state): State<AppState>, RequireUser(me): RequireUser) -> AppResult<Json<UserResponse>> {
    let u = me.row(&state.db).await?.ok_or(AppError::NotAuthenticated)?;
    Ok(Json(UserResponse::from(&u)))
}

#[utoipa::path(get, path = "/verify-email/{token}", tag = "accounts",
    params(("token" = String, Path, description = "The token from the verification mail")),
    responses((status = 200, description = "Verified", body = Message), (status = 400, description = "Unknown or expired link", body = ErrorBody)))]
async fn verify_email(State(state): State<AppState>, Path(token): Path<String>) -> AppResult<Json<super::Message>> {
    match verification::verify(&state.db, &token).await {
        Ok(u) => {
            tracing::info!(user_id = u.id, "email verified");
            Ok(super::Message::json("Your email has been verified. You can now sign in."))
        }
        Err(verification::VerifyError::Db(e)) => Err(e.into()),
        Err(e) => Err(AppError::BadRequest(e.to_string())),
    }
}

#[derive(Deserialize, Default, utoipa::ToSchema)]
#[serde(default)]
pub struct ResendBody {
    pub email: String,
}

/// Send the verification mail again
///
/// Anyone may call it. If the address (`email`) belongs to an account that has not
/// verified its email yet, a new verification link goes out (earlier ones stop working).
/// The answer is the same whether or not it does; one mail per address a minute, else 429
/// with `Retry-After`. A plain HTML form post gets a redirect back.
#[utoipa::path(post, path = "/resend-verification", tag = "accounts", request_body(content((ResendBody = "application/json"), (ResendBody = "application/x-www-form-urlencoded"))),
    responses((status = 200, description = "The same answer whether or not the address has an account", body = Message),
        (status = 400, description = "No valid address", body = ErrorBody), (status = 429, description = "Wait before asking again", body = ErrorBody), (status = 303, description = "A plain HTML form was posted: a redirect (with `?error=<code>` on failure)", headers(("location" = String)))))]
async fn resend_verification(
    State(state): State<AppState>,
    JsonOrForm { body, form }: JsonOrForm<ResendBody>,
) -> AppResult<Response> {
    if form {
        let email = body.email;
        let q = url::form_urlencoded::Serializer::new(String::new()).append_pair("email", email.trim()).finish();
        let outcome = match resend(&state, &email).await {
            Ok(_) => "sent=1",
            Err(e) if e.status() == StatusCode::TOO_MANY_REQUESTS => "error=cooldown",
            Err(_) => "error=failed",
        };
        return Ok(Redirect::to(&format!("/email-verification-pending?{q}&{outcome}")).into_response());
    }
    Ok(Json(resend(&state, &body.email).await?).into_response())
}

async fn resend(state: &AppState, email: &str) -> AppResult<super::Message> {
    let email = email.trim().to_ascii_lowercase();
    if email.is_empty() {
        return Err(AppError::BadRequest("Please enter your email address".into()));
    }
    if email.len() > 254 || !email.contains('@') {
        return Err(AppError::BadRequest("Please enter a valid email address".into()));
    }
    // The cooldown is per address whether or not it belongs to anyone, so the answer never
    // tells which addresses have accounts.
    let cooldown = account_limits::RESEND_EMAIL.consume(&state.db, &email).await?;
    if !cooldown.allowed {
        let secs = cooldown.reset_secs().max(1);
        return Err(AppError::retry_later(
            format!("Please wait {secs} seconds before requesting another email."),
            secs,
        ));
    }
    if let Some(u) = users::find_by_email(&state.db, &email).await?
        && !u.email_verified
    {
        let settings = state.settings().await?;
        let site_name = Site::from_settings(&settings, &state.config.origin()).name;
        // Sent in the background so that the answer takes the same time either way.
        let state = state.clone();
        state.background.clone().spawn(async move {
            if let Err(e) = send_verification(&state, &u, &site_name).await {
                tracing::error!(error = format!("{e:#}"), user_id = u.id, "verification mail not sent (resend)");
            }
        });
    }
    Ok(super::Message {
        message: "If an account with this email is waiting for verification, a new link is on its way.".into(),
    })
}

pub(crate) fn user_agent(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok())
}
