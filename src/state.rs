//! Shared application state, cloned cheaply into every handler.
use std::ops::Deref;
use std::sync::Arc;

use sea_orm::DatabaseConnection;

use crate::config::Config;
use crate::identify::{EngineRegistry, IdentifyState};
use crate::services::settings::{SettingsMap, SettingsStore};
use crate::views::assets::AssetManifest;

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub db: DatabaseConnection,
    pub config: Arc<Config>,
    /// One HTTP client for every outbound call (connection pooling, one TLS set-up).
    pub http: reqwest::Client,
    pub settings: SettingsStore,
    pub assets: AssetManifest,
    /// Long-lived identification engines (the Library engine); cloud engines are built per request.
    pub engines: EngineRegistry,
    /// Mailer and login/resend brakes (accounts).
    pub accounts: Arc<crate::auth::Accounts>,
    /// Identification rate limiter and guest-cookie key.
    pub identify: IdentifyState,
    /// The offline scene index (Library engine).
    pub library: Arc<crate::library::LibraryIndex>,
    /// The VAPID key for push notifications, loaded (or created) on first use.
    pub vapid: tokio::sync::OnceCell<crate::services::push::Vapid>,
}

impl Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    pub fn new(db: DatabaseConnection, config: Config) -> anyhow::Result<Self> {
        let http = reqwest::Client::builder()
            .user_agent(concat!("Reelfind/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(std::time::Duration::from_secs(10))
            .build()?;
        let assets = AssetManifest::load(&config.assets_dir);
        let accounts = crate::auth::Accounts::new(&config)?;
        let identify = IdentifyState::new(&config);
        let library = Arc::new(crate::library::LibraryIndex::open(&config.library.dir)?);
        let engines = EngineRegistry::default();
        engines.register(Arc::new(crate::library::engine::LibraryEngine::new(library.clone())));
        Ok(Self(Arc::new(Inner {
            db,
            config: Arc::new(config),
            http,
            settings: SettingsStore::default(),
            assets,
            engines,
            accounts,
            identify,
            library,
            vapid: tokio::sync::OnceCell::new(),
        })))
    }

    /// The VAPID key: `VAPID_PRIVATE_KEY`, else the one stored in the settings table
    /// (generated the first time).
    pub async fn vapid(&self) -> Result<&crate::services::push::Vapid, crate::services::push::PushError> {
        let configured = self.config.push.vapid_private_key.as_ref().map(|s| s.expose().to_owned());
        self.vapid
            .get_or_try_init(|| crate::services::push::load_or_create_vapid(&self.db, configured.as_deref()))
            .await
    }

    pub async fn settings(&self) -> Result<Arc<SettingsMap>, sea_orm::DbErr> {
        self.settings.all(&self.db).await
    }
}
