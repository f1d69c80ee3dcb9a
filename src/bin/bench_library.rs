//! Benchmark of the Library engine over real footage.
//!
//! ```text
//! cargo run --release --bin bench_library -- \
//!     --indexed a.mp4 b.mp4 ... --held-out c.avi ... --negative d.mp4 e.avi ... \
//!     [--stills 40] [--clips 5] [--pad 1000000,10000000] [--seed 7]
//! ```
//!
//! Every `--indexed` and `--held-out` file gets a 5 s static shot spliced in at a random
//! moment (one picture held under film grain, as in animation and dialogue scenes) and is
//! indexed in a temporary library (indexing speed, bytes per video hour). Random moments are
//! rendered as stills (and 3 s clips for some cases) under a matrix of transforms with ffmpeg
//! and searched. Per case it reports top-1 title, title with time by the range rule, the
//! answer's `at` within 1 s, and p50/p95 latency; the `--held-out` footage is reported in a
//! table of its own (calibrate on the first table only). Then every sampled frame of the
//! `--negative` footage, clean and under the hardest transforms, must be "no match" (false
//! accepts per case), and the index is padded with random hashes to each `--pad` size for
//! still latency. Prints Markdown.
//!
//! **Range rule**: the true moment lies in `from - 0.5 ..= to + 0.5` and the range is not
//! longer than 6 s, unless it is one picture: every frame of the source inside it (sampled at
//! [`THUMB_FPS`], 16x16 grey) differs from the true moment's frame by at most [`SAME_PICTURE`]
//! levels on average (a long static shot's whole run is the right answer; the count of such
//! answers is its own column). A picture that recurs (a looped animation, a logo shown twice)
//! has several right moments: an answer elsewhere in the video counts when its range holds a
//! frame with the true moment's picture (64x64 grey within [`SAME_REPEAT`] levels, judged on
//! every frame at [`FINE_FPS`]; its own column). For a
//! still of a static shot the range must also cover the shot (start and end within 0.5 s),
//! unless it is at a recurrence.
//! Moments whose picture is flat (a fade to black or white: nothing can tell them apart) are
//! not drawn. A table per film follows each set's table.
#[path = "common/stats.rs"]
mod stats;
use stats::percentile;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use clap::Parser;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reelfind::library::index::entries::Section;
use reelfind::library::index::store::VideoMeta;
use reelfind::library::{LibraryIndex, LibraryMatch, Quiet};

#[derive(Parser)]
struct Args {
    /// Footage that goes into the index; its queries are the calibration set.
    #[arg(long, num_args = 1.., required = true)]
    indexed: Vec<PathBuf>,
    /// Footage that goes into the index but whose queries are reported apart: nothing is tuned
    /// on them.
    #[arg(long, num_args = 1..)]
    held_out: Vec<PathBuf>,
    /// Footage that is not indexed: every sampled frame of it must be "no match".
    #[arg(long, num_args = 1..)]
    negative: Vec<PathBuf>,
    /// Stills per transform and set.
    #[arg(long, default_value_t = 40)]
    stills: usize,
    /// 3 s clips per clip transform and set.
    #[arg(long, default_value_t = 5)]
    clips: usize,
    /// Index sizes (entries) to pad to for the latency runs.
    #[arg(long, value_delimiter = ',', default_value = "1000000,10000000")]
    pad: Vec<u64>,
    /// Negative frames sampled per second of negative footage (per transform).
    #[arg(long, default_value_t = 6)]
    negative_fps: u32,
    /// 3 s clips of each negative file (long enough) under each clip transform.
    #[arg(long, default_value_t = 3)]
    negative_clips: usize,
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Only these transforms (names, separated by `;`: names hold commas); all by default.
    #[arg(long, value_delimiter = ';')]
    only: Vec<String>,
    /// Render the negatives under the `--only` transforms alone (a quick false-accept check of
    /// one case; the full list is the standard).
    #[arg(long)]
    negatives_only: bool,
    /// Print every query's answer (for calibration).
    #[arg(long)]
    verbose: bool,
    /// Index the `--held-out` footage but search none of it (calibration runs that must not
    /// look at the held-out answers, with the index as large as in a full run).
    #[arg(long)]
    no_held_out_queries: bool,
    /// Write every query's answer (what was asked; title, span, distance, tier, looks, the other
    /// videos) to this file, one line each, without latencies: two builds on the same footage
    /// and seed must write the same file.
    #[arg(long)]
    answers: Option<PathBuf>,
}

/// Every query's answer, one line each (see `--answers`).
struct Answers(Option<std::io::BufWriter<std::fs::File>>);

impl Answers {
    fn create(path: Option<&Path>) -> anyhow::Result<Self> {
        Ok(Self(match path {
            Some(p) => Some(std::io::BufWriter::new(std::fs::File::create(p)?)),
            None => None,
        }))
    }

    /// One query: `what` names it (set, case, kind, source and moment); `answer` is its match.
    fn record(&mut self, what: &str, answer: Option<&LibraryMatch>) -> anyhow::Result<()> {
        use std::io::Write;
        let Some(out) = &mut self.0 else { return Ok(()) };
        let said = match answer {
            None => "none".to_string(),
            Some(m) => {
                let also: Vec<String> =
                    m.also_in.iter().map(|a| format!("{}@{}..{}..{}", a.video_id, a.from, a.at, a.to)).collect();
                format!(
                    "{} {:?} {}..{}..{} d={} s={} {} mirrored={} looked={:?} also=[{}]",
                    m.video_id,
                    m.title,
                    m.from,
                    m.at,
                    m.to,
                    m.distance,
                    m.similarity,
                    m.tier,
                    m.mirrored,
                    m.looked,
                    also.join(" ")
                )
            }
        };
        writeln!(out, "{what} -> {said}")?;
        Ok(())
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        use std::io::Write;
        if let Some(out) = &mut self.0 {
            out.flush()?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy)]
struct Transform {
    name: &'static str,
    /// ffmpeg filter chain (`{X}`/`{Y}` are replaced by random numbers in 0..1, `FONT` by a
    /// bold font, `[bg]` by a second input when `background` is set).
    filter: &'static str,
    jpeg_quality: u8,
    /// Also rendered as 3 s clips.
    clips: bool,
    /// A second ffmpeg input (lavfi), for picture-in-picture.
    background: Option<&'static str>,
}

const FONT: &str = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf";
/// The name of the static-shot case (queried inside the spliced static shot).
const STATIC: &str = "static shot";
/// Length of the spliced static shot, seconds.
const STATIC_LEN: f64 = 5.0;
/// Frames per second of the coarse thumbnails the range rule compares.
const THUMB_FPS: f64 = 4.0;
/// Frames per second of the fine thumbnails a recurrence is looked for in: the index's rate,
/// so that every frame of a fast animation is there.
const FINE_FPS: f64 = 24.0;
/// Largest mean absolute difference (grey levels of 255) between two 16x16 thumbnails of one
/// picture. Grain, flicker and compression move a thumbnail by under 1 level (each cell
/// averages hundreds of pixels); people walking through a still street scene (`vtest.avi`) move
/// it by 4-7 within seconds, a pan or a cut by tens.
const SAME_PICTURE: f64 = 3.0;
/// Largest mean absolute difference between two 64x64 thumbnails of a recurring picture:
/// finer and stricter than [`SAME_PICTURE`], since the two moments are judged alike as a whole.
const SAME_REPEAT: f64 = 2.0;
/// A moment whose 16x16 thumbnail's standard deviation is below this is flat.
const FLAT: f64 = 2.0;

const BIG_SUBS: &str = "drawtext=fontfile=FONT:text='WHERE DID YOU PUT':fontsize=h/9:fontcolor=yellow:borderw=5:\
     bordercolor=black:x=(w-text_w)/2:y=h*0.62,drawtext=fontfile=FONT:text='THE KEYS, MARTIN?':fontsize=h/9:\
     fontcolor=yellow:borderw=5:bordercolor=black:x=(w-text_w)/2:y=h*0.76";
const BLUR_SIDES: &str = "split[a][b];[b]scale=trunc(iw*1.5/2)*2:ih,boxblur=20:2[bg];[bg][a]overlay=(W-w)/2:0";
const BLUR_TOP_BOTTOM: &str = "split[a][b];[b]scale=iw:trunc(iw*1.2/2)*2,boxblur=20:2[bg];[bg][a]overlay=0:(H-h)/2";
const PLAYER: &str = "pad=trunc(iw*1.1/2)*2:trunc(ih*1.28/2)*2:iw*0.05:ih*0.08:0x111111,\
     drawbox=x=0:y=ih*0.86:w=iw:h=ih*0.14:color=0x202020:t=fill,\
     drawbox=x=iw*0.05:y=ih*0.895:w=iw*0.9:h=ih*0.012:color=gray:t=fill,\
     drawbox=x=iw*0.05:y=ih*0.895:w=iw*0.55:h=ih*0.012:color=red:t=fill,\
     drawtext=fontfile=FONT:text='1\\:12\\:03 / 1\\:45\\:10':fontsize=h/30:fontcolor=white:x=w*0.05:y=h*0.93";
const PHONE_ROOM: &str = "pad=trunc(iw*1.08/2)*2:trunc(ih*1.1/2)*2:(ow-iw)/2:(oh-ih)/2:0x0a0a0a,\
     pad=trunc(iw*1.3/2)*2:trunc(ih*1.35/2)*2:(ow-iw)/2:(oh-ih)/2:0x6b5a48,\
     perspective=x0=W*0.08:y0=H*0.06:x1=W*0.95:y1=H*0.02:x2=W*0.03:y2=H*0.97:x3=W*0.9:y3=H*0.92:sense=destination,\
     format=yuv444p,geq=lum='clip(lum(X\\,Y)+8*sin(X*0.9+Y*0.35)+70*exp(-((X-W*0.65)*(X-W*0.65)+(Y-H*0.3)*(Y-H*0.3))\
     /(2*W*W*0.0144))\\,0\\,255)':cb='cb(X\\,Y)':cr='cr(X\\,Y)',gblur=sigma=0.8,noise=alls=8:allf=t,eq=gamma=1.1";

const PHONE_TIGHT: &str = "perspective=x0=W*0.06:y0=H*0.05:x1=W*0.97:y1=H*0.01:x2=W*0.02:y2=H*0.97:x3=W*0.93:\
     y3=H*0.93:sense=destination,eq=brightness=0.04:saturation=0.85:gamma=1.1,gblur=sigma=0.8,noise=alls=8:allf=t";
/// Screenshots as they travel (issue 44). A 9:16 column of the frame anywhere across its
/// middle, scaled to a phone's 720x1280, a white caption band above, the app's buttons and the
/// poster's name over it.
const VERTICAL_REPOST: &str = "crop=trunc(min(iw\\,ih*9/16)/2)*2:ih:(iw-min(iw\\,ih*9/16))*(0.2+0.6*{X}):0,\
     scale=720:1280,setsar=1,pad=720:1600:0:200:black,drawbox=x=0:y=0:w=720:h=200:color=white:t=fill,\
     drawtext=fontfile=FONT:text='no because this scene':fontsize=44:fontcolor=black:x=(w-text_w)/2:y=76,\
     drawbox=x=636:y=1000:w=60:h=60:color=white@0.85:t=fill,drawbox=x=636:y=1110:w=60:h=60:color=white@0.85:t=fill,\
     drawbox=x=636:y=1220:w=60:h=60:color=white@0.85:t=fill,\
     drawtext=fontfile=FONT:text='@moviemoments':fontsize=32:fontcolor=white:x=30:y=1400";
/// Big white text with a black outline above and below the picture.
const MEME_TEXT: &str = "drawtext=fontfile=FONT:text='ME AT 3 AM':fontsize=h/7:fontcolor=white:borderw=6:\
     bordercolor=black:x=(w-text_w)/2:y=h*0.04,drawtext=fontfile=FONT:text='STILL WATCHING THIS':fontsize=h/9:\
     fontcolor=white:borderw=6:bordercolor=black:x=(w-text_w)/2:y=h*0.84";
/// The film's frame beside another picture, on either side, under a caption.
const SIDE_BY_SIDE: &str = "[1:v]setpts=PTS-STARTPTS,scale=1280:440[bg];[0:v]setpts=PTS-STARTPTS,scale=640:360,setsar=1[f];\
     [bg][f]overlay=x=640*round({X}):y=80,drawtext=fontfile=FONT:text='MOVIE VS REAL LIFE':fontsize=48:\
     fontcolor=white:borderw=4:bordercolor=black:x=(w-text_w)/2:y=14";
/// A dark, noisy phone photo of a screen filling the shot.
const PHONE_DARK: &str = "perspective=x0=W*0.05:y0=H*0.04:x1=W*0.96:y1=H*0.02:x2=W*0.03:y2=H*0.97:x3=W*0.94:\
     y3=H*0.94:sense=destination,eq=brightness=-0.16:gamma=0.8:saturation=0.75,gblur=sigma=1.0,noise=alls=26:allf=t";
/// Several edits at once: a crop, a colour grade and a caption (then JPEG quality 35).
const EDITS_TOGETHER: &str = "crop=iw*0.9:ih*0.9:iw*0.1*{X}:ih*0.1*{Y},curves=preset=vintage,\
     eq=saturation=1.25:contrast=1.1,drawtext=fontfile=FONT:text='this scene lives in my head':fontsize=h/14:\
     fontcolor=white:borderw=4:bordercolor=black:x=(w-text_w)/2:y=h*0.05";

/// The names of the cases of issue 44 (screenshots as they travel), for `--only` and the
/// negatives rendered under them.
const SHARED_CASES: [&str; 9] = [
    "vertical repost",
    "crop 25%, off-centre",
    "meme text",
    "rotation 3-4 degrees",
    "edits together, jpeg q35",
    "side-by-side",
    "reaction, picture-in-picture 45%",
    "phone photo, dark and noisy",
    "mirrored, 1.25x speed",
];

/// The screen's corners in a `PHONE_TIGHT` photo (top left, top right, bottom right, bottom
/// left), in shares of its size.
const TIGHT_SCREEN: [(f32, f32); 4] = [(0.06, 0.05), (0.97, 0.01), (0.93, 0.93), (0.02, 0.97)];
/// The same for a `PHONE_DARK` photo.
const DARK_SCREEN: [(f32, f32); 4] = [(0.05, 0.04), (0.96, 0.02), (0.94, 0.94), (0.03, 0.97)];

fn transforms() -> Vec<Transform> {
    let t = |name, filter, jpeg_quality, clips| Transform { name, filter, jpeg_quality, clips, background: None };
    vec![
        t("clean", "null", 92, true),
        t(STATIC, "null", 85, false),
        t("jpeg q30", "null", 30, false),
        t("downscale 360p", "scale=-2:360", 85, false),
        t("flip", "hflip", 90, false),
        t("letterbox black", "pad=iw:trunc(ih*1.4/2)*2:0:(oh-ih)/2:black", 90, false),
        t("pillarbox black", "pad=trunc(iw*1.4/2)*2:ih:(ow-iw)/2:0:black", 90, false),
        t("pillarbox dark grey", "pad=trunc(iw*1.4/2)*2:ih:(ow-iw)/2:0:0x333333", 90, true),
        t("pillarbox white", "pad=trunc(iw*1.4/2)*2:ih:(ow-iw)/2:0:white", 90, false),
        t("bars blue, top + left", "pad=trunc(iw*1.2/2)*2:trunc(ih*1.15/2)*2:iw*0.2:ih*0.15:0x2050a0", 90, false),
        t("blurred copy, sides", BLUR_SIDES, 88, true),
        t("blurred copy, top + bottom", BLUR_TOP_BOTTOM, 88, false),
        t(
            "subtitles small",
            "drawtext=fontfile=FONT:text='I never said she stole my money':fontsize=h/14:fontcolor=white:\
             borderw=3:bordercolor=black:x=(w-text_w)/2:y=h*0.84",
            90,
            false,
        ),
        t("subtitles big, outlined, 2 lines", BIG_SUBS, 88, true),
        t(
            "channel logo",
            "drawbox=x=iw*0.78:y=ih*0.05:w=iw*0.17:h=ih*0.11:color=white@0.75:t=fill,\
             drawtext=fontfile=FONT:text='CH4 HD':fontsize=h/16:fontcolor=0x202020:x=w*0.795:y=h*0.075",
            90,
            false,
        ),
        t(
            "repost caption",
            "pad=iw:trunc(ih*1.35/2)*2:0:ih*0.35:white,drawtext=fontfile=FONT:text='when you realise it is monday':\
             fontsize=h/18:fontcolor=black:x=(w-text_w)/2:y=h*0.1,drawtext=fontfile=FONT:text='@clipsdaily':\
             fontsize=h/28:fontcolor=white@0.8:x=w*0.05:y=h*0.92",
            85,
            false,
        ),
        t("player UI", PLAYER, 90, false),
        t("grain", "noise=alls=22:allf=t+u", 85, false),
        t("colour grade", "curves=preset=vintage,eq=saturation=1.3:contrast=1.15", 90, false),
        t("brightness +", "eq=brightness=0.15", 90, false),
        t("aspect squeeze 4:3", "scale=trunc(iw*0.75/2)*2:ih", 90, false),
        t("crop 10%", "crop=iw*0.90:ih*0.90:iw*0.10*{X}:ih*0.10*{Y}", 90, false),
        t("phone photo, tight", PHONE_TIGHT, 75, false),
        t("phone photo, screen in a room", PHONE_ROOM, 75, true),
        Transform {
            name: "picture-in-picture",
            // Both inputs from their own first frame (a file's timestamps may not start at 0:
            // the overlay would wait for it and the first frame out show no picture in it),
            // the picture anywhere inside the canvas.
            filter: "[1:v]setpts=PTS-STARTPTS,scale=1280:720[bg];[0:v]setpts=PTS-STARTPTS,scale=512:-2[pip];\
                     [bg][pip]overlay=x=(W-w)*(0.03+0.94*{X}):y=(H-h)*(0.03+0.94*{Y})",
            jpeg_quality: 90,
            clips: true,
            background: Some("mandelbrot=size=1280x720"),
        },
        t(SHARED_CASES[0], VERTICAL_REPOST, 85, true),
        t(SHARED_CASES[1], "crop=iw*0.75:ih*0.75:iw*0.25*{X}:ih*0.25*{Y}", 88, false),
        t(SHARED_CASES[2], MEME_TEXT, 85, false),
        t(SHARED_CASES[3], "rotate=a=(3+{X})*(2*round({Y})-1)*PI/180:fillcolor=black", 88, false),
        t(SHARED_CASES[4], EDITS_TOGETHER, 35, false),
        Transform {
            name: SHARED_CASES[5],
            filter: SIDE_BY_SIDE,
            jpeg_quality: 85,
            clips: false,
            background: Some("mandelbrot=size=1280x440"),
        },
        Transform {
            name: SHARED_CASES[6],
            // A reaction video: the scene at 45% of the width in a corner over someone else's
            // picture (the cells seeded: every run renders the same).
            filter: "[1:v]setpts=PTS-STARTPTS,scale=1280:720[bg];[0:v]setpts=PTS-STARTPTS,scale=576:-2[pip];\
                     [bg][pip]overlay=x=(W-w-24)*round({X})+12:y=(H-h-24)*round({Y})+12",
            jpeg_quality: 85,
            clips: true,
            background: Some(
                "life=size=1280x720:mold=10:rate=25:ratio=0.5:seed=1:death_color=#203040:life_color=#c08040",
            ),
        },
        t(SHARED_CASES[7], PHONE_DARK, 70, false),
        t(SHARED_CASES[8], "hflip,setpts=PTS/1.25", 88, true),
    ]
}

/// The screen's corners (top left, top right, bottom right, bottom left) in shares of a
/// `PHONE_ROOM` photo of `size`: the frame's corners through both pads and the perspective.
fn room_screen((w2, h2): (u32, u32)) -> [(f32, f32); 4] {
    let even = |x: f64| (x / 2.0).trunc() * 2.0;
    // The frame size whose pads give this photo.
    let inv =
        |out: u32, a: f64, b: f64| (1..out).find(|&x| even(even(x as f64 * a) * b) as u32 == out).unwrap_or(out) as f64;
    let (w, h) = (inv(w2, 1.08, 1.3), inv(h2, 1.1, 1.35));
    let (w1, h1) = (even(w * 1.08), even(h * 1.1));
    let (ww, hh) = (w2 as f64, h2 as f64);
    let x0 = even((ww - w1) / 2.0) + even((w1 - w) / 2.0);
    let y0 = even((hh - h1) / 2.0) + even((h1 - h) / 2.0);
    // The perspective's corners (as in `PHONE_ROOM`), under the map the screen tier warps by.
    let map = |u: f64, v: f64| {
        let corners = [(0.08, 0.06), (0.95, 0.02), (0.9, 0.92), (0.03, 0.97)];
        reelfind::library::picture::warp::quad_point(corners, u as f32, v as f32)
    };
    let (u0, v0, u1, v1) = (x0 / ww, y0 / hh, (x0 + w) / ww, (y0 + h) / hh);
    [map(u0, v0), map(u1, v0), map(u1, v1), map(u0, v1)]
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

/// Input and filter arguments for `src` from `at` under `t`.
fn transform_args(src: &Path, at: f64, t: &Transform, rng: &mut StdRng) -> Vec<String> {
    let mut args = vec!["-ss".into(), format!("{at:.3}"), "-i".into(), src.display().to_string()];
    match t.background {
        Some(bg) => {
            args.extend(["-f".into(), "lavfi".into(), "-i".into(), bg.into()]);
            args.extend(["-filter_complex".into(), filter_for(t, rng)]);
        }
        None => args.extend(["-vf".into(), filter_for(t, rng)]),
    }
    args
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
    let mut args = transform_args(src, at, t, rng);
    args.extend(["-frames:v".into(), "1".into(), png.display().to_string()]);
    ffmpeg(&args)?;
    let img = image::open(&png)?;
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, t.jpeg_quality).encode_image(&img.to_rgb8())?;
    Ok(image::load_from_memory(&jpeg)?)
}

fn render_clip(src: &Path, at: f64, t: &Transform, rng: &mut StdRng, dir: &Path) -> anyhow::Result<PathBuf> {
    let out = dir.join("clip.mp4");
    let crf = if t.jpeg_quality < 50 { "35" } else { "23" };
    let mut args = transform_args(src, at, t, rng);
    args.extend(
        ["-t", "3", "-an", "-c:v", "libx264", "-preset", "veryfast", "-crf", crf, "-pix_fmt", "yuv420p"]
            .map(String::from),
    );
    args.push(out.display().to_string());
    ffmpeg(&args)?;
    Ok(out)
}

/// Writes `src` with a [`STATIC_LEN`] static shot spliced in at `at`: the frame at `at` held
/// under temporal film grain, then the rest of the video. Returns the copy's path.
fn with_static_shot(src: &Path, at: f64, dir: &Path) -> anyhow::Result<PathBuf> {
    let out = dir.join(src.file_name().unwrap_or_default()).with_extension("mkv");
    let frames = (STATIC_LEN * 25.0) as u32;
    let filter = format!(
        "[0:v]fps=25,setsar=1,split=3[a][b][c];[a]trim=end={at:.3},setpts=PTS-STARTPTS[a1];\
         [b]trim=start={at:.3},setpts=PTS-STARTPTS,trim=end_frame=1,loop=loop={}:size=1:start=0,setpts=N/25/TB,\
         noise=alls=5:allf=t[b1];[c]trim=start={at:.3},setpts=PTS-STARTPTS[c1];[a1][b1][c1]concat=n=3:v=1:a=0",
        frames - 1
    );
    ffmpeg(&[
        "-i".into(),
        src.display().to_string(),
        "-filter_complex".into(),
        filter,
        "-an".into(),
        "-c:v".into(),
        "libx264".into(),
        "-preset".into(),
        "veryfast".into(),
        "-crf".into(),
        "18".into(),
        "-pix_fmt".into(),
        "yuv420p".into(),
        out.display().to_string(),
    ])?;
    Ok(out)
}

/// A video's frames as grey thumbnails, for the range rule: 16x16 at [`THUMB_FPS`] (frame `k`
/// is at `k / THUMB_FPS`) and 64x64 at [`FINE_FPS`].
#[derive(Default)]
struct Thumbs {
    /// 16x16.
    coarse: Vec<Vec<u8>>,
    /// 64x64.
    fine: Vec<Vec<u8>>,
}

fn thumbnails(src: &Path, side: usize, fps: f64) -> anyhow::Result<Vec<Vec<u8>>> {
    let out = Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-i"])
        .arg(src)
        // `round=up`: thumbnail k is the frame on screen at k / fps (the last one shown by then),
        // not the one after it.
        .args(["-vf", &format!("fps={fps}:round=up,scale={side}:{side}:flags=area,format=gray"), "-f", "rawvideo", "-"])
        .output()?;
    anyhow::ensure!(out.status.success(), "ffmpeg thumbnails: {}", String::from_utf8_lossy(&out.stderr));
    Ok(out.stdout.chunks_exact(side * side).map(<[u8]>::to_vec).collect())
}

fn mean_abs_diff(a: &[u8], b: &[u8]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.abs_diff(*y) as u32).sum::<u32>() as f64 / a.len().max(1) as f64
}

impl Thumbs {
    fn of(src: &Path) -> anyhow::Result<Thumbs> {
        Ok(Thumbs { coarse: thumbnails(src, 16, THUMB_FPS)?, fine: thumbnails(src, 64, FINE_FPS)? })
    }

    fn index(set: &[Vec<u8>], t: f64) -> Option<usize> {
        (!set.is_empty()).then(|| ((t.max(0.0) * THUMB_FPS).round() as usize).min(set.len() - 1))
    }

    /// Whether every thumbnail in `from..=to` shows the picture at `truth` (see [`SAME_PICTURE`]).
    fn one_picture(&self, truth: f64, from: f64, to: f64) -> bool {
        let Some(reference) = Self::index(&self.coarse, truth).map(|k| &self.coarse[k]) else { return false };
        let first = (from * THUMB_FPS).ceil() as usize;
        let last = ((to * THUMB_FPS).floor() as usize).min(self.coarse.len() - 1);
        (first..=last).all(|k| mean_abs_diff(&self.coarse[k], reference) <= SAME_PICTURE)
    }

    /// A moment in `from - 0.1 ..= to + 0.1` that shows the picture at `truth` (64x64 within
    /// [`SAME_REPEAT`] levels of the frame at `truth` or the one before or after it: a still is
    /// cut where ffmpeg puts it, the thumbnails on their own clock). A looped animation repeats
    /// its frames exactly, a logo may be shown twice: the answer is right at any of them.
    fn recurrence(&self, truth: f64, from: f64, to: f64) -> Option<f64> {
        let n = self.fine.len();
        if n == 0 {
            return None;
        }
        let k = |t: f64| ((t.max(0.0) * FINE_FPS).round() as usize).min(n - 1);
        let truths: Vec<&[u8]> =
            (k(truth).saturating_sub(1)..=(k(truth) + 1).min(n - 1)).map(|i| &self.fine[i][..]).collect();
        (k(from - 0.1)..=k(to + 0.1))
            .find(|&i| truths.iter().any(|t| mean_abs_diff(&self.fine[i], t) <= SAME_REPEAT))
            .map(|i| i as f64 / FINE_FPS)
    }

    /// Whether the picture at `t` is flat (see [`FLAT`]).
    fn flat(&self, t: f64) -> bool {
        Self::index(&self.coarse, t).is_some_and(|k| {
            let px = &self.coarse[k];
            let mean = px.iter().map(|&p| p as f64).sum::<f64>() / px.len() as f64;
            let var = px.iter().map(|&p| (p as f64 - mean).powi(2)).sum::<f64>() / px.len() as f64;
            var.sqrt() < FLAT
        })
    }
}

#[derive(Default)]
struct Tally {
    n: usize,
    title: usize,
    range: usize,
    at: usize,
    wrong: usize,
    /// Right by the range rule with a range longer than 6 s that is one picture.
    long: usize,
    /// Right by the range rule at another moment with the same picture.
    repeat: usize,
    latency: Vec<f64>,
}

impl Tally {
    /// Counts one answer; whether it is right by the range rule.
    fn add(
        &mut self,
        answer: Option<&LibraryMatch>,
        v: &Source,
        truth: f64,
        shot: Option<(f64, f64)>,
        ms: f64,
    ) -> bool {
        let id = v.id;
        self.n += 1;
        self.latency.push(ms);
        let Some(m) = answer else { return false };
        if m.video_id != id {
            self.wrong += 1;
            return false;
        }
        self.title += 1;
        let long = m.to - m.from > 6.0;
        let inside = m.from - 0.5 <= truth && truth <= m.to + 0.5;
        // For a still of the static shot, a range inside the shot is part of the shot, not
        // another moment: it must cover the shot (below), not pass as a recurrence.
        let within_shot = shot.is_some_and(|(a, b)| m.from < b - 0.5 && m.to > a + 0.5);
        let recurrence = if inside || within_shot { None } else { v.thumbs.recurrence(truth, m.from, m.to) };
        let repeat = recurrence.is_some();
        let span_ok = !long || v.thumbs.one_picture(recurrence.unwrap_or(truth), m.from, m.to);
        // A recurrence is another moment, which cannot cover the static shot.
        let covers = repeat || shot.is_none_or(|(a, b)| m.from <= a + 0.5 && m.to >= b - 0.5);
        let right = (inside || repeat) && span_ok && covers;
        if right {
            self.range += 1;
            self.long += usize::from(long);
            self.repeat += usize::from(repeat);
        }
        if (m.at - truth).abs() <= 1.0 {
            self.at += 1;
        }
        right
    }

    fn row(&mut self, name: &str, kind: &str) -> String {
        let pct = |x: usize| if self.n == 0 { 0.0 } else { 100.0 * x as f64 / self.n as f64 };
        let (p50, p95) = (percentile(&mut self.latency, 0.5), percentile(&mut self.latency, 0.95));
        format!(
            "| {name} | {kind} | {} | {:.1}% | **{:.1}%** | {:.1}% | {} | {} | {} | {p50:.1} | {p95:.1} |",
            self.n,
            pct(self.title),
            pct(self.range),
            pct(self.at),
            self.wrong,
            self.long,
            self.repeat
        )
    }
}

const HEADER: &str = "| case | query | n | top-1 title | title + time (range rule) | title + `at` within 1 s | wrong title | long one-picture ranges | at a recurrence | p50 ms | p95 ms |\n|---|---|---|---|---|---|---|---|---|---|---|";

/// An indexed video and where its static shot is.
struct Source {
    id: u32,
    path: PathBuf,
    duration: f64,
    shot: (f64, f64),
    thumbs: Thumbs,
}

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let mut rng = StdRng::seed_from_u64(args.seed);
    let mut answers = Answers::create(args.answers.as_deref())?;
    let work = tempfile::tempdir()?;
    let lib_dir = work.path().join("library");
    let index = LibraryIndex::open(&lib_dir)?;
    let threads = rayon::current_num_threads();
    let footage = work.path().join("footage");
    std::fs::create_dir_all(&footage)?;

    // Splice a static shot into every indexed file, then index the copies.
    let mut spliced = Vec::new();
    let mut shots = BTreeMap::new();
    for src in args.indexed.iter().chain(&args.held_out) {
        let probe = reelfind::library::frames::probe(src)?;
        let at = rng.random_range(0.2 * probe.duration..0.8 * probe.duration);
        let copy = with_static_shot(src, at, &footage)?;
        shots.insert(std::fs::canonicalize(&copy)?, (at, at + STATIC_LEN));
        spliced.push((copy, args.held_out.contains(src)));
    }
    let paths: Vec<PathBuf> = spliced.iter().map(|(p, _)| p.clone()).collect();
    let report = index.add_paths(&paths, &mut Quiet);
    anyhow::ensure!(report.failed.is_empty(), "indexing failed: {:?}", report.failed);
    let videos = index.list();
    let hours = report.video_seconds / 3600.0;
    let bytes = index.index_bytes();
    let entries = index.frame_count();
    let crop_entries: u64 = videos.iter().map(|v| v.crop_frames as u64).sum();
    let upper_entries: u64 = videos.iter().map(|v| v.upper_frames as u64).sum();
    // The column and deep-crop tiers' counts are not in the catalog: their timelines tell them.
    let section_entries = |section| -> u64 {
        let count = |id: u32| index.entries().timeline(id, section).ok().flatten().map_or(0, |t| t.len() as u64);
        videos.iter().map(|v| count(v.id)).sum()
    };
    let (column_entries, deep_entries) = (section_entries(Section::Columns), section_entries(Section::Deep));
    let source = |held_out: bool| -> Vec<Source> {
        videos
            .iter()
            .filter(|v| {
                spliced.iter().any(|(p, h)| *h == held_out && std::fs::canonicalize(p).ok().as_ref() == Some(&v.path))
            })
            .map(|v| {
                let thumbs = Thumbs::of(&v.path).unwrap_or_default();
                Source { id: v.id, path: v.path.clone(), duration: v.duration, shot: shots[&v.path], thumbs }
            })
            .collect()
    };
    let sets = [("calibration", source(false)), ("held out", source(true))];
    println!("## Library benchmark\n");
    println!(
        "Footage indexed: {} files, {:.1} s of video (each with a {STATIC_LEN} s static shot spliced in); \
         held out: {} of them; negatives: {} files. {threads} threads, seed {}.\n",
        videos.len(),
        report.video_seconds,
        args.held_out.len(),
        args.negative.len(),
        args.seed
    );
    println!(
        "- indexing: {:.1} s of video in {:.2} s wall = **{:.1}x real time**",
        report.video_seconds,
        report.wall_seconds,
        report.video_seconds / report.wall_seconds
    );
    println!(
        "- index: {entries} entries ({crop_entries} of them crop tier, {upper_entries} upper tier, {column_entries} column tier, {deep_entries} deep-crop tier), {bytes} bytes = **{:.0} KB per video hour**",
        bytes as f64 / hours / 1000.0
    );

    // Stills and clips under every transform, per set.
    let qdir = work.path().join("queries");
    std::fs::create_dir_all(&qdir)?;
    let chosen: Vec<Transform> =
        transforms().into_iter().filter(|t| args.only.is_empty() || args.only.iter().any(|o| o == t.name)).collect();
    for (set, sources) in &sets {
        if sources.is_empty() || (args.no_held_out_queries && *set == "held out") {
            continue;
        }
        let mut rows = Vec::new();
        // Every query of the set again, by film.
        let mut films: BTreeMap<u32, Tally> = BTreeMap::new();
        for t in &chosen {
            let mut still = Tally::default();
            for _ in 0..args.stills {
                let v = &sources[rng.random_range(0..sources.len())];
                let (at, shot) = if t.name == STATIC {
                    (rng.random_range(v.shot.0 + 0.2..v.shot.1 - 0.2), Some(v.shot))
                } else {
                    let mut at = rng.random_range(0.0..(v.duration - 0.3).max(0.1));
                    for _ in 0..20 {
                        if !v.thumbs.flat(at) {
                            break;
                        }
                        at = rng.random_range(0.0..(v.duration - 0.3).max(0.1));
                    }
                    (at, None)
                };
                let img = render_still(&v.path, at, t, &mut rng, &qdir)?;
                let started = Instant::now();
                let answer = index.search_image(&img)?;
                let ms = started.elapsed().as_secs_f64() * 1e3;
                let right = still.add(answer.best.as_ref(), v, at, shot, ms);
                answers.record(&format!("{set} still {} video {} at {at:.3}", t.name, v.id), answer.best.as_ref())?;
                films.entry(v.id).or_default().add(answer.best.as_ref(), v, at, shot, ms);
                if args.verbose {
                    // Each query rectangle's distance to the true moment: which hypothesis came
                    // close, and how close.
                    let rects: Vec<String> = index
                        .hypothesis_distances(&img, v.id, at)
                        .iter()
                        .map(|(r, (d, d0))| format!("{r}={d}/{d0}"))
                        .collect();
                    // For a phone photo: how far the screens found are from the true one, and
                    // how close the true screen's picture hashes to the frame.
                    let truth = match t.filter {
                        PHONE_ROOM => Some(room_screen((img.width(), img.height()))),
                        PHONE_TIGHT => Some(TIGHT_SCREEN),
                        PHONE_DARK => Some(DARK_SCREEN),
                        _ => None,
                    };
                    let screen = if let Some(truth) = truth {
                        let (found, d) = index.screen_truth(&img, truth, v.id, at);
                        let off: Vec<String> = found
                            .iter()
                            .map(|q| {
                                let off = q.iter().zip(&truth).map(|(p, r)| (p.0 - r.0).abs().max((p.1 - r.1).abs()));
                                format!("{:.1}%", 100.0 * off.fold(0.0f32, f32::max))
                            })
                            .collect();
                        format!(" true screen d={d}, screens found off by [{}]", off.join(", "))
                    } else {
                        String::new()
                    };
                    eprintln!(
                        "{set} still {} video {} at {at:.2}{}: {} {} nearest {:?}{screen} truth {}",
                        t.name,
                        v.id,
                        shot.map_or(String::new(), |(a, b)| format!(" (shot {a:.2}..{b:.2})")),
                        if right { "RIGHT" } else { "WRONG" },
                        answer.best.as_ref().map_or("none".into(), |m| format!(
                            "{} {}..{}..{} d={} {} look={:?}",
                            m.video_id, m.from, m.at, m.to, m.distance, m.tier, m.looked
                        )),
                        index.nearest(&img),
                        rects.join(" ")
                    );
                }
            }
            rows.push(still.row(t.name, "still"));
            eprintln!("{set}: {}", rows.last().map(String::as_str).unwrap_or_default());
            if !t.clips || args.clips == 0 {
                continue;
            }
            let mut clip = Tally::default();
            let long: Vec<&Source> = sources.iter().filter(|v| v.duration >= 4.0).collect();
            for _ in 0..args.clips {
                let v = long[rng.random_range(0..long.len())];
                let at = rng.random_range(0.0..(v.duration - 3.2));
                let path = render_clip(&v.path, at, t, &mut rng, &qdir)?;
                let started = Instant::now();
                let answer = index.search_clip_av(&path)?;
                let ms = started.elapsed().as_secs_f64() * 1e3;
                // A clip's `from` is its start.
                let best = answer.best.map(|mut m| {
                    m.at = m.from;
                    m
                });
                clip.add(best.as_ref(), v, at, None, ms);
                answers.record(&format!("{set} clip {} video {} at {at:.3}", t.name, v.id), best.as_ref())?;
                films.entry(v.id).or_default().add(best.as_ref(), v, at, None, ms);
                if args.verbose {
                    eprintln!(
                        "{set} clip {} video {} at {at:.2}: {}",
                        t.name,
                        v.id,
                        best.as_ref().map_or("none".into(), |m| format!(
                            "{} from {} d={} {}",
                            m.video_id, m.from, m.distance, m.tier
                        ))
                    );
                }
            }
            rows.push(clip.row(t.name, "3 s clip"));
            eprintln!("{set}: {}", rows.last().map(String::as_str).unwrap_or_default());
        }
        println!("\n### {set} ({} videos)\n\n{HEADER}", sources.len());
        for r in &rows {
            println!("{r}");
        }
        println!("\nBy film, every case and query kind together:\n\n{HEADER}");
        for v in sources.iter() {
            if let Some(tally) = films.get_mut(&v.id) {
                let name = v.path.file_stem().unwrap_or_default().to_string_lossy();
                println!("{}", tally.row(&name, "all"));
            }
        }
    }

    // Negatives: every sampled frame of footage that is not indexed, clean and under the
    // transforms that add hypotheses or texture of their own.
    let negative_cases: Vec<Transform> = transforms()
        .into_iter()
        .filter(|t| {
            [
                "clean",
                "crop 10%",
                "pillarbox dark grey",
                "blurred copy, sides",
                "subtitles big, outlined, 2 lines",
                "repost caption",
                "player UI",
                "phone photo, screen in a room",
            ]
            .iter()
            .chain(SHARED_CASES.iter())
            .any(|n| *n == t.name)
                && (!args.negatives_only || args.only.iter().any(|o| o == t.name))
        })
        .collect();
    let mut negatives = 0usize;
    let mut per_case: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    let mut false_accepts = Vec::new();
    let mut landed: Vec<(String, String)> = Vec::new();
    let mut neg_latency = Vec::new();
    for (i, src) in args.negative.iter().enumerate() {
        for t in &negative_cases {
            let pattern = qdir.join(format!("neg{i}-%05d.jpg"));
            let mut ff: Vec<String> = vec!["-i".into(), src.display().to_string()];
            match t.background {
                None => {
                    ff.extend(["-vf".into(), format!("fps={},{}", args.negative_fps, filter_for(t, &mut rng))]);
                }
                Some(bg) => {
                    // The second picture as long as the footage, and the result sampled (the
                    // overlay runs at the pattern's rate).
                    let seconds = reelfind::library::frames::probe(src)?.duration;
                    ff.extend([
                        "-f".into(),
                        "lavfi".into(),
                        "-t".into(),
                        format!("{seconds:.3}"),
                        "-i".into(),
                        bg.into(),
                    ]);
                    ff.extend([
                        "-filter_complex".into(),
                        format!("{},fps={}", filter_for(t, &mut rng), args.negative_fps),
                    ]);
                }
            }
            ff.extend(["-q:v".into(), "4".into(), pattern.display().to_string()]);
            ffmpeg(&ff)?;
            let mut files: Vec<PathBuf> = std::fs::read_dir(&qdir)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with(&format!("neg{i}-"))))
                .collect();
            files.sort();
            for path in files {
                let img = image::open(&path)?;
                negatives += 1;
                per_case.entry(t.name).or_default().0 += 1;
                let started = Instant::now();
                let answer = index.search_image(&img)?;
                neg_latency.push(started.elapsed().as_secs_f64() * 1e3);
                let name = path.file_name().unwrap_or_default().to_string_lossy();
                answers.record(&format!("negative {} {} {name}", src.display(), t.name), answer.best.as_ref())?;
                if let Some(m) = answer.best {
                    per_case.entry(t.name).or_default().1 += 1;
                    landed.push((m.title.clone(), m.tier.to_string()));
                    false_accepts.push(format!(
                        "{} {} ({}) -> {} at {} (d={}, {}, look={:?})",
                        src.display(),
                        path.display(),
                        t.name,
                        m.title,
                        m.at,
                        m.distance,
                        m.tier,
                        m.looked
                    ));
                }
                std::fs::remove_file(&path)?;
            }
        }
    }
    // Negative clips: 3 s of each negative file under each transform rendered as clips.
    let mut clip_negatives = 0usize;
    let mut clip_false = Vec::new();
    let mut clip_latency = Vec::new();
    for src in &args.negative {
        let duration = reelfind::library::frames::probe(src)?.duration;
        if duration < 3.5 {
            continue;
        }
        for t in transforms().iter().filter(|t| t.clips) {
            for _ in 0..args.negative_clips {
                let at = rng.random_range(0.0..(duration - 3.2));
                let path = render_clip(src, at, t, &mut rng, &qdir)?;
                clip_negatives += 1;
                let started = Instant::now();
                let answer = index.search_clip_av(&path)?;
                clip_latency.push(started.elapsed().as_secs_f64() * 1e3);
                answers
                    .record(&format!("negative clip {} {} at {at:.3}", src.display(), t.name), answer.best.as_ref())?;
                if let Some(m) = answer.best {
                    clip_false.push(format!(
                        "{} at {at:.2} ({}) -> {} from {} (d={}, {})",
                        src.display(),
                        t.name,
                        m.title,
                        m.from,
                        m.distance,
                        m.tier
                    ));
                }
            }
        }
    }
    // Synthetic negatives too: ffmpeg's generated patterns, nothing like the footage (the
    // random ones seeded).
    for src in [
        "mandelbrot",
        "life=s=640x360:mold=10:r=25:ratio=0.1:seed=1",
        "cellauto=s=640x360:rule=30:seed=1",
        "testsrc2=s=640x360",
    ] {
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
            per_case.entry("generated patterns").or_default().0 += 1;
            let answer = index.search_image(&image::open(&path)?)?;
            let name = path.file_name().unwrap_or_default().to_string_lossy();
            answers.record(&format!("pattern {src} {name}"), answer.best.as_ref())?;
            if let Some(m) = answer.best {
                per_case.entry("generated patterns").or_default().1 += 1;
                landed.push((m.title.clone(), m.tier.to_string()));
                false_accepts.push(format!("{src} -> {} at {} (d={})", m.title, m.at, m.distance));
            }
            std::fs::remove_file(&path)?;
        }
    }
    println!(
        "\n### Negatives\n\n{negatives} stills of footage not in the index: **{} false accepts ({:.2}%)**; \
         search p50 {:.1} ms, p95 {:.1} ms.\n",
        false_accepts.len(),
        100.0 * false_accepts.len() as f64 / negatives.max(1) as f64,
        percentile(&mut neg_latency, 0.5),
        percentile(&mut neg_latency, 0.95)
    );
    println!(
        "{clip_negatives} 3 s clips of footage not in the index: **{} false accepts**; search p50 {:.0} ms, \
         p95 {:.0} ms.\n",
        clip_false.len(),
        percentile(&mut clip_latency, 0.5),
        percentile(&mut clip_latency, 0.95)
    );
    for f in &clip_false {
        println!("- false accept (clip): {f}");
    }
    println!("| negative case | n | false accepts |\n|---|---|---|");
    for (name, (n, fa)) in &per_case {
        println!("| {name} | {n} | {fa} |");
    }
    // Where they land: which indexed video and which tier took them.
    let mut by_answer: BTreeMap<String, usize> = BTreeMap::new();
    for (title, tier) in &landed {
        *by_answer.entry(format!("{title} ({tier})")).or_default() += 1;
    }
    if !by_answer.is_empty() {
        println!("\n| false accepts landed on (video, tier) | n |\n|---|---|");
        for (k, n) in &by_answer {
            println!("| {k} | {n} |");
        }
        println!();
    }
    for f in false_accepts.iter().take(if args.verbose { usize::MAX } else { 20 }) {
        println!("- false accept: {f}");
    }

    // Latency with the index padded by random hashes.
    let calibration = &sets[0].1;
    let probes = |t: &Transform, rng: &mut StdRng| -> anyhow::Result<Vec<(u32, f64, image::DynamicImage)>> {
        (0..30)
            .map(|_| {
                let v = &calibration[rng.random_range(0..calibration.len())];
                let at = rng.random_range(0.0..(v.duration - 0.3).max(0.1));
                render_still(&v.path, at, t, rng, &qdir).map(|img| (v.id, at, img))
            })
            .collect()
    };
    // `--pad 0` skips the latency runs (accuracy-only runs while tuning).
    let pads: Vec<u64> = args.pad.iter().copied().filter(|&p| p > 0).collect();
    if pads.is_empty() {
        answers.finish()?;
        return Ok(());
    }
    let all = transforms();
    let probe_stills = probes(&all[0], &mut rng)?;
    let crop_t = all.iter().find(|t| t.name == "crop 10%").copied().unwrap_or(all[0]);
    let probe_crops = probes(&crop_t, &mut rng)?;
    let crop_share = crop_entries as f64 / entries.max(1) as f64;
    println!(
        "\n| index size (entries) | still p50 ms | still p95 ms | top-1 + time | 10% crop p50 ms | crop top-1 + time | index bytes | padding s |"
    );
    println!("|---|---|---|---|---|---|---|---|");
    for &target in &pads {
        let have = index.frame_count();
        let padding = Instant::now();
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
        let padding = padding.elapsed().as_secs_f64();
        // Warm the page cache once, as a running server would be.
        for (_, _, img) in probe_stills.iter().take(3) {
            index.search_image(img)?;
        }
        let mut run = |set: &[(u32, f64, image::DynamicImage)], kind: &str| -> anyhow::Result<(Vec<f64>, usize)> {
            let mut lat = Vec::new();
            let mut ok = 0;
            for (id, at, img) in set {
                let started = Instant::now();
                let answer = index.search_image(img)?;
                lat.push(started.elapsed().as_secs_f64() * 1e3);
                answers.record(&format!("padded {target} {kind} video {id} at {at:.3}"), answer.best.as_ref())?;
                if answer.best.is_some_and(|m| m.video_id == *id && m.from - 0.5 <= *at && *at <= m.to + 0.5) {
                    ok += 1;
                }
            }
            Ok((lat, ok))
        };
        let (mut lat, ok) = run(&probe_stills, "still")?;
        let (mut crop_lat, crop_ok) = run(&probe_crops, "crop 10%")?;
        println!(
            "| {} | {:.1} | {:.1} | {ok}/{} | {:.1} | {crop_ok}/{} | {} | {padding:.0} |",
            index.frame_count(),
            percentile(&mut lat, 0.5),
            percentile(&mut lat, 0.95),
            probe_stills.len(),
            percentile(&mut crop_lat, 0.5),
            probe_crops.len(),
            index.index_bytes()
        );
    }
    answers.finish()
}
