//! Which engines exist, which are available, and which one a mode picks.
//!
//! Cloud engines are rebuilt for every request from the environment and the admin settings
//! (keys, base URLs, models), so a key or `allowed_engines` change takes effect without a
//! restart (the settings cache lives 5 s). Long-lived engines that own state, like the
//! Library engine with its memory-mapped index, are [`EngineRegistry::register`]ed once at
//! start; a registered engine replaces a built one of the same id (tests and the
//! benchmark use that to plug in a local fake).
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use super::engine::{Engine, EngineId};

/// The long-lived engines of this process. Lives in `AppState::engines`.
#[derive(Default)]
pub struct EngineRegistry {
    registered: RwLock<BTreeMap<EngineId, Arc<dyn Engine>>>,
}

impl EngineRegistry {
    /// Adds (or replaces) a long-lived engine, e.g. the Library engine at start:
    /// `state.engines.register(Arc::new(LibraryEngine::open(..)?))`.
    pub fn register(&self, engine: Arc<dyn Engine>) {
        let mut map = self.registered.write().unwrap_or_else(|e| e.into_inner());
        map.insert(engine.id(), engine);
    }

    /// Removes a registered engine (e.g. when the library index is deleted).
    pub fn unregister(&self, id: EngineId) {
        let mut map = self.registered.write().unwrap_or_else(|e| e.into_inner());
        map.remove(&id);
    }

    /// The registered engine with this id, if any.
    pub fn registered(&self, id: EngineId) -> Option<Arc<dyn Engine>> {
        self.registered.read().unwrap_or_else(|e| e.into_inner()).get(&id).cloned()
    }
}

/// The engines of one request: every engine that exists (built or registered), with the
/// admin's allow-list applied by [`EngineSet::usable`].
pub struct EngineSet {
    engines: BTreeMap<EngineId, Arc<dyn Engine>>,
    allowed: Vec<String>,
}

impl EngineSet {
    pub fn new(engines: BTreeMap<EngineId, Arc<dyn Engine>>, allowed_setting: &str) -> Self {
        let allowed =
            allowed_setting.split(',').map(|s| s.trim().to_ascii_lowercase()).filter(|s| !s.is_empty()).collect();
        Self { engines, allowed }
    }

    /// Whether the admin allows this engine or mode name (`allowed_engines` setting).
    pub fn allows(&self, name: &str) -> bool {
        self.allowed.iter().any(|a| a == name)
    }

    /// An engine that exists, is available and is allowed.
    pub fn usable(&self, id: EngineId) -> Option<Arc<dyn Engine>> {
        self.engines.get(&id).filter(|e| e.available() && self.allows(id.as_str())).cloned()
    }

    /// Every usable engine, in [`EngineId::ALL`] order.
    pub fn all_usable(&self) -> Vec<Arc<dyn Engine>> {
        EngineId::ALL.iter().filter_map(|id| self.usable(*id)).collect()
    }

    /// Whether the ensemble mode can run: allowed, and at least two engines to vote.
    pub fn ensemble_usable(&self) -> bool {
        self.allows("ensemble") && self.all_usable().len() >= 2
    }
}
