//! Probes for load balancers and orchestrators.
//!
//! * `GET /healthz` (liveness): the process is up and serving. It touches nothing else, so
//!   a slow or unreachable database never gets a node restarted; it sits outside the
//!   middleware (no session, no request id, no log line) and costs what a bare answer costs.
//! * `GET /readyz` (readiness): this node can serve requests, so a balancer may send it
//!   traffic. It checks the database with one trivial query and the Library index (the
//!   embedded index's catalog can be read; a Milvus index is asked whether its collection is
//!   there and loaded). `200 {"status":"ready",...}` or `503 {"status":"unavailable",...}`
//!   with the check that failed; never cached. A Milvus index that does not answer makes the
//!   node `200 {"status":"degraded",...}`: every node shares that Milvus, so taking this one
//!   out of the balancer would not help, and it still serves everything but library searches
//!   (which answer 503 `library_unavailable`; `auto` goes on to the cloud engines).
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::json;

use crate::state::AppState;

/// The probes, added by `app::build_router` outside every layer.
pub fn router() -> axum::Router<AppState> {
    axum::Router::new().route("/healthz", get(liveness)).route("/readyz", get(readiness))
}

async fn liveness() -> &'static str {
    "ok"
}

async fn readiness(State(state): State<AppState>) -> Response {
    use sea_orm::ConnectionTrait;
    let database = match state.db.execute_unprepared("SELECT 1").await {
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::warn!(error = %e, "readiness: the database does not answer");
            Err("the database does not answer")
        }
    };
    let library = library_check(&state);
    let entries = entries_check(&state).await;
    let word = |r: &Result<(), &'static str>| match r {
        Ok(()) => "ok".to_owned(),
        Err(why) => (*why).to_owned(),
    };
    let ready = database.is_ok() && library.is_ok();
    let library_word = match (&library, &entries) {
        (Ok(()), Err(why)) => format!("degraded: {why}"),
        _ => word(&library),
    };
    let status = match (ready, entries.is_ok()) {
        (false, _) => "unavailable",
        (true, true) => "ready",
        (true, false) => "degraded",
    };
    let body = json!({
        "status": status,
        "checks": { "database": word(&database), "library": library_word },
        "libraryIndex": state.library.backend().kind(),
    });
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    let mut res = (status, Json(body)).into_response();
    res.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// The Library index can serve searches: the embedded index reads its catalog (a damaged
/// one is set aside and an empty catalog serves, which is still ready).
fn library_check(state: &AppState) -> Result<(), &'static str> {
    state.library.refresh().map_err(|e| {
        tracing::warn!(error = %e, "readiness: the Library index cannot be read");
        "the Library index cannot be read"
    })
}

/// Where the frame hashes live answers: nothing to ask for the embedded index, one round trip
/// (bounded by the address's `timeout`) for Milvus.
async fn entries_check(state: &AppState) -> Result<(), &'static str> {
    if state.library.milvus().is_none() {
        return Ok(());
    }
    let library = state.library.clone();
    match tokio::task::spawn_blocking(move || library.check_entries()).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => {
            tracing::warn!(error = %e, "readiness: the Library's Milvus index does not answer");
            Err("the Milvus index does not answer")
        }
        Err(_) => Err("the Milvus index does not answer"),
    }
}
