//! Building the router with its layers, and serving it.
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderName, HeaderValue, Request, header};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::config::Config;
use crate::routes;
use crate::state::AppState;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The whole application as a service; tests call this and drive it without a socket.
pub fn build_router(state: AppState) -> Router {
    let trace = TraceLayer::new_for_http().make_span_with(|req: &Request<_>| {
        let id = req.headers().get(&REQUEST_ID).and_then(|v| v.to_str().ok()).unwrap_or("-");
        tracing::info_span!("request", method = %req.method(), path = %req.uri().path(), request_id = %id)
    });
    let security_headers = ServiceBuilder::new()
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("strict-origin-when-cross-origin"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")));

    routes::router(&state)
        .layer(axum::middleware::from_fn_with_state(state.clone(), routes::errors::html_errors))
        // Inside the session layer (it needs to know who is signed in), outside the error
        // pages (they carry the person's name too).
        .layer(axum::middleware::from_fn(routes::cache::page_cache_rule))
        // Session before the error pages (they show who is signed in); Origin check first of all.
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::middleware::auth::session_layer))
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::middleware::auth::origin_guard))
        // CORS for keyed API requests from origins the admin allows (answers their preflights).
        .layer(crate::middleware::api_keys::cors_layer(state.clone()))
        // A script nonce for the page (and its error page), CSP on HTML, HSTS behind https.
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::middleware::csp::csp_layer))
        .layer(security_headers)
        // Inside compression: it reads the framework's (uncompressed) refusal text.
        .layer(axum::middleware::from_fn(routes::errors::api_errors))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(trace)
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        // Public answers kept ready: a kept one skips every layer above (request id, trace,
        // session, CORS, CSP, cache rule, error pages), which ran when it was made. It keeps
        // a gzipped copy too; compression, outside it, handles the other encodings.
        .layer(routes::public_answers::PublicAnswersLayer::new(state.clone()))
        .layer(CompressionLayer::new())
        // Probes outside every layer: liveness must cost nothing and need nothing.
        .merge(routes::health::router())
        .with_state(state)
}

/// A handler that panicked answers like any internal error (logged, JSON with its `code`).
fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> axum::response::Response {
    use axum::response::IntoResponse;
    crate::error::AppError::Internal(anyhow::anyhow!("handler panicked")).into_response()
}

/// Opens the database, migrates, and serves until SIGTERM or Ctrl-C.
///
/// On the signal, new connections are refused and every media job is cancelled at once
/// (its ffmpeg children killed, its blocking loops stopped, its upload folder deleted); the
/// requests in flight then answer quickly. Should one still run after
/// `REELFIND_SHUTDOWN_GRACE_SECS`, a timer on a thread of its own (not on the runtime, which
/// may be the thing that is stuck) deletes the running requests' upload folders and exits.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.data_dir)?;
    let swept = crate::identify::upload::sweep(&config.data_dir);
    if swept > 0 {
        tracing::info!("deleted {swept} upload folder(s) left by an earlier run that did not stop cleanly");
    }
    let db = crate::db::connect(config.database_url.expose()).await?;
    crate::db::migrate(&db).await?;
    let addr = config.addr;
    let state = AppState::new(db, config)?;
    let app = build_router(state.clone());
    // Background work that nobody waits for stops with the server (see the end of this function).
    let indexing = crate::library::demo::spawn_if_empty(
        state.library.clone(),
        &state.config.library,
        state.admission.shutdown.clone(),
    );
    let sweeper =
        crate::services::analytics::spawn_retention_sweeper(state.db.clone(), state.admission.shutdown.clone());
    // The answer memory is read before the first identification needs it (10^6 answers take
    // seconds); a lookup meanwhile waits for this reading rather than starting its own.
    let warm = {
        let (memory, db, stop) = (state.memory.clone(), state.db.clone(), state.admission.shutdown.clone());
        tokio::spawn(async move {
            tokio::select! {
                res = memory.refresh(&db, true) => match res {
                    Ok(()) if memory.is_shared() => tracing::info!("answer memory searched in the shared index"),
                    Ok(()) => tracing::info!(entries = memory.index().len(), "answer memory read"),
                    Err(error) => tracing::warn!(%error, "the answer memory could not be read at start"),
                },
                _ = stop.cancelled() => {}
            }
        })
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr} (REELFIND_ADDR): {e}"))?;
    tracing::info!("Reelfind is listening on http://{addr} (public URL {})", state.config.public_url);
    let shutdown = state.admission.shutdown.clone();
    let grace = state.config.admission.shutdown_grace;
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(async move {
            shutdown_signal().await;
            tracing::info!("shutting down: cancelling media work, finishing requests in flight");
            shutdown.cancel();
            exit_after(grace);
        })
        .await?;
    state.admission.shutdown.cancel();
    // The runtime would wait for a blocking task at exit: the cancelled jobs end within moments
    // (their ffmpeg children already killed); wait for them so that nothing writes after this.
    let background = async {
        if let Some(task) = indexing {
            let _ = task.await;
        }
        let _ = sweeper.await;
        let _ = warm.await;
    };
    if tokio::time::timeout(BACKGROUND_STOP, background).await.is_err() {
        tracing::warn!("background work still running {} s after the shutdown", BACKGROUND_STOP.as_secs());
    }
    // Mail a request handed over (a reset or verification link) is finished, not dropped:
    // the person was told it is on its way.
    state.background.close();
    if tokio::time::timeout(MAIL_STOP, state.background.wait()).await.is_err() {
        tracing::warn!(
            left = state.background.len(),
            "mail still being sent {} s after the shutdown",
            MAIL_STOP.as_secs()
        );
    }
    state.db.clone().close().await.ok();
    tracing::info!("stopped cleanly");
    Ok(())
}

/// How long the server waits for its cancelled background jobs before exiting anyway.
const BACKGROUND_STOP: Duration = Duration::from_secs(1);

/// How long the server waits for account mail being sent when it is asked to stop.
const MAIL_STOP: Duration = Duration::from_secs(5);

async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c().await.ok();
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}

/// The last resort: exits after `grace` whatever is still running.
fn exit_after(grace: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(grace);
        tracing::warn!("requests still running {} s after the shutdown signal; exiting", grace.as_secs());
        crate::identify::upload::remove_live_dirs();
        std::process::exit(1);
    });
}
