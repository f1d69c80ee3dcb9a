//! Content-Security-Policy and Strict-Transport-Security.
//!
//! Every HTML page gets a strict CSP: scripts run only when they carry the page's nonce (a
//! fresh random value per response, put in each `<script>` by `templates/base.html` from
//! `PageCtx::csp_nonce`) or were loaded by such a script (`'strict-dynamic'`: the islands
//! runtime imports its chunks). No inline event handlers, no `eval`, no plugins, no
//! `<base>` tricks, no framing. JSON-LD blocks are data, not script, and carry the nonce too.
//! Styles may be inline (`style` attributes set by the server and by React). Images may come
//! from any https host (posters, Google avatars, admin pictures) and from the configured
//! TMDB image base; frames only from YouTube (trailers).
//!
//! When the public URL is https, every response also says `Strict-Transport-Security`, so
//! browsers never use plain http for the site again (one year; subdomains are the
//! operator's own business and are not included).
use axum::extract::{Request, State};
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;
use base64::Engine as _;

use crate::config::Config;
use crate::state::AppState;

/// The nonce of this response's scripts, in the request's extensions.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

/// `max-age` of HSTS: one year.
pub const HSTS: &str = "max-age=31536000";

/// 128 random bits, base64.
pub fn new_nonce() -> String {
    let bytes: [u8; 16] = rand::random();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The policy for an HTML page whose scripts carry `nonce`.
pub fn policy(config: &Config, nonce: &str) -> String {
    let mut img = String::from("'self' data: blob: https:");
    let image_base = config.identify.tmdb_image_base_url.origin().ascii_serialization();
    if config.identify.tmdb_image_base_url.scheme() == "http" {
        img.push(' ');
        img.push_str(&image_base);
    }
    let mut p = format!(
        "default-src 'self'; \
         script-src 'nonce-{nonce}' 'strict-dynamic' 'self'; \
         style-src 'self' 'unsafe-inline'; \
         img-src {img}; \
         media-src 'self' blob:; \
         font-src 'self' data:; \
         connect-src 'self'; \
         frame-src https://www.youtube.com https://www.youtube-nocookie.com; \
         worker-src 'self'; \
         manifest-src 'self'; \
         object-src 'none'; \
         base-uri 'none'; \
         form-action 'self'; \
         frame-ancestors 'none'"
    );
    if config.secure_cookies() {
        p.push_str("; upgrade-insecure-requests");
    }
    p
}

/// Gives the request a nonce, and the response its CSP (HTML) and HSTS (https) headers.
pub async fn csp_layer(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let nonce = new_nonce();
    req.extensions_mut().insert(CspNonce(nonce.clone()));
    let mut res = next.run(req).await;
    let html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/html"));
    if html && let Ok(v) = HeaderValue::from_str(&policy(&state.config, &nonce)) {
        res.headers_mut().insert(header::CONTENT_SECURITY_POLICY, v);
    }
    if state.config.secure_cookies() {
        res.headers_mut().insert(header::STRICT_TRANSPORT_SECURITY, HeaderValue::from_static(HSTS));
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Env;

    #[test]
    fn the_policy_allows_only_nonced_scripts() {
        let c = Config::from_env(&Env::default()).unwrap();
        let p = policy(&c, "abc123");
        assert!(p.contains("script-src 'nonce-abc123' 'strict-dynamic'"), "{p}");
        assert!(!p.contains("unsafe-eval"));
        assert!(!p.split(';').any(|d| d.trim().starts_with("script-src") && d.contains("unsafe-inline")));
        assert!(
            p.contains("object-src 'none'") && p.contains("base-uri 'none'") && p.contains("frame-ancestors 'none'")
        );
        assert!(!p.contains("upgrade-insecure-requests"));
        let https = Config::from_env(&Env::from_pairs([("REELFIND_PUBLIC_URL", "https://reelfind.example")])).unwrap();
        assert!(policy(&https, "n").contains("upgrade-insecure-requests"));
        let local_images =
            Config::from_env(&Env::from_pairs([("TMDB_IMAGE_BASE_URL", "http://127.0.0.1:9999/t/p/")])).unwrap();
        assert!(policy(&local_images, "n").contains("img-src 'self' data: blob: https: http://127.0.0.1:9999;"));
        assert_ne!(new_nonce(), new_nonce());
    }
}
