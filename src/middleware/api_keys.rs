//! Requests made with an API key (`Authorization: Bearer rf_...`), and CORS for them.
//!
//! A keyed request carries its credential in a header that a browser never adds by itself,
//! so it needs neither the session cookie nor the Origin check (`auth::origin_guard` lets it
//! through, and the session cookie, if one came along, is ignored). In exchange a key may do
//! little: identify (`POST /api/identify`), read its owner's history and results, and read
//! its quota ([`keyed_route`]). Everything else answers 403, whatever the owner's role.
//! Every keyed answer carries `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`
//! (see `services::api_quota`); a refusal for the quota is a 429 with `Retry-After`.
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowHeaders, AllowMethods, AllowOrigin, CorsLayer, ExposeHeaders};

use crate::entities::api_key;
use crate::error::AppError;
use crate::middleware::drain;
use crate::services::api_keys::{self, INVALID_KEY};
use crate::services::api_quota::{self, Refusal};
use crate::services::settings::SettingsExt;
use crate::state::AppState;

/// The key a request was made with (in the request extensions of keyed requests, beside
/// the owner's `CurrentUser`).
#[derive(Clone, Debug)]
pub struct ApiKeyAuth {
    pub key: api_key::Model,
}

/// The key of this request, if it was keyed; never fails.
pub struct MaybeApiKey(pub Option<ApiKeyAuth>);

impl<S: Send + Sync> FromRequestParts<S> for MaybeApiKey {
    type Rejection = std::convert::Infallible;
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        Ok(Self(parts.extensions.get::<ApiKeyAuth>().cloned()))
    }
}

/// The token of an `Authorization: Bearer ...` header, if there is one.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let v = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    // `Bearer` with nothing after it is a (bad) key too, answered 401, not a signed-out request.
    let (scheme, token) = v.split_once(' ').unwrap_or((v, ""));
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// What a key may reach: identify, the owner's history and results, the quota.
pub fn keyed_route(method: &Method, path: &str) -> bool {
    let read = *method == Method::GET || *method == Method::HEAD;
    match path {
        "/api/identify" => *method == Method::POST,
        "/api/history" | "/api/me/quota" => read,
        _ => read && path.strip_prefix("/api/identification/").is_some_and(|id| !id.is_empty() && !id.contains('/')),
    }
}

pub const KEY_FORBIDDEN: &str =
    "API keys can only identify, read your history and results, and read your quota. Sign in for everything else.";

fn unauthorized() -> Response {
    let mut res = AppError::Unauthorized(INVALID_KEY.into()).into_response();
    res.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    res
}

/// Sets the `RateLimit-*` headers unless the handler set its own (a throttle of its own
/// that refused the request explains that refusal better).
pub fn set_rate_headers(headers: &mut HeaderMap, pairs: &[(&'static str, String)]) {
    if headers.contains_key("ratelimit-limit") {
        return;
    }
    for (name, value) in pairs {
        if let Ok(v) = HeaderValue::from_str(value) {
            headers.insert(HeaderName::from_static(name), v);
        }
    }
}

/// Handles a request that came with `Authorization: Bearer` (called by `auth::session_layer`
/// in place of the session lookup).
pub async fn keyed_request(state: AppState, token: String, mut req: Request, next: Next) -> Response {
    let resolved = match api_keys::resolve(&state.db, &token).await {
        Ok(Some(r)) => r,
        Ok(None) => {
            drain::request(req).await;
            return unauthorized();
        }
        Err(e) => return AppError::from(e).into_response(),
    };
    if !keyed_route(req.method(), req.uri().path()) {
        drain::request(req).await;
        return AppError::Forbidden(KEY_FORBIDDEN.into()).into_response();
    }
    let user_id = resolved.user.id;
    req.extensions_mut().insert(resolved.user);
    req.extensions_mut().insert(ApiKeyAuth { key: resolved.key.clone() });
    // Reading the quota costs nothing (the handler sets its own headers).
    if req.uri().path() == "/api/me/quota" {
        return next.run(req).await;
    }
    let admitted = async {
        let settings = state.settings().await?;
        let quota = api_quota::effective(&state.db, &settings, user_id, Some(&resolved.key)).await?;
        api_quota::admit(&state.db, &quota).await
    }
    .await;
    let admitted = match admitted {
        Ok(Ok(a)) => a,
        Ok(Err((why, d))) => {
            let retry = if why == Refusal::Concurrent { 1 } else { d.reset_secs().max(1) };
            let mut headers = d.headers();
            headers.retain(|(n, _)| *n != "retry-after");
            headers.push(("retry-after", retry.to_string()));
            drain::request(req).await;
            return AppError::Throttled { message: why.message().into(), retry_after: retry, headers }
                .with_code(why.code())
                .into_response();
        }
        Err(e) => return AppError::from(e).into_response(),
    };
    // The slot is held until the answer is made and given back before it is sent; on
    // cancellation it drops with this future (and is given back in a task).
    let mut res = next.run(req).await;
    admitted.slot.release().await;
    set_rate_headers(res.headers_mut(), &admitted.headline.headers());
    res
}

/// CORS for keyed requests only: an origin the admin listed (`api_cors_origins`) may call
/// the routes a key can reach, sending `Authorization`; never with credentials (cookies),
/// so a page elsewhere can never act with someone's session.
///
/// The layer runs only on the routes a key can reach ([`keyed_route`]); every other request
/// (pages, the rest of the API, assets) goes straight on, without CORS's per-request header
/// map, `Vary` and origin check: no origin may read them with CORS anyway.
pub fn cors_layer(state: AppState) -> KeyedCorsLayer {
    KeyedCorsLayer(keyed_cors(state))
}

/// [`cors_layer`]'s layer: CORS on the keyed routes, nothing on the others.
#[derive(Clone)]
pub struct KeyedCorsLayer(CorsLayer);

impl<S> tower::Layer<S> for KeyedCorsLayer {
    type Service = KeyedCors<S>;

    fn layer(&self, inner: S) -> KeyedCors<S> {
        KeyedCors { cors: self.0.clone(), inner }
    }
}

/// The service of [`KeyedCorsLayer`].
#[derive(Clone)]
pub struct KeyedCors<S> {
    cors: CorsLayer,
    inner: S,
}

impl<S, B> tower::Service<axum::http::Request<B>> for KeyedCors<S>
where
    S: tower::Service<axum::http::Request<B>, Response = axum::http::Response<axum::body::Body>> + Clone,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = futures::future::Either<tower_http::cors::ResponseFuture<S::Future>, S::Future>;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: axum::http::Request<B>) -> Self::Future {
        let path = req.uri().path();
        if !(keyed_route(&Method::GET, path) || keyed_route(&Method::POST, path)) {
            return futures::future::Either::Right(self.inner.call(req));
        }
        // The inner service polled ready goes into CORS; a clone stays for the next call.
        let clone = self.inner.clone();
        let ready = std::mem::replace(&mut self.inner, clone);
        futures::future::Either::Left(tower::Layer::layer(&self.cors, ready).call(req))
    }
}

fn keyed_cors(state: AppState) -> CorsLayer {
    let allow = AllowOrigin::async_predicate(move |origin: HeaderValue, parts: &Parts| {
        let keyed_path = keyed_route(&Method::GET, parts.uri.path()) || keyed_route(&Method::POST, parts.uri.path());
        // A preflight carries no Authorization; it announces it instead.
        let asks_for_key = bearer_token(&parts.headers).is_some()
            || parts
                .headers
                .get(header::ACCESS_CONTROL_REQUEST_HEADERS)
                .and_then(|v| v.to_str().ok())
                .is_some_and(|v| v.split(',').any(|h| h.trim().eq_ignore_ascii_case("authorization")));
        let state = state.clone();
        async move {
            if !(keyed_path && asks_for_key) {
                return false;
            }
            let Ok(origin) = origin.to_str() else { return false };
            match state.settings().await {
                Ok(s) => s.text("api_cors_origins").split(',').any(|o| !o.is_empty() && o == origin),
                Err(_) => false,
            }
        }
    });
    CorsLayer::new()
        .allow_origin(allow)
        .allow_methods(AllowMethods::list([Method::GET, Method::POST]))
        .allow_headers(AllowHeaders::list([header::AUTHORIZATION, header::CONTENT_TYPE]))
        .expose_headers(ExposeHeaders::list([
            HeaderName::from_static("ratelimit-limit"),
            HeaderName::from_static("ratelimit-remaining"),
            HeaderName::from_static("ratelimit-reset"),
            header::RETRY_AFTER,
        ]))
        .max_age(std::time::Duration::from_secs(600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_keyed_routes() {
        assert!(keyed_route(&Method::POST, "/api/identify"));
        assert!(keyed_route(&Method::GET, "/api/history"));
        assert!(keyed_route(&Method::GET, "/api/identification/abc"));
        assert!(keyed_route(&Method::GET, "/api/me/quota"));
        assert!(!keyed_route(&Method::GET, "/api/identify"));
        assert!(!keyed_route(&Method::DELETE, "/api/history"));
        assert!(!keyed_route(&Method::PUT, "/api/identification/abc/sharing"));
        assert!(!keyed_route(&Method::GET, "/api/identification/abc/sharing"));
        assert!(!keyed_route(&Method::GET, "/api/keys"));
        assert!(!keyed_route(&Method::GET, "/api/admin/settings"));
        assert!(!keyed_route(&Method::GET, "/"));
    }

    #[test]
    fn bearer_tokens() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Bearer rf_abc"));
        assert_eq!(bearer_token(&h), Some("rf_abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("bearer  rf_abc "));
        assert_eq!(bearer_token(&h), Some("rf_abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic xyz"));
        assert_eq!(bearer_token(&h), None);
    }
}
