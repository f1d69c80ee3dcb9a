//! The OpenAPI 3.1 document of `/api`, generated from the handlers' `#[utoipa::path]`
//! annotations and the `ToSchema` types they take and return. Every API module registers its
//! handlers through `utoipa_axum::routes!`, which adds the route to the router and to this
//! document in one step, so the two cannot drift apart (`tests/openapi.rs` checks it).
use std::sync::OnceLock;

use axum::http::header;
use axum::response::{IntoResponse, Response};
use utoipa::openapi::response::{ResponseBuilder, ResponsesBuilder};
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, RefOr};
use utoipa::{Modify, OpenApi};

use crate::error::{ErrorBody, ErrorCode};

/// The part of the document no handler describes: title, tags, auth schemes, the error body.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "Reelfind API",
        description = "Identify the film or TV show behind a screenshot or clip, and read your history.\n\n\
Every error answer has the body `{error, message, code}`: `message` is for people, `code` is a stable \
machine code (see the `ErrorCode` schema). Rate-limited answers carry `Retry-After`.\n\n\
Browser clients authenticate with the session cookie (writes must come from the site's own origin); \
programs send `Authorization: Bearer rf_...` with a key created in the Profile (Profile, API keys).",
        license(name = "MIT", identifier = "MIT"),
    ),
    components(schemas(ErrorBody, ErrorCode)),
    modifiers(&Security),
    tags(
        (name = "identify", description = "Identify a scene and read results"),
        (name = "history", description = "Your past identifications"),
        (name = "accounts", description = "Sign up, sign in, sessions and passwords"),
        (name = "profile", description = "Your profile, preferences and notifications"),
        (name = "site", description = "Public site data: settings, engines, blog, reviews"),
        (name = "collections", description = "Your saved titles"),
        (name = "admin", description = "Administration (administrators only)"),
        (name = "meta", description = "This document"),
    )
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::with_description(
                crate::middleware::auth::SESSION_COOKIE,
                "The browser session set by sign-in. Writes with it must come from the site's origin.",
            ))),
        );
        components.add_security_scheme(
            "apiKey",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "`Authorization: Bearer rf_...`, a key created in the Profile (Profile, API keys; shown once).",
                    ))
                    .build(),
            ),
        );
    }
}

/// Gives every operation a `default` answer with the error body (whatever status a failure
/// has, a 429 from a limit, a 503 while busy, a 500, its body is documented), and an
/// operation id made of its method and path (handler names repeat across modules).
fn finish(doc: &mut Document) {
    let error = ResponseBuilder::new()
        .description("An error: `{error, message, code}` (plus `retryAfter` on 429 and 503).")
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(RefOr::Ref(utoipa::openapi::Ref::from_schema_name("ErrorBody")))).build(),
        )
        .build();
    for (path, item) in doc.paths.paths.iter_mut() {
        let words: Vec<&str> = path
            .trim_start_matches("/api/")
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
            .collect();
        for (method, op) in [
            ("get", &mut item.get),
            ("put", &mut item.put),
            ("post", &mut item.post),
            ("delete", &mut item.delete),
            ("patch", &mut item.patch),
            ("head", &mut item.head),
            ("options", &mut item.options),
            ("trace", &mut item.trace),
        ] {
            let Some(op) = op else { continue };
            op.operation_id = Some(format!("{method}_{}", words.join("_")));
            let responses = std::mem::take(&mut op.responses);
            let mut builder = ResponsesBuilder::new();
            for (status, r) in responses.responses {
                builder = builder.response(status, r);
            }
            op.responses = builder.response("default", error.clone()).build();
        }
    }
}

/// The `/api` router and its document, built together.
pub fn split() -> (axum::Router<crate::state::AppState>, Document) {
    let (router, mut doc) = utoipa_axum::router::OpenApiRouter::with_openapi(ApiDoc::openapi())
        .nest("/api", super::router().routes(utoipa_axum::routes!(openapi_json)))
        .split_for_parts();
    finish(&mut doc);
    (router, doc)
}

/// The document, built once.
pub fn document() -> &'static Document {
    static DOC: OnceLock<Document> = OnceLock::new();
    DOC.get_or_init(|| split().1)
}

fn document_json() -> &'static str {
    static JSON: OnceLock<String> = OnceLock::new();
    JSON.get_or_init(|| document().to_pretty_json().expect("the OpenAPI document serialises"))
}

/// This document
///
/// The OpenAPI 3.1 description of this API, generated from the server's code.
#[utoipa::path(
    get,
    path = "/openapi.json",
    tag = "meta",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json", body = Object))
)]
async fn openapi_json() -> Response {
    ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "public, max-age=300")], document_json())
        .into_response()
}
