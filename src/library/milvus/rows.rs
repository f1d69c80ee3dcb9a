//! The rows: written in batches, deleted by owner, searched in one batched call per tier,
//! read back in order, counted.
use milvus::v2::prelude::{
    ConsistencyLevel, DeleteRequest, FieldData, FlushRequest, Ids, InsertRequest, MetricType, QueryRequest,
    SearchRequest, SearchVectors,
};

use super::*;

impl Milvus {
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
        let strong = self.searches_strong();
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

    /// Every row of `video` in `partition`, in entry order (read in pages of [`MAX_ROWS`]), at
    /// the searches' consistency (a timeline read for a hit: see
    /// [`Self::searches_strong`]).
    pub fn rows_of(&self, collection: &str, partition: usize, video: u32) -> Result<Vec<Row>> {
        let strong = self.searches_strong();
        let mut rows: Vec<Row> = Vec::new();
        let mut from = 0i64;
        loop {
            let filter = format!("video == {video} && entry >= {from} && entry < {}", from + MAX_ROWS as i64);
            let page = self.rows_where(collection, partition, &filter, strong)?;
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

    /// The rows of `partition` that `filter` keeps (at most [`MAX_ROWS`]), in no order; every
    /// write that finished before the call included if `strong`.
    pub fn rows_where(&self, collection: &str, partition: usize, filter: &str, strong: bool) -> Result<Vec<Row>> {
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
                        .consistency_level(if strong { ConsistencyLevel::Strong } else { ConsistencyLevel::Bounded })
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
