//! Benchmark of the answer memory (`identify::memory`) over real footage.
//!
//! ```text
//! cargo run --release --bin bench_memory -- \
//!     --remembered a.mp4 b.avi ... --negative c.avi d.mp4 ... \
//!     [--every 0.5] [--negative-fps 8] [--pad 100000,1000000] [--seed 7]
//! ```
//!
//! A frame of every `--remembered` file every `--every` seconds is remembered as one answer
//! (its title: the file). Each remembered frame is then shared again under a list of
//! transforms (re-encoded, resized, cropped 5% and 10% at a random offset, mirrored,
//! letterboxed, brighter, the test's "shared copy", and the same frame from another encode of
//! the video) and looked up; every frame of the `--negative` footage (other films, and
//! ffmpeg's generated patterns) at `--negative-fps`, clean, cropped 10%, mirrored and at
//! JPEG q30, is looked up too and must find nothing. A query is answered by the rule the
//! server uses (`memory::candidates` then `memory::decide`): per transform, the share of
//! right answers and the count of wrong ones; for negatives, the false answers. A sweep over
//! both thresholds (whole picture, centre window) shows where they were chosen. Then the
//! index is padded with random answers to each `--pad` size and every positive query is
//! timed (p50, p95), with the probe (decode and hashing) timed apart. Prints Markdown.
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::Parser;
use image::DynamicImage;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reelfind::identify::memory::hashes::{self, PictureProbe, Probe, Section};
use reelfind::identify::memory::{AMBIGUOUS_SLACK, CENTRE_ACCEPT, EmbeddedIndex, WHOLE_ACCEPT, candidates, decide};

#[derive(Parser)]
struct Args {
    /// Footage whose frames are remembered (one title per file).
    #[arg(long, num_args = 1.., required = true)]
    remembered: Vec<PathBuf>,
    /// Footage of other films: none of its frames may be answered.
    #[arg(long, num_args = 1..)]
    negative: Vec<PathBuf>,
    /// Seconds between remembered frames.
    #[arg(long, default_value_t = 0.5)]
    every: f64,
    /// Negative frames per second of negative footage.
    #[arg(long, default_value_t = 8.0)]
    negative_fps: f64,
    /// Remembered answers to pad the index to for the latency runs.
    #[arg(long, value_delimiter = ',', default_value = "100000,1000000")]
    pad: Vec<usize>,
    #[arg(long, default_value_t = 7)]
    seed: u64,
}

fn ffmpeg(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ffmpeg").args(["-nostdin", "-v", "error", "-y"]).args(args).output()?;
    anyhow::ensure!(out.status.success(), "ffmpeg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    Ok(())
}

/// Frames of `video` at `fps` (full size), with their times.
fn frames(video: &Path, fps: f64, dir: &Path) -> anyhow::Result<Vec<(f64, DynamicImage)>> {
    std::fs::create_dir_all(dir)?;
    let pattern = dir.join("f%05d.png");
    ffmpeg(&[
        "-i",
        video.to_str().unwrap_or_default(),
        "-vf",
        &format!("fps={fps}"),
        pattern.to_str().unwrap_or_default(),
    ])?;
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    names.into_iter().enumerate().map(|(i, p)| Ok(((i as f64 + 0.5) / fps, image::open(&p)?))).collect()
}

fn jpeg_round_trip(img: &DynamicImage, quality: u8) -> DynamicImage {
    let mut out = std::io::Cursor::new(Vec::new());
    let enc = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, quality);
    img.to_rgb8().write_with_encoder(enc).expect("JPEG encodes");
    image::load_from_memory(out.get_ref()).expect("JPEG decodes")
}

/// Keeps `kept` of each side at a random offset.
fn crop(img: &DynamicImage, kept: f64, rng: &mut StdRng) -> DynamicImage {
    let (w, h) = (img.width(), img.height());
    let (cw, ch) = ((w as f64 * kept).round() as u32, (h as f64 * kept).round() as u32);
    let (x, y) = (rng.random_range(0..=w - cw), rng.random_range(0..=h - ch));
    img.crop_imm(x, y, cw, ch)
}

fn resize(img: &DynamicImage, share: f64) -> DynamicImage {
    let (w, h) = ((img.width() as f64 * share).round() as u32, (img.height() as f64 * share).round() as u32);
    img.resize_exact(w.max(16), h.max(16), image::imageops::FilterType::Triangle)
}

/// Black bars above and below (a 16:9 picture shown 4:3).
fn letterbox(img: &DynamicImage) -> DynamicImage {
    let (w, h) = (img.width(), img.height());
    let mut canvas = image::RgbImage::new(w, h + h / 3);
    image::imageops::overlay(&mut canvas, &img.to_rgb8(), 0, i64::from(h / 6));
    DynamicImage::ImageRgb8(canvas)
}

fn brighter(img: &DynamicImage) -> DynamicImage {
    img.brighten(30).adjust_contrast(10.0)
}

const TRANSFORMS: &[&str] = &[
    "jpeg q30",
    "resize 50%",
    "crop 5%",
    "crop 10%",
    "mirror",
    "letterbox",
    "brighter",
    "shared copy (crop 5%, 70%, q60)",
    "another encode (360p, crf 32)",
];

fn transformed(
    name: &str,
    img: &DynamicImage,
    other_source: Option<&DynamicImage>,
    rng: &mut StdRng,
) -> Option<DynamicImage> {
    Some(match name {
        "jpeg q30" => jpeg_round_trip(img, 30),
        "resize 50%" => jpeg_round_trip(&resize(img, 0.5), 85),
        "crop 5%" => jpeg_round_trip(&crop(img, 0.95, rng), 85),
        "crop 10%" => jpeg_round_trip(&crop(img, 0.90, rng), 85),
        "mirror" => jpeg_round_trip(&img.fliph(), 85),
        "letterbox" => jpeg_round_trip(&letterbox(img), 85),
        "brighter" => jpeg_round_trip(&brighter(img), 85),
        "shared copy (crop 5%, 70%, q60)" => jpeg_round_trip(&resize(&crop(img, 0.95, rng), 0.7), 60),
        "another encode (360p, crf 32)" => jpeg_round_trip(other_source?, 85),
        _ => return None,
    })
}

/// The best distance per title of `probe` within `max_d`, by section.
fn per_title(
    index: &EmbeddedIndex,
    title_of: &[usize],
    pic: &PictureProbe,
    section: Section,
    max_d: u32,
) -> HashMap<usize, u32> {
    let queries = if section == Section::Whole { &pic.frame_queries } else { &pic.crop_queries };
    let mut best = HashMap::new();
    for h in index.near(section, queries, max_d, 1 << 14) {
        let t = title_of[h.memory_id as usize];
        best.entry(t).and_modify(|d: &mut u32| *d = (*d).min(h.dist)).or_insert(h.dist);
    }
    best
}

/// The server's rule at thresholds `(whole, centre)` over per-title distances.
fn rule(whole: &HashMap<usize, u32>, centre: &HashMap<usize, u32>, tw: u32, tc: u32) -> Option<usize> {
    let pick = |m: &HashMap<usize, u32>, t: u32| -> Option<Option<usize>> {
        let mut within: Vec<(u32, usize)> = m.iter().filter(|(_, d)| **d <= t).map(|(k, d)| (*d, *k)).collect();
        within.sort_unstable();
        let (d, k) = *within.first()?;
        let rival = within[1..].iter().any(|(d2, _)| *d2 <= d + AMBIGUOUS_SLACK);
        Some((!rival).then_some(k))
    };
    match pick(whole, tw) {
        Some(answer) => answer,
        None => pick(centre, tc).flatten(),
    }
}

struct Query {
    /// The right title (`None`: a negative).
    truth: Option<usize>,
    case: String,
    probe: Probe,
    whole: HashMap<usize, u32>,
    centre: HashMap<usize, u32>,
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

fn random_hash(rng: &mut StdRng) -> [u64; 4] {
    [rng.random(), rng.random(), rng.random(), rng.random()]
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let tmp = tempfile::tempdir()?;
    let started = Instant::now();

    // Remembered frames: one answer each; its title is its file.
    let index = EmbeddedIndex::new();
    let mut title_of: Vec<usize> = Vec::new();
    let mut positives: Vec<(usize, DynamicImage, Option<DynamicImage>)> = Vec::new();
    for (t, video) in args.remembered.iter().enumerate() {
        let fps = 1.0 / args.every;
        let dir = tmp.path().join(format!("r{t}"));
        let originals = frames(video, fps, &dir)?;
        // The same moments from another encode of the video (another source of the frame).
        let other = tmp.path().join(format!("o{t}.mp4"));
        ffmpeg(&[
            "-i",
            video.to_str().unwrap_or_default(),
            "-vf",
            "scale=-2:360",
            "-c:v",
            "libx264",
            "-crf",
            "32",
            "-an",
            other.to_str().unwrap_or_default(),
        ])?;
        let others = frames(&other, fps, &tmp.path().join(format!("o{t}")))?;
        for (i, (_, img)) in originals.into_iter().enumerate() {
            let Some(pic) = hashes::picture(&img, false) else { continue };
            let id = title_of.len() as i64;
            title_of.push(t);
            index.add([(id, Section::Whole, pic.whole), (id, Section::Centre, pic.centre)]);
            positives.push((t, img, others.get(i).map(|(_, o)| o.clone())));
        }
    }
    let remembered = title_of.len();

    // Queries: every remembered frame under every transform, and the negatives.
    let mut queries: Vec<Query> = Vec::new();
    let mut probe_ms: Vec<f64> = Vec::new();
    let mut add = |queries: &mut Vec<Query>, truth: Option<usize>, case: &str, img: &DynamicImage| {
        let t0 = Instant::now();
        let Some(pic) = hashes::picture(img, true) else { return };
        probe_ms.push(t0.elapsed().as_secs_f64() * 1000.0);
        let whole = per_title(&index, &title_of, &pic, Section::Whole, 90);
        let centre = per_title(&index, &title_of, &pic, Section::Centre, 90);
        queries.push(Query {
            truth,
            case: case.into(),
            probe: Probe { pictures: vec![pic], clip: false },
            whole,
            centre,
        });
    };
    for (t, img, other) in &positives {
        for name in TRANSFORMS {
            if let Some(q) = transformed(name, img, other.as_ref(), &mut rng) {
                add(&mut queries, Some(*t), name, &q);
            }
        }
    }
    let mut negative_sources: Vec<(String, Vec<DynamicImage>)> = Vec::new();
    for (i, video) in args.negative.iter().enumerate() {
        let f = frames(video, args.negative_fps, &tmp.path().join(format!("n{i}")))?;
        negative_sources.push((
            video.file_name().unwrap_or_default().to_string_lossy().into(),
            f.into_iter().map(|(_, i)| i).collect(),
        ));
    }
    for (i, pattern) in [
        "mandelbrot=size=640x360",
        "sierpinski=size=640x360:seed=3",
        "life=size=640x360:mold=10:ratio=0.2",
        "cellauto=size=640x360:rule=110",
        "testsrc2=size=640x360",
    ]
    .iter()
    .enumerate()
    {
        let v = tmp.path().join(format!("p{i}.mp4"));
        ffmpeg(&["-f", "lavfi", "-i", pattern, "-t", "4", "-pix_fmt", "yuv420p", v.to_str().unwrap_or_default()])?;
        let f = frames(&v, args.negative_fps, &tmp.path().join(format!("pf{i}")))?;
        negative_sources
            .push((pattern.split('=').next().unwrap_or_default().into(), f.into_iter().map(|(_, i)| i).collect()));
    }
    let mut negatives_by_source: BTreeMap<String, usize> = BTreeMap::new();
    for (name, imgs) in &negative_sources {
        for img in imgs {
            for (case, q) in [
                ("negative clean", jpeg_round_trip(img, 85)),
                ("negative crop 10%", jpeg_round_trip(&crop(img, 0.9, &mut rng), 85)),
                ("negative mirror", jpeg_round_trip(&img.fliph(), 85)),
                ("negative jpeg q30", jpeg_round_trip(img, 30)),
            ] {
                add(&mut queries, None, case, &q);
                *negatives_by_source.entry(name.clone()).or_default() += 1;
            }
        }
    }

    // Results at the thresholds in force, through the server's own code path.
    println!(
        "# Answer memory benchmark (seed {}, {remembered} remembered answers, {} queries)\n",
        args.seed,
        queries.len()
    );
    println!(
        "Remembered: {}. Negatives: {}.\n",
        args.remembered.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "),
        negatives_by_source.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ")
    );
    println!("Thresholds in force: whole picture {WHOLE_ACCEPT} bits, centre window {CENTRE_ACCEPT} bits (of 256).\n");
    println!("| case | n | right answer | wrong title | no answer |\n|---|---|---|---|---|");
    let mut cases: BTreeMap<String, (usize, usize, usize, usize)> = BTreeMap::new();
    for q in &queries {
        let found = candidates(&index, &q.probe).expect("the embedded index answers");
        let answer = decide(&found, |id| title_of.get(id as usize).copied()).map(|n| title_of[n.memory_id as usize]);
        let e = cases.entry(q.case.clone()).or_default();
        e.0 += 1;
        match (answer, q.truth) {
            (Some(a), Some(t)) if a == t => e.1 += 1,
            (Some(_), _) => e.2 += 1,
            (None, _) => e.3 += 1,
        }
    }
    let (mut pos, mut pos_right, mut neg, mut neg_false) = (0, 0, 0, 0);
    for (case, (n, right, wrong, none)) in &cases {
        let pct = |x: usize| format!("{:.1}%", 100.0 * x as f64 / (*n).max(1) as f64);
        println!("| {case} | {n} | {} | {wrong} | {} |", pct(*right), pct(*none));
        if case.starts_with("negative") {
            neg += n;
            neg_false += wrong;
        } else {
            pos += n;
            pos_right += right;
        }
    }
    println!(
        "\nPositives: {pos_right} of {pos} answered right ({:.1}%). Negatives: {neg_false} false answers of {neg} ({} negative pairs: each negative against every remembered answer).\n",
        100.0 * pos_right as f64 / pos.max(1) as f64,
        neg * remembered
    );

    // The sweep: hit rate over positives and false answers over negatives per threshold pair.
    println!(
        "## Threshold sweep\n\n| whole | centre | positives right | wrong titles (positives) | false answers (negatives) |\n|---|---|---|---|---|"
    );
    for tw in (36..=64).step_by(4) {
        for tc in [36, 40, 44, 48, 52, 56] {
            let (mut right, mut wrong, mut false_neg) = (0, 0, 0);
            for q in &queries {
                let a = rule(&q.whole, &q.centre, tw, tc);
                match (a, q.truth) {
                    (Some(a), Some(t)) if a == t => right += 1,
                    (Some(_), Some(_)) => wrong += 1,
                    (Some(_), None) => false_neg += 1,
                    _ => {}
                }
            }
            println!("| {tw} | {tc} | {:.1}% | {wrong} | {false_neg} |", 100.0 * right as f64 / pos.max(1) as f64);
        }
    }
    // How close the nearest negative came.
    let nearest = |sec: bool| {
        queries
            .iter()
            .filter(|q| q.truth.is_none())
            .filter_map(|q| if sec { q.centre.values().min() } else { q.whole.values().min() })
            .min()
    };
    println!("\nNearest negative: whole {:?} bits, centre {:?} bits (within 90).\n", nearest(false), nearest(true));

    // Latency at each padded size.
    let mut probe = probe_ms.clone();
    println!(
        "## Latency\n\nProbe (decode, hash the hypotheses): p50 {:.1} ms, p95 {:.1} ms over {} pictures.\n",
        percentile(&mut probe, 0.5),
        percentile(&mut probe, 0.95),
        probe_ms.len()
    );
    println!(
        "| remembered answers | index entries | RAM (entries) | lookup p50 ms | lookup p95 ms | positives right |\n|---|---|---|---|---|---|"
    );
    let positives_q: Vec<&Query> = queries.iter().filter(|q| q.truth.is_some()).collect();
    let mut have = remembered;
    for &size in &args.pad {
        let mut batch = Vec::new();
        while have < size {
            let id = title_of.len() as i64;
            title_of.push(usize::MAX);
            batch.push((id, Section::Whole, random_hash(&mut rng)));
            batch.push((id, Section::Centre, random_hash(&mut rng)));
            have += 1;
            if batch.len() >= 200_000 {
                index.add(std::mem::take(&mut batch));
            }
        }
        index.add(batch);
        let mut ms = Vec::new();
        let mut right = 0;
        for q in &positives_q {
            let t0 = Instant::now();
            let found = candidates(&index, &q.probe).expect("the embedded index answers");
            let answer = decide(&found, |id| title_of.get(id as usize).copied());
            ms.push(t0.elapsed().as_secs_f64() * 1000.0);
            if answer.map(|n| title_of[n.memory_id as usize]) == q.truth {
                right += 1;
            }
        }
        let entries = index.count();
        println!(
            "| {have} | {entries} | {:.0} MB | {:.2} | {:.2} | {:.1}% |",
            entries as f64 * 40.0 / 1e6,
            percentile(&mut ms, 0.5),
            percentile(&mut ms, 0.95),
            100.0 * right as f64 / positives_q.len().max(1) as f64
        );
    }
    println!("\nTotal {:.0} s.", started.elapsed().as_secs_f64());
    Ok(())
}
