//! Who is asking, and whether they may.
//!
//! * [`session_layer`] reads the session cookie on every request and puts a [`CurrentUser`]
//!   into the request extensions. Handlers read it with [`MaybeUser`], [`RequireUser`]
//!   (401 `{error: "Not authenticated"}`) or [`RequireAdmin`] (403 for signed-in non-admins).
//! * [`origin_guard`] refuses unsafe requests (POST, PUT, PATCH, DELETE) made from another
//!   origin. The rule: the `Origin` header, or when it is missing the `Referer`'s origin,
//!   must be the public origin (`REELFIND_PUBLIC_URL`; on a loopback host also the origin
//!   the request was sent to). A request with neither header (curl, scripts) is allowed
//!   only when it carries no session cookie, so it cannot act as a signed-in person.
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use crate::config::Config;
use crate::error::AppError;
use crate::services::mail::Mailer;
use crate::services::sessions;
use crate::services::throttle::{Cooldown, LoginThrottle};
use crate::state::AppState;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "reelfind_session";

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CurrentUser {
    pub id: i64,
    pub username: String,
    pub email: String,
    pub role: String,
}

impl CurrentUser {
    pub fn is_admin(&self) -> bool {
        self.role == "admin"
    }
}

/// The signed-in user, if any. Never fails.
pub struct MaybeUser(pub Option<CurrentUser>);

impl<S: Send + Sync> FromRequestParts<S> for MaybeUser {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(parts.extensions.get::<CurrentUser>().cloned()))
    }
}

/// The signed-in user; 401 `{error: "Not authenticated"}` otherwise (an HTML page on page routes).
pub struct RequireUser(pub CurrentUser);

impl<S: Send + Sync> FromRequestParts<S> for RequireUser {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<CurrentUser>()
            .cloned()
            .map(Self)
            .ok_or_else(|| AppError::Unauthorized("Not authenticated".into()))
    }
}

/// A signed-in administrator; 401 when signed out, 403 `{error: "Admin access required"}` otherwise.
pub struct RequireAdmin(pub CurrentUser);

impl<S: Send + Sync> FromRequestParts<S> for RequireAdmin {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, Self::Rejection> {
        let RequireUser(user) = RequireUser::from_request_parts(parts, s).await?;
        if user.is_admin() { Ok(Self(user)) } else { Err(AppError::Forbidden("Admin access required".into())) }
    }
}

/// Live state of the accounts feature: the mailer and the brakes on guessing.
pub struct Accounts {
    pub mailer: Mailer,
    pub login_throttle: LoginThrottle,
    pub resend_cooldown: Cooldown,
}

/// Seconds between two verification mails to one address.
pub const RESEND_COOLDOWN: Duration = Duration::from_secs(60);

impl Accounts {
    pub fn new(config: &Config) -> anyhow::Result<Arc<Self>> {
        Ok(Arc::new(Self {
            mailer: Mailer::from_config(config)?,
            login_throttle: LoginThrottle::default(),
            resend_cooldown: Cooldown::new(RESEND_COOLDOWN),
        }))
    }
}

/// The session token the browser presented, if any.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, SESSION_COOKIE)
}

/// The value of one cookie from the `Cookie` headers.
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, v)| *k == name && !v.is_empty())
        .map(|(_, v)| v.to_owned())
}

/// `Set-Cookie` for a session token: HttpOnly, SameSite=Lax, Path=/, Secure on https.
pub fn session_cookie(config: &Config, token: &str) -> HeaderValue {
    build_cookie(config, SESSION_COOKIE, token, sessions::SESSION_TTL.num_seconds())
}

/// `Set-Cookie` that removes the session cookie.
pub fn clear_session_cookie(config: &Config) -> HeaderValue {
    build_cookie(config, SESSION_COOKIE, "", 0)
}

/// A cookie with our flags. Values are base64url or empty, never needing quoting.
pub fn build_cookie(config: &Config, name: &str, value: &str, max_age: i64) -> HeaderValue {
    let secure = if config.secure_cookies() { "; Secure" } else { "" };
    let v = format!("{name}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}");
    HeaderValue::from_str(&v).unwrap_or_else(|_| HeaderValue::from_static("invalid=; Max-Age=0"))
}

/// The client's address for throttling: the socket peer, or with `REELFIND_TRUST_PROXY`
/// the last `X-Forwarded-For` entry. `unknown` when neither exists (in-process tests).
pub fn client_addr(config: &Config, parts_ext: &axum::http::Extensions, headers: &HeaderMap) -> String {
    if config.accounts.trust_proxy {
        if let Some(last) = headers
            .get("x-forwarded-for")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.rsplit(',').next())
            .map(str::trim)
            .filter(|s| !s.is_empty())
        {
            return last.to_owned();
        }
    }
    parts_ext.get::<ConnectInfo<SocketAddr>>().map_or_else(|| "unknown".to_owned(), |c| c.0.ip().to_string())
}

/// Resolves the session cookie into a [`CurrentUser`] (see the module docs). A cookie that
/// no longer matches a live session is cleared; a session whose expiry slid forward gets
/// its cookie re-sent so browser and server agree.
pub async fn session_layer(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if req.uri().path().starts_with("/assets/") {
        return next.run(req).await;
    }
    let mut set_cookie = None;
    if let Some(token) = session_token(req.headers()) {
        match sessions::resolve(&state.db, &token).await {
            Ok(Some(resolved)) => {
                if resolved.refreshed {
                    set_cookie = Some(session_cookie(&state.config, &token));
                }
                req.extensions_mut().insert(resolved.user);
            }
            Ok(None) => set_cookie = Some(clear_session_cookie(&state.config)),
            Err(e) => tracing::error!(error = %e, "session lookup failed; treating the request as signed out"),
        }
    }
    let mut res = next.run(req).await;
    if let Some(cookie) = set_cookie {
        // The handler's own session cookie (login, logout) wins.
        let handler_set = res
            .headers()
            .get_all(header::SET_COOKIE)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.starts_with(&format!("{SESSION_COOKIE}="))));
        if !handler_set {
            res.headers_mut().append(header::SET_COOKIE, cookie);
        }
    }
    res
}

/// Refuses cross-origin unsafe requests (see the module docs for the rule).
pub async fn origin_guard(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS | Method::TRACE) {
        return next.run(req).await;
    }
    let headers = req.headers();
    let claimed = headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()).map(str::to_owned).or_else(|| {
        headers
            .get(header::REFERER)
            .and_then(|v| v.to_str().ok())
            .and_then(|r| url::Url::parse(r).ok())
            .map(|u| u.origin().ascii_serialization())
    });
    let allowed = match claimed {
        Some(origin) => same_origin(&state.config, &origin, headers),
        None => session_token(headers).is_none(),
    };
    if allowed {
        next.run(req).await
    } else {
        AppError::Forbidden("Cross-origin request refused".into()).into_response()
    }
}

fn same_origin(config: &Config, origin: &str, headers: &HeaderMap) -> bool {
    if origin == config.origin() {
        return true;
    }
    // On a loopback host the site is often opened as localhost or 127.0.0.1 interchangeably.
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else { return false };
    let loopback = url::Url::parse(&format!("http://{host}"))
        .ok()
        .is_some_and(|u| matches!(u.host_str(), Some("localhost" | "127.0.0.1" | "[::1]")));
    loopback && origin.split_once("://").is_some_and(|(_, h)| h == host)
}
