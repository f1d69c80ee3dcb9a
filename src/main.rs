use clap::Parser;
use reelfind::cli::{self, Cli};
use reelfind::config::{Config, Env};

#[tokio::main]
async fn main() -> std::process::ExitCode {
    // One TLS crypto provider for every client (reqwest, lettre, sqlx).
    let _ = rustls::crypto::ring::default_provider().install_default();
    init_tracing();
    let cli = Cli::parse();
    let config = match Config::from_env(&Env::from_process()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("reelfind: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    match cli::run(cli, config).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e:#}");
            eprintln!("reelfind: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// `RUST_LOG` filters; `REELFIND_LOG_FORMAT=json` switches to JSON lines.
fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let json = std::env::var("REELFIND_LOG_FORMAT").is_ok_and(|v| v == "json");
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    if json { builder.json().init() } else { builder.init() }
}
