//! Benchmark of the Library engine's audio tier (landmark fingerprints of the soundtrack).
//!
//! ```text
//! cargo run --release --bin bench_library_audio -- \
//!     [--indexed a.mp4 ...] [--negative c.mp4 ...] [--queries 20] [--seed 7] [--verbose]
//! ```
//!
//! Builds a temporary library of the `--indexed` files plus generated material (speech from
//! ffmpeg's `flite` voices over generated pictures, and synthetic music), all with sound.
//! Then cuts random 3 s excerpts and searches them through the same path `/api/identify`
//! takes for a clip (`search_clip_av`), with the picture blacked out so the soundtrack alone
//! must answer, under: clean (AAC 128 kbit/s), re-encoded at low bitrate (MP3 32 kbit/s),
//! added white noise (SNR 10 dB and 0 dB), volume -20 dB, volume +12 dB (clipped). One more
//! scenario keeps the real picture (picture and sound fused). Negatives: 3 s excerpts of
//! sound that is not indexed (other sentences by the same voices, other music by the same
//! synthesiser, the `--negative` files, pink noise): every answer there is a false accept.
//! Reports accuracy, timestamp within 1 s and 0.1 s, p50/p95 latency, landmark bytes per
//! hour of sound and fingerprinting speed. Prints a Markdown table.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reelfind::library::audio;
use reelfind::library::index::store::VideoMeta;
use reelfind::library::{LibraryIndex, Quiet};

#[derive(Parser)]
struct Args {
    /// Footage with sound that goes into the index (besides the generated material).
    #[arg(long, num_args = 1..)]
    indexed: Vec<PathBuf>,
    /// Footage with sound that is not indexed (besides the generated material).
    #[arg(long, num_args = 1..)]
    negative: Vec<PathBuf>,
    /// Queries per scenario.
    #[arg(long, default_value_t = 20)]
    queries: usize,
    /// Negative excerpts per negative source.
    #[arg(long, default_value_t = 6)]
    negatives_each: usize,
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Print every query's votes (for calibration).
    #[arg(long)]
    verbose: bool,
}

const RATE: u32 = 16000;
const CLIP: f64 = 3.0;

const WORDS: &[&str] = &[
    "river", "morning", "yellow", "engine", "garden", "quietly", "station", "seven", "bright", "window", "after",
    "winter", "climbing", "market", "silver", "thunder", "paper", "kitchen", "sudden", "forest", "under", "bridge",
    "ancient", "music", "orange", "pocket", "wooden", "ocean", "candle", "tomorrow", "hollow", "captain", "velvet",
    "number", "distant", "harbour", "lantern", "broken", "whisper", "mountain", "copper", "summer", "narrow",
    "painted", "island", "quickly", "evening", "marble", "signal", "tender", "crystal", "valley", "careful",
];

fn sentence_text(rng: &mut StdRng, words: usize) -> String {
    let mut out = Vec::new();
    for i in 0..words {
        out.push(WORDS[rng.random_range(0..WORDS.len())]);
        if i % 9 == 8 {
            out.push("and");
        }
    }
    out.join(" ")
}

fn ffmpeg(args: &[&str]) -> anyhow::Result<()> {
    let out = Command::new("ffmpeg").args(["-nostdin", "-v", "error", "-y"]).args(args).output()?;
    if !out.status.success() {
        anyhow::bail!("ffmpeg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(())
}

fn write_wav(path: &Path, samples: &[i16]) -> anyhow::Result<()> {
    let mut b = Vec::with_capacity(44 + samples.len() * 2);
    let data = (samples.len() * 2) as u32;
    b.extend_from_slice(b"RIFF");
    b.extend_from_slice(&(36 + data).to_le_bytes());
    b.extend_from_slice(b"WAVEfmt ");
    b.extend_from_slice(&16u32.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&1u16.to_le_bytes());
    b.extend_from_slice(&RATE.to_le_bytes());
    b.extend_from_slice(&(RATE * 2).to_le_bytes());
    b.extend_from_slice(&2u16.to_le_bytes());
    b.extend_from_slice(&16u16.to_le_bytes());
    b.extend_from_slice(b"data");
    b.extend_from_slice(&data.to_le_bytes());
    for s in samples {
        b.extend_from_slice(&s.to_le_bytes());
    }
    std::fs::write(path, b)?;
    Ok(())
}

/// Synthetic music: a melody of plucked notes with harmonics over a chord and noise hits.
fn music(rng: &mut StdRng, seconds: f64) -> Vec<i16> {
    let n = (seconds * RATE as f64) as usize;
    let mut out = vec![0f32; n];
    let scale = [0, 2, 4, 5, 7, 9, 11, 12];
    let root = 48 + rng.random_range(0..12);
    let tempo = rng.random_range(0.18..0.35);
    let mut t = 0.0;
    while t < seconds {
        let len = tempo * [1.0, 1.0, 2.0, 0.5][rng.random_range(0..4)];
        let midi = root + 12 + scale[rng.random_range(0..scale.len())];
        let f = 440.0 * 2f64.powf((midi as f64 - 69.0) / 12.0);
        let start = (t * RATE as f64) as usize;
        let dur = ((len * 1.5) * RATE as f64) as usize;
        for k in 0..dur.min(n.saturating_sub(start)) {
            let x = k as f64 / RATE as f64;
            let env = (-x * 4.0).exp();
            let v = (1..=4).map(|h| (2.0 * std::f64::consts::PI * f * h as f64 * x).sin() / h as f64).sum::<f64>();
            out[start + k] += (v * env * 0.35) as f32;
        }
        if rng.random_bool(0.3) {
            for k in 0..(RATE as usize / 20).min(n.saturating_sub(start)) {
                out[start + k] += (rng.random_range(-1.0..1.0) * (1.0 - k as f64 / 800.0).max(0.0) * 0.3) as f32;
            }
        }
        t += len;
    }
    // A slow chord under it, changing every 2 s.
    let mut c = 0.0;
    while c < seconds {
        let fs: Vec<f64> = [0, 4, 7]
            .iter()
            .map(|d| 440.0 * 2f64.powf(((root + d + rng.random_range(0..3) * 2) as f64 - 69.0) / 12.0))
            .collect();
        let start = (c * RATE as f64) as usize;
        for k in 0..(2 * RATE as usize).min(n.saturating_sub(start)) {
            let x = k as f64 / RATE as f64;
            out[start + k] += fs.iter().map(|f| (2.0 * std::f64::consts::PI * f * x).sin()).sum::<f64>() as f32 * 0.08;
        }
        c += 2.0;
    }
    out.iter().map(|v| (v.clamp(-1.0, 1.0) * 30000.0) as i16).collect()
}

/// A video of `seconds` with a generated picture (Game of Life, seeded) and this sound.
fn mux_generated(sound: &Path, seed: u64, out: &Path) -> anyhow::Result<()> {
    let life =
        format!("life=s=320x240:r=25:seed={seed}:ratio=0.3:mold=10:life_color=#{:06x}", seed * 2654435 % 0xFFFFFF);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        &life,
        "-i",
        sound.to_str().unwrap_or_default(),
        "-shortest",
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-pix_fmt",
        "yuv420p",
        "-c:a",
        "aac",
        "-b:a",
        "128k",
        out.to_str().unwrap_or_default(),
    ])
}

fn speech(dir: &Path, name: &str, voice: &str, text: &str) -> anyhow::Result<PathBuf> {
    let txt = dir.join(format!("{name}.txt"));
    std::fs::write(&txt, text)?;
    let wav = dir.join(format!("{name}.wav"));
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        &format!("flite=textfile={}:voice={voice}", txt.display()),
        "-ar",
        &RATE.to_string(),
        "-ac",
        "1",
        wav.to_str().unwrap_or_default(),
    ])?;
    Ok(wav)
}

struct Source {
    title: String,
    video: PathBuf,
    samples: Vec<i16>,
}

fn load(title: &str, video: &Path) -> anyhow::Result<Source> {
    let samples = reelfind::library::frames::decode_audio(video, RATE)?;
    Ok(Source { title: title.to_owned(), video: video.to_path_buf(), samples })
}

#[derive(Clone, Copy, PartialEq)]
enum Scenario {
    Clean,
    LowBitrate,
    Noise(f64),
    Volume(f64),
    WithPicture,
}

impl Scenario {
    fn name(self) -> String {
        match self {
            Self::Clean => "clean (AAC 128k), black picture".into(),
            Self::LowBitrate => "MP3 32 kbit/s, black picture".into(),
            Self::Noise(snr) => format!("white noise SNR {snr:.0} dB, black picture"),
            Self::Volume(db) => {
                format!("volume {db:+.0} dB{}, black picture", if db > 0.0 { " (clipped)" } else { "" })
            }
            Self::WithPicture => "clean, real picture (fused)".into(),
        }
    }
}

/// Renders a 3 s query clip: this excerpt, transformed, under a black (or the real) picture.
fn render(
    src: &Source,
    at: f64,
    scenario: Scenario,
    rng: &mut StdRng,
    dir: &Path,
    n: usize,
) -> anyhow::Result<PathBuf> {
    let a = (at * RATE as f64) as usize;
    let b = (a + (CLIP * RATE as f64) as usize).min(src.samples.len());
    let mut x: Vec<f64> = src.samples[a..b].iter().map(|&s| s as f64).collect();
    match scenario {
        Scenario::Noise(snr) => {
            let rms = (x.iter().map(|v| v * v).sum::<f64>() / x.len().max(1) as f64).sqrt();
            let noise_rms = rms / 10f64.powf(snr / 20.0);
            // Uniform noise in ±a has RMS a/sqrt(3).
            let amp = noise_rms * 3f64.sqrt();
            for v in &mut x {
                *v += rng.random_range(-amp..=amp);
            }
        }
        Scenario::Volume(db) => {
            let g = 10f64.powf(db / 20.0);
            for v in &mut x {
                *v *= g;
            }
        }
        _ => {}
    }
    let samples: Vec<i16> = x.iter().map(|v| v.clamp(-32768.0, 32767.0) as i16).collect();
    let wav = dir.join(format!("q{n}.wav"));
    write_wav(&wav, &samples)?;
    let out = dir.join(format!("q{n}.mp4"));
    let (codec, rate): (&str, &str) = match scenario {
        Scenario::LowBitrate => ("libmp3lame", "32k"),
        _ => ("aac", "128k"),
    };
    let ext_audio = if scenario == Scenario::LowBitrate { "mp3" } else { "m4a" };
    // Encode the sound on its own first (so the codec's loss is really in the query).
    let enc = dir.join(format!("q{n}.{ext_audio}"));
    ffmpeg(&["-i", wav.to_str().unwrap_or_default(), "-c:a", codec, "-b:a", rate, enc.to_str().unwrap_or_default()])?;
    // The picture: the real one at the same moment, or black.
    let (at_s, clip_s, black) = (format!("{at:.3}"), format!("{CLIP}"), format!("color=black:s=320x240:r=25:d={CLIP}"));
    let picture: Vec<&str> = if scenario == Scenario::WithPicture {
        vec!["-ss", &at_s, "-t", &clip_s, "-i", src.video.to_str().unwrap_or_default()]
    } else {
        vec!["-f", "lavfi", "-i", &black]
    };
    let mut args = picture;
    args.extend(["-i", enc.to_str().unwrap_or_default(), "-map", "0:v:0", "-map", "1:a:0"]);
    args.extend(["-c:v", "libx264", "-preset", "veryfast", "-c:a", "copy", "-shortest"]);
    args.push(out.to_str().unwrap_or_default());
    ffmpeg(&args)?;
    Ok(out)
}

fn pct(a: usize, n: usize) -> String {
    if n == 0 { "-".into() } else { format!("{:.1}%", 100.0 * a as f64 / n as f64) }
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let work = tempfile::tempdir()?;
    let media = work.path().join("media");
    let qdir = work.path().join("queries");
    std::fs::create_dir_all(&media)?;
    std::fs::create_dir_all(&qdir)?;

    eprintln!("generating material...");
    let voices = ["kal", "slt", "awb", "rms"];
    let mut indexed: Vec<Source> = Vec::new();
    let mut negatives: Vec<Source> = Vec::new();
    for (i, voice) in voices.iter().enumerate() {
        for (neg, words) in [(false, 110), (true, 40)] {
            let name = format!("speech-{voice}-{}", if neg { "other" } else { "indexed" });
            let wav = speech(&media, &name, voice, &sentence_text(&mut rng, words))?;
            let video = media.join(format!("{name}.mp4"));
            mux_generated(&wav, 11 + i as u64 * 2 + neg as u64, &video)?;
            let src = load(&name, &video)?;
            if neg { negatives.push(src) } else { indexed.push(src) }
        }
    }
    for i in 0..6u64 {
        let neg = i >= 4;
        let name = format!("music-{i}{}", if neg { "-other" } else { "" });
        let wav = media.join(format!("{name}.wav"));
        write_wav(&wav, &music(&mut rng, if neg { 20.0 } else { 45.0 }))?;
        let video = media.join(format!("{name}.mp4"));
        mux_generated(&wav, 31 + i, &video)?;
        let src = load(&name, &video)?;
        if neg { negatives.push(src) } else { indexed.push(src) }
    }
    {
        let name = "pink-noise";
        let video = media.join(format!("{name}.mp4"));
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "anoisesrc=c=pink:a=0.3:d=20:r=16000",
            "-f",
            "lavfi",
            "-i",
            "color=gray:s=320x240:r=25:d=20",
            "-shortest",
            "-c:a",
            "aac",
            "-c:v",
            "libx264",
            video.to_str().unwrap_or_default(),
        ])?;
        negatives.push(load(name, &video)?);
    }
    for p in &args.indexed {
        let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        indexed.push(load(&name, p)?);
    }
    for p in &args.negative {
        let name = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        negatives.push(load(&name, p)?);
    }

    // Fingerprinting speed on its own (the picture is indexed on another thread meanwhile).
    let mut fp_wall = 0.0;
    let mut sound_seconds = 0.0;
    for s in &indexed {
        let t = Instant::now();
        let (_, secs) = audio::fingerprint_file(&s.video, audio::INDEX_DENSITY)?;
        fp_wall += t.elapsed().as_secs_f64();
        sound_seconds += secs;
    }

    let index = LibraryIndex::open(work.path().join("library"))?;
    let t = Instant::now();
    for s in &indexed {
        let meta = VideoMeta { title: s.title.clone(), source: "bench".into(), ..Default::default() };
        index.add_video(&s.video, Some(meta), &mut Quiet)?;
    }
    let index_wall = t.elapsed().as_secs_f64();
    let videos = index.list();
    let landmarks: u64 = videos.iter().map(|v| v.audio_landmarks as u64).sum();
    let bytes = index.audio_bytes();
    let video_seconds: f64 = videos.iter().map(|v| v.duration).sum();
    println!("## Library audio tier benchmark (seed {})\n", args.seed);
    println!(
        "- indexed: {} videos, {:.1} s of sound ({} generated speech/music, {} given)",
        indexed.len(),
        sound_seconds,
        indexed.len() - args.indexed.len(),
        args.indexed.len()
    );
    println!(
        "- landmarks: {landmarks} ({:.1} a second), {bytes} bytes = **{:.0} KB per hour of sound**",
        landmarks as f64 / sound_seconds,
        bytes as f64 / sound_seconds * 3600.0 / 1000.0
    );
    println!(
        "- fingerprinting the sound alone: {:.1}x real time; whole indexing (picture + sound): {:.1}x real time",
        sound_seconds / fp_wall,
        video_seconds / index_wall
    );
    println!(
        "- negatives: {} sources, {:.1} s of sound not in the index\n",
        negatives.len(),
        negatives.iter().map(|s| s.samples.len() as f64 / RATE as f64).sum::<f64>()
    );

    let scenarios = [
        Scenario::Clean,
        Scenario::LowBitrate,
        Scenario::Noise(10.0),
        Scenario::Noise(0.0),
        Scenario::Volume(-20.0),
        Scenario::Volume(12.0),
        Scenario::WithPicture,
    ];
    println!(
        "| scenario | n | top-1 title | title + start within 1 s | within 0.1 s | answered by | p50 ms | p95 ms |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    let mut qn = 0;
    let long: Vec<&Source> = indexed.iter().filter(|s| s.samples.len() as f64 / RATE as f64 > CLIP + 0.5).collect();
    for scenario in scenarios {
        let (mut top1, mut within1, mut within01) = (0, 0, 0);
        let mut lat = Vec::new();
        let mut tiers: std::collections::BTreeMap<String, usize> = Default::default();
        for _ in 0..args.queries {
            let src = long[rng.random_range(0..long.len())];
            let dur = src.samples.len() as f64 / RATE as f64;
            let at = (rng.random_range(0.0..(dur - CLIP - 0.2)) * 100.0).round() / 100.0;
            let clip = render(src, at, scenario, &mut rng, &qdir, qn)?;
            qn += 1;
            let t = Instant::now();
            let answer = index.search_clip_av(&clip)?;
            lat.push(t.elapsed().as_secs_f64() * 1e3);
            let got = answer.best.as_ref();
            let ok = got.is_some_and(|m| m.title == src.title);
            if ok {
                top1 += 1;
                let m = got.unwrap_or_else(|| unreachable!());
                if (m.from - at).abs() <= 1.0 {
                    within1 += 1;
                }
                if (m.from - at).abs() <= 0.1 {
                    within01 += 1;
                }
            }
            *tiers.entry(got.map_or("no match".into(), |m| m.tier.to_owned())).or_default() += 1;
            if args.verbose {
                let segs = index.audio_segments();
                let (q, _) = audio::fingerprint_file(&clip, audio::QUERY_DENSITY)?;
                let hit = audio::best_offset(&segs, &q);
                eprintln!(
                    "{:<40} {:<22} at {at:>6.2}: {:?} ({} lm) votes {:?}",
                    scenario.name(),
                    src.title,
                    got.map(|m| (m.title.clone(), m.from, m.tier, m.similarity)),
                    q.len(),
                    hit.map(|h| (h.votes, h.runner_up, h.offset))
                );
            }
        }
        let tiers = tiers.iter().map(|(k, v)| format!("{k} {v}")).collect::<Vec<_>>().join(", ");
        println!(
            "| {} | {} | {} | {} | {} | {tiers} | {:.0} | {:.0} |",
            scenario.name(),
            args.queries,
            pct(top1, args.queries),
            pct(within1, args.queries),
            pct(within01, args.queries),
            quantile(&mut lat.clone(), 0.5),
            quantile(&mut lat, 0.95)
        );
    }

    // Negatives: excerpts of sound that is not indexed, black picture.
    let mut fa = 0;
    let mut n_neg = 0;
    let mut max_votes = Vec::new();
    let segs = index.audio_segments();
    for src in &negatives {
        let dur = src.samples.len() as f64 / RATE as f64;
        for _ in 0..args.negatives_each {
            let at = rng.random_range(0.0..(dur - CLIP).max(0.01));
            let clip = render(src, at, Scenario::Clean, &mut rng, &qdir, qn)?;
            qn += 1;
            let answer = index.search_clip_av(&clip)?;
            n_neg += 1;
            let (q, _) = audio::fingerprint_file(&clip, audio::QUERY_DENSITY)?;
            let hit = audio::best_offset(&segs, &q);
            max_votes.push(hit.as_ref().map_or(0, |h| h.votes));
            if let Some(m) = &answer.best {
                fa += 1;
                eprintln!("FALSE ACCEPT: {} at {at:.2} -> {} at {} ({})", src.title, m.title, m.from, m.similarity);
            }
            if args.verbose {
                eprintln!("negative {:<22} at {at:>6.2}: votes {:?}", src.title, hit.map(|h| (h.votes, h.runner_up)));
            }
        }
    }
    max_votes.sort_unstable();
    println!(
        "| negatives (not indexed), black picture | {n_neg} | false accepts {fa} ({}) | | | | | |",
        pct(fa, n_neg)
    );
    println!(
        "\nnegatives' best offset votes: max {}, p95 {}, median {} (threshold {})",
        max_votes.last().copied().unwrap_or(0),
        max_votes.get(((max_votes.len().max(1) - 1) as f64 * 0.95) as usize).copied().unwrap_or(0),
        max_votes.get(max_votes.len() / 2).copied().unwrap_or(0),
        audio::MIN_HITS
    );
    Ok(())
}
