//! Milvus as the home of the Library's entries: one collection per installation and kind
//! (`{NAME}_library`, `{NAME}_memory`), each 256-bit picture hash a `BINARY_VECTOR` row
//! compared by `HAMMING`, with its owner (video), place, moment and tier as scalar fields,
//! and one partition per tier, so a search names the tier instead of filtering for it.
//!
//! This module is the client: the address (`milvus://HOST:PORT/NAME`), the collection's
//! schema and index, and the calls the index needs (insert, delete by owner, one batched
//! range search per tier, the rows of one owner, count). It blocks: calls run on a small
//! runtime of the client's own and the caller's thread waits for the answer (the Library's
//! searches already run on blocking threads). The connection is made on first use and made
//! again after a failure, so a node started before Milvus, or one whose Milvus restarted,
//! comes back by itself.
//!
//! Why the official SDK (`milvus-sdk-rust`): see `src/library/README.md`, "Milvus".
use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use milvus::v2::prelude::{ClientV2, ConnectConfig, HasCollectionRequest, RetryConfig, TelemetryConfig};

use crate::library::picture::hash::Hash;

mod rows;
mod schema;
pub mod testing;

pub use schema::{IndexPlan, NPROBE_SHARE};

/// The partitions of a collection: the tiers a hash was cut for, and `meta` (rows that are
/// not hashes: an owner's static stretches and its completion mark).
pub const PARTITIONS: [&str; 6] = ["frames", "crops", "upper", "meta", "columns", "deep"];

/// Rows sent in one insert call (a row is ~60 bytes on the wire: 3 MB a call).
const INSERT_BATCH: usize = 50_000;
/// The most rows Milvus 2.3 returns for one search hash or one query (`topk`, offset+limit).
pub const MAX_ROWS: usize = 16_384;
/// Under this many rows the collection is searched exactly (`BIN_FLAT`); from it on, by
/// clusters (`BIN_IVF_FLAT`). See [`IndexPlan`]. Measured at 10^6 rows (`bench_milvus`,
/// src/library/README.md, "Measured side by side"): the exact search answered within the
/// same 200 ms as every clustered one and agreed with the embedded index on 99.7% of the
/// queries, the clustered one on 88-99% by nprobe; so a collection stays exact until one
/// segment is full (about 8 million rows), where the lists are per segment.
pub const IVF_FROM_ROWS: u64 = 8_000_000;

/// `milvus://HOST:PORT/NAME`: where the server is and the name that keeps this
/// installation's collections apart from another's on the same server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MilvusUrl {
    /// `http://HOST:PORT`, the gRPC endpoint.
    pub endpoint: String,
    pub name: String,
    /// How searches wait for writes (`?consistency=auto|strong|bounded`; see [`Consistency`]).
    pub consistency: Consistency,
    /// `?nprobe=N` overrides the clusters a `BIN_IVF_FLAT` search looks at.
    pub nprobe: Option<u32>,
    /// `?timeout=SECS` (default [`DEFAULT_TIMEOUT_SECS`]): the longest a call may take,
    /// connecting included, before the index counts as unavailable.
    pub timeout: Duration,
}

/// How a search waits for writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Consistency {
    /// The default: strong while writes may be recent, bounded otherwise. The Library's
    /// searches are bounded (they see every write older than Milvus's grace time, 5 s unless
    /// the server's `common.gracefulTime` says otherwise) except within [`FRESH_WINDOW`] of a
    /// change to the catalog this node saw (a video is published only after its entries are
    /// written, so its entries are then older than the grace time); every other collection
    /// (the answer memory's) is strong.
    Auto,
    /// Every search sees every write that finished before it began: it waits for the
    /// server's time tick (measured: a 200 ms floor a call).
    Strong,
    /// Searches may miss writes of the last grace time (measured: a still's probe 24 ms
    /// instead of 220 at 10^6 rows).
    Bounded,
}

/// How long after a catalog change the Library's searches stay strong under
/// [`Consistency::Auto`]: Milvus's default grace time (5 s) with room to spare.
pub const FRESH_WINDOW: Duration = Duration::from_secs(10);

/// A call's longest wait unless the address says otherwise: well inside an identification's
/// time, so that a hung server is reported as unavailable (503) rather than as a timeout.
pub const DEFAULT_TIMEOUT_SECS: u64 = 5;

/// The longest the schema work (creating, indexing and loading a collection; a flush) may take in all:
/// it is several calls, and loading waits for the query nodes, which on a busy machine takes
/// longer than one call's timeout even when the server is healthy. Each of its calls is still
/// bounded by the address's timeout, so a hung server fails it as quickly as a search.
pub const SCHEMA_BUDGET: Duration = Duration::from_secs(120);

impl MilvusUrl {
    pub fn parse(s: &str) -> std::result::Result<Self, String> {
        let bad = |why: &str| format!("{s:?} is not a Milvus address ({why}); expected milvus://HOST:PORT/NAME");
        let url = url::Url::parse(s).map_err(|e| bad(&e.to_string()))?;
        if url.scheme() != "milvus" {
            return Err(bad("the scheme must be milvus"));
        }
        let host = url.host_str().filter(|h| !h.is_empty()).ok_or_else(|| bad("no host"))?;
        let port = url.port().unwrap_or(19530);
        let name = url.path().trim_start_matches('/');
        let valid = !name.is_empty()
            && name.len() <= 200
            && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(bad("NAME must be letters, digits and underscores, starting with a letter"));
        }
        let mut consistency = Consistency::Auto;
        let mut nprobe = None;
        let mut timeout = Duration::from_secs(DEFAULT_TIMEOUT_SECS);
        for (k, v) in url.query_pairs() {
            match (k.as_ref(), v.as_ref()) {
                ("consistency", "auto") => consistency = Consistency::Auto,
                ("consistency", "strong") => consistency = Consistency::Strong,
                ("consistency", "bounded") => consistency = Consistency::Bounded,
                ("nprobe", n) => nprobe = Some(n.parse::<u32>().ok().filter(|n| *n > 0).ok_or_else(|| bad("nprobe"))?),
                ("timeout", t) => {
                    let secs =
                        t.parse::<f64>().ok().filter(|t| *t > 0.0 && *t <= 3600.0).ok_or_else(|| bad("timeout"))?;
                    timeout = Duration::from_secs_f64(secs);
                }
                _ => return Err(bad(&format!("unknown option {k}={v}"))),
            }
        }
        let host = if host.contains(':') && !host.starts_with('[') { format!("[{host}]") } else { host.to_owned() };
        Ok(Self { endpoint: format!("http://{host}:{port}"), name: name.to_owned(), consistency, nprobe, timeout })
    }

    /// The collection of one kind of entries (`library`, `memory`).
    pub fn collection(&self, kind: &str) -> String {
        format!("{}_{kind}", self.name)
    }
}

impl std::fmt::Display for MilvusUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "milvus://{}/{}", self.endpoint.trim_start_matches("http://"), self.name)
    }
}

/// A call that did not get its answer: Milvus down, slow, or refusing.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct MilvusError(pub String);

type Result<T> = std::result::Result<T, MilvusError>;

fn err(what: &str, e: impl std::fmt::Display) -> MilvusError {
    MilvusError(format!("Milvus {what}: {e}"))
}

/// One row: a hash of `video` at `ms`, the `entry`-th of its tier in time order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    pub video: u32,
    pub entry: u32,
    pub ms: u32,
    pub hash: Hash,
}

/// One hit of a batched search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Found {
    /// Which of the search's hashes.
    pub query: usize,
    pub video: u32,
    pub entry: u32,
    pub ms: u32,
    pub dist: u32,
}

/// The primary key: owner, partition and place, so that writing the same row twice (an
/// ingest resumed after a crash) can be recognised, and a hit names its entry without an
/// output field.
pub fn row_id(video: u32, partition: usize, entry: u32) -> i64 {
    ((video as i64) << 31) | ((partition as i64) << 28) | (entry as i64 & 0x0fff_ffff)
}

pub fn hash_bytes(h: &Hash) -> Vec<u8> {
    h.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn bytes_hash(b: &[u8]) -> Option<Hash> {
    if b.len() != 32 {
        return None;
    }
    let w = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    Some([w(0), w(1), w(2), w(3)])
}

/// A blocking client of one Milvus server.
pub struct Milvus {
    url: MilvusUrl,
    /// `Some` until dropped (see the `Drop` below).
    runtime: crate::library::blocking::Runtime,
    client: Mutex<Option<ClientV2>>,
    timeout: Duration,
    /// The nprobe searches use (the collection's index decides whether it matters).
    nprobe: Mutex<Option<u32>>,
    /// Under [`Consistency::Auto`]: whether searches may be bounded at all (the Library's
    /// client, told of catalog changes), and until when they stay strong.
    freshness: Mutex<Freshness>,
}

#[derive(Default)]
struct Freshness {
    follows_catalog: bool,
    strong_until: Option<std::time::Instant>,
}

impl Milvus {
    /// A client of `url`'s server; nothing is connected until the first call. `timeout`
    /// bounds every call (connecting included).
    pub fn new(url: MilvusUrl, timeout: Duration) -> anyhow::Result<Self> {
        let runtime = crate::library::blocking::Runtime::new("milvus-client")?;
        let nprobe = url.nprobe;
        Ok(Self {
            url,
            runtime,
            client: Mutex::new(None),
            timeout,
            nprobe: Mutex::new(nprobe),
            freshness: Mutex::new(Freshness::default()),
        })
    }

    /// Under [`Consistency::Auto`], lets searches be bounded except within [`FRESH_WINDOW`]
    /// of a [`Self::catalog_changed`] (the Library's client; others stay strong).
    pub fn follow_catalog(&self) {
        if let Ok(mut f) = self.freshness.lock() {
            f.follows_catalog = true;
            f.strong_until = Some(std::time::Instant::now() + FRESH_WINDOW);
        }
    }

    /// The catalog changed (a video published, re-indexed or removed somewhere): searches
    /// stay strong for the next [`FRESH_WINDOW`].
    pub fn catalog_changed(&self) {
        if let Ok(mut f) = self.freshness.lock() {
            f.strong_until = Some(std::time::Instant::now() + FRESH_WINDOW);
        }
    }

    /// Whether the next search waits for every write that finished before it.
    pub fn searches_strong(&self) -> bool {
        match self.url.consistency {
            Consistency::Strong => true,
            Consistency::Bounded => false,
            Consistency::Auto => self
                .freshness
                .lock()
                .map_or(true, |f| !f.follows_catalog || f.strong_until.is_some_and(|t| std::time::Instant::now() < t)),
        }
    }

    pub fn url(&self) -> &MilvusUrl {
        &self.url
    }

    /// Runs `call` with a connected client on the client's runtime and waits for it (never
    /// panics on a caller's own runtime: the wait is a plain channel). A failed call drops
    /// the connection, so the next one connects again.
    fn run<T, F, Fut>(&self, what: &str, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(ClientV2) -> Fut + Send + 'static,
        Fut: Future<Output = std::result::Result<T, milvus::v2::error::Error>> + Send,
    {
        self.run_within(what, self.timeout + Duration::from_secs(1), call)
    }

    /// [`Self::run`] with `budget` for the whole of `call` (its calls each within the timeout).
    fn run_within<T, F, Fut>(&self, what: &str, budget: Duration, call: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(ClientV2) -> Fut + Send + 'static,
        Fut: Future<Output = std::result::Result<T, milvus::v2::error::Error>> + Send,
    {
        let existing = self.client.lock().ok().and_then(|c| c.clone());
        let endpoint = self.url.endpoint.clone();
        let timeout = self.timeout;
        let answer = self.runtime.wait(async move {
            let work = async {
                let (client, fresh) = match existing {
                    Some(c) => (c, false),
                    None => {
                        let config = ConnectConfig::new()
                            .uri(endpoint)
                            .connect_timeout(timeout)
                            .rpc_timeout(timeout)
                            .retry(RetryConfig::new().max_attempts(2).max_retry_timeout(timeout))
                            .telemetry(TelemetryConfig::new().enabled(false));
                        let c = ClientV2::new(&config).await.map_err(|e| (e, None))?;
                        (c, true)
                    }
                };
                let out = call(client.clone()).await.map_err(|e| (e, None))?;
                Ok::<_, (milvus::v2::error::Error, Option<ClientV2>)>((out, fresh.then_some(client)))
            };
            match tokio::time::timeout(budget, work).await {
                Ok(r) => r.map_err(|(e, _)| e.to_string()),
                Err(_) => Err(format!("no answer within {} s", budget.as_secs_f64())),
            }
        });
        match answer {
            Some(Ok((out, fresh))) => {
                if let Some(c) = fresh
                    && let Ok(mut slot) = self.client.lock()
                {
                    *slot = Some(c);
                }
                Ok(out)
            }
            Some(Err(e)) => {
                if let Ok(mut slot) = self.client.lock() {
                    *slot = None;
                }
                Err(err(what, e))
            }
            None => Err(MilvusError(format!("Milvus {what}: the client stopped"))),
        }
    }

    /// Whether the server answers (a cheap call: the readiness probe).
    pub fn ping(&self) -> Result<()> {
        self.run("ping", |c| async move {
            c.has_collection(HasCollectionRequest::builder().collection_name("reelfind_ping").build()?)
                .await
                .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `auto`: strong for a client that follows no catalog (the memory's), and for the
    /// Library's within the window after a catalog change; bounded past it. The address can
    /// fix either level.
    #[test]
    fn auto_consistency_is_strong_only_near_a_catalog_change() {
        let client = |q: &str| {
            Milvus::new(MilvusUrl::parse(&format!("milvus://h/n{q}")).unwrap(), Duration::from_secs(1)).unwrap()
        };
        let auto = client("");
        assert!(auto.searches_strong(), "no catalog followed: strong");
        auto.follow_catalog();
        assert!(auto.searches_strong(), "just opened: the last change may be recent");
        let past = || Some(std::time::Instant::now() - Duration::from_millis(1));
        auto.freshness.lock().unwrap().strong_until = past();
        assert!(!auto.searches_strong(), "no change for the window: bounded");
        auto.catalog_changed();
        assert!(auto.searches_strong(), "a change seen: strong again");

        let strong = client("?consistency=strong");
        strong.follow_catalog();
        strong.freshness.lock().unwrap().strong_until = past();
        assert!(strong.searches_strong());
        let bounded = client("?consistency=bounded");
        assert!(!bounded.searches_strong());
        bounded.catalog_changed();
        assert!(!bounded.searches_strong());
    }

    #[test]
    fn addresses_parse_and_bad_ones_say_why() {
        let u = MilvusUrl::parse("milvus://db.internal:19531/reelfind").unwrap();
        assert_eq!(u.endpoint, "http://db.internal:19531");
        assert_eq!(u.name, "reelfind");
        assert_eq!(u.consistency, Consistency::Auto);
        assert_eq!(u.collection("library"), "reelfind_library");
        assert_eq!(u.to_string(), "milvus://db.internal:19531/reelfind");
        let u = MilvusUrl::parse("milvus://127.0.0.1/prod_2?consistency=bounded&nprobe=32").unwrap();
        assert_eq!(u.endpoint, "http://127.0.0.1:19530");
        assert_eq!(u.consistency, Consistency::Bounded);
        assert_eq!(u.nprobe, Some(32));
        assert_eq!(u.timeout, Duration::from_secs(DEFAULT_TIMEOUT_SECS));
        assert_eq!(MilvusUrl::parse("milvus://h/a?timeout=0.5").unwrap().timeout, Duration::from_millis(500));
        for bad in [
            "http://h:1/x",
            "milvus://h:1/",
            "milvus://h:1/9lives",
            "milvus://h:1/a-b",
            "milvus://h:1/a?nprobe=0",
            "milvus://h:1/a?x=1",
            "milvus://h:1/a?timeout=0",
            "milvus:///a",
        ] {
            let e = MilvusUrl::parse(bad).unwrap_err();
            assert!(e.contains("milvus://HOST:PORT/NAME"), "{bad}: {e}");
        }
    }

    #[test]
    fn row_ids_name_owner_partition_and_entry() {
        let id = row_id(4_000_000_000, 2, 123_456);
        assert!(id > 0);
        assert_eq!((id >> 31) as u32, 4_000_000_000);
        assert_eq!(((id >> 28) & 7) as usize, 2);
        assert_eq!((id & 0x0fff_ffff) as u32, 123_456);
        assert_ne!(row_id(1, 0, 5), row_id(1, 1, 5));
        let h = [1u64, u64::MAX, 0x0123_4567_89ab_cdef, 7];
        assert_eq!(bytes_hash(&hash_bytes(&h)), Some(h));
    }

    #[test]
    fn small_collections_are_searched_exactly_and_large_ones_by_clusters() {
        assert_eq!(IndexPlan::for_rows(7_999_999, None), IndexPlan::Flat);
        let IndexPlan::Ivf { nlist, nprobe } = IndexPlan::for_rows(8_000_000, None) else { panic!() };
        assert_eq!(nlist, 11314);
        assert_eq!(nprobe, 5657);
        // Past one segment's worth the lists are per segment: the rule stops growing.
        assert_eq!(IndexPlan::for_rows(10_000_000_000, Some(64)), IndexPlan::Ivf { nlist: 11314, nprobe: 64 });
    }
}
