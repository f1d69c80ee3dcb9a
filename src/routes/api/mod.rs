//! The JSON API under `/api` (SPEC section 7). Shapes are camelCase.
pub mod account;
pub mod accounts;
pub mod admin;
pub mod blog;
pub mod collections;
pub mod feedback;
pub mod google;
pub mod identify;
pub mod identify_errors;
pub mod identify_form;
pub mod keys;
pub mod library;
pub mod notifications;
pub mod openapi;
pub mod profiles;
pub mod quota;
pub mod site;
pub mod testimonials;

use utoipa_axum::router::OpenApiRouter;

use crate::state::AppState;

/// Every API route, relative to `/api`. Modules register handlers with `routes!` only (never
/// a bare `.route`), so each one also lands in the OpenAPI document; see [`openapi`].
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(site::router())
        .merge(accounts::router())
        .merge(account::router())
        .merge(admin::router())
        .merge(admin::blog::router())
        .merge(admin::library::router())
        .merge(admin::testimonials::router())
        .merge(admin::corrections::router())
        .merge(admin::insight::router())
        .merge(google::router())
        .merge(profiles::router())
        .merge(identify::router())
        .merge(feedback::router())
        .merge(keys::router())
        .merge(quota::router())
        .merge(library::router())
        .merge(notifications::router())
        .merge(blog::router())
        .merge(collections::router())
        .merge(testimonials::router())
        .fallback(api_not_found)
}

/// An answer that is only a sentence for the person (sign-out, password changed...).
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Message {
    pub message: String,
}

impl Message {
    pub fn json(text: impl Into<String>) -> axum::Json<Message> {
        axum::Json(Message { message: text.into() })
    }
}

async fn api_not_found() -> crate::error::AppError {
    crate::error::AppError::NotFound
}
