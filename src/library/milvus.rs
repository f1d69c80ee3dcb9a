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

use milvus::v2::prelude::{
    ClientV2, CollectionSchema, ConnectConfig, ConsistencyLevel, CreateCollectionRequest, CreateIndexRequest,
    CreatePartitionRequest, DataType, DeleteRequest, DescribeIndexRequest, DropCollectionRequest, DropIndexRequest,
    FieldData, FieldSchema, FlushRequest, HasCollectionRequest, Ids, IndexParam, IndexType, InsertRequest,
    LoadCollectionRequest, MetricType, QueryRequest, ReleaseCollectionRequest, RetryConfig, SearchRequest,
    SearchVectors, TelemetryConfig,
};

use super::hash::Hash;

/// The partitions of a collection: the tiers a hash was cut for, and `meta` (rows that are
/// not hashes: an owner's static stretches and its completion mark).
pub const PARTITIONS: [&str; 4] = ["frames", "crops", "upper", "meta"];

/// Rows sent in one insert call (a row is ~60 bytes on the wire: 3 MB a call).
const INSERT_BATCH: usize = 50_000;
/// The most rows Milvus 2.3 returns for one search hash or one query (`topk`, offset+limit).
pub const MAX_ROWS: usize = 16_384;
/// Under this many rows the collection is searched exactly (`BIN_FLAT`); from it on, by
/// clusters (`BIN_IVF_FLAT`). See [`IndexPlan`].
pub const IVF_FROM_ROWS: u64 = 1_000_000;

/// `milvus://HOST:PORT/NAME`: where the server is and the name that keeps this
/// installation's collections apart from another's on the same server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MilvusUrl {
    /// `http://HOST:PORT`, the gRPC endpoint.
    pub endpoint: String,
    pub name: String,
    /// `?consistency=bounded`: searches may miss writes of the last seconds (faster);
    /// the default, strong, sees every write that finished before the search began.
    pub strong: bool,
    /// `?nprobe=N` overrides the clusters a `BIN_IVF_FLAT` search looks at.
    pub nprobe: Option<u32>,
    /// `?timeout=SECS` (default [`DEFAULT_TIMEOUT_SECS`]): the longest a call may take,
    /// connecting included, before the index counts as unavailable.
    pub timeout: Duration,
}

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
        let mut strong = true;
        let mut nprobe = None;
        let mut timeout = Duration::from_secs(DEFAULT_TIMEOUT_SECS);
        for (k, v) in url.query_pairs() {
            match (k.as_ref(), v.as_ref()) {
                ("consistency", "strong") => strong = true,
                ("consistency", "bounded") => strong = false,
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
        Ok(Self { endpoint: format!("http://{host}:{port}"), name: name.to_owned(), strong, nprobe, timeout })
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

/// The vector index a collection of `rows` rows gets, and how it is searched.
///
/// Under [`IVF_FROM_ROWS`] an exact scan (`BIN_FLAT`) is fast enough and answers exactly what
/// the embedded index answers. From there on `BIN_IVF_FLAT`: each sealed segment's vectors
/// are clustered into `nlist` lists by k-means and a search scans the `nprobe` lists nearest
/// each query. `nlist = 4·√(rows of a segment)` (Milvus's own rule of thumb; a segment holds
/// at most ~512 MB, ~8 million of our rows), between 64 and 16384, and `nprobe` a share of
/// `nlist` picked from the benchmark's agreement curve (`bench_library --milvus`, see
/// `src/library/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexPlan {
    Flat,
    Ivf { nlist: u32, nprobe: u32 },
}

/// Rows a sealed segment holds at most (512 MB at ~64 bytes a row in memory).
const SEGMENT_ROWS: u64 = 8_000_000;
/// The share of `nlist` a search probes (see the README's curve).
pub const NPROBE_SHARE: f64 = 1.0 / 8.0;

impl IndexPlan {
    pub fn for_rows(rows: u64, nprobe: Option<u32>) -> Self {
        if rows < IVF_FROM_ROWS {
            return IndexPlan::Flat;
        }
        let per_segment = rows.min(SEGMENT_ROWS) as f64;
        let nlist = (4.0 * per_segment.sqrt()).round().clamp(64.0, 16384.0) as u32;
        let nprobe = nprobe.unwrap_or(((nlist as f64 * NPROBE_SHARE).ceil() as u32).max(1)).min(nlist);
        IndexPlan::Ivf { nlist, nprobe }
    }

    pub fn name(&self) -> &'static str {
        match self {
            IndexPlan::Flat => "BIN_FLAT",
            IndexPlan::Ivf { .. } => "BIN_IVF_FLAT",
        }
    }
}

impl Drop for Milvus {
    /// Lets the client's runtime go without waiting for it: dropping a runtime blocks, which
    /// panics when the last owner goes away on an async thread (a server's state at the end
    /// of a test, say).
    fn drop(&mut self) {
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A blocking client of one Milvus server.
pub struct Milvus {
    url: MilvusUrl,
    /// `Some` until dropped (see the `Drop` below).
    runtime: Option<tokio::runtime::Runtime>,
    client: Mutex<Option<ClientV2>>,
    timeout: Duration,
    /// The nprobe searches use (the collection's index decides whether it matters).
    nprobe: Mutex<Option<u32>>,
}

impl Milvus {
    /// A client of `url`'s server; nothing is connected until the first call. `timeout`
    /// bounds every call (connecting included).
    pub fn new(url: MilvusUrl, timeout: Duration) -> anyhow::Result<Self> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("milvus-client")
            .enable_all()
            .build()?;
        let nprobe = url.nprobe;
        Ok(Self { url, runtime: Some(runtime), client: Mutex::new(None), timeout, nprobe: Mutex::new(nprobe) })
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
        let (tx, rx) = std::sync::mpsc::channel();
        let Some(runtime) = &self.runtime else {
            return Err(MilvusError(format!("Milvus {what}: the client stopped")));
        };
        runtime.spawn(async move {
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
            let res = match tokio::time::timeout(budget, work).await {
                Ok(r) => r.map_err(|(e, _)| e.to_string()),
                Err(_) => Err(format!("no answer within {} s", budget.as_secs_f64())),
            };
            let _ = tx.send(res);
        });
        match rx.recv() {
            Ok(Ok((out, fresh))) => {
                if let Some(c) = fresh
                    && let Ok(mut slot) = self.client.lock()
                {
                    *slot = Some(c);
                }
                Ok(out)
            }
            Ok(Err(e)) => {
                if let Ok(mut slot) = self.client.lock() {
                    *slot = None;
                }
                Err(err(what, e))
            }
            Err(_) => Err(MilvusError(format!("Milvus {what}: the client stopped"))),
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

    pub fn has_collection(&self, collection: &str) -> Result<bool> {
        let name = collection.to_owned();
        self.run("has_collection", move |c| async move {
            c.has_collection(HasCollectionRequest::builder().collection_name(name).build()?).await.map(|r| r.exists())
        })
    }

    /// Creates the collection (fields, partitions, an exact index) unless it exists, and
    /// loads it for search. Safe to call from several nodes at once. `patient`: the whole may
    /// take [`SCHEMA_BUDGET`] (writers: creating and loading is slow on a busy server);
    /// otherwise one call's timeout, as a search that must answer soon needs.
    pub fn ensure_collection(&self, collection: &str, patient: bool) -> Result<()> {
        let name = collection.to_owned();
        let budget = if patient { SCHEMA_BUDGET.max(self.timeout) } else { self.timeout + Duration::from_secs(1) };
        self.run_within("create collection", budget, move |c| async move {
            let exists =
                c.has_collection(HasCollectionRequest::builder().collection_name(&name).build()?).await?.exists();
            if !exists {
                let schema = CollectionSchema::new()
                    .add_field(
                        FieldSchema::new().name("id").data_type(DataType::Int64).primary_key(true).auto_id(false),
                    )
                    .add_field(FieldSchema::new().name("video").data_type(DataType::Int64))
                    .add_field(FieldSchema::new().name("entry").data_type(DataType::Int32))
                    .add_field(FieldSchema::new().name("ms").data_type(DataType::Int32))
                    .add_field(FieldSchema::new().name("hash").data_type(DataType::BinaryVector).dimension(256));
                let created = c
                    .create_collection(
                        CreateCollectionRequest::builder()
                            .collection_name(&name)
                            .description("Reelfind Library entries: 256-bit picture hashes")
                            .schema(schema)
                            .consistency_level(ConsistencyLevel::Bounded)
                            .build()?,
                    )
                    .await;
                // Another node may have created it meanwhile.
                if let Err(e) = created
                    && !c
                        .has_collection(HasCollectionRequest::builder().collection_name(&name).build()?)
                        .await?
                        .exists()
                {
                    return Err(e);
                }
            }
            for p in PARTITIONS {
                let has = c
                    .has_partition(
                        milvus::v2::prelude::HasPartitionRequest::builder()
                            .collection_name(&name)
                            .partition_name(p)
                            .build()?,
                    )
                    .await?
                    .exists();
                if !has {
                    let _ = c
                        .create_partition(
                            CreatePartitionRequest::builder().collection_name(&name).partition_name(p).build()?,
                        )
                        .await;
                }
            }
            let indexed = c
                .describe_index(DescribeIndexRequest::builder().collection_name(&name).field_name("hash").build()?)
                .await
                .map(|r| !r.indexes().is_empty())
                .unwrap_or(false);
            if !indexed {
                let _ = c.create_index(index_request(&name, IndexPlan::Flat)?).await;
            }
            c.load_collection(LoadCollectionRequest::builder().collection_name(&name).build()?).await?;
            Ok(())
        })
    }

    /// The index the collection's `hash` field has now.
    pub fn index_plan(&self, collection: &str) -> Result<IndexPlan> {
        let name = collection.to_owned();
        self.run("describe index", move |c| async move {
            let r = c
                .describe_index(DescribeIndexRequest::builder().collection_name(name).field_name("hash").build()?)
                .await?;
            let Some(d) = r.indexes().first() else { return Ok(IndexPlan::Flat) };
            let params: HashMap<String, String> = d.get_extra_params().clone();
            Ok(match d.get_index_type() {
                IndexType::BinIvfFlat => {
                    let nlist = params
                        .get("nlist")
                        .and_then(|n| n.parse().ok())
                        .or_else(|| {
                            params
                                .get("params")
                                .and_then(|p| serde_json::from_str::<serde_json::Value>(p).ok())
                                .and_then(|v| {
                                    v.get("nlist").and_then(|n| n.as_str().and_then(|s| s.parse().ok()).or(n.as_u64()))
                                })
                                .map(|n| n as u32)
                        })
                        .unwrap_or(1024);
                    IndexPlan::Ivf { nlist, nprobe: 0 }
                }
                _ => IndexPlan::Flat,
            })
        })
    }

    /// Replaces the collection's vector index (the collection is released meanwhile: searches
    /// fail until it is loaded again, so this runs from the command line, not under traffic).
    pub fn set_index(&self, collection: &str, plan: IndexPlan) -> Result<()> {
        let name = collection.to_owned();
        // Clustering millions of rows takes minutes: an hour, as the index request itself allows.
        let budget = Duration::from_secs(3600).max(self.timeout);
        self.run_within("set index", budget, move |c| async move {
            c.flush(FlushRequest::builder().collection_names([&name]).build()?).await?;
            c.release_collection(ReleaseCollectionRequest::builder().collection_name(&name).build()?).await?;
            let _ = c.drop_index(DropIndexRequest::builder().collection_name(&name).field_name("hash").build()?).await;
            c.create_index(index_request(&name, plan)?).await?;
            c.load_collection(LoadCollectionRequest::builder().collection_name(&name).build()?).await?;
            Ok(())
        })?;
        if let IndexPlan::Ivf { nprobe, .. } = plan
            && let Ok(mut n) = self.nprobe.lock()
            && self.url.nprobe.is_none()
        {
            *n = Some(nprobe);
        }
        Ok(())
    }

    /// The nprobe searches send (`?nprobe=` of the address, else the plan's).
    pub fn set_nprobe(&self, nprobe: Option<u32>) {
        if let Ok(mut n) = self.nprobe.lock() {
            *n = self.url.nprobe.or(nprobe);
        }
    }

    pub fn drop_collection(&self, collection: &str) -> Result<()> {
        let name = collection.to_owned();
        self.run("drop collection", move |c| async move {
            c.drop_collection(DropCollectionRequest::builder().collection_name(name).build()?).await.map(|_| ())
        })
    }

    /// Writes `rows` into partition `partition` (an index into [`PARTITIONS`]), in batches.
    pub fn insert(&self, collection: &str, partition: usize, rows: &[Row]) -> Result<()> {
        for batch in rows.chunks(INSERT_BATCH) {
            let name = collection.to_owned();
            let part = PARTITIONS[partition];
            let ids: Vec<i64> = batch.iter().map(|r| row_id(r.video, partition, r.entry)).collect();
            let videos: Vec<i64> = batch.iter().map(|r| r.video as i64).collect();
            let entries: Vec<i32> = batch.iter().map(|r| r.entry as i32).collect();
            let ms: Vec<i32> = batch.iter().map(|r| r.ms as i32).collect();
            let hashes: Vec<Vec<u8>> = batch.iter().map(|r| hash_bytes(&r.hash)).collect();
            self.run("insert", move |c| async move {
                c.insert(
                    InsertRequest::builder()
                        .collection_name(name)
                        .partition_name(part)
                        .columns(vec![
                            FieldData::int64("id", ids),
                            FieldData::int64("video", videos),
                            FieldData::int32("entry", entries),
                            FieldData::int32("ms", ms),
                            FieldData::binary_vector("hash", hashes),
                        ])
                        .build()?,
                )
                .await
                .map(|_| ())
            })?;
        }
        Ok(())
    }

    /// Deletes every row of `video` (in every partition).
    pub fn delete_video(&self, collection: &str, video: u32) -> Result<()> {
        let name = collection.to_owned();
        self.run("delete", move |c| async move {
            c.delete(DeleteRequest::builder().collection_name(name).filter(format!("video == {video}")).build()?)
                .await
                .map(|_| ())
        })
    }

    /// Seals what was inserted so far (segments become indexable; nothing is lost to a crash
    /// that it would not also survive unflushed: the log is durable either way).
    pub fn flush(&self, collection: &str) -> Result<()> {
        let name = collection.to_owned();
        // The flush waits until the segments are sealed: schema work's budget, not a search's.
        self.run_within("flush", SCHEMA_BUDGET.max(self.timeout), move |c| async move {
            c.flush(FlushRequest::builder().collection_names([name]).build()?).await.map(|_| ())
        })
    }

    /// The rows of `partition` within `radius` bits of each of `hashes`: one search call,
    /// at most `limit` per hash (at most [`MAX_ROWS`]), each hash's nearest first. An exact
    /// index is asked for a range; a clustered one for its `limit` nearest, cut at `radius`.
    pub fn search(
        &self,
        collection: &str,
        partition: usize,
        hashes: &[Hash],
        radius: u32,
        limit: usize,
    ) -> Result<Vec<Found>> {
        if hashes.is_empty() {
            return Ok(Vec::new());
        }
        let name = collection.to_owned();
        let part = PARTITIONS[partition];
        let vectors: Vec<Vec<u8>> = hashes.iter().map(hash_bytes).collect();
        let limit = limit.clamp(1, MAX_ROWS) as i64;
        let strong = self.url.strong;
        let nprobe = self.nprobe.lock().ok().and_then(|n| *n);
        self.run("search", move |c| async move {
            let mut params = HashMap::new();
            let mut request = SearchRequest::builder()
                .collection_name(name)
                .partition_names([part])
                .vector_field("hash")
                .vectors(SearchVectors::Binary(vectors))
                .metric_type(MetricType::Hamming)
                .limit(limit)
                .output_fields(["ms"])
                .consistency_level(if strong { ConsistencyLevel::Strong } else { ConsistencyLevel::Bounded });
            match nprobe {
                // BIN_IVF_FLAT: top-k, cut at the radius here. Milvus 2.3.5's range search on
                // BIN_IVF_FLAT misses most rows inside the radius (measured: 4 of 20 planted
                // rows at 40 bits with every list probed; top-k found all 20).
                Some(n) => {
                    params.insert("nprobe".to_owned(), n.to_string());
                }
                // BIN_FLAT: a range search, exact (HAMMING keeps range_filter <= d < radius).
                None => request = request.radius(radius as f64 + 1.0).range_filter(0.0),
            }
            let request = request.extra_params(params).build()?;
            let response = c.search(request).await?;
            let mut out = Vec::new();
            for (query, result) in response.results().iter().enumerate() {
                let Ids::Int64(ids) = result.get_ids() else { continue };
                let ms = result
                    .get_output_fields()
                    .iter()
                    .find(|f| f.name() == "ms")
                    .and_then(|f| f.as_int32())
                    .unwrap_or(&[]);
                for (i, (&id, &score)) in ids.iter().zip(result.get_scores()).enumerate() {
                    if score.round() as u32 > radius {
                        continue;
                    }
                    out.push(Found {
                        query,
                        video: (id >> 31) as u32,
                        entry: (id & 0x0fff_ffff) as u32,
                        ms: ms.get(i).copied().unwrap_or(0) as u32,
                        dist: score.round() as u32,
                    });
                }
            }
            Ok(out)
        })
    }

    /// Every row of `video` in `partition`, in entry order (read in pages of [`MAX_ROWS`]).
    pub fn rows_of(&self, collection: &str, partition: usize, video: u32) -> Result<Vec<Row>> {
        let mut rows: Vec<Row> = Vec::new();
        let mut from = 0i64;
        loop {
            let filter = format!("video == {video} && entry >= {from} && entry < {}", from + MAX_ROWS as i64);
            let page = self.rows_where(collection, partition, &filter)?;
            rows.extend(page);
            // Entries are numbered from 0 without gaps, except the meta partition's mark.
            if rows.len() as i64 != from + MAX_ROWS as i64 {
                break;
            }
            from += MAX_ROWS as i64;
        }
        rows.sort_unstable_by_key(|r| r.entry);
        rows.dedup_by_key(|r| r.entry);
        Ok(rows)
    }

    /// The rows of `partition` that `filter` keeps (at most [`MAX_ROWS`]), in no order.
    pub fn rows_where(&self, collection: &str, partition: usize, filter: &str) -> Result<Vec<Row>> {
        let name = collection.to_owned();
        let part = PARTITIONS[partition];
        let filter = filter.to_owned();
        let (videos, entries, ms, hashes) = self.run("query", move |c| async move {
            let r = c
                .query(
                    QueryRequest::builder()
                        .collection_name(name)
                        .partition_names([part])
                        .filter(filter)
                        .output_fields(["video", "entry", "ms", "hash"])
                        .limit(MAX_ROWS as i64)
                        .consistency_level(ConsistencyLevel::Strong)
                        .build()?,
                )
                .await?;
            let results = r.results();
            let videos = results.get_output_field("video").and_then(|f| f.as_int64()).unwrap_or(&[]).to_vec();
            let entries = results.get_output_field("entry").and_then(|f| f.as_int32()).unwrap_or(&[]).to_vec();
            let ms = results.get_output_field("ms").and_then(|f| f.as_int32()).unwrap_or(&[]).to_vec();
            let hashes = results.get_output_field("hash").and_then(|f| f.as_binary_vectors()).unwrap_or(&[]).to_vec();
            Ok((videos, entries, ms, hashes))
        })?;
        let mut rows = Vec::with_capacity(entries.len());
        for (((v, e), t), h) in videos.into_iter().zip(entries).zip(ms).zip(hashes) {
            let hash = bytes_hash(&h).ok_or_else(|| MilvusError("Milvus query: a hash is not 32 bytes".into()))?;
            rows.push(Row { video: v as u32, entry: e as u32, ms: t as u32, hash });
        }
        Ok(rows)
    }

    /// Rows in some partitions (indexes into [`PARTITIONS`]), as of now.
    pub fn count_in(&self, collection: &str, partitions: &[usize]) -> Result<u64> {
        let name = collection.to_owned();
        let parts: Vec<&'static str> = partitions.iter().map(|&p| PARTITIONS[p]).collect();
        self.run("count", move |c| async move {
            let r = c
                .query(
                    QueryRequest::builder()
                        .collection_name(name)
                        .partition_names(parts)
                        .filter("")
                        .output_fields(["count(*)"])
                        .consistency_level(ConsistencyLevel::Strong)
                        .build()?,
                )
                .await?;
            Ok(r.results()
                .get_output_field("count(*)")
                .and_then(|f| f.as_int64())
                .and_then(|v| v.first().copied())
                .unwrap_or(0) as u64)
        })
    }

    /// Rows in the collection (every partition), as of now.
    pub fn count(&self, collection: &str) -> Result<u64> {
        let name = collection.to_owned();
        self.run("count", move |c| async move {
            let r = c
                .query(
                    QueryRequest::builder()
                        .collection_name(name)
                        .filter("")
                        .output_fields(["count(*)"])
                        .consistency_level(ConsistencyLevel::Strong)
                        .build()?,
                )
                .await?;
            Ok(r.results()
                .get_output_field("count(*)")
                .and_then(|f| f.as_int64())
                .and_then(|v| v.first().copied())
                .unwrap_or(0) as u64)
        })
    }
}

// The SDK's own error type, returned as the SDK's builders return it.
#[allow(clippy::result_large_err)]
fn index_request(collection: &str, plan: IndexPlan) -> milvus::v2::error::Result<CreateIndexRequest> {
    let (kind, params) = match plan {
        IndexPlan::Flat => (IndexType::BinFlat, HashMap::new()),
        IndexPlan::Ivf { nlist, .. } => {
            (IndexType::BinIvfFlat, HashMap::from([("nlist".to_owned(), nlist.to_string())]))
        }
    };
    CreateIndexRequest::builder()
        .collection_name(collection)
        // Clustering a million rows takes minutes on a small server; the SDK's default wait
        // for the build gave up (bench_milvus at 10^6 rows, nlist 4000).
        .timeout_ms(3_600_000)
        .index_param(
            IndexParam::new().field_name("hash").index_type(kind).metric_type(MetricType::Hamming).extra_params(params),
        )
        .build()
}

pub mod testing;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_and_bad_ones_say_why() {
        let u = MilvusUrl::parse("milvus://db.internal:19531/reelfind").unwrap();
        assert_eq!(u.endpoint, "http://db.internal:19531");
        assert_eq!(u.name, "reelfind");
        assert!(u.strong);
        assert_eq!(u.collection("library"), "reelfind_library");
        assert_eq!(u.to_string(), "milvus://db.internal:19531/reelfind");
        let u = MilvusUrl::parse("milvus://127.0.0.1/prod_2?consistency=bounded&nprobe=32").unwrap();
        assert_eq!(u.endpoint, "http://127.0.0.1:19530");
        assert!(!u.strong);
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
        assert_eq!(IndexPlan::for_rows(999_999, None), IndexPlan::Flat);
        let IndexPlan::Ivf { nlist, nprobe } = IndexPlan::for_rows(1_000_000, None) else { panic!() };
        assert_eq!(nlist, 4000);
        assert_eq!(nprobe, 500);
        // Past one segment's worth the lists are per segment: the rule stops growing.
        assert_eq!(IndexPlan::for_rows(10_000_000_000, Some(64)), IndexPlan::Ivf { nlist: 11314, nprobe: 64 });
    }
}
