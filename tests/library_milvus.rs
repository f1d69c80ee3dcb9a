//! The Milvus client against a real Milvus 2.3.5 (`.ci/milvus-server`; see
//! `reelfind::library::milvus::testing`): schema, insert, batched range search, an owner's
//! rows in order, delete, count, the clustered index, and a server that dies and comes back.
use std::time::Duration;

use rand::{Rng, SeedableRng};
use reelfind::library::milvus::testing::{self, MilvusServer};
use reelfind::library::milvus::{Found, IndexPlan, Milvus, MilvusUrl, Row};
use reelfind::library::picture::hash::{Hash, hamming};

fn client(addr: &str, name: &str) -> Milvus {
    Milvus::new(MilvusUrl::parse(&format!("milvus://{addr}/{name}")).unwrap(), Duration::from_secs(20)).unwrap()
}

fn random_hash(rng: &mut impl Rng) -> Hash {
    [rng.random(), rng.random(), rng.random(), rng.random()]
}

/// `h` with `bits` of its bits flipped (distinct positions).
fn flip(h: Hash, bits: u32, rng: &mut impl Rng) -> Hash {
    let mut out = h;
    let mut done = std::collections::HashSet::new();
    while done.len() < bits as usize {
        let b: u32 = rng.random_range(0..256);
        if done.insert(b) {
            out[(b / 64) as usize] ^= 1 << (b % 64);
        }
    }
    out
}

fn rows(video: u32, n: u32, rng: &mut impl Rng) -> Vec<Row> {
    (0..n).map(|i| Row { video, entry: i, ms: i * 125, hash: random_hash(rng) }).collect()
}

/// What an exact scan answers: every row within `radius` of each query.
fn exact(all: &[Row], queries: &[Hash], radius: u32) -> Vec<(usize, u32, u32, u32)> {
    let mut out = Vec::new();
    for (q, h) in queries.iter().enumerate() {
        for r in all {
            let d = hamming(h, &r.hash);
            if d <= radius {
                out.push((q, r.video, r.entry, d));
            }
        }
    }
    out.sort_unstable();
    out
}

fn found_set(found: &[Found]) -> Vec<(usize, u32, u32, u32)> {
    let mut out: Vec<_> = found.iter().map(|f| (f.query, f.video, f.entry, f.dist)).collect();
    out.sort_unstable();
    out
}

#[test]
fn rows_are_written_searched_in_one_batch_read_back_in_order_and_deleted() {
    let Some(addr) = testing::shared() else { return };
    let name = testing::unique_name("client");
    let m = client(&addr, &name);
    let coll = MilvusUrl::parse(&format!("milvus://{addr}/{name}")).unwrap().collection("library");
    m.ensure_collection(&coll, true).unwrap();
    // Twice, as two nodes starting together would.
    m.ensure_collection(&coll, true).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    // Video 2 has more rows than one query page (16,384).
    let (a, b, c) = (rows(1, 500, &mut rng), rows(2, 20_000, &mut rng), rows(3, 300, &mut rng));
    for r in [&a, &b, &c] {
        m.insert(&coll, 0, r).unwrap();
    }
    // The crop tier of video 1: same places, another partition.
    let crops = rows(1, 40, &mut rng);
    m.insert(&coll, 1, &crops).unwrap();
    assert_eq!(m.count(&coll).unwrap(), 500 + 20_000 + 300 + 40);

    // A batch of query hashes: near copies of a few rows, and one of nothing.
    let queries = vec![
        flip(a[17].hash, 5, &mut rng),
        flip(b[19_999].hash, 30, &mut rng),
        flip(c[0].hash, 70, &mut rng),
        random_hash(&mut rng),
        b[4].hash,
    ];
    let all: Vec<Row> = [a.clone(), b.clone(), c.clone()].concat();
    let found = m.search(&coll, 0, &queries, 70, 100).unwrap();
    assert_eq!(found_set(&found), exact(&all, &queries, 70));
    let f = found.iter().find(|f| f.query == 1).unwrap();
    assert_eq!((f.video, f.entry, f.ms, f.dist), (2, 19_999, 19_999 * 125, 30));
    assert!(found.iter().any(|f| (f.query, f.video, f.entry, f.dist) == (4, 2, 4, 0)));
    assert!(found.iter().any(|f| f.query == 2 && f.dist == 70), "a hit at exactly the radius is kept");
    assert!(found.iter().all(|f| f.query != 3));
    // The crop partition alone answers the crop tier.
    let cf = m.search(&coll, 1, &[crops[3].hash], 10, 10).unwrap();
    assert_eq!(cf.iter().map(|f| (f.video, f.entry, f.dist)).collect::<Vec<_>>(), vec![(1, 3, 0)]);

    // An owner's rows, in order, past one page.
    let back = m.rows_of(&coll, 0, 2).unwrap();
    assert_eq!(back.len(), 20_000);
    assert_eq!(back, b);

    m.delete_video(&coll, 2).unwrap();
    assert!(m.rows_of(&coll, 0, 2).unwrap().is_empty());
    assert_eq!(m.count(&coll).unwrap(), 500 + 300 + 40);
    let found = m.search(&coll, 0, &queries, 70, 100).unwrap();
    assert!(found.iter().all(|f| f.video != 2));
    m.drop_collection(&coll).unwrap();
    assert!(!m.has_collection(&coll).unwrap());
}

#[test]
fn the_clustered_index_finds_what_the_exact_one_does_when_every_list_is_probed() {
    let Some(addr) = testing::shared() else { return };
    let name = testing::unique_name("ivf");
    let m = client(&addr, &name);
    let coll = format!("{name}_library");
    m.ensure_collection(&coll, true).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(11);
    let all = rows(5, 30_000, &mut rng);
    m.insert(&coll, 0, &all).unwrap();
    m.flush(&coll).unwrap();
    m.set_index(&coll, IndexPlan::Ivf { nlist: 64, nprobe: 64 }).unwrap();
    assert!(matches!(m.index_plan(&coll).unwrap(), IndexPlan::Ivf { nlist: 64, .. }));
    let queries: Vec<Hash> = (0..20).map(|i| flip(all[i * 1000].hash, 40, &mut rng)).collect();
    let found = m.search(&coll, 0, &queries, 62, 50).unwrap();
    assert_eq!(found_set(&found), exact(&all, &queries, 62));
    m.drop_collection(&coll).unwrap();
}

#[test]
fn a_dead_server_is_an_error_within_the_timeout_and_the_client_reconnects_when_it_is_back() {
    if testing::shared().is_none() {
        return;
    }
    let mut server = MilvusServer::start().unwrap();
    let m = Milvus::new(MilvusUrl::parse(&server.url("fault")).unwrap(), Duration::from_secs(10)).unwrap();
    let coll = "fault_library";
    m.ensure_collection(coll, true).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(3);
    let rs = rows(9, 1000, &mut rng);
    m.insert(coll, 0, &rs).unwrap();
    m.flush(coll).unwrap();
    assert_eq!(m.search(coll, 0, &[rs[10].hash], 0, 5).unwrap().len(), 1);

    server.kill().unwrap();
    let started = std::time::Instant::now();
    let e = m.search(coll, 0, &[rs[10].hash], 0, 5).unwrap_err();
    assert!(e.to_string().starts_with("Milvus search"), "{e}");
    // Bounded by the client's timeout (10 s, two attempts), with room for a loaded machine.
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
    assert!(m.ping().is_err());

    server.restart().unwrap();
    // Loading the collection again after a restart takes the server a moment: the same
    // client, never rebuilt, answers once it has.
    let mut answer = None;
    for _ in 0..120 {
        if let Ok(found) = m.search(coll, 0, &[rs[10].hash], 0, 5) {
            answer = Some(found);
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let found = answer.expect("the client reconnects to the restarted server");
    assert_eq!(found.iter().map(|f| (f.video, f.entry)).collect::<Vec<_>>(), vec![(9, 10)]);
    assert_eq!(m.count(coll).unwrap(), 1000);
}

// The index seam over Milvus: the same entries put into the embedded index and into Milvus,
// asked the same probes.

use reelfind::library::index::entries::{EntryIndex, Hit, Probe, Section, VideoEntries};
use reelfind::library::index::mapped::MappedIndex;
use reelfind::library::index::milvus::MilvusIndex;

/// `h` with `n` bits flipped, spread over the four words as a real near copy's are (the first
/// word gets a quarter, well inside the embedded scan's first-stage filter).
fn spread_flip(mut h: Hash, n: u32) -> Hash {
    for b in 0..n {
        h[(b % 4) as usize] ^= 1 << (b / 4 * 3 % 64);
    }
    h
}

fn entries_of(video: u32, n: u32, step: u32, rng: &mut impl Rng) -> Vec<(Hash, u32)> {
    (0..n).map(|i| (random_hash(rng), i * step + video)).collect()
}

/// Both indexes' hits, in one order (equal distances to one entry from two query hashes
/// come out of the embedded scan in either order).
fn both(a: &dyn EntryIndex, b: &dyn EntryIndex, probe: &Probe<'_>) -> (Vec<Hit>, Vec<Hit>) {
    let key = |h: &Hit| (h.dist, h.video, h.entry, h.query);
    let mut x = a.near(probe).unwrap();
    let mut y = b.near(probe).unwrap();
    x.sort_by_key(key);
    y.sort_by_key(key);
    (x, y)
}

#[test]
fn the_milvus_index_answers_every_probe_as_the_embedded_index_does() {
    let Some(addr) = testing::shared() else { return };
    let url = MilvusUrl::parse(&format!("milvus://{addr}/{}", testing::unique_name("seam"))).unwrap();
    let milvus = MilvusIndex::open(&url, "library").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mapped = MappedIndex::open(dir.path()).unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(40);

    // Video 3: every tier and static stretches; video 5 shares ten of its frames (a scene in
    // two episodes); video 8 is a long film of random frames.
    let frames3 = entries_of(3, 400, 40, &mut rng);
    let crops3 = entries_of(3, 120, 100, &mut rng);
    let uppers3 = entries_of(3, 60, 200, &mut rng);
    // The column tier keeps five windows a moment, under one time.
    let columns3: Vec<(Hash, u32)> =
        entries_of(3, 50, 1, &mut rng).into_iter().enumerate().map(|(i, (h, _))| (h, (i as u32 / 5) * 1_000)).collect();
    let deeps3 = entries_of(3, 80, 150, &mut rng);
    let stills3 = vec![[0, 1_000], [5_000, 9_000]];
    let v3 = VideoEntries {
        frames: &frames3,
        crops: &crops3,
        uppers: &uppers3,
        columns: &columns3,
        deeps: &deeps3,
        stills: &stills3,
    };
    let frames5: Vec<(Hash, u32)> = frames3[..10].iter().map(|&(h, ms)| (h, ms + 7)).collect();
    let v5 = VideoEntries { frames: &frames5, ..Default::default() };
    let frames8 = entries_of(8, 5_000, 125, &mut rng);
    let v8 = VideoEntries { frames: &frames8, ..Default::default() };
    for index in [&milvus as &dyn EntryIndex, &mapped] {
        index.put(3, &v3).unwrap();
        index.put(5, &v5).unwrap();
        index.put(8, &v8).unwrap();
        index.follow(&[3, 5, 8]);
    }
    assert_eq!(milvus.len(), mapped.len());
    assert_eq!(milvus.len(), 400 + 120 + 60 + 50 + 80 + 10 + 5_000);
    assert!(milvus.holds_current(3) && milvus.holds_current(8) && !milvus.holds_current(9));

    // One batch of hypotheses per tier, as a still's search sends: near copies at several
    // distances, an exact copy, the shared frames, and hashes of nothing.
    let frame_batch = vec![
        spread_flip(frames3[123].0, 9),
        spread_flip(frames8[4_321].0, 30),
        frames3[4].0,
        random_hash(&mut rng),
        spread_flip(frames8[17].0, 52),
        spread_flip(frames3[5].0, 2),
    ];
    let crop_batch: Vec<Hash> = (0..40).map(|i| spread_flip(crops3[i * 3].0, i as u32)).collect();
    let upper_batch = vec![uppers3[59].0, spread_flip(frames3[0].0, 1)];
    let column_batch: Vec<Hash> = (0..10).map(|i| spread_flip(columns3[i * 4].0, 3 * i as u32)).collect();
    let deep_batch: Vec<Hash> = (0..30).map(|i| spread_flip(deeps3[i * 2].0, 2 * i as u32)).collect();
    let probes = [
        Probe { section: Section::Frames, hashes: &frame_batch, radius: 56, limit: 100, many: false },
        Probe { section: Section::Frames, hashes: &frame_batch, radius: 20, limit: 100, many: false },
        // Fewer hits than there are: the nearest, in the embedded scan's order.
        Probe { section: Section::Frames, hashes: &frame_batch, radius: 56, limit: 3, many: false },
        Probe { section: Section::Crops, hashes: &crop_batch, radius: 32, limit: 50, many: true },
        Probe { section: Section::Upper, hashes: &upper_batch, radius: 40, limit: 10, many: false },
        Probe { section: Section::Columns, hashes: &column_batch, radius: 30, limit: 40, many: true },
        Probe { section: Section::Deep, hashes: &deep_batch, radius: 36, limit: 60, many: true },
    ];
    for probe in &probes {
        let (want, got) = both(&mapped, &milvus, probe);
        assert!(!want.is_empty(), "{probe:?}");
        assert_eq!(got, want, "{:?} radius {} limit {}", probe.section, probe.radius, probe.limit);
    }
    let (want, _) = both(&mapped, &milvus, &probes[0]);
    assert!(want.iter().any(|h| (h.query, h.video, h.entry, h.ms, h.dist) == (0, 3, 123, 123 * 40 + 3, 9)));
    assert!(want.iter().any(|h| (h.query, h.video, h.entry, h.dist) == (2, 5, 4, 0)), "the shared frame in 5");
    assert!(want.iter().all(|h| h.query != 3));
    // The shared frame at distance 0 twice (videos 3 and 5) and the 2-bit copy: the owner
    // added first comes first.
    let top = milvus.near(&probes[2]).unwrap();
    assert_eq!(
        top.iter().map(|h| (h.video, h.entry, h.dist)).collect::<Vec<_>>(),
        vec![(3, 4, 0), (5, 4, 0), (3, 5, 2)]
    );

    // Timelines: every entry of a tier in time order, and the static stretches.
    for (video, section) in [
        (3, Section::Frames),
        (3, Section::Crops),
        (3, Section::Upper),
        (3, Section::Columns),
        (3, Section::Deep),
        (5, Section::Frames),
        (8, Section::Frames),
        (5, Section::Upper),
    ] {
        let a = mapped.timeline(video, section).unwrap().unwrap();
        let b = milvus.timeline(video, section).unwrap().unwrap();
        assert_eq!((b.len(), b.times(), b.stills()), (a.len(), a.times(), a.stills()), "{video} {section:?}");
        assert!((0..a.len()).all(|i| a.hash(i) == b.hash(i)));
    }
    assert_eq!(milvus.timeline(3, Section::Frames).unwrap().unwrap().stills(), &stills3[..]);
    assert!(milvus.timeline(9, Section::Frames).unwrap().is_none());

    // Putting again replaces (no row twice); removing forgets.
    let frames5b = &frames3[..4];
    milvus.put(5, &VideoEntries { frames: frames5b, ..Default::default() }).unwrap();
    assert_eq!(milvus.timeline(5, Section::Frames).unwrap().unwrap().len(), 4);
    assert_eq!(milvus.len(), 400 + 120 + 60 + 50 + 80 + 4 + 5_000);
    let hits =
        milvus.near(&Probe { section: Section::Frames, hashes: &[frames3[2].0], radius: 0, limit: 10, many: false });
    assert_eq!(hits.unwrap().iter().map(|h| h.video).collect::<Vec<_>>(), vec![3, 5]);
    milvus.remove(3).unwrap();
    assert!(milvus.timeline(3, Section::Frames).unwrap().is_none());
    assert!(!milvus.holds_current(3));
    assert_eq!(milvus.len(), 4 + 5_000);

    // Another node's view: it answers only the owners its catalog lists, and sees what
    // this one wrote (no cache between searches).
    let other = MilvusIndex::open(&url, "library").unwrap();
    other.follow(&[8]);
    let probe = Probe { section: Section::Frames, hashes: &frame_batch, radius: 56, limit: 100, many: false };
    let seen: std::collections::BTreeSet<u32> = other.near(&probe).unwrap().iter().map(|h| h.video).collect();
    assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![8]);
    assert!(other.timeline(5, Section::Frames).unwrap().is_none(), "not in its catalog");
    other.follow(&[5, 8]);
    assert_eq!(other.timeline(5, Section::Frames).unwrap().unwrap().len(), 4);
    assert!(other.holds_current(5));
    milvus.drop_all().unwrap();
}

// The whole app on a Milvus index: `REELFIND_LIBRARY_INDEX=milvus://...`.

use reelfind::library::Quiet;

use crate::identify_support::{Upload, answer, openai_fake, upload};
use crate::library::{frame_file, library_folder, second_film, two_films_folder};
use crate::support::TestApp;

/// The frame of `video` at `at` seconds, as JPEG bytes.
fn frame_jpeg(video: &std::path::Path, at: f64, out: &std::path::Path) -> Vec<u8> {
    frame_file(video, at, "null", out);
    std::fs::read(out).unwrap()
}

#[tokio::test]
async fn an_app_on_milvus_indexes_and_identifies_as_one_on_the_embedded_index_does() {
    let Some(addr) = testing::shared() else { return };
    let url = format!("milvus://{addr}/{}?timeout=30", testing::unique_name("app"));
    let app = TestApp::with_env([("REELFIND_LIBRARY_INDEX", url.clone())]).await;
    assert!(app.register("milvususer", "secret-pass-1").await.status.is_success());
    let local = TestApp::with_env([("REELFIND_LIBRARY_INDEX", "local")]).await;
    let folder = two_films_folder();
    for a in [&app, &local] {
        let lib = a.state.library.clone();
        let path = folder.path().to_path_buf();
        let report = tokio::task::spawn_blocking(move || lib.add_paths(&[path], &mut Quiet)).await.unwrap();
        assert_eq!((report.added, report.failed.len()), (2, 0), "{report:?}");
    }
    let lib = app.state.library.clone();
    assert!(lib.milvus().is_some());
    assert!(lib.stale_files().is_empty(), "every video's rows are complete");
    assert_eq!(lib.frame_count(), local.state.library.frame_count());
    // Nothing of the hashes in the library folder.
    assert!(!lib.dir().join("segments").read_dir().is_ok_and(|mut d| d.next().is_some()));

    let res = app.get("/readyz").await;
    assert_eq!(res.status, 200);
    let body = res.json();
    assert_eq!((body["status"].as_str(), body["libraryIndex"].as_str()), (Some("ready"), Some("milvus")), "{body}");

    // The same answers as the embedded index, for a still (every tier's search) and through
    // the identify route.
    let video = folder.path().join("big-buck-bunny.mp4");
    for at in [0.4, 2.6, 4.1] {
        let jpeg = frame_jpeg(&video, at, &folder.path().join("q.jpg"));
        let img = image::load_from_memory(&jpeg).unwrap();
        let (on_milvus, on_disk) = {
            let (a, b) = (app.state.library.clone(), local.state.library.clone());
            let (i1, i2) = (img.clone(), img.clone());
            let x = tokio::task::spawn_blocking(move || a.search_image(&i1).unwrap()).await.unwrap();
            let y = tokio::task::spawn_blocking(move || b.search_image(&i2).unwrap()).await.unwrap();
            (x, y)
        };
        // For the README's figure (printed, not asserted).
        eprintln!("still at {at}: milvus {:.1} ms, local {:.1} ms", on_milvus.elapsed_ms, on_disk.elapsed_ms);
        let (m, d) = (on_milvus.best.expect("found on Milvus"), on_disk.best.expect("found on disk"));
        assert_eq!(
            (m.title.as_str(), m.at, m.from, m.to, m.tier),
            (d.title.as_str(), d.at, d.from, d.to, d.tier),
            "at {at}"
        );
        assert_eq!(m.similarity, d.similarity);
        let res = upload(&app, Upload::image(jpeg, "library")).await;
        assert_eq!(res.status, 200, "{}", res.text());
        let r = res.json();
        assert_eq!((r["title"].as_str(), r["engine"].as_str()), (Some("Big Buck Bunny"), Some("library")));
        assert!((r["timestamp"]["at"].as_f64().unwrap() - at).abs() <= 0.5, "{}", r["timestamp"]);
    }

    // Once the catalog has not changed for the window, the searches are bounded (no wait for
    // the server's time tick) and still find every listed video's entries: the same answers.
    tokio::time::sleep(reelfind::library::milvus::FRESH_WINDOW + std::time::Duration::from_secs(1)).await;
    assert!(!lib.milvus().unwrap().client().searches_strong(), "bounded past the window");
    for at in [0.4, 2.6, 4.1] {
        let img = image::load_from_memory(&frame_jpeg(&video, at, &folder.path().join("q.jpg"))).unwrap();
        let (a, b) = (app.state.library.clone(), local.state.library.clone());
        let i1 = img.clone();
        let x = tokio::task::spawn_blocking(move || a.search_image(&i1).unwrap()).await.unwrap();
        let y = tokio::task::spawn_blocking(move || b.search_image(&img).unwrap()).await.unwrap();
        eprintln!("still at {at}, bounded: milvus {:.1} ms, local {:.1} ms", x.elapsed_ms, y.elapsed_ms);
        let (m, d) = (x.best.expect("found on Milvus, bounded"), y.best.expect("found on disk"));
        assert_eq!(
            (m.title.as_str(), m.at, m.from, m.to, m.tier, m.similarity),
            (d.title.as_str(), d.at, d.from, d.to, d.tier, d.similarity),
            "at {at}"
        );
    }

    // Removing a video forgets its rows, as on the embedded index.
    let before = app.state.library.frame_count();
    for a in [&app, &local] {
        let lib = a.state.library.clone();
        let removed = tokio::task::spawn_blocking(move || lib.remove("sierpinski.mp4").unwrap()).await.unwrap();
        assert_eq!(removed.len(), 1);
    }
    assert!(app.state.library.frame_count() < before);
    assert_eq!(app.state.library.frame_count(), local.state.library.frame_count());
    if let Some(m) = app.state.library.milvus() {
        m.drop_all().unwrap();
    }
}

/// `library migrate --to`: a local index copied to Milvus answers as it did; run again it
/// copies nothing; a copy cut short (one video's rows gone) is finished by running it again;
/// and the way back to segment files works the same.
#[tokio::test]
async fn a_local_index_moves_to_milvus_and_back_with_one_command() {
    use reelfind::library::LibraryIndex;
    use reelfind::library::index::backend::Backend;
    use reelfind::library::index::shared::CatalogDatabase;
    let Some(addr) = testing::shared() else { return };
    let local = TestApp::with_env([("REELFIND_LIBRARY_INDEX", "local")]).await;
    let folder = two_films_folder();
    let lib = local.state.library.clone();
    let path = folder.path().to_path_buf();
    let report = tokio::task::spawn_blocking(move || lib.add_paths(&[path], &mut Quiet)).await.unwrap();
    assert_eq!((report.added, report.failed.len()), (2, 0), "{report:?}");
    let dir = local.state.library.dir().to_path_buf();
    let milvus: Backend = format!("milvus://{addr}/{}?timeout=30", testing::unique_name("move")).parse().unwrap();

    let migrate = |from: std::sync::Arc<LibraryIndex>, to: Backend| {
        tokio::task::spawn_blocking(move || from.migrate_to(&to, |_, _, _| {}).unwrap())
    };
    let report = migrate(local.state.library.clone(), milvus.clone()).await.unwrap();
    assert_eq!((report.copied, report.already, report.missing.len()), (2, 0, 0), "{report:?}");
    assert_eq!(report.catalog, Some("database"), "the catalog moves into the database with the hashes");
    assert_eq!(report.entries, local.state.library.frame_count());
    let again = migrate(local.state.library.clone(), milvus.clone()).await.unwrap();
    assert_eq!((again.copied, again.already, again.entries), (0, 2, 0), "{again:?}");

    // A node with an empty folder of its own, on Milvus and the database, knows both videos.
    let (elsewhere, b) = (tempfile::tempdir().unwrap(), milvus.clone());
    let database = CatalogDatabase::url(local.state.config.database_url.expose());
    let e = elsewhere.path().to_path_buf();
    let other_node =
        tokio::task::spawn_blocking(move || LibraryIndex::open_in(e, &b, Some(database)).unwrap()).await.unwrap();
    assert_eq!(other_node.catalog_place(), "database");
    let titles: Vec<String> = other_node.list().iter().map(|v| v.meta.title.clone()).collect();
    let expected_titles: Vec<String> = local.state.library.list().iter().map(|v| v.meta.title.clone()).collect();
    assert_eq!(titles, expected_titles);

    // The same library folder served from Milvus: the same entries, the same answer.
    let (d, b) = (dir.clone(), milvus.clone());
    let on_milvus =
        std::sync::Arc::new(tokio::task::spawn_blocking(move || LibraryIndex::open_on(d, &b).unwrap()).await.unwrap());
    let (m, l) = (on_milvus.clone(), local.state.library.clone());
    let (counted, expected) = tokio::task::spawn_blocking(move || (m.frame_count(), l.frame_count())).await.unwrap();
    assert_eq!(counted, expected);
    let video = folder.path().join("big-buck-bunny.mp4");
    let img = image::load_from_memory(&frame_jpeg(&video, 2.6, &folder.path().join("q.jpg"))).unwrap();
    let search = |lib: std::sync::Arc<LibraryIndex>, img: image::DynamicImage| {
        tokio::task::spawn_blocking(move || lib.search_image(&img).unwrap().best.expect("found"))
    };
    let (x, y) = (
        search(on_milvus.clone(), img.clone()).await.unwrap(),
        search(local.state.library.clone(), img.clone()).await.unwrap(),
    );
    assert_eq!((x.title.as_str(), x.at, x.from, x.to, x.tier), (y.title.as_str(), y.at, y.from, y.to, y.tier));

    // Cut short: one video's rows gone from Milvus. The next run copies that one only.
    let gone = on_milvus.list()[0].id;
    let m = on_milvus.clone();
    tokio::task::spawn_blocking(move || m.milvus().unwrap().remove(gone).unwrap()).await.unwrap();
    let resumed = migrate(local.state.library.clone(), milvus.clone()).await.unwrap();
    assert_eq!((resumed.copied, resumed.already), (1, 1), "{resumed:?}");

    // And back: with the segment files gone, Milvus gives them back as they were.
    std::fs::remove_dir_all(dir.join("segments")).unwrap();
    let back = migrate(on_milvus.clone(), Backend::Local).await.unwrap();
    assert_eq!((back.copied, back.missing.len()), (2, 0), "{back:?}");
    let (d, b) = (dir.clone(), Backend::Local);
    let on_disk =
        std::sync::Arc::new(tokio::task::spawn_blocking(move || LibraryIndex::open_on(d, &b).unwrap()).await.unwrap());
    let z = search(on_disk.clone(), img).await.unwrap();
    assert_eq!((z.title.as_str(), z.at, z.from, z.to, z.tier), (y.title.as_str(), y.at, y.from, y.to, y.tier));
    assert_eq!(tokio::task::spawn_blocking(move || on_disk.frame_count()).await.unwrap(), expected);
    let m = on_milvus.clone();
    tokio::task::spawn_blocking(move || m.milvus().unwrap().drop_all().unwrap()).await.unwrap();
}

/// Asks `/readyz` until it says ready (at most 240 times, half a second apart).
async fn wait_ready(app: &TestApp) -> bool {
    for _ in 0..240 {
        if app.get("/readyz").await.json()["status"] == "ready" {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    false
}

/// Milvus dies while the app serves: a library identification is a clear 503 of its own (with
/// `Retry-After`), `auto` goes on to the cloud engine, readiness says degraded; when Milvus is
/// back the same app answers from the library again by itself.
#[tokio::test]
async fn a_dead_milvus_is_a_503_library_unavailable_and_auto_asks_the_cloud() {
    if testing::shared().is_none() {
        return;
    }
    // A server of this test's own: it is killed.
    let mut server = tokio::task::spawn_blocking(|| MilvusServer::start().unwrap()).await.unwrap();
    let cloud = openai_fake(&answer("The Matrix", 1999, "movie", 0.9)).await;
    let app = TestApp::with_env([
        ("REELFIND_LIBRARY_INDEX", format!("{}?timeout=3", server.url("down"))),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", cloud.uri())),
    ])
    .await;
    assert!(app.register("milvusfault", "secret-pass-1").await.status.is_success());
    let folder = library_folder();
    let lib = app.state.library.clone();
    let path = folder.path().to_path_buf();
    let report = tokio::task::spawn_blocking(move || lib.add_paths(&[path], &mut Quiet)).await.unwrap();
    assert_eq!(report.added, 1, "{report:?}");
    // A new picture for every upload: the same bytes again would be answered from the
    // caller's stored result, without asking any engine.
    let video = folder.path().join("big-buck-bunny.mp4");
    let frame = |at: f64| frame_jpeg(&video, at, &folder.path().join(format!("q{at}.jpg")));
    let res = upload(&app, Upload::image(frame(2.6), "library")).await;
    assert_eq!((res.status.as_u16(), res.json()["title"].as_str()), (200, Some("Big Buck Bunny")), "{}", res.text());

    // Slow: the server is there but does not answer (stopped): the calls run out of the
    // address's timeout and the answer is the same 503; when it answers again, so does the app.
    let signal = |sig: &str, pid: u32| {
        let ok = std::process::Command::new("kill").args([sig, &pid.to_string()]).status().unwrap().success();
        assert!(ok, "kill {sig} {pid}");
    };
    signal("-STOP", server.pid);
    let res = upload(&app, Upload::image(frame(0.8), "library")).await;
    signal("-CONT", server.pid);
    assert_eq!(
        (res.status.as_u16(), res.json()["code"].as_str()),
        (503, Some("library_unavailable")),
        "{}",
        res.text()
    );
    assert!(wait_ready(&app).await, "ready again once the server answers");

    let mut server = tokio::task::spawn_blocking(move || {
        server.kill().unwrap();
        server
    })
    .await
    .unwrap();
    let res = upload(&app, Upload::image(frame(1.2), "library")).await;
    assert_eq!(res.status, 503, "{}", res.text());
    let body = res.json();
    assert_eq!(body["code"], "library_unavailable", "{body}");
    assert_eq!(res.header("retry-after").as_deref(), Some("15"));
    assert_eq!(body["retryAfter"], 15);

    let res = app.get("/readyz").await;
    assert_eq!(res.status, 200, "a node whose shared Milvus is down still serves the rest");
    let body = res.json();
    assert_eq!(body["status"], "degraded", "{body}");
    assert_eq!(body["checks"]["library"], "degraded: the Milvus index does not answer");
    assert_eq!(body["checks"]["database"], "ok");

    // `auto`: the library cannot answer, the cloud engine does.
    let res = upload(&app, Upload::image(frame(3.3), "auto")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!((res.json()["title"].as_str(), res.json()["engine"].as_str()), (Some("The Matrix"), Some("openai")));

    // An ingest while Milvus is down fails for that file and publishes nothing.
    let second = tempfile::tempdir().unwrap();
    std::fs::copy(second_film(), second.path().join("sierpinski.mp4")).unwrap();
    let add_second = || {
        let lib = app.state.library.clone();
        let path = second.path().to_path_buf();
        tokio::task::spawn_blocking(move || lib.add_paths(&[path], &mut Quiet))
    };
    let report = add_second().await.unwrap();
    assert_eq!((report.added, report.failed.len()), (0, 1), "{report:?}");
    assert_eq!(app.state.library.list().len(), 1);
    assert_eq!(app.state.library.milvus().unwrap().unfinished().len(), 1, "its id is remembered for cleaning");

    // Back: the same app, never restarted, answers from the library again once Milvus has
    // loaded the collection (polled, not timed).
    let server = tokio::task::spawn_blocking(move || {
        server.restart().unwrap();
        server
    })
    .await
    .unwrap();
    assert!(wait_ready(&app).await, "readiness says ready again when Milvus is back");
    let res = upload(&app, Upload::image(frame(4.0), "library")).await;
    assert_eq!((res.status.as_u16(), res.json()["title"].as_str()), (200, Some("Big Buck Bunny")), "{}", res.text());

    // The ingest again: added, and the index holds each video's entries once, nothing else.
    let report = add_second().await.unwrap();
    assert_eq!((report.added, report.failed.len()), (1, 0), "{report:?}");
    let lib = &app.state.library;
    let catalog: u64 = lib.list().iter().map(|v| (v.frames + v.crop_frames + v.upper_frames) as u64).sum();
    // The column and deep-crop tiers' counts are not in the catalog: their timelines tell them.
    let count = |id: u32, section| lib.entries().timeline(id, section).unwrap().map_or(0, |t| t.len() as u64);
    let columns: u64 = lib.list().iter().map(|v| count(v.id, Section::Columns)).sum();
    let deeps: u64 = lib.list().iter().map(|v| count(v.id, Section::Deep)).sum();
    assert!(columns > 0 && deeps > 0, "the column and deep-crop tiers are indexed");
    assert_eq!(lib.frame_count(), catalog + columns + deeps);
    assert!(lib.milvus().unwrap().unfinished().is_empty());
    drop(app);
    tokio::task::spawn_blocking(move || drop(server)).await.unwrap();
}

/// Two real server processes on one PostgreSQL database and one Milvus, each with a library
/// folder of its own: a video added by `reelfind library add` on node A's machine is found
/// through node B at once (the catalog is in the database, the hashes in Milvus, the
/// soundtrack's landmarks fetched from the database), and an edit made on A's side is what B
/// answers next. Runs in CI's PostgreSQL pass (several nodes need a shared database server);
/// elsewhere it says it was skipped.
#[tokio::test]
async fn a_video_added_on_node_a_is_found_through_node_b() {
    use crate::server::{Client, Server};
    use crate::support::{empty_pg_database, pg_url};

    let Some(admin) = pg_url() else {
        eprintln!("skipped a_video_added_on_node_a_is_found_through_node_b: set TEST_DATABASE_URL to run it");
        return;
    };
    let Some(addr) = testing::shared() else { return };
    let database = empty_pg_database(&admin).await;
    let dir = tempfile::tempdir().unwrap();
    let index = format!("milvus://{addr}/{}?timeout=30", testing::unique_name("nodes"));
    let env = |node: &str| {
        vec![
            ("DATABASE_URL", database.url.clone()),
            ("REELFIND_SECRET_KEY", "a-shared-secret-key-for-both-nodes-0123456789".to_owned()),
            ("REELFIND_DATA_DIR", dir.path().join(node).display().to_string()),
            ("REELFIND_LIBRARY_DIR", dir.path().join(node).join("library").display().to_string()),
            ("REELFIND_LIBRARY_INDEX", index.clone()),
            ("REELFIND_TRUST_PROXY", "true".to_owned()),
        ]
    };
    let (env_a, env_b) = (env("a"), env("b"));
    let (mut a, mut b) =
        tokio::join!(Server::start("node-a", dir.path(), &env_a), Server::start("node-b", dir.path(), &env_b));

    // `reelfind library add` where node A runs (the files are there), with node A's settings.
    let folder = library_folder();
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_reelfind"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .envs(env_a.iter().map(|(k, v)| (*k, v.as_str())))
            .args(args)
            .output()
            .expect("reelfind runs");
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "reelfind {args:?}: {text}");
        text
    };
    // (The servers are other processes: waiting for the command here holds up nothing.)
    let added = cli(&["library", "add", &folder.path().display().to_string()]);
    assert!(added.contains("1 added"), "{added}");
    // (The address is shown without its options.)
    let shown = index.split('?').next().unwrap();
    assert!(added.contains(&format!("{shown}: ")) && added.contains("BIN_FLAT"), "{added}");
    let listed = cli(&["library", "list"]);
    assert!(listed.contains(&format!("index: {shown} (")) && listed.contains("Big Buck Bunny"), "{listed}");
    assert!(listed.contains("catalog in the database"), "{listed}");
    for node in ["a", "b"] {
        let library_dir = dir.path().join(node).join("library");
        assert!(
            !library_dir.join("segments").read_dir().is_ok_and(|mut d| d.next().is_some()),
            "no segment files: the hashes are in Milvus"
        );
        assert!(!library_dir.join("catalog.json").exists(), "no catalog file: the catalog is in the database");
    }
    let id: u32 = listed
        .lines()
        .find(|l| l.contains("Big Buck Bunny"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|w| w.parse().ok())
        .expect("the video's id in the list");

    // Found through node B (and through A), each asked by a guest of its own.
    let jpeg = frame_jpeg(&folder.path().join("big-buck-bunny.mp4"), 2.6, &dir.path().join("still.jpg"));
    for (node, address) in [(&b, "203.0.113.60"), (&a, "203.0.113.61")] {
        let (status, body) = identify_in_library(node, address, jpeg.clone(), "still.jpg", "image/jpeg").await;
        assert_eq!(status, 200, "{}: {body}", node.origin);
        let result: serde_json::Value = serde_json::from_str(&body).unwrap();
        assert_eq!((result["title"].as_str(), result["engine"].as_str()), (Some("Big Buck Bunny"), Some("library")));
        let (status, ready) = Client::new(&node.origin).get("/readyz").await;
        assert_eq!(status, 200, "{ready}");
        assert!(ready.contains("\"libraryIndex\":\"milvus\""), "{ready}");
    }
    // A clip asked of node B searches the soundtrack too: B reads the video's landmarks from
    // the database into its own folder.
    let clip = dir.path().join("clip.mp4");
    crate::library::ffmpeg(&[
        "-ss",
        "1",
        "-i",
        folder.path().join("big-buck-bunny.mp4").to_str().unwrap(),
        "-t",
        "4",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-c:a",
        "aac",
        clip.to_str().unwrap(),
    ]);
    let (status, body) =
        identify_in_library(&b, "203.0.113.62", std::fs::read(&clip).unwrap(), "clip.mp4", "video/mp4").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("Big Buck Bunny"), "{body}");
    assert!(
        dir.path().join("b/library/audio").join(format!("{id}.alm")).exists(),
        "node B keeps the landmarks it read from the database"
    );

    // An edit where node A runs holds on node B at once.
    let edited = cli(&["library", "edit", &id.to_string(), "--title", "The Bunny Cut", "--year", "2008"]);
    assert!(edited.contains("updated"), "{edited}");
    let (status, body) = identify_in_library(&b, "203.0.113.63", jpeg, "still.jpg", "image/jpeg").await;
    assert_eq!(status, 200, "{body}");
    let result: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(result["title"].as_str(), Some("The Bunny Cut"), "{body}");
    a.stop();
    b.stop();
}

/// `POST /api/identify` in library mode on `node`, as a guest of its own coming from
/// `address` (through the pretend proxy): the status and the body.
async fn identify_in_library(
    node: &crate::server::Server,
    address: &str,
    bytes: Vec<u8>,
    file: &str,
    mime: &str,
) -> (u16, String) {
    let form = reqwest::multipart::Form::new()
        .text("mode", "library")
        .part("file", reqwest::multipart::Part::bytes(bytes).file_name(file.to_owned()).mime_str(mime).unwrap());
    let req = reqwest::Client::new().post(node.url("/api/identify")).header("x-forwarded-for", address).multipart(form);
    let (status, _, body) = crate::server::Client::new(&node.origin).send(req).await;
    (status, body)
}

/// What an ingest cut short by a Milvus restart leaves (a tier's rows, no completion mark) is
/// not taken for the video, and writing the video again ends with each entry once.
#[test]
fn a_put_cut_short_is_not_current_and_the_next_put_leaves_no_duplicates() {
    let Some(addr) = testing::shared() else { return };
    let url = MilvusUrl::parse(&format!("milvus://{addr}/{}", testing::unique_name("resume"))).unwrap();
    let index = MilvusIndex::open(&url, "library").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(4);
    let frames = entries_of(4, 3_000, 40, &mut rng);
    let crops = entries_of(4, 100, 400, &mut rng);
    let entries = VideoEntries { frames: &frames, crops: &crops, ..Default::default() };
    // The frames tier of a first put, written before the server went away.
    index.put(1, &VideoEntries { frames: &frames[..5], ..Default::default() }).unwrap();
    let partial: Vec<Row> =
        frames.iter().enumerate().map(|(i, &(hash, ms))| Row { video: 4, entry: i as u32, ms, hash }).collect();
    index.client().insert(index.collection(), 0, &partial).unwrap();
    assert!(!index.holds_current(4), "no mark: not a video of the index");
    assert!(index.holds_current(1));

    for _ in 0..2 {
        index.put(4, &entries).unwrap();
        assert_eq!(index.len(), 5 + 3_000 + 100);
        assert_eq!(index.timeline(4, Section::Frames).unwrap().unwrap().len(), 3_000);
        let hits = index
            .near(&Probe { section: Section::Frames, hashes: &[frames[2_999].0], radius: 0, limit: 10, many: false })
            .unwrap();
        assert_eq!(hits.iter().map(|h| (h.video, h.entry)).collect::<Vec<_>>(), vec![(4, 2_999)]);
        assert!(index.holds_current(4));
    }
    index.drop_all().unwrap();
}

/// A real Milvus killed in the middle of a video's ingest (its frames tier written, not its
/// crops or its completion mark) and started again: the put made while it is down fails, the
/// same index (never reopened) writes the video again once the server is back, and each entry
/// is there once.
#[test]
fn a_milvus_killed_mid_ingest_and_restarted_ends_with_each_entry_once() {
    if testing::shared().is_none() {
        return;
    }
    let mut server = MilvusServer::start().unwrap();
    let url = MilvusUrl::parse(&format!("{}?timeout=10", server.url(&testing::unique_name("restart")))).unwrap();
    let index = MilvusIndex::open(&url, "library").unwrap();
    let mut rng = rand::rngs::StdRng::seed_from_u64(5);
    let other = entries_of(1, 5, 40, &mut rng);
    let frames = entries_of(4, 3_000, 40, &mut rng);
    let crops = entries_of(4, 100, 400, &mut rng);
    let entries = VideoEntries { frames: &frames, crops: &crops, ..Default::default() };
    index.put(1, &VideoEntries { frames: &other, ..Default::default() }).unwrap();
    let partial: Vec<Row> =
        frames.iter().enumerate().map(|(i, &(hash, ms))| Row { video: 4, entry: i as u32, ms, hash }).collect();
    index.client().insert(index.collection(), 0, &partial).unwrap();

    server.kill().unwrap();
    assert!(index.put(4, &entries).is_err(), "a put while the server is down fails");
    server.restart().unwrap();
    let mut written = index.put(4, &entries);
    for _ in 0..120 {
        if written.is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
        written = index.put(4, &entries);
    }
    written.expect("the index writes the video once the server is back");

    assert!(index.holds_current(4) && index.holds_current(1));
    assert_eq!(index.timeline(4, Section::Frames).unwrap().unwrap().len(), 3_000);
    assert_eq!(index.timeline(4, Section::Crops).unwrap().unwrap().len(), 100);
    assert_eq!(index.len(), 5 + 3_000 + 100);
    let hits = index
        .near(&Probe { section: Section::Frames, hashes: &[frames[1_234].0], radius: 0, limit: 10, many: false })
        .unwrap();
    assert_eq!(hits.iter().map(|h| (h.video, h.entry)).collect::<Vec<_>>(), vec![(4, 1_234)]);
    index.drop_all().unwrap();
}
