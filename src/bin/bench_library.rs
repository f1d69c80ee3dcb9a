//! Benchmark of the Library engine over real footage.
//!
//! ```text
//! cargo run --release --bin bench_library -- \
//!     --indexed a.mp4 b.mp4 ... --negative c.mp4 d.avi ... [--stills 60] [--clips 12] [--pad 1000000,10000000]
//! ```
//!
//! Indexes the `--indexed` files in a temporary library (indexing speed, bytes per video
//! hour), renders random moments as stills and 3 s clips under a matrix of transforms with
//! ffmpeg, searches them (top-1 title, timestamp within 1 s, p50/p95 latency), searches every
//! sampled frame of the `--negative` files (false accepts), then pads the index with random
//! hashes to each `--pad` size and measures still latency again. Prints a Markdown table.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reelfind::library::store::VideoMeta;
use reelfind::library::{LibraryIndex, Quiet};

#[derive(Parser)]
struct Args {
    /// Footage that goes into the index.
    #[arg(long, num_args = 1.., required = true)]
    indexed: Vec<PathBuf>,
    /// Footage that is not indexed: every frame of it must be "no match".
    #[arg(long, num_args = 1..)]
    negative: Vec<PathBuf>,
    /// Stills per transform.
    #[arg(long, default_value_t = 60)]
    stills: usize,
    /// 3 s clips per transform.
    #[arg(long, default_value_t = 12)]
    clips: usize,
    /// Index sizes (entries) to pad to for the latency runs.
    #[arg(long, value_delimiter = ',', default_value = "1000000,10000000")]
    pad: Vec<u64>,
    /// Negative frames sampled per second of negative footage.
    #[arg(long, default_value_t = 8)]
    negative_fps: u32,
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Print every still's answer and nearest distance (for calibration).
    #[arg(long)]
    verbose: bool,
}

#[derive(Clone, Copy)]
struct Transform {
    name: &'static str,
    /// ffmpeg filter chain (`{X}`/`{Y}` are replaced by a random crop offset in 0..1).
    filter: &'static str,
    jpeg_quality: u8,
}

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";

fn transforms() -> Vec<Transform> {
    let t = |name, filter, jpeg_quality| Transform { name, filter, jpeg_quality };
    vec![
        t("clean", "null", 92),
        t("jpeg q30", "null", 30),
        t("downscale 360p", "scale=-2:360", 85),
        t("letterbox", "pad=iw:trunc(ih*1.4/2)*2:0:(oh-ih)/2:black", 90),
        t("pillarbox", "pad=trunc(iw*1.4/2)*2:ih:(ow-iw)/2:0:black", 90),
        t("flip", "hflip", 90),
        t(
            "subtitles",
            "drawtext=fontfile=FONT:text='I never said she stole my money':fontsize=h/14:fontcolor=white:\
             borderw=3:bordercolor=black:x=(w-text_w)/2:y=h*0.84",
            90,
        ),
        t("brightness +", "eq=brightness=0.15", 90),
        t("contrast +", "eq=contrast=1.5", 90),
        t("crop 5%", "crop=iw*0.95:ih*0.95:iw*0.05*{X}:ih*0.05*{Y}", 90),
        t("crop 10%", "crop=iw*0.90:ih*0.90:iw*0.10*{X}:ih*0.10*{Y}", 90),
        t(
            "phone photo",
            "perspective=x0=W*0.06:y0=H*0.05:x1=W*0.97:y1=H*0.01:x2=W*0.02:y2=H*0.97:x3=W*0.93:y3=H*0.93:\
             sense=destination,eq=brightness=0.04:saturation=0.85:gamma=1.1,gblur=sigma=0.8,noise=alls=8:allf=t",
            75,
        ),
    ]
}

fn ffmpeg(args: &[String]) -> anyhow::Result<()> {
    let out = Command::new("ffmpeg").args(["-nostdin", "-v", "error", "-y"]).args(args).output()?;
    anyhow::ensure!(out.status.success(), "ffmpeg {:?}: {}", args, String::from_utf8_lossy(&out.stderr));
    Ok(())
}

fn filter_for(t: &Transform, rng: &mut StdRng) -> String {
    t.filter
        .replace("{X}", &format!("{:.3}", rng.random::<f64>()))
        .replace("{Y}", &format!("{:.3}", rng.random::<f64>()))
        .replace("FONT", FONT)
}

/// Renders a still at `at` seconds under `t` and encodes it as JPEG at the transform's quality.
fn render_still(
    src: &Path,
    at: f64,
    t: &Transform,
    rng: &mut StdRng,
    dir: &Path,
) -> anyhow::Result<image::DynamicImage> {
    let png = dir.join("still.png");
    ffmpeg(&[
        "-ss".into(),
        format!("{at:.3}"),
        "-i".into(),
        src.display().to_string(),
        "-frames:v".into(),
        "1".into(),
        "-vf".into(),
        filter_for(t, rng),
        png.display().to_string(),
    ])?;
    let img = image::open(&png)?;
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, t.jpeg_quality).encode_image(&img.to_rgb8())?;
    Ok(image::load_from_memory(&jpeg)?)
}

fn render_clip(src: &Path, at: f64, t: &Transform, rng: &mut StdRng, dir: &Path) -> anyhow::Result<PathBuf> {
    let out = dir.join("clip.mp4");
    let crf = if t.jpeg_quality < 50 { "35" } else { "23" };
    ffmpeg(&[
        "-ss".into(),
        format!("{at:.3}"),
        "-i".into(),
        src.display().to_string(),
        "-t".into(),
        "3".into(),
        "-vf".into(),
        filter_for(t, rng),
        "-an".into(),
        "-c:v".into(),
        "libx264".into(),
        "-preset".into(),
        "veryfast".into(),
        "-crf".into(),
        crf.into(),
        "-pix_fmt".into(),
        "yuv420p".into(),
        out.display().to_string(),
    ])?;
    Ok(out)
}

fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}

#[derive(Default)]
struct Tally {
    n: usize,
    title: usize,
    title_and_time: usize,
    latency: Vec<f64>,
}

impl Tally {
    fn row(&mut self, name: &str, kind: &str) -> String {
        let pct = |x: usize| if self.n == 0 { 0.0 } else { 100.0 * x as f64 / self.n as f64 };
        let (p50, p95) = (percentile(&mut self.latency, 0.5), percentile(&mut self.latency, 0.95));
        format!(
            "| {name} | {kind} | {} | {:.1}% | {:.1}% | {p50:.1} | {p95:.1} |",
            self.n,
            pct(self.title),
            pct(self.title_and_time)
        )
    }
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let work = tempfile::tempdir()?;
    let lib_dir = work.path().join("library");
    let index = LibraryIndex::open(&lib_dir)?;
    let threads = rayon::current_num_threads();

    // Indexing.
    let report = index.add_paths(&args.indexed, &mut Quiet);
    anyhow::ensure!(report.failed.is_empty(), "indexing failed: {:?}", report.failed);
    let videos = index.list();
    let hours = report.video_seconds / 3600.0;
    let bytes = index.index_bytes();
    let entries = index.frame_count();
    let crop_entries: u64 = videos.iter().map(|v| v.crop_frames as u64).sum();
    println!("## Library benchmark\n");
    println!(
        "Footage indexed: {} files, {:.1} s of video; negatives: {} files. {threads} threads.\n",
        videos.len(),
        report.video_seconds,
        args.negative.len()
    );
    println!(
        "- indexing: {:.1} s of video in {:.2} s wall = **{:.1}x real time**",
        report.video_seconds,
        report.wall_seconds,
        report.video_seconds / report.wall_seconds
    );
    println!(
        "- index: {entries} entries ({crop_entries} of them crop tier), {bytes} bytes = **{:.0} KB per video hour**",
        bytes as f64 / hours / 1000.0
    );

    // Stills and clips under every transform.
    let qdir = work.path().join("queries");
    std::fs::create_dir_all(&qdir)?;
    let mut rows = Vec::new();
    for t in transforms() {
        let mut still = Tally::default();
        for _ in 0..args.stills {
            let v = &videos[rng.random_range(0..videos.len())];
            let at = rng.random_range(0.0..(v.duration - 0.3).max(0.1));
            let img = render_still(&v.path, at, &t, &mut rng, &qdir)?;
            let started = Instant::now();
            let answer = index.search_image(&img);
            still.latency.push(started.elapsed().as_secs_f64() * 1e3);
            still.n += 1;
            let ok = answer.best.as_ref().filter(|m| m.video_id == v.id);
            if let Some(m) = ok {
                still.title += 1;
                if (m.at - at).abs() <= 1.0 {
                    still.title_and_time += 1;
                }
            }
            if args.verbose {
                let near = index.nearest(&img);
                eprintln!(
                    "still {} {} at {at:.2}: {} nearest {near:?}",
                    t.name,
                    v.path.display(),
                    answer
                        .best
                        .as_ref()
                        .map_or("none".into(), |m| format!("{} at {} d={}", m.video_id, m.at, m.distance))
                );
            }
        }
        rows.push(still.row(t.name, "still"));
        let mut clip = Tally::default();
        for _ in 0..args.clips {
            let long: Vec<_> = videos.iter().filter(|v| v.duration >= 4.0).collect();
            let v = long[rng.random_range(0..long.len())];
            let at = rng.random_range(0.0..(v.duration - 3.2));
            let path = render_clip(&v.path, at, &t, &mut rng, &qdir)?;
            let started = Instant::now();
            let answer = index.search_clip(&path)?;
            clip.latency.push(started.elapsed().as_secs_f64() * 1e3);
            clip.n += 1;
            if args.verbose {
                eprintln!(
                    "clip {} {} at {at:.2}: {}",
                    t.name,
                    v.path.display(),
                    answer.best.as_ref().map_or("none".into(), |m| format!(
                        "{} from {} d={} {}",
                        m.video_id, m.from, m.distance, m.tier
                    ))
                );
            }
            if let Some(m) = answer.best.filter(|m| m.video_id == v.id) {
                clip.title += 1;
                if (m.from - at).abs() <= 1.0 {
                    clip.title_and_time += 1;
                }
            }
        }
        rows.push(clip.row(t.name, "3 s clip"));
        eprintln!("{}\n{}", rows[rows.len() - 2], rows[rows.len() - 1]);
    }
    println!("\n| transform | query | n | top-1 title | title + time within 1 s | p50 ms | p95 ms |");
    println!("|---|---|---|---|---|---|---|");
    for r in &rows {
        println!("{r}");
    }

    // Negatives: every sampled frame of footage that is not indexed, clean and mirrored.
    let mut negatives = 0usize;
    let (mut passed, mut scanned) = (0u64, 0u64);
    let mut false_accepts = Vec::new();
    for (i, src) in args.negative.iter().enumerate() {
        let pattern = qdir.join(format!("neg{i}-%05d.jpg"));
        ffmpeg(&[
            "-i".into(),
            src.display().to_string(),
            "-vf".into(),
            format!("fps={}", args.negative_fps),
            "-q:v".into(),
            "3".into(),
            pattern.display().to_string(),
        ])?;
        for entry in std::fs::read_dir(&qdir)? {
            let path = entry?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if !name.starts_with(&format!("neg{i}-")) {
                continue;
            }
            let img = image::open(&path)?;
            for q in [
                img.clone(),
                img.crop_imm(img.width() / 20, img.height() / 20, img.width() * 9 / 10, img.height() * 9 / 10),
            ] {
                negatives += 1;
                if args.verbose {
                    eprintln!("negative {name}: nearest {:?}", index.nearest(&q));
                }
                let (p, n) = index.first_stage_passes(&q);
                passed += p;
                scanned += n;
                if let Some(m) = index.search_image(&q).best {
                    false_accepts.push(format!("{name} -> {} at {} (d={})", m.title, m.at, m.distance));
                }
            }
            std::fs::remove_file(&path)?;
        }
    }
    // Synthetic negatives too: ffmpeg's generated patterns, nothing like the footage.
    for src in
        ["mandelbrot", "life=s=640x360:mold=10:r=25:ratio=0.1", "cellauto=s=640x360:rule=30", "testsrc2=s=640x360"]
    {
        let pattern = qdir.join("syn-%05d.jpg");
        ffmpeg(&[
            "-f".into(),
            "lavfi".into(),
            "-i".into(),
            src.into(),
            "-t".into(),
            "10".into(),
            "-vf".into(),
            "fps=4".into(),
            pattern.display().to_string(),
        ])?;
        for entry in std::fs::read_dir(&qdir)? {
            let path = entry?.path();
            if !path.file_name().is_some_and(|n| n.to_string_lossy().starts_with("syn-")) {
                continue;
            }
            negatives += 1;
            if let Some(m) = index.search_image(&image::open(&path)?).best {
                false_accepts.push(format!("{src} -> {} at {} (d={})", m.title, m.at, m.distance));
            }
            std::fs::remove_file(&path)?;
        }
    }
    println!(
        "\n- negatives: {negatives} stills of footage not in the index (each frame clean and 10%-cropped, plus generated patterns): **{} false accepts ({:.2}%)**",
        false_accepts.len(),
        100.0 * false_accepts.len() as f64 / negatives.max(1) as f64
    );
    for f in false_accepts.iter().take(10) {
        println!("  - false accept: {f}");
    }
    println!(
        "- first stage on real footage: {:.3}% of (negative query, indexed frame) pairs pass the word-0 prefilter (random padding: ~0.2% per query hash)",
        100.0 * passed as f64 / scanned.max(1) as f64
    );

    // Latency with the index padded by random hashes.
    let probes = |t: &Transform, rng: &mut StdRng| -> anyhow::Result<Vec<(u32, f64, image::DynamicImage)>> {
        (0..30)
            .map(|_| {
                let v = &videos[rng.random_range(0..videos.len())];
                let at = rng.random_range(0.0..(v.duration - 0.3).max(0.1));
                render_still(&v.path, at, t, rng, &qdir).map(|img| (v.id, at, img))
            })
            .collect()
    };
    let all = transforms();
    let probe_stills = probes(&all[0], &mut rng)?;
    let crop_t = all.iter().find(|t| t.name == "crop 10%").copied().unwrap_or(all[0]);
    let probe_crops = probes(&crop_t, &mut rng)?;
    let crop_share = crop_entries as f64 / entries.max(1) as f64;
    println!(
        "\n| index size (entries) | still p50 ms | still p95 ms | top-1 + time | 10% crop p50 ms | crop top-1 + time | index bytes |"
    );
    println!("|---|---|---|---|---|---|---|");
    for &target in &args.pad {
        let have = index.frame_count();
        if target > have {
            let mut left = target - have;
            while left > 0 {
                // Random hashes, with the crop tier's share of the real index.
                let n = left.min(5_000_000);
                let n_crop = (n as f64 * crop_share).round() as u64;
                let mut random = |count: u64| -> Vec<([u64; 4], u32)> {
                    (0..count)
                        .map(|i| ([rng.random(), rng.random(), rng.random(), rng.random()], i as u32 * 125))
                        .collect()
                };
                let frames = random(n - n_crop);
                let crops = random(n_crop);
                index.add_raw(
                    VideoMeta { title: "padding".into(), source: "bench".into(), ..Default::default() },
                    &frames,
                    &crops,
                    n as f64 / 8.0,
                )?;
                left -= n;
            }
        }
        // Warm the page cache once, as a running server would be.
        for (_, _, img) in probe_stills.iter().take(3) {
            index.search_image(img);
        }
        let run = |set: &[(u32, f64, image::DynamicImage)]| {
            let mut lat = Vec::new();
            let mut ok = 0;
            for (id, at, img) in set {
                let started = Instant::now();
                let answer = index.search_image(img);
                lat.push(started.elapsed().as_secs_f64() * 1e3);
                if answer.best.is_some_and(|m| m.video_id == *id && (m.at - at).abs() <= 1.0) {
                    ok += 1;
                }
            }
            (lat, ok)
        };
        let (mut lat, ok) = run(&probe_stills);
        let (mut crop_lat, crop_ok) = run(&probe_crops);
        println!(
            "| {} | {:.1} | {:.1} | {ok}/{} | {:.1} | {crop_ok}/{} | {} |",
            index.frame_count(),
            percentile(&mut lat, 0.5),
            percentile(&mut lat, 0.95),
            probe_stills.len(),
            percentile(&mut crop_lat, 0.5),
            probe_crops.len(),
            index.index_bytes()
        );
    }
    Ok(())
}
