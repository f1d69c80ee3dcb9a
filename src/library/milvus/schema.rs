//! The collection's schema, partitions and vector index ([`IndexPlan`]): made on first use,
//! safe from several nodes at once, and refitted as the collection grows.
use std::collections::HashMap;

use milvus::v2::prelude::{
    CollectionSchema, ConsistencyLevel, CreateCollectionRequest, CreateIndexRequest, CreatePartitionRequest, DataType,
    DescribeIndexRequest, DropCollectionRequest, DropIndexRequest, FieldSchema, FlushRequest, HasCollectionRequest,
    IndexParam, IndexType, LoadCollectionRequest, MetricType, ReleaseCollectionRequest,
};

use super::*;

/// The vector index a collection of `rows` rows gets, and how it is searched.
///
/// Under [`IVF_FROM_ROWS`] an exact scan (`BIN_FLAT`) is fast enough and answers exactly what
/// the embedded index answers. From there on `BIN_IVF_FLAT`: each sealed segment's vectors
/// are clustered into `nlist` lists by k-means and a search scans the `nprobe` lists nearest
/// each query. `nlist = 4·√(rows of a segment)` (Milvus's own rule of thumb; a segment holds
/// at most ~512 MB, ~8 million of our rows), between 64 and 16384, and `nprobe` a share of
/// `nlist` picked from the benchmark's agreement curve (`bench_milvus`, see
/// `src/library/README.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexPlan {
    Flat,
    Ivf { nlist: u32, nprobe: u32 },
}

/// Rows a sealed segment holds at most (512 MB at ~64 bytes a row in memory).
const SEGMENT_ROWS: u64 = 8_000_000;
/// The share of `nlist` a search probes. The agreement curve at 10^6 rows (nlist 4000;
/// src/library/README.md): 1/32 of the lists 87.9%, 1/16 92.1%, 1/8 96.2%, 1/4 98.6%, 1/2
/// 99.3%: a near copy 60-70 bits from its frame often lies in another list than its own, so
/// half of them.
pub const NPROBE_SHARE: f64 = 1.0 / 2.0;

impl IndexPlan {
    pub fn for_rows(rows: u64, nprobe: Option<u32>) -> Self {
        if rows < IVF_FROM_ROWS {
            return IndexPlan::Flat;
        }
        let nlist = Self::nlist_for(rows);
        let nprobe = nprobe.unwrap_or(Self::nprobe_for(nlist, NPROBE_SHARE)).min(nlist);
        IndexPlan::Ivf { nlist, nprobe }
    }

    /// The lists a clustered index of `rows` rows gets (the rule above; also what the
    /// benchmark clusters a smaller collection by).
    pub fn nlist_for(rows: u64) -> u32 {
        let per_segment = rows.min(SEGMENT_ROWS) as f64;
        (4.0 * per_segment.sqrt()).round().clamp(64.0, 16384.0) as u32
    }

    /// The lists a search of a clustered index of `nlist` lists probes at `share` of them.
    pub fn nprobe_for(nlist: u32, share: f64) -> u32 {
        ((nlist as f64 * share).ceil() as u32).clamp(1, nlist.max(1))
    }

    pub fn name(&self) -> &'static str {
        match self {
            IndexPlan::Flat => "BIN_FLAT",
            IndexPlan::Ivf { .. } => "BIN_IVF_FLAT",
        }
    }
}

impl Milvus {
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
