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
    /// One HTTP client for calls to services we configured (engines, catalogs, Google).
    pub http: reqwest::Client,
    /// The strict client for URLs a user chose (push endpoints): see `outbound`.
    pub outbound: crate::outbound::StrictClient,
    pub settings: SettingsStore,
    /// This node's reading of the content version (shared by the settings and the public
    /// answers kept ready): see `services::content_version`.
    pub content: Arc<crate::services::content_version::Tracker>,
    pub assets: AssetManifest,
    /// Long-lived identification engines (the Library engine); cloud engines are built per request.
    pub engines: EngineRegistry,
    /// Sends account mail (verification, password reset); the login/resend brakes live in
    /// the shared throttle store (`services::account_limits`).
    pub mailer: crate::services::mail::Mailer,
    /// The guest-cookie signer.
    pub identify: IdentifyState,
    /// Signing keys derived from `REELFIND_SECRET_KEY` (or the data folder's key file).
    pub keys: crate::keys::Keys,
    /// How much media work this node takes on at once; its shutdown token cancels it all.
    pub admission: Arc<crate::identify::admission::Admission>,
    /// The offline scene index (Library engine).
    pub library: Arc<crate::library::LibraryIndex>,
    /// This node's copy of the answer memory (`identify::memory`).
    pub memory: Arc<crate::identify::memory::store::Memory>,
    /// The VAPID key for push notifications, loaded (or created) on first use.
    pub vapid: tokio::sync::OnceCell<crate::services::push::Vapid>,
    /// Work a request starts and does not wait for (account mail): the server lets it finish,
    /// for a bounded time, before it exits.
    pub background: tokio_util::task::TaskTracker,
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
        let outbound = crate::outbound::StrictClient::new(crate::outbound::Policy {
            allow_private: config.outbound_allow_private,
            ..Default::default()
        })?;
        let assets = AssetManifest::load(&config.assets_dir);
        let mailer = crate::services::mail::Mailer::from_config(&config)?;
        let keys = crate::keys::Keys::load(&config)?;
        let identify = IdentifyState::new(&keys);
        let admission = crate::identify::admission::Admission::new(&config.admission);
        let library = Arc::new(crate::library::LibraryIndex::open_with_preview_key(
            &config.library.dir,
            keys.preview,
            &config.library.index,
            Some(crate::library::index::shared::CatalogDatabase {
                url: config.database_url.expose().to_owned(),
                connection: Some(db.clone()),
            }),
        )?);
        // The answer memory asks the same kind of index as the Library: this node's own copy
        // with the embedded index, the shared `{NAME}_memory` collection with Milvus.
        let memory = Arc::new(match &config.library.index {
            crate::library::index::backend::Backend::Local => crate::identify::memory::store::Memory::new(),
            crate::library::index::backend::Backend::Milvus(url) => crate::identify::memory::store::Memory::shared(
                Arc::new(crate::library::index::milvus::MilvusIndex::open(url, "memory")?),
            ),
        });
        let content = crate::services::content_version::Tracker::new(config.content_check);
        let engines = EngineRegistry::default();
        engines.register(Arc::new(
            crate::library::engine::LibraryEngine::new(library.clone()).with_admission(admission.clone()),
        ));
        Ok(Self(Arc::new(Inner {
            db,
            config: Arc::new(config),
            http,
            outbound,
            settings: SettingsStore::new(content.clone()),
            content,
            assets,
            engines,
            mailer,
            identify,
            keys,
            admission,
            library,
            memory,
            vapid: tokio::sync::OnceCell::new(),
            background: tokio_util::task::TaskTracker::new(),
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

    /// What the identification pipeline uses of this state.
    pub fn identify_deps(&self) -> crate::identify::pipeline::Deps<'_> {
        crate::identify::pipeline::Deps {
            db: &self.db,
            http: &self.http,
            config: &self.config.identify,
            engines: &self.engines,
            admission: &self.admission,
            memory: &self.memory,
        }
    }

    pub async fn settings(&self) -> Result<Arc<SettingsMap>, sea_orm::DbErr> {
        self.settings.all(&self.db).await
    }
}
