//! The JSON API under `/api` (SPEC section 7). Shapes are camelCase.
pub mod accounts;
pub mod admin;
pub mod admin_library;
pub mod blog;
pub mod collections;
pub mod google;
pub mod identify;
pub mod library;
pub mod notifications;
pub mod profiles;
pub mod site;
pub mod testimonials;

use axum::Router;

use crate::state::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
        .merge(site::router())
        .merge(accounts::router())
        .merge(admin::router())
        .merge(admin_library::router())
        .merge(google::router())
        .merge(profiles::router())
        .merge(identify::router())
        .merge(library::router())
        .merge(notifications::router())
        .merge(blog::router())
        .merge(collections::router())
        .merge(testimonials::router())
        .fallback(api_not_found)
}

async fn api_not_found() -> crate::error::AppError {
    crate::error::AppError::NotFound
}
