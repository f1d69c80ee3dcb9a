//! The Library's two homes for its entries side by side: the embedded index (segment files,
//! memory-mapped, the all-cores scan) and Milvus (`src/library/milvus.rs`), filled with the
//! same padded entries and asked the same questions.
//!
//!     cargo run --release --bin bench_milvus -- [--sizes 1000000,10000000] [--stills 200]
//!         [--clips 40] [--nprobe-shares 0.03125,0.0625,0.125,0.25,0.5] [--seed 7]
//!         [--consistency strong,bounded]
//!
//! `--nprobe-shares ''` measures the exact index only (building the clustered one takes
//! minutes at 10^6 rows and hours at 10^7 on two cores). Each index is asked at every
//! consistency level given (default `strong`, what Reelfind uses unless the address says
//! `?consistency=bounded`).
//!
//! Milvus is started by `.ci/milvus-server` (`bash .ci/setup --test` installs it), or
//! `MILVUS_URL=HOST:PORT` names one. For each size the index is padded with random hashes in
//! "videos" of 100,000 entries (one entry every 125 ms), and queries are planted in it:
//! - a still: 8 hashes searched together (a picture's hypotheses: as given, mirrored, cut),
//!   one of them an entry with d bits flipped (d uniform in 0..=70, the still threshold), the
//!   others random; radius 78 (the threshold and the 8 bits each tier's scan reaches beyond
//!   it), at most 512 hits (the still search's cap). Its answer: the best hit (video, entry).
//! - a clip: 40 consecutive entries of one video, each with d bits flipped (d in 0..=40),
//!   radius 62, at most 64 hits a hash (as the clip vote asks); its answer: the (video,
//!   offset) most frames vote for.
//! - a negative still: 8 random hashes; its answer should be none.
//!
//! Per backend: p50/p95 latency of one probe (what differs between the backends; the search
//! code above the seam is the same), ingest rate, memory; and the agreement: the share of
//! queries whose Milvus answer is the embedded index's, every difference listed with the
//! answer of an exact scan (the embedded scan without its first-stage prefilter), and the
//! share that agrees with that exact scan. Milvus runs
//! `BIN_FLAT` (exact) and `BIN_IVF_FLAT` with the rule's nlist at several nprobe shares.
//! Random hashes are the worst case for clusters (real frames bunch by film and scene).
#[path = "common/proc.rs"]
mod proc;
use proc::{loadavg, status_kb};
#[path = "common/stats.rs"]
mod stats;
use stats::percentile;
use std::collections::HashMap;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use reelfind::library::index::entries::VideoEntries;
use reelfind::library::index::scan::{self, PREFILTER, PREFILTER_MANY, Section};
use reelfind::library::index::store::{self, Segment};
use reelfind::library::milvus::testing::MilvusServer;
use reelfind::library::milvus::{IndexPlan, Milvus, MilvusUrl, Row};
use reelfind::library::picture::hash::Hash;

const VIDEO_ENTRIES: u32 = 100_000;

struct Args {
    sizes: Vec<u64>,
    stills: usize,
    clips: usize,
    shares: Vec<f64>,
    seed: u64,
    /// Consistency levels to search at: `strong`, `bounded`.
    levels: Vec<String>,
}

fn args() -> Args {
    let mut a = Args {
        sizes: vec![1_000_000],
        stills: 200,
        clips: 40,
        shares: vec![1.0 / 32.0, 1.0 / 16.0, 0.125, 0.25, 0.5],
        seed: 7,
        levels: vec!["strong".into()],
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i + 1 < argv.len() {
        let v = &argv[i + 1];
        match argv[i].as_str() {
            "--sizes" => a.sizes = v.split(',').filter_map(|s| s.parse().ok()).collect(),
            "--stills" => a.stills = v.parse().unwrap_or(a.stills),
            "--clips" => a.clips = v.parse().unwrap_or(a.clips),
            "--nprobe-shares" => a.shares = v.split(',').filter_map(|s| s.parse().ok()).collect(),
            "--seed" => a.seed = v.parse().unwrap_or(a.seed),
            "--consistency" => {
                a.levels = v.split(',').map(str::to_owned).collect();
                assert!(a.levels.iter().all(|l| l == "strong" || l == "bounded"), "--consistency strong,bounded");
            }
            other => panic!("unknown option {other}"),
        }
        i += 2;
    }
    a
}

fn flip(h: Hash, bits: u32, rng: &mut impl Rng) -> Hash {
    let mut out = h;
    let mut done = 0u32;
    let mut seen = [false; 256];
    while done < bits {
        let b = rng.random_range(0..256usize);
        if !seen[b] {
            seen[b] = true;
            out[b / 64] ^= 1 << (b % 64);
            done += 1;
        }
    }
    out
}

#[derive(Clone)]
enum Query {
    Still { hashes: Vec<Hash>, truth: Option<(u32, u32)> },
    Clip { hashes: Vec<Hash>, truth: (u32, i64) },
}

/// What a query answers from its hits `(query, video, entry, dist)`.
type Answer = Option<(u32, i64)>;

fn answer(q: &Query, hits: &[(usize, u32, u32, u32)]) -> Answer {
    match q {
        Query::Still { .. } => hits.iter().min_by_key(|h| (h.3, h.1, h.2)).map(|h| (h.1, h.2 as i64)),
        Query::Clip { .. } => {
            let mut votes: HashMap<(u32, i64), u32> = HashMap::new();
            for h in hits {
                *votes.entry((h.1, h.2 as i64 - h.0 as i64)).or_default() += 1;
            }
            votes.into_iter().max_by_key(|(k, n)| (*n, std::cmp::Reverse(*k))).map(|(k, _)| k)
        }
    }
}

fn probe_of(q: &Query) -> (&[Hash], u32, usize) {
    match q {
        Query::Still { hashes, .. } => (hashes, 78, 512),
        Query::Clip { hashes, .. } => (hashes, 62, 64 * hashes.len()),
    }
}

fn main() -> anyhow::Result<()> {
    let a = args();
    let mut rng = rand::rngs::StdRng::seed_from_u64(a.seed);
    let mut server = None;
    let (addr, milvus_pid) = match std::env::var("MILVUS_URL") {
        Ok(u) if !u.is_empty() => (u, None),
        _ => {
            let s = MilvusServer::start()?;
            let out = (s.addr.clone(), Some(s.pid));
            server = Some(s);
            out
        }
    };
    println!("Milvus 2.3.5 at {addr}; load average {}", loadavg());
    let dir = tempfile::tempdir()?;
    let name = format!("bench_{}", std::process::id());
    let url = MilvusUrl::parse(&format!("milvus://{addr}/{name}")).map_err(anyhow::Error::msg)?;
    let m = Milvus::new(url.clone(), Duration::from_secs(600))?;
    // One client per consistency level asked, on the same collection.
    let searchers: Vec<(String, Milvus)> = a
        .levels
        .iter()
        .map(|level| {
            let u =
                MilvusUrl::parse(&format!("milvus://{addr}/{name}?consistency={level}")).map_err(anyhow::Error::msg)?;
            Ok((level.clone(), Milvus::new(u, Duration::from_secs(600))?))
        })
        .collect::<anyhow::Result<_>>()?;
    let coll = url.collection("library");
    m.ensure_collection(&coll, true)?;

    let mut videos: Vec<Vec<Hash>> = Vec::new();
    let mut segments: Vec<Segment> = Vec::new();
    let (mut local_ingest, mut milvus_ingest) = (0.0f64, 0.0f64);
    for &size in &a.sizes {
        // Pad both backends to `size` entries.
        while (videos.len() as u64) * (VIDEO_ENTRIES as u64) < size {
            let id = videos.len() as u32 + 1;
            let hashes: Vec<Hash> =
                (0..VIDEO_ENTRIES).map(|_| [rng.random(), rng.random(), rng.random(), rng.random()]).collect();
            let frames: Vec<(Hash, u32)> = hashes.iter().enumerate().map(|(i, &h)| (h, i as u32 * 125)).collect();
            let t = Instant::now();
            let path = dir.path().join(format!("{id}.seg"));
            store::write_segment(&path, id, &VideoEntries { frames: &frames, ..Default::default() })?;
            segments.push(Segment::open(&path)?);
            local_ingest += t.elapsed().as_secs_f64();
            let rows: Vec<Row> = frames
                .iter()
                .enumerate()
                .map(|(i, &(hash, ms))| Row { video: id, entry: i as u32, ms, hash })
                .collect();
            let t = Instant::now();
            m.insert(&coll, 0, &rows)?;
            milvus_ingest += t.elapsed().as_secs_f64();
            videos.push(hashes);
        }
        let t = Instant::now();
        m.flush(&coll)?;
        milvus_ingest += t.elapsed().as_secs_f64();
        let n = videos.len() as u64 * VIDEO_ENTRIES as u64;
        println!("\n## {n} entries ({} videos of {VIDEO_ENTRIES})", videos.len());
        println!(
            "ingest: local {:.0} entries/s (segment files), Milvus {:.0} entries/s (insert + flush)",
            n as f64 / local_ingest,
            n as f64 / milvus_ingest
        );

        // Queries planted in the padding.
        let mut queries = Vec::new();
        for _ in 0..a.stills {
            let v = rng.random_range(0..videos.len());
            let e = rng.random_range(0..VIDEO_ENTRIES) as usize;
            let d = rng.random_range(0..=70);
            let mut hashes: Vec<Hash> =
                (0..7).map(|_| [rng.random(), rng.random(), rng.random(), rng.random()]).collect();
            hashes.insert(rng.random_range(0..8), flip(videos[v][e], d, &mut rng));
            queries.push(Query::Still { hashes, truth: Some((v as u32 + 1, e as u32)) });
        }
        for _ in 0..a.stills / 4 {
            let hashes: Vec<Hash> = (0..8).map(|_| [rng.random(), rng.random(), rng.random(), rng.random()]).collect();
            queries.push(Query::Still { hashes, truth: None });
        }
        for _ in 0..a.clips {
            let v = rng.random_range(0..videos.len());
            let e = rng.random_range(0..VIDEO_ENTRIES - 40) as usize;
            let hashes: Vec<Hash> = (0..40)
                .map(|i| {
                    let d = rng.random_range(0..=40);
                    flip(videos[v][e + i], d, &mut rng)
                })
                .collect();
            queries.push(Query::Clip { hashes, truth: (v as u32 + 1, e as i64) });
        }

        // The embedded index: the production scan (its first-stage prefilter included).
        let refs: Vec<&Segment> = segments.iter().collect();
        let scan_with = |q: &Query, exact: bool| {
            let (hashes, radius, limit) = probe_of(q);
            // Exact: a first stage that keeps every entry (64 of the first word's 64 bits).
            let pre = if exact {
                64
            } else if hashes.len() > 16 {
                PREFILTER_MANY
            } else {
                PREFILTER
            };
            scan::scan(&refs, Section::Frames, hashes, radius, pre, limit)
                .into_iter()
                .map(|h| (h.query as usize, refs[h.segment as usize].video_id, h.entry, h.dist as u32))
                .collect::<Vec<_>>()
        };
        let local = |q: &Query| scan_with(q, false);
        // The exact scan's answer, asked only where a backend differs from the production scan
        // (it reads every entry in full: seconds a query at 10^7 in a debug build).
        let mut exact_answers: HashMap<usize, Answer> = HashMap::new();
        for q in queries.iter().take(3) {
            local(q);
        }
        let mut lat = (Vec::new(), Vec::new());
        let mut local_answers = Vec::new();
        for q in &queries {
            let t = Instant::now();
            let hits = local(q);
            let ms = t.elapsed().as_secs_f64() * 1e3;
            if matches!(q, Query::Clip { .. }) {
                lat.1.push(ms)
            } else {
                lat.0.push(ms)
            }
            local_answers.push(answer(q, &hits));
        }
        let truth_ok = queries
            .iter()
            .zip(&local_answers)
            .filter(|(q, a)| match q {
                Query::Still { truth, .. } => **a == truth.map(|(v, e)| (v, e as i64)),
                Query::Clip { truth, .. } => **a == Some(*truth),
            })
            .count();
        let local_rss = status_kb(std::process::id(), "VmRSS:");
        println!(
            "\n| backend | still p50 ms | still p95 ms | clip p50 ms | clip p95 ms | agreement with local | memory |"
        );
        println!("|---|---|---|---|---|---|---|");
        println!(
            "| local (mapped scan) | {:.1} | {:.1} | {:.1} | {:.1} | - (planted truth {truth_ok}/{}) | segments {} MB, bench RSS {} MB |",
            percentile(&mut lat.0, 0.5),
            percentile(&mut lat.0, 0.95),
            percentile(&mut lat.1, 0.5),
            percentile(&mut lat.1, 0.95),
            queries.len(),
            segments.iter().map(|s| s.bytes() as u64).sum::<u64>() / 1_000_000,
            local_rss / 1000
        );

        let mut plans = vec![IndexPlan::Flat];
        // The clustered index the rule would give these rows, at every share asked, whether or
        // not the rule would cluster a collection this small.
        let nlist = IndexPlan::nlist_for(n);
        for &s in &a.shares {
            plans.push(IndexPlan::Ivf { nlist, nprobe: IndexPlan::nprobe_for(nlist, s) });
        }
        let mut built: Option<IndexPlan> = None;
        for plan in plans {
            let same_index = match (built, plan) {
                (Some(IndexPlan::Ivf { nlist: a, .. }), IndexPlan::Ivf { nlist: b, .. }) => a == b,
                (Some(IndexPlan::Flat), IndexPlan::Flat) => true,
                _ => false,
            };
            if !same_index {
                let t = Instant::now();
                m.set_index(&coll, plan)?;
                println!("(index {} built and loaded in {:.0} s)", plan.name(), t.elapsed().as_secs_f64());
                built = Some(plan);
            }
            for (level, m) in &searchers {
                m.set_nprobe(match plan {
                    IndexPlan::Flat => None,
                    IndexPlan::Ivf { nprobe, .. } => Some(nprobe),
                });
                for q in queries.iter().take(3) {
                    let (h, r, l) = probe_of(q);
                    m.search(&coll, 0, h, r, l)?;
                }
                let mut lat = (Vec::new(), Vec::new());
                let mut differ = Vec::new();
                let mut unlike_exact = 0usize;
                for (i, q) in queries.iter().enumerate() {
                    let (hashes, radius, limit) = probe_of(q);
                    let t = Instant::now();
                    let found = m.search(&coll, 0, hashes, radius, limit)?;
                    let ms = t.elapsed().as_secs_f64() * 1e3;
                    if matches!(q, Query::Clip { .. }) {
                        lat.1.push(ms)
                    } else {
                        lat.0.push(ms)
                    }
                    let hits: Vec<_> = found.iter().map(|f| (f.query, f.video, f.entry, f.dist)).collect();
                    let mut hits = hits;
                    hits.sort_unstable_by_key(|h| (h.3, h.1, h.2));
                    hits.truncate(limit);
                    let got = answer(q, &hits);
                    if got != local_answers[i] {
                        let exact = *exact_answers.entry(i).or_insert_with(|| answer(q, &scan_with(q, true)));
                        if got != exact {
                            unlike_exact += 1;
                        }
                        differ.push((i, local_answers[i], got, exact));
                    }
                }
                let rss = milvus_pid.map(|pid| status_kb(pid, "VmRSS:")).unwrap_or(0);
                let label = match plan {
                    IndexPlan::Flat => format!("Milvus BIN_FLAT, {level}"),
                    IndexPlan::Ivf { nlist, nprobe } => {
                        format!("Milvus BIN_IVF_FLAT nlist {nlist} nprobe {nprobe}, {level}")
                    }
                };
                println!(
                    "| {label} | {:.1} | {:.1} | {:.1} | {:.1} | {:.2}% ({} differ; with the exact scan {:.2}%) | server RSS {} MB |",
                    percentile(&mut lat.0, 0.5),
                    percentile(&mut lat.0, 0.95),
                    percentile(&mut lat.1, 0.5),
                    percentile(&mut lat.1, 0.95),
                    100.0 * (queries.len() - differ.len()) as f64 / queries.len() as f64,
                    differ.len(),
                    100.0 * (queries.len() - unlike_exact) as f64 / queries.len() as f64,
                    rss / 1000
                );
                for (i, l, g, e) in differ.iter().take(20) {
                    let kind = match &queries[*i] {
                        Query::Still { truth: None, .. } => "negative still",
                        Query::Still { .. } => "still",
                        Query::Clip { .. } => "clip",
                    };
                    println!("    differs: query {i} ({kind}): local {l:?}, Milvus {g:?}, exact scan {e:?}");
                }
            }
        }
    }
    m.drop_collection(&coll)?;
    drop(server);
    Ok(())
}
