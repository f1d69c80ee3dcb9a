//! The cache rule of every page, in one place.
//!
//! Every page's header names the signed-in person (and many pages show more of what is
//! theirs), so a page rendered for someone signed in must never be kept by a shared cache
//! (a CDN, a company proxy) and handed to the next visitor, nor left in the browser's cache
//! of a shared computer after they sign out: it is `private, no-store`, whatever the page
//! asked for. A page for a signed-out visitor keeps the rule its handler states (the blog
//! preview, for one, says `private, no-store` itself); a page that states none may be stored
//! but is asked for again each time (`no-cache`), since it changes with the site's settings.
//! Either way `Vary: Cookie`: the same address answers differently once someone signs in.
use axum::extract::Request;
use axum::http::{HeaderValue, Response, header};
use axum::middleware::Next;
use axum::response::IntoResponse;

use crate::services::users::CurrentUser;

/// A page for someone signed in.
pub const PERSONAL: HeaderValue = HeaderValue::from_static("private, no-store");
/// A page that states no rule of its own, for a signed-out visitor.
pub const DEFAULT: HeaderValue = HeaderValue::from_static("no-cache");

fn is_html<B>(res: &Response<B>) -> bool {
    res.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/html"))
}

/// Applies the rule to every HTML answer, error pages included (see the module docs).
pub async fn page_cache_rule(req: Request, next: Next) -> impl IntoResponse {
    let personal = req.extensions().get::<CurrentUser>().is_some();
    let mut res = next.run(req).await;
    if is_html(&res) {
        let headers = res.headers_mut();
        if personal {
            headers.insert(header::CACHE_CONTROL, PERSONAL);
        } else if !headers.contains_key(header::CACHE_CONTROL) {
            headers.insert(header::CACHE_CONTROL, DEFAULT);
        }
        headers.append(header::VARY, HeaderValue::from_static("cookie"));
    }
    res
}
