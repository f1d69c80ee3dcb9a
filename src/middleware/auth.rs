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
//!   Requests with `Authorization: Bearer` (API keys) skip the check: see [`crate::middleware::api_keys`].
use std::net::{IpAddr, SocketAddr};

use axum::extract::{ConnectInfo, FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum_extra::extract::CookieJar;
use axum_extra::extract::cookie::{Cookie, SameSite};

use crate::config::Config;
use crate::error::{AppError, ErrorCode};
use crate::services::sessions;
use crate::services::users::CurrentUser;
use crate::state::AppState;

/// Name of the session cookie.
pub const SESSION_COOKIE: &str = "reelfind_session";

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
        parts.extensions.get::<CurrentUser>().cloned().map(Self).ok_or_else(|| AppError::NotAuthenticated)
    }
}

/// A signed-in administrator; 401 when signed out, 403 `{error: "Admin access required"}` otherwise.
pub struct RequireAdmin(pub CurrentUser);

impl<S: Send + Sync> FromRequestParts<S> for RequireAdmin {
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, Self::Rejection> {
        let RequireUser(user) = RequireUser::from_request_parts(parts, s).await?;
        if user.is_admin() {
            Ok(Self(user))
        } else {
            Err(AppError::Forbidden("Admin access required".into()).with_code(ErrorCode::AdminRequired))
        }
    }
}

/// The session token the browser presented, if any.
pub fn session_token(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, SESSION_COOKIE)
}

/// The value of one cookie from the `Cookie` headers (`None` when missing or empty).
pub fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    CookieJar::from_headers(headers).get(name).map(|c| c.value().to_owned()).filter(|v| !v.is_empty())
}

/// Name of the cookie that lets a guest's free identification be counted (see
/// `identify::guard`): a random id and its signature.
pub const GUEST_COOKIE: &str = "rf_guest";
/// A guest cookie lasts a year.
const GUEST_COOKIE_MAX_AGE: i64 = 365 * 24 * 3600;

/// The guest id from a valid signed guest cookie, if any.
pub fn guest_id(state: &AppState, headers: &HeaderMap) -> Option<String> {
    state.identify.verify_guest(&cookie_value(headers, GUEST_COOKIE)?)
}

/// `Set-Cookie` for a guest id.
pub fn guest_cookie(state: &AppState, id: &str) -> HeaderValue {
    build_cookie(&state.config, GUEST_COOKIE, &state.identify.sign_guest(id), GUEST_COOKIE_MAX_AGE)
}

/// `Set-Cookie` for a session token: HttpOnly, SameSite=Lax, Path=/, Secure on https.
pub fn session_cookie(config: &Config, token: &str) -> HeaderValue {
    build_cookie(config, SESSION_COOKIE, token, sessions::SESSION_TTL.num_seconds())
}

/// `Set-Cookie` for a session that ends at `expires_at` (the absolute lifetime can make that
/// sooner than the idle one).
pub fn session_cookie_until(config: &Config, token: &str, expires_at: chrono::DateTime<chrono::Utc>) -> HeaderValue {
    let ms = (expires_at - chrono::Utc::now()).num_milliseconds();
    let secs = ((ms + 999) / 1000).clamp(0, sessions::SESSION_TTL.num_seconds());
    build_cookie(config, SESSION_COOKIE, token, secs)
}

/// About the session of this request (set with [`CurrentUser`]).
#[derive(Clone, Copy, Debug)]
pub struct SessionInfo {
    /// When the person signed in on this browser.
    pub signed_in_at: chrono::DateTime<chrono::Utc>,
}

/// `Set-Cookie` that removes the session cookie.
pub fn clear_session_cookie(config: &Config) -> HeaderValue {
    build_cookie(config, SESSION_COOKIE, "", 0)
}

/// A cookie with our flags: HttpOnly, SameSite=Lax, Path=/, Secure on https. Values are
/// base64url, hex or empty, never needing quoting.
pub fn build_cookie(config: &Config, name: &str, value: &str, max_age: i64) -> HeaderValue {
    let cookie = Cookie::build((name, value))
        .path("/")
        .http_only(true)
        .same_site(SameSite::Lax)
        .max_age(::cookie::time::Duration::seconds(max_age))
        .secure(config.secure_cookies())
        .build();
    HeaderValue::from_str(&cookie.to_string()).unwrap_or_else(|_| HeaderValue::from_static("invalid=; Max-Age=0"))
}

/// The client's address for throttling: the socket peer, or with `REELFIND_TRUST_PROXY`
/// the last `X-Forwarded-For` entry (the one our own proxy appended; entries before it are
/// whatever the client claimed). Proxies write entries as `1.2.3.4`, `1.2.3.4:5678`,
/// `2001:db8::1` or `[2001:db8::1]:443`; all are understood. `None` when neither exists
/// (in-process tests) or the entry is not an address.
pub fn client_ip(config: &Config, parts_ext: &axum::http::Extensions, headers: &HeaderMap) -> Option<IpAddr> {
    if config.accounts.trust_proxy {
        let last = headers
            .get_all("x-forwarded-for")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(str::trim)
            .rfind(|s| !s.is_empty());
        if let Some(entry) = last {
            return parse_forwarded_ip(entry);
        }
    }
    parts_ext.get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip())
}

/// One `X-Forwarded-For` entry as an address, with or without a port.
pub fn parse_forwarded_ip(entry: &str) -> Option<IpAddr> {
    let e = entry.trim().trim_matches('"');
    if let Ok(ip) = e.parse::<IpAddr>() {
        return Some(ip);
    }
    if let Ok(sock) = e.parse::<SocketAddr>() {
        return Some(sock.ip());
    }
    // `[v6]` without a port.
    e.strip_prefix('[').and_then(|r| r.strip_suffix(']')).and_then(|v6| v6.parse().ok())
}

/// The client's address ([`client_ip`]) as an extractor; never fails.
pub struct ClientAddr(pub Option<IpAddr>);

impl<S> FromRequestParts<S> for ClientAddr
where
    S: Send + Sync,
    AppState: axum::extract::FromRef<S>,
{
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, Self::Rejection> {
        let state = <AppState as axum::extract::FromRef<S>>::from_ref(s);
        Ok(Self(client_ip(&state.config, &parts.extensions, &parts.headers)))
    }
}

/// Resolves the session cookie into a [`CurrentUser`] (see the module docs). A cookie that
/// no longer matches a live session is cleared; a session whose expiry slid forward gets
/// its cookie re-sent so browser and server agree.
pub async fn session_layer(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    if req.uri().path().starts_with("/assets/") {
        return next.run(req).await;
    }
    // A keyed request is the key's owner, whatever cookie came along (`api_keys`).
    if let Some(token) = crate::middleware::api_keys::bearer_token(req.headers()) {
        let token = token.to_owned();
        return crate::middleware::api_keys::keyed_request(state, token, req, next).await;
    }
    let mut set_cookie = None;
    if let Some(token) = session_token(req.headers()) {
        match sessions::resolve(&state.db, &token).await {
            Ok(Some(resolved)) => {
                if resolved.refreshed {
                    set_cookie = Some(session_cookie_until(&state.config, &token, resolved.expires_at));
                }
                req.extensions_mut().insert(SessionInfo { signed_in_at: resolved.signed_in_at });
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
    // An API key is a credential no browser sends on its own, so a keyed request cannot be
    // forged by another site; `session_layer` then ignores any cookie that came with it.
    if crate::middleware::api_keys::bearer_token(req.headers()).is_some() {
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
        AppError::Forbidden("Cross-origin request refused".into())
            .with_code(ErrorCode::CrossOriginRefused)
            .into_response()
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

#[cfg(test)]
mod tests {
    use super::parse_forwarded_ip;

    #[test]
    fn forwarded_entries_with_and_without_ports() {
        for (entry, want) in [
            ("203.0.113.5", "203.0.113.5"),
            ("203.0.113.5:4711", "203.0.113.5"),
            ("2001:db8::5", "2001:db8::5"),
            ("[2001:db8::5]:443", "2001:db8::5"),
            ("[2001:db8::5]", "2001:db8::5"),
            (" \"198.51.100.2:80\" ", "198.51.100.2"),
        ] {
            assert_eq!(parse_forwarded_ip(entry).map(|ip| ip.to_string()).as_deref(), Some(want), "{entry}");
        }
        assert_eq!(parse_forwarded_ip("unknown"), None);
        assert_eq!(parse_forwarded_ip("_hidden"), None);
    }
}
