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
        // Session before the error pages (they show who is signed in); Origin check first of all.
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::auth::session_layer))
        .layer(axum::middleware::from_fn_with_state(state.clone(), crate::auth::origin_guard))
        .layer(security_headers)
        .layer(CompressionLayer::new())
        .layer(CatchPanicLayer::new())
        .layer(trace)
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .with_state(state)
}

/// Opens the database, migrates, and serves until SIGTERM or Ctrl-C.
pub async fn serve(config: Config) -> anyhow::Result<()> {
    std::fs::create_dir_all(&config.data_dir)?;
    let db = crate::db::connect(config.database_url.expose()).await?;
    crate::db::migrate(&db).await?;
    let addr = config.addr;
    let state = AppState::new(db, config)?;
    let app = build_router(state.clone());
    crate::library::demo::spawn_if_empty(state.library.clone(), &state.config.library);
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("cannot listen on {addr} (REELFIND_ADDR): {e}"))?;
    tracing::info!("Reelfind is listening on http://{addr} (public URL {})", state.config.public_url);
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>())
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    state.db.clone().close().await.ok();
    tracing::info!("stopped cleanly");
    Ok(())
}

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
    tracing::info!("shutting down: finishing requests in flight");
    // Give in-flight requests a bounded time; axum stops accepting at once.
    tokio::spawn(async {
        tokio::time::sleep(Duration::from_secs(30)).await;
        tracing::warn!("requests still running after 30 s; exiting");
        std::process::exit(0);
    });
}
