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
use crate::services::analytics_tag::AnalyticsTag;
use crate::state::AppState;

/// The nonce of this response's scripts, in the request's extensions.
#[derive(Clone, Debug)]
pub struct CspNonce(pub String);

/// `max-age` of HSTS: one year.
pub const HSTS: &str = "max-age=31536000";

/// 128 random bits, base64url (no character a template or a header would escape).
pub fn new_nonce() -> String {
    let bytes: [u8; 16] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Length of a nonce: 16 bytes in base64url without padding.
pub const NONCE_LEN: usize = 22;

/// A nonce as [`new_nonce`] makes it, on the stack (the public answers put one in every
/// kept answer without allocating for it).
pub fn new_nonce_bytes() -> [u8; NONCE_LEN] {
    let bytes: [u8; 16] = rand::random();
    let mut out = [0u8; NONCE_LEN];
    let n = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode_slice(bytes, &mut out)
        .expect("16 bytes are 22 base64 characters");
    debug_assert_eq!(n, NONCE_LEN);
    out
}

/// Paths that never answer a page (JSON, static files), so need no nonce.
fn never_a_page(path: &str) -> bool {
    path.starts_with("/api/") || path.starts_with("/assets/")
}

/// The policy for an HTML page whose scripts carry `nonce`; `tag` is the admin's third-party
/// analytics tag, whose hosts (and only those) are added to `script-src` and `connect-src`.
pub fn policy(config: &Config, nonce: &str, tag: Option<&AnalyticsTag>) -> String {
    let mut img = String::from("'self' data: blob: https:");
    let image_base = config.identify.tmdb_image_base_url.origin().ascii_serialization();
    if config.identify.tmdb_image_base_url.scheme() == "http" {
        img.push(' ');
        img.push_str(&image_base);
    }
    let (mut script_hosts, mut connect_hosts) = (String::new(), String::new());
    if let Some(tag) = tag {
        for h in tag.script_hosts() {
            script_hosts.push(' ');
            script_hosts.push_str(&h);
        }
        for h in tag.connect_hosts() {
            connect_hosts.push(' ');
            connect_hosts.push_str(&h);
        }
    }
    let mut p = format!(
        "default-src 'self'; \
         script-src 'nonce-{nonce}' 'strict-dynamic' 'self'{script_hosts}; \
         style-src 'self' 'unsafe-inline'; \
         img-src {img}; \
         media-src 'self' blob:; \
         font-src 'self' data:; \
         connect-src 'self'{connect_hosts}; \
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

/// Gives the request a nonce (unless an outer layer gave it one: the public answers keep a
/// page cut at its nonce), and the response its CSP (HTML) and HSTS (https) headers.
pub async fn csp_layer(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let nonce = match req.extensions().get::<CspNonce>() {
        Some(n) => Some(n.0.clone()),
        None if never_a_page(req.uri().path()) => None,
        None => {
            let n = new_nonce();
            req.extensions_mut().insert(CspNonce(n.clone()));
            Some(n)
        }
    };
    let mut res = next.run(req).await;
    let html = res
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("text/html"));
    let tag = if html { state.settings().await.ok().and_then(|s| AnalyticsTag::from_settings(&s)) } else { None };
    if html && let Ok(v) = HeaderValue::from_str(&policy(&state.config, &nonce.unwrap_or_else(new_nonce), tag.as_ref()))
    {
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
        let p = policy(&c, "abc123", None);
        assert!(p.contains("script-src 'nonce-abc123' 'strict-dynamic'"), "{p}");
        assert!(!p.contains("unsafe-eval"));
        assert!(!p.split(';').any(|d| d.trim().starts_with("script-src") && d.contains("unsafe-inline")));
        assert!(
            p.contains("object-src 'none'") && p.contains("base-uri 'none'") && p.contains("frame-ancestors 'none'")
        );
        assert!(!p.contains("upgrade-insecure-requests"));
        let https = Config::from_env(&Env::from_pairs([("REELFIND_PUBLIC_URL", "https://reelfind.example")])).unwrap();
        assert!(policy(&https, "n", None).contains("upgrade-insecure-requests"));
        let local_images =
            Config::from_env(&Env::from_pairs([("TMDB_IMAGE_BASE_URL", "http://127.0.0.1:9999/t/p/")])).unwrap();
        assert!(policy(&local_images, "n", None).contains("img-src 'self' data: blob: https: http://127.0.0.1:9999;"));
        assert_ne!(new_nonce(), new_nonce());
        assert_eq!(new_nonce().len(), NONCE_LEN);
        let n = new_nonce_bytes();
        assert!(n.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_'));
        assert_ne!(n, new_nonce_bytes());
    }

    #[test]
    fn an_analytics_tag_opens_its_hosts_and_nothing_else() {
        let c = Config::from_env(&Env::default()).unwrap();
        let settings = |pairs: &[(&str, &str)]| pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        let none = policy(&c, "n", None);
        assert!(none.contains("connect-src 'self';"), "{none}");
        let m = AnalyticsTag::from_settings(&settings(&[
            ("analytics_tag_provider", "matomo"),
            ("analytics_tag_id", "4"),
            ("analytics_tag_host", "https://stats.example.org/matomo/"),
        ]))
        .unwrap();
        let p = policy(&c, "n", Some(&m));
        assert!(p.contains("script-src 'nonce-n' 'strict-dynamic' 'self' https://stats.example.org;"), "{p}");
        assert!(p.contains("connect-src 'self' https://stats.example.org;"), "{p}");
        assert_eq!(p.replace(" https://stats.example.org", ""), none, "nothing else changes");
    }
}
