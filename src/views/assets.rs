//! The manifest esbuild writes (`assets/dist/manifest.json`): logical names to hashed files.
use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, Default, Clone)]
pub struct AssetManifest {
    entries: HashMap<String, String>,
}

impl AssetManifest {
    pub fn load(assets_dir: &Path) -> Self {
        let path = assets_dir.join("dist/manifest.json");
        match std::fs::read_to_string(&path) {
            Ok(text) => match serde_json::from_str::<HashMap<String, String>>(&text) {
                Ok(entries) => Self { entries },
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "asset manifest unreadable");
                    Self::default()
                }
            },
            Err(_) => {
                tracing::warn!(path = %path.display(), "no asset manifest: run `npm run build` in islands/");
                Self::default()
            }
        }
    }

    /// The public URL of a logical asset such as `runtime.js` or `app.css`.
    pub fn url(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }
}
