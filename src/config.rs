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
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
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
}

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
    /// local push service in tests; real push services are https.
    pub allow_http_endpoints: bool,
}

impl PushConfig {
    fn from_env(env: &Env) -> Result<Self, ConfigError> {
        let vapid_private_key = env.secret("VAPID_PRIVATE_KEY");
        if let Some(key) = &vapid_private_key {
            if web_push::VapidSignatureBuilder::from_base64_no_sub(key.expose()).is_err() {
                return Err(ConfigError {
                    name: "VAPID_PRIVATE_KEY",
                    reason: "expected a raw P-256 private key in base64url (43 characters)".into(),
                });
            }
        }
        let vapid_subject = env.string("VAPID_SUBJECT");
        if let Some(s) = &vapid_subject {
            if !(s.starts_with("mailto:") || s.starts_with("https://")) {
                return Err(ConfigError {
                    name: "VAPID_SUBJECT",
                    reason: format!("expected mailto:you@example.com or an https:// URL, got {s}"),
                });
            }
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
        Ok(Self {
            smtp_url,
            mail_from,
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
    /// `REELFIND_IDENTIFY_PER_MINUTE` (default 10): identifications per minute per user or address.
    pub per_minute: u32,
    /// `REELFIND_SECRET_KEY`: signs the guest cookie. Unset: a random key kept in
    /// `{data_dir}/secret.key` (set it when several nodes serve one site).
    pub secret_key: Option<Secret>,
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
            secret_key: env.secret("REELFIND_SECRET_KEY"),
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
        };
        let push = PushConfig::from_env(env)?;
        Ok(Self { addr, data_dir, database_url, public_url, assets_dir, accounts, identify, library, push })
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
        let c = Config::from_env(&Env::from_pairs([("DATABASE_URL", "postgres://u:hunter2@h/db")])).unwrap();
        assert!(!format!("{c:?}").contains("hunter2"));
    }
}
