//! Who is asking. The session layer (accounts) puts a [`CurrentUser`] into the request
//! extensions; handlers read it with the [`MaybeUser`] extractor.
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::Serialize;

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
