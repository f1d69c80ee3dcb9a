//! Where a library's hashes live: `REELFIND_LIBRARY_INDEX`. Unset or `local`, the embedded
//! [`MappedIndex`] in the library folder (no server, the default); `milvus://HOST:PORT/NAME`,
//! a [`MilvusIndex`] that every node pointed at the same address shares.
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use super::entries::EntryIndex;
use super::mapped::MappedIndex;
use super::milvus::MilvusIndex;
use crate::library::milvus::MilvusUrl;

/// The backend `REELFIND_LIBRARY_INDEX` names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Backend {
    /// Segment files in `{library dir}/segments`, memory-mapped.
    #[default]
    Local,
    /// A Milvus server (the collection `{NAME}_library`).
    Milvus(MilvusUrl),
}

impl FromStr for Backend {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "" | "local" => Ok(Backend::Local),
            s if s.starts_with("milvus:") => MilvusUrl::parse(s).map(Backend::Milvus),
            other => Err(format!("{other:?} names no Library index: expected local or milvus://HOST:PORT/NAME")),
        }
    }
}

impl std::fmt::Display for Backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Backend::Local => f.write_str("local"),
            Backend::Milvus(url) => url.fmt(f),
        }
    }
}

/// An opened backend: the seam the searches use, and the Milvus index itself when it is one
/// (for readiness and the operator's commands).
pub struct Opened {
    pub entries: Arc<dyn EntryIndex>,
    pub milvus: Option<Arc<MilvusIndex>>,
}

impl Backend {
    /// `local` or `milvus` (the address stays in the operator's configuration).
    pub fn kind(&self) -> &'static str {
        match self {
            Backend::Local => "local",
            Backend::Milvus(_) => "milvus",
        }
    }

    /// Opens the backend for the library in `dir`. Milvus is not asked anything yet (a node
    /// starts while it is down).
    pub fn open(&self, dir: &Path) -> anyhow::Result<Opened> {
        Ok(match self {
            Backend::Local => Opened { entries: Arc::new(MappedIndex::open(dir.join("segments"))?), milvus: None },
            Backend::Milvus(url) => {
                let index = Arc::new(MilvusIndex::open(url, "library")?);
                Opened { entries: index.clone(), milvus: Some(index) }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_variable_names_local_or_a_milvus_address_and_nothing_else() {
        assert_eq!("".parse::<Backend>(), Ok(Backend::Local));
        assert_eq!("local".parse::<Backend>(), Ok(Backend::Local));
        let Ok(Backend::Milvus(url)) = "milvus://10.0.0.5:19530/prod".parse::<Backend>() else { panic!() };
        assert_eq!(url.collection("library"), "prod_library");
        assert_eq!(Backend::Milvus(url).to_string(), "milvus://10.0.0.5:19530/prod");
        assert!("milvus://10.0.0.5:19530/".parse::<Backend>().unwrap_err().contains("milvus://HOST:PORT/NAME"));
        assert!("postgres://x".parse::<Backend>().unwrap_err().contains("local or milvus://"));
    }
}
