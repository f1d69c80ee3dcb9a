//! A refused request's body read away before the refusal is sent: raw, bounded in bytes and
//! time, nothing of it kept. Used wherever a request is refused before its body is read
//! (a key's quota, an upload the node cannot take).
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::Method;

/// Most of a refused request's body that is read and thrown away before the refusal is sent,
/// and how long that may take. A client still writing its upload when the answer comes
/// meets a closed connection ("broken pipe", or a browser's network error) instead of the
/// answer, unless the server has read what it sent; a screenshot fits, a long video does
/// not and is cut off. Nothing read is kept: each chunk is dropped as it comes.
pub const DRAIN_BYTES: u64 = 4 << 20;
pub const DRAIN_TIME: Duration = Duration::from_secs(5);

/// Reads what is left of a refused request's body (at most [`DRAIN_BYTES`] raw bytes, for at
/// most [`DRAIN_TIME`], keeping none of them), so that the client gets to read the refusal.
pub async fn body(body: Body) {
    use http_body_util::BodyExt;
    let read_away = async {
        let mut body = body;
        let mut left = DRAIN_BYTES;
        while let Some(Ok(frame)) = body.frame().await {
            let n = frame.data_ref().map_or(0, |d| d.len() as u64);
            let Some(rest) = left.checked_sub(n) else { return };
            left = rest;
        }
    };
    let _ = tokio::time::timeout(DRAIN_TIME, read_away).await;
}

/// [`body`] of a request that has one (not a GET or HEAD).
pub async fn request(req: Request) {
    if req.method() == Method::GET || req.method() == Method::HEAD {
        return;
    }
    body(req.into_body()).await;
}
