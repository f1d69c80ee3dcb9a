//! Typed configuration read from the environment.
//!
//! Every variable the server understands is read here and nowhere else, so the list in
//! README.md has one source. Defaults boot a working site with nothing set (SQLite in the
//! data directory, listening on 127.0.0.1:3000). A value that does not parse stops the
//! start with a message naming the variable. Secrets are wrapped in [`Secret`], whose
//! `Debug` never prints them.
use std::collections::HashMap;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::str::FromStr;

use url::Url;

/// A value that must never reach a log line.
///
/// Making one also registers its value (and, for a URL, its password) with [`redact`], the
/// last line of defence: the log writer passes every line through it, and error texts
/// from providers pass through it before they are logged or stored. So even a key that a
/// provider echoes back, or a URL with a key in its query inside a transport error, is
/// written as `[redacted]`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

/// Values shorter than this are not redacted (they would mangle ordinary words).
const MIN_REDACTED_LEN: usize = 6;

fn known_secrets() -> &'static std::sync::RwLock<Vec<String>> {
    static KNOWN: std::sync::OnceLock<std::sync::RwLock<Vec<String>>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(Default::default)
}

fn register_secret(value: &str) {
    let mut candidates = vec![value.to_owned()];
    if let Ok(url) = Url::parse(value)
        && let Some(p) = url.password()
    {
        candidates.push(p.to_owned());
        // As written in the URL, and as sent (percent-decoded).
        candidates.push(url::form_urlencoded::parse(p.as_bytes()).map(|(k, _)| k.into_owned()).collect());
    }
    let mut known = known_secrets().write().unwrap_or_else(|e| e.into_inner());
    for c in candidates {
        if c.len() >= MIN_REDACTED_LEN && !known.contains(&c) {
            known.push(c);
            // Longest first, so a secret containing another is replaced whole.
            known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        }
    }
}

/// `text` with every known secret replaced by `[redacted]`.
pub fn redact(text: &str) -> std::borrow::Cow<'_, str> {
    let known = known_secrets().read().unwrap_or_else(|e| e.into_inner());
    if !known.iter().any(|k| text.contains(k.as_str())) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = text.to_owned();
    for k in known.iter() {
        if out.contains(k.as_str()) {
            out = out.replace(k.as_str(), "[redacted]");
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Standard error through [`redact`]: the log writer of the server (one formatted event per
/// write, so a secret is never split across two writes).
#[derive(Clone, Copy, Default)]
pub struct RedactingStderr;

impl std::io::Write for RedactingStderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let text = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redact(&text).as_bytes())?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        let value = value.into();
        register_secret(&value);
        Self(value)
    }
    /// The secret itself; call only where it is sent to the service that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret([redacted])")
    }
}

#[derive(Debug, thiserror::Error)]
#[error("invalid value for {name}: {reason}")]
pub struct ConfigError {
    pub name: &'static str,
    pub reason: String,
}

/// Where configuration values come from: the process environment, or a map in tests.
#[derive(Debug, Clone, Default)]
pub struct Env(HashMap<String, String>);

impl Env {
    pub fn from_process() -> Self {
        Self(std::env::vars().collect())
    }
    pub fn from_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        Self(pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect())
    }
    /// A set, non-blank value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(|v| v.trim()).filter(|v| !v.is_empty())
    }
    pub fn parse<T>(&self, name: &'static str, default: T) -> Result<T, ConfigError>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        match self.get(name) {
            None => Ok(default),
            Some(raw) => raw.parse().map_err(|e: T::Err| ConfigError { name, reason: e.to_string() }),
        }
    }
    pub fn parse_opt<T>(&self, name: &'static str) -> Result<Option<T>, ConfigError>
    where
        T: FromStr,
        T::Err: fmt::Display,
    {
        self.get(name)
            .map(|raw| raw.parse().map_err(|e: T::Err| ConfigError { name, reason: e.to_string() }))
            .transpose()
    }
    pub fn string(&self, name: &str) -> Option<String> {
        self.get(name).map(str::to_owned)
    }
    pub fn secret(&self, name: &str) -> Option<Secret> {
        self.get(name).map(Secret::new)
    }
    pub fn url(&self, name: &'static str, default: &str) -> Result<Url, ConfigError> {
        let raw = self.get(name).unwrap_or(default);
        let url = Url::parse(raw).map_err(|e| ConfigError { name, reason: e.to_string() })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ConfigError { name, reason: format!("expected an http(s) URL, got {raw}") });
        }
        Ok(url)
    }
    pub fn flag(&self, name: &'static str, default: bool) -> Result<bool, ConfigError> {
        match self.get(name).map(str::to_ascii_lowercase).as_deref() {
            None => Ok(default),
            Some("1" | "true" | "yes" | "on") => Ok(true),
            Some("0" | "false" | "no" | "off") => Ok(false),
            Some(other) => Err(ConfigError { name, reason: format!("expected true or false, got {other}") }),
        }
    }
}

/// The whole server configuration. Later features add their own section structs here.
#[derive(Debug, Clone)]
pub struct Config {
    /// `REELFIND_ADDR`: where the server listens.
    pub addr: SocketAddr,
    /// `REELFIND_DATA_DIR`: SQLite file, mail outbox, library index, temp uploads.
    pub data_dir: PathBuf,
    /// `DATABASE_URL`: `sqlite://...` or `postgres://...`. Secret because it may hold a password.
    pub database_url: Secret,
    /// `REELFIND_PUBLIC_URL`: the address people use, for canonical links, mail and cookies.
    pub public_url: Url,
    /// `REELFIND_ASSETS_DIR`: the folder served at /assets (default `./assets`).
    pub assets_dir: PathBuf,
    /// Mail, Google sign-in and client addresses (accounts).
    pub accounts: AccountsConfig,
    /// Identification: engines, metadata providers, limits.
    pub identify: IdentifyConfig,
    pub library: LibraryConfig,
    /// Web push (VAPID key, subject).
    pub push: PushConfig,
    /// `REELFIND_OUTBOUND_ALLOW_PRIVATE` (default false): let the strict client for
    /// user-chosen URLs (`outbound`) reach loopback and private addresses. Only for tests
    /// and local development with fakes on this machine; never in production.
    pub outbound_allow_private: bool,
    /// `REELFIND_SECRET_KEY`: the master key that signs guest cookies and Library preview
    /// links (see `keys`). Required on PostgreSQL, where several nodes must agree on it;
    /// unset on SQLite: a random key kept in `{data_dir}/secret.key`.
    pub secret_key: Option<Secret>,
    /// How much media work this node takes on at once.
    pub admission: AdmissionConfig,
    /// `REELFIND_CONTENT_CHECK_MS` (default 500, at most 60000): how often this node reads
    /// the content version that tells it another node changed public content (see
    /// `services::content_version`); an edit shows on every node within twice this.
    pub content_check: std::time::Duration,
}

/// Admission control of media work, per node (see `identify::admission`).
#[derive(Debug, Clone)]
pub struct AdmissionConfig {
    /// `REELFIND_MEDIA_JOBS`: media jobs (decodes, ffmpeg runs) at once (default: the number
    /// of cores, at least 2).
    pub jobs: usize,
    /// `REELFIND_MEDIA_QUEUE`: identifications that may wait beyond those (default 4 per job);
    /// past that, 503 with `Retry-After` before the upload is read.
    pub queue: usize,
    /// `REELFIND_MEDIA_MEMORY_MB`: decode memory shared by running jobs (default 320: one
    /// 80-megapixel RGBA picture). A still weighs its decoded pixels.
    pub memory_mb: u32,
    /// `REELFIND_LIBRARY_SEARCHES`: Library searches at once (default 1 per 2 cores, at least 1).
    pub library_searches: usize,
    /// `REELFIND_MEDIA_QUEUE_WAIT_SECS`: longest wait for a job slot (default 20), then 503.
    pub queue_wait: std::time::Duration,
    /// `REELFIND_SHUTDOWN_GRACE_SECS`: after SIGTERM, how long requests may take to finish
    /// before the process exits anyway (default 10; media work is cancelled at once).
    pub shutdown_grace: std::time::Duration,
    /// `REELFIND_UPLOADS`: uploads this node reads at once (default 64), then 503.
    pub uploads: usize,
    /// `REELFIND_UPLOADS_PER_ADDRESS`: uploads one client address may be sending to this
    /// node at once (default 4; IPv6 counted by /64), then 429.
    pub uploads_per_address: usize,
}

impl AdmissionConfig {
    fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let jobs: usize = env.parse("REELFIND_MEDIA_JOBS", cores.max(2))?.max(1);
        Ok(Self {
            jobs,
            queue: env.parse("REELFIND_MEDIA_QUEUE", jobs * 4)?,
            memory_mb: env.parse("REELFIND_MEDIA_MEMORY_MB", 320u32)?.max(16),
            library_searches: env.parse("REELFIND_LIBRARY_SEARCHES", (cores / 2).max(1))?.max(1),
            queue_wait: std::time::Duration::from_secs(env.parse("REELFIND_MEDIA_QUEUE_WAIT_SECS", 20u64)?),
            shutdown_grace: std::time::Duration::from_secs(env.parse("REELFIND_SHUTDOWN_GRACE_SECS", 10u64)?),
            uploads: env.parse("REELFIND_UPLOADS", 64usize)?.max(1),
            uploads_per_address: env.parse("REELFIND_UPLOADS_PER_ADDRESS", 4usize)?.max(1),
        })
    }
}

/// Shortest `REELFIND_SECRET_KEY` accepted (e.g. `openssl rand -hex 32` gives 64 characters).
pub const MIN_SECRET_KEY_LEN: usize = 32;

/// Web push notifications.
#[derive(Debug, Clone)]
pub struct PushConfig {
    /// `VAPID_PRIVATE_KEY`: the raw P-256 private key, base64url (the form web-push libraries
    /// print). Unset: one is generated at first use and kept in the settings table, so every
    /// node of one database signs with the same key.
    pub vapid_private_key: Option<Secret>,
    /// `VAPID_SUBJECT`: how push services can reach the operator, `mailto:` or `https:`
    /// (default `mailto:` the site's contact email).
    pub vapid_subject: Option<String>,
    /// `REELFIND_PUSH_ALLOW_HTTP`: accept `http://` push endpoints (default false). Only for a
    /// local push service in tests (with `REELFIND_OUTBOUND_ALLOW_PRIVATE`); real push
    /// services are https.
    pub allow_http_endpoints: bool,
}

impl PushConfig {
    fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let vapid_private_key = env.secret("VAPID_PRIVATE_KEY");
        if let Some(key) = &vapid_private_key
            && web_push::VapidSignatureBuilder::from_base64_no_sub(key.expose()).is_err()
        {
            return Err(ConfigError {
                name: "VAPID_PRIVATE_KEY",
                reason: "expected a raw P-256 private key in base64url (43 characters)".into(),
            });
        }
        let vapid_subject = env.string("VAPID_SUBJECT");
        if let Some(s) = &vapid_subject
            && !(s.starts_with("mailto:") || s.starts_with("https://"))
        {
            return Err(ConfigError {
                name: "VAPID_SUBJECT",
                reason: format!("expected mailto:you@example.com or an https:// URL, got {s}"),
            });
        }
        Ok(Self {
            vapid_private_key,
            vapid_subject,
            allow_http_endpoints: env.flag("REELFIND_PUSH_ALLOW_HTTP", false)?,
        })
    }
}

/// Accounts: outgoing mail, Google sign-in, and how client addresses are read.
#[derive(Debug, Clone)]
pub struct AccountsConfig {
    /// `SMTP_URL`: `smtps://user:pass@host:465` (implicit TLS), `smtp://user:pass@host:587`
    /// (STARTTLS required), `smtp://host:25?tls=none` (plain, for a local relay; the default
    /// for localhost and loopback hosts), `?tls=opportunistic` also accepted. When set,
    /// registration requires email verification. Unset: mail goes to `{data_dir}/outbox/`.
    pub smtp_url: Option<Secret>,
    /// `MAIL_FROM`: sender of account mail (default `Reelfind <no-reply@{public host}>`).
    pub mail_from: String,
    /// `SMTP_TIMEOUT_SECS` (default 15): the most one mail may take, connection to
    /// acceptance; a mail server slower than that counts as failed.
    pub smtp_timeout: std::time::Duration,
    /// `SMTP_CA_FILE`: PEM certificates trusted for the mail server's TLS besides the public
    /// roots (a private CA, or a server's own self-signed certificate).
    pub smtp_ca_file: Option<std::path::PathBuf>,
    /// `GOOGLE_CLIENT_ID` / `GOOGLE_CLIENT_SECRET`: Google sign-in is offered when both are set.
    pub google_client_id: Option<String>,
    pub google_client_secret: Option<Secret>,
    /// `GOOGLE_AUTH_URL`, `GOOGLE_TOKEN_URL`, `GOOGLE_USERINFO_URL`: Google's endpoints
    /// (overridable so tests and self-hosted identity providers can stand in).
    pub google_auth_url: Url,
    pub google_token_url: Url,
    pub google_userinfo_url: Url,
    /// `REELFIND_TRUST_PROXY`: take the client address from the last `X-Forwarded-For` entry
    /// (only behind a reverse proxy that sets it); used for login throttling.
    pub trust_proxy: bool,
}

impl AccountsConfig {
    pub fn from_env(env: &Env, public_url: &Url) -> Result<Self, ConfigError> {
        let smtp_url = env.secret("SMTP_URL");
        if let Some(url) = &smtp_url {
            let parsed = Url::parse(url.expose())
                .map_err(|e| ConfigError { name: "SMTP_URL", reason: format!("not a URL: {e}") })?;
            if !matches!(parsed.scheme(), "smtp" | "smtps") || parsed.host_str().is_none() {
                return Err(ConfigError {
                    name: "SMTP_URL",
                    reason: "expected smtp://host:port or smtps://host:port (user:password@ optional)".into(),
                });
            }
        }
        let host = public_url.host_str().unwrap_or("localhost");
        let mail_from = env.string("MAIL_FROM").unwrap_or_else(|| format!("Reelfind <no-reply@{host}>"));
        if mail_from.parse::<lettre::message::Mailbox>().is_err() {
            return Err(ConfigError {
                name: "MAIL_FROM",
                reason: format!("not a mailbox like `Reelfind <no-reply@example.com>`: {mail_from}"),
            });
        }
        let smtp_timeout = env.parse("SMTP_TIMEOUT_SECS", 15u64)?;
        if smtp_timeout == 0 {
            return Err(ConfigError { name: "SMTP_TIMEOUT_SECS", reason: "must be at least 1 second".into() });
        }
        Ok(Self {
            smtp_url,
            mail_from,
            smtp_timeout: std::time::Duration::from_secs(smtp_timeout),
            smtp_ca_file: env.string("SMTP_CA_FILE").map(std::path::PathBuf::from),
            google_client_id: env.string("GOOGLE_CLIENT_ID"),
            google_client_secret: env.secret("GOOGLE_CLIENT_SECRET"),
            google_auth_url: env.url("GOOGLE_AUTH_URL", "https://accounts.google.com/o/oauth2/v2/auth")?,
            google_token_url: env.url("GOOGLE_TOKEN_URL", "https://oauth2.googleapis.com/token")?,
            google_userinfo_url: env.url("GOOGLE_USERINFO_URL", "https://openidconnect.googleapis.com/v1/userinfo")?,
            trust_proxy: env.flag("REELFIND_TRUST_PROXY", false)?,
        })
    }

    /// Both Google credentials are set.
    pub fn google_enabled(&self) -> bool {
        self.google_client_id.is_some() && self.google_client_secret.is_some()
    }
}

/// One cloud provider: key, base URL and model. The key may also come from the admin
/// setting `{engine}_api_key`; the environment wins when both are set.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    pub api_key: Option<Secret>,
    pub base_url: Url,
    pub model: String,
}

/// Identification (issue 4): the vision engines, speech to text, TMDB and OMDb, limits.
#[derive(Debug, Clone)]
pub struct IdentifyConfig {
    /// `OPENAI_API_KEY`, `OPENAI_BASE_URL` (default `https://api.openai.com/v1`),
    /// `OPENAI_MODEL` (default `gpt-4.1-mini`).
    pub openai: ProviderConfig,
    /// `OPENAI_TRANSCRIBE_MODEL` (default `gpt-4o-mini-transcribe`): speech to text of clips.
    pub openai_transcribe_model: String,
    /// `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` (default `https://api.anthropic.com`),
    /// `ANTHROPIC_MODEL` (default `claude-sonnet-4-6`).
    pub anthropic: ProviderConfig,
    /// `GEMINI_API_KEY`, `GEMINI_BASE_URL` (default
    /// `https://generativelanguage.googleapis.com/v1beta`), `GEMINI_MODEL` (default `gemini-2.5-flash`).
    pub gemini: ProviderConfig,
    /// `XAI_API_KEY`, `XAI_BASE_URL` (default `https://api.x.ai/v1`), `XAI_MODEL` (default `grok-4.3`).
    pub xai: ProviderConfig,
    /// `TMDB_API_KEY` (v3 key, sent as `api_key`) or `TMDB_READ_TOKEN` (sent as Bearer).
    pub tmdb_api_key: Option<Secret>,
    pub tmdb_read_token: Option<Secret>,
    /// `TMDB_BASE_URL` (default `https://api.themoviedb.org/3`).
    pub tmdb_base_url: Url,
    /// `TMDB_IMAGE_BASE_URL` (default `https://image.tmdb.org/t/p/`).
    pub tmdb_image_base_url: Url,
    /// `OMDB_API_KEY`, `OMDB_BASE_URL` (default `https://www.omdbapi.com/`).
    pub omdb_api_key: Option<Secret>,
    pub omdb_base_url: Url,
    /// `REELFIND_IDENTIFY_TIMEOUT_SECS` (default 120): deadline of one identification;
    /// doubled for a clip with audio analysis (SPEC section 9).
    pub timeout_secs: u64,
    /// `REELFIND_MAX_VIDEO_SECONDS` (default 600): longer clips are refused.
    pub max_video_seconds: u64,
    /// `REELFIND_IDENTIFY_PER_MINUTE` (default 10): identifications per minute per account.
    pub per_minute: u32,
    /// `REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE` (default 30): identifications per minute per
    /// client address (IPv4 address or IPv6 /64), signed in or not.
    pub per_address_per_minute: u32,
}

impl IdentifyConfig {
    fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let provider = |key: &str, base: &'static str, base_default: &str, model: &str, model_default: &str| {
            Ok::<_, ConfigError>(ProviderConfig {
                api_key: env.secret(key),
                base_url: env.url(base, base_default)?,
                model: env.string(model).unwrap_or_else(|| model_default.to_owned()),
            })
        };
        Ok(Self {
            openai: provider(
                "OPENAI_API_KEY",
                "OPENAI_BASE_URL",
                "https://api.openai.com/v1",
                "OPENAI_MODEL",
                "gpt-4.1-mini",
            )?,
            openai_transcribe_model: env
                .string("OPENAI_TRANSCRIBE_MODEL")
                .unwrap_or_else(|| "gpt-4o-mini-transcribe".to_owned()),
            anthropic: provider(
                "ANTHROPIC_API_KEY",
                "ANTHROPIC_BASE_URL",
                "https://api.anthropic.com",
                "ANTHROPIC_MODEL",
                "claude-sonnet-4-6",
            )?,
            gemini: provider(
                "GEMINI_API_KEY",
                "GEMINI_BASE_URL",
                "https://generativelanguage.googleapis.com/v1beta",
                "GEMINI_MODEL",
                "gemini-2.5-flash",
            )?,
            xai: provider("XAI_API_KEY", "XAI_BASE_URL", "https://api.x.ai/v1", "XAI_MODEL", "grok-4.3")?,
            tmdb_api_key: env.secret("TMDB_API_KEY"),
            tmdb_read_token: env.secret("TMDB_READ_TOKEN"),
            tmdb_base_url: env.url("TMDB_BASE_URL", "https://api.themoviedb.org/3")?,
            tmdb_image_base_url: env.url("TMDB_IMAGE_BASE_URL", "https://image.tmdb.org/t/p/")?,
            omdb_api_key: env.secret("OMDB_API_KEY"),
            omdb_base_url: env.url("OMDB_BASE_URL", "https://www.omdbapi.com/")?,
            timeout_secs: env.parse("REELFIND_IDENTIFY_TIMEOUT_SECS", 120u64)?.max(1),
            max_video_seconds: env.parse("REELFIND_MAX_VIDEO_SECONDS", 600u64)?,
            per_minute: env.parse("REELFIND_IDENTIFY_PER_MINUTE", 10u32)?.max(1),
            per_address_per_minute: env.parse("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", 30u32)?.max(1),
        })
    }
}

/// The Library engine (offline scene index).
#[derive(Debug, Clone)]
pub struct LibraryConfig {
    /// `REELFIND_LIBRARY_DIR`: the index folder (default `<data dir>/library`).
    pub dir: PathBuf,
    /// `REELFIND_LIBRARY_DEMO`: index the bundled demo clip at start when the library is empty
    /// (default true).
    pub demo: bool,
    /// `REELFIND_LIBRARY_DEMO_FILE`: the demo clip (default `<assets dir>/demo/big-buck-bunny.mp4`).
    pub demo_file: PathBuf,
    /// `REELFIND_LIBRARY_INDEX`: where the frame hashes live. Unset or `local`: segment files
    /// in the library folder; `milvus://HOST:PORT/NAME[?timeout=SECS]`: a Milvus server every
    /// node shares (see `library::index::backend`).
    pub index: crate::library::index::backend::Backend,
}

impl Config {
    pub fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let addr: SocketAddr = env.parse("REELFIND_ADDR", SocketAddr::from(([127, 0, 0, 1], 3000)))?;
        let data_dir: PathBuf = env.parse("REELFIND_DATA_DIR", PathBuf::from("./data"))?;
        let database_url = match env.get("DATABASE_URL") {
            Some(url) => {
                if !(url.starts_with("sqlite:") || url.starts_with("postgres://") || url.starts_with("postgresql://")) {
                    return Err(ConfigError {
                        name: "DATABASE_URL",
                        reason: "expected a sqlite: or postgres:// URL".into(),
                    });
                }
                Secret::new(url)
            }
            None => Secret::new(format!("sqlite://{}?mode=rwc", data_dir.join("reelfind.db").display())),
        };
        let default_public = format!(
            "http://{}:{}",
            if addr.ip().is_unspecified() || addr.ip().is_loopback() {
                "localhost".to_string()
            } else {
                addr.ip().to_string()
            },
            addr.port()
        );
        let public_url = env.url("REELFIND_PUBLIC_URL", &default_public)?;
        let assets_dir: PathBuf = env.parse("REELFIND_ASSETS_DIR", PathBuf::from("./assets"))?;
        let accounts = AccountsConfig::from_env(env, &public_url)?;
        let identify = IdentifyConfig::from_env(env)?;
        let library = LibraryConfig {
            dir: env.parse("REELFIND_LIBRARY_DIR", data_dir.join("library"))?,
            demo: env.flag("REELFIND_LIBRARY_DEMO", true)?,
            demo_file: env.parse("REELFIND_LIBRARY_DEMO_FILE", assets_dir.join("demo").join("big-buck-bunny.mp4"))?,
            index: env.parse("REELFIND_LIBRARY_INDEX", Default::default())?,
        };
        let push = PushConfig::from_env(env)?;
        let secret_key = env.secret("REELFIND_SECRET_KEY");
        match &secret_key {
            Some(k) if k.expose().len() < MIN_SECRET_KEY_LEN => {
                return Err(ConfigError {
                    name: "REELFIND_SECRET_KEY",
                    reason: format!(
                        "must be at least {MIN_SECRET_KEY_LEN} characters of random text (e.g. `openssl rand -hex 32`)"
                    ),
                });
            }
            None if !database_url.expose().starts_with("sqlite:") => {
                return Err(ConfigError {
                    name: "REELFIND_SECRET_KEY",
                    reason: "is required with a PostgreSQL DATABASE_URL: every node must sign guest cookies and \
                             preview links with the same key (e.g. `openssl rand -hex 32`, the same value on every node)"
                        .into(),
                });
            }
            _ => {}
        }
        let outbound_allow_private = env.flag("REELFIND_OUTBOUND_ALLOW_PRIVATE", false)?;
        let admission = AdmissionConfig::from_env(env)?;
        let content_check =
            std::time::Duration::from_millis(env.parse("REELFIND_CONTENT_CHECK_MS", 500u64)?.min(60_000));
        Ok(Self {
            addr,
            data_dir,
            database_url,
            public_url,
            assets_dir,
            accounts,
            identify,
            library,
            push,
            outbound_allow_private,
            secret_key,
            admission,
            content_check,
        })
    }

    /// The database is PostgreSQL (several nodes may share it).
    pub fn is_postgres(&self) -> bool {
        !self.database_url.expose().starts_with("sqlite:")
    }

    /// The public origin without a trailing slash, e.g. `https://reelfind.example`.
    pub fn origin(&self) -> String {
        self.public_url.origin().ascii_serialization()
    }

    /// An absolute URL on the public origin for a path like `/blog`.
    pub fn absolute(&self, path: &str) -> String {
        format!("{}{}", self.origin(), path)
    }

    pub fn secure_cookies(&self) -> bool {
        self.public_url.scheme() == "https"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_boot_with_nothing_set() {
        let c = Config::from_env(&Env::default()).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:3000");
        assert!(c.database_url.expose().starts_with("sqlite://"));
        assert_eq!(c.origin(), "http://localhost:3000");
    }

    #[test]
    fn bad_value_names_the_variable() {
        let err = Config::from_env(&Env::from_pairs([("REELFIND_ADDR", "nonsense")])).unwrap_err();
        assert!(err.to_string().contains("REELFIND_ADDR"), "{err}");
    }

    #[test]
    fn smtp_url_must_be_smtp() {
        let err = Config::from_env(&Env::from_pairs([("SMTP_URL", "http://mail.example.com")])).unwrap_err();
        assert_eq!(err.name, "SMTP_URL");
        let c = Config::from_env(&Env::from_pairs([("SMTP_URL", "smtp://u:p@mail.example.com:587")])).unwrap();
        assert!(!format!("{c:?}").contains("u:p@"));
    }

    #[test]
    fn vapid_variables_are_checked() {
        let err = Config::from_env(&Env::from_pairs([("VAPID_PRIVATE_KEY", "not-a-key")])).unwrap_err();
        assert_eq!(err.name, "VAPID_PRIVATE_KEY");
        let err = Config::from_env(&Env::from_pairs([("VAPID_SUBJECT", "ops@example.com")])).unwrap_err();
        assert_eq!(err.name, "VAPID_SUBJECT");
        let key = "IQ9Ur0ykXoHS9gzfYX0aBjy9lvdrjx_PFUXmie9YRcY";
        let c = Config::from_env(&Env::from_pairs([("VAPID_PRIVATE_KEY", key)])).unwrap();
        assert!(!format!("{c:?}").contains(key));
    }

    #[test]
    fn debug_hides_secrets() {
        let key = "k".repeat(40);
        let c = Config::from_env(&Env::from_pairs([
            ("DATABASE_URL", "postgres://u:hunter2@h/db"),
            ("REELFIND_SECRET_KEY", key.as_str()),
        ]))
        .unwrap();
        assert!(!format!("{c:?}").contains("hunter2"));
        assert!(!format!("{c:?}").contains(&key));
    }

    #[test]
    fn known_secrets_are_redacted_wherever_they_appear() {
        let _ = Secret::new("sk-live-0123456789abcdef");
        let _ = Secret::new("postgres://app:p%40ss-word-9@db.example/reelfind");
        let line = "GET https://api.example/x?api_key=sk-live-0123456789abcdef failed; db p@ss-word-9";
        assert_eq!(redact(line), "GET https://api.example/x?api_key=[redacted] failed; db [redacted]");
        assert_eq!(redact("nothing to hide"), "nothing to hide");
    }

    #[test]
    fn postgres_requires_a_shared_secret_key() {
        let err = Config::from_env(&Env::from_pairs([("DATABASE_URL", "postgres://h/db")])).unwrap_err();
        assert_eq!(err.name, "REELFIND_SECRET_KEY");
        assert!(err.reason.contains("every node"), "{err}");
        let short = Config::from_env(&Env::from_pairs([("REELFIND_SECRET_KEY", "short")])).unwrap_err();
        assert_eq!(short.name, "REELFIND_SECRET_KEY");
        assert!(Config::from_env(&Env::default()).unwrap().secret_key.is_none());
    }
}
