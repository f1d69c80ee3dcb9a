use clap::Parser;
use reelfind::cli::{self, Cli};
use reelfind::config::{Config, Env};

fn main() -> std::process::ExitCode {
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
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("reelfind: cannot start the async runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let code = match runtime.block_on(cli::run(cli, config)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // Said once: as a log event where logs are machine-read (JSON lines), else as one
            // plain line for the person at the terminal (redacted like every log line).
            if json_logs() {
                tracing::error!("{e:#}");
            } else {
                eprintln!("reelfind: {}", reelfind::config::redact(&format!("{e:#}")));
            }
            std::process::ExitCode::FAILURE
        }
    };
    // Dropping a runtime waits for every blocking task; work nobody waits for any more was
    // cancelled when the server stopped, so give it a moment to notice, then exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    code
}

/// `RUST_LOG` filters; `REELFIND_LOG_FORMAT=json` switches to JSON lines. Every line passes
/// through `config::redact`, so no configured secret reaches the log.
fn init_tracing() {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let json = json_logs();
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(|| reelfind::config::RedactingStderr);
    if json { builder.json().init() } else { builder.init() }
}

/// `REELFIND_LOG_FORMAT=json`: log lines are for a machine.
fn json_logs() -> bool {
    std::env::var("REELFIND_LOG_FORMAT").is_ok_and(|v| v == "json")
}
