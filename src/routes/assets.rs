//! Static files. Hashed bundles under `/assets/dist` never change, so browsers may keep
//! them for a year; everything else is revalidated.
use axum::Router;
use axum::http::{HeaderValue, header};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;

use crate::state::AppState;

/// `/assets` service for the configured folder.
pub fn service(dir: &std::path::Path) -> Router<AppState> {
    let dist =
        Router::new().fallback_service(ServeDir::new(dir.join("dist"))).layer(SetResponseHeaderLayer::overriding(
            header::CACHE_CONTROL,
            HeaderValue::from_static("public, max-age=31536000, immutable"),
        ));
    let rest = Router::new().fallback_service(ServeDir::new(dir)).layer(SetResponseHeaderLayer::if_not_present(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=3600"),
    ));
    Router::new().nest("/assets/dist", dist).nest("/assets", rest)
}
