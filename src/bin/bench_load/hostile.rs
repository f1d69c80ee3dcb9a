//! Hostile media made on the spot with ffmpeg (nothing is committed): files that lie about
//! their length, stream gaps, truncated pictures, huge real resolutions, playlists in
//! disguise. Shared by the load benchmark and the integration tests (`#[path]` include).
#![allow(dead_code)]
use std::io::Cursor;
use std::path::Path;
use std::process::Command;

fn ffmpeg(args: &[&str], out: &Path) -> Vec<u8> {
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-nostdin"])
        .args(args)
        .arg(out)
        .status()
        .expect("ffmpeg runs");
    assert!(status.success(), "ffmpeg failed to make {}", out.display());
    std::fs::read(out).expect("made file")
}

/// Rewrites an MP4's declared lengths (movie, track and media headers) to `seconds`,
/// leaving the sample timestamps (and the edit list) as they are: the container then lies,
/// and a decoder still meets every sample.
pub fn declare_duration(mp4: &mut [u8], seconds: u32) {
    let moov = mp4.windows(4).position(|w| w == b"moov").expect("an MP4 with a moov box");
    let be = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    let mut movie_scale = 1000;
    let mut i = moov;
    while i + 4 <= mp4.len() {
        let tag = &mp4[i..i + 4];
        let body = i + 4;
        match tag {
            b"mvhd" if mp4[body] == 0 => {
                movie_scale = be(mp4, body + 12);
                mp4[body + 16..body + 20].copy_from_slice(&(movie_scale * seconds).to_be_bytes());
            }
            b"tkhd" if mp4[body] == 0 => {
                mp4[body + 20..body + 24].copy_from_slice(&(movie_scale * seconds).to_be_bytes());
            }
            b"mdhd" if mp4[body] == 0 => {
                let scale = be(mp4, body + 12);
                mp4[body + 16..body + 20].copy_from_slice(&(scale * seconds).to_be_bytes());
            }
            _ => {}
        }
        i += 1;
    }
}

/// A ~6 KB MP4 declaring 1 s that holds two pictures `gap` seconds apart (the second one a
/// P-frame, so only a full decode meets it; with `both_key` both are key frames).
pub fn lying_picture_mp4(dir: &Path, gap: u32, both_key: bool) -> Vec<u8> {
    let out = dir.join(format!("lying-picture-{gap}-{both_key}.mp4"));
    let setpts = format!("setpts=N*{gap}/TB");
    let mut bytes = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=320x240:rate=1",
            "-frames:v",
            "2",
            "-vf",
            &setpts,
            "-fps_mode",
            "passthrough",
            "-c:v",
            "libx264",
            "-g",
            if both_key { "1" } else { "250" },
            "-video_track_timescale",
            "1000",
        ],
        &out,
    );
    declare_duration(&mut bytes, 1);
    bytes
}

/// An MP4 declaring 1 s: one second of picture, and sound whose second half comes `gap`
/// seconds later (a decoder fills the gap: a 30-minute WAV from a 40 KB file).
pub fn lying_sound_mp4(dir: &Path, gap: u32) -> Vec<u8> {
    let out = dir.join(format!("lying-sound-{gap}.mp4"));
    let af = format!("asetpts=PTS+if(gte(N\\,40)\\,{gap}/TB\\,0)");
    let mut bytes = ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=160x120:rate=10:duration=1",
            "-f",
            "lavfi",
            "-i",
            "sine=duration=4",
            "-af",
            &af,
            "-c:v",
            "libx264",
            "-c:a",
            "aac",
            "-fps_mode",
            "passthrough",
        ],
        &out,
    );
    declare_duration(&mut bytes, 1);
    bytes
}

/// A short clip whose real picture is `w`×`h` (e.g. wider than 4K).
pub fn wide_mp4(dir: &Path, w: u32, h: u32) -> Vec<u8> {
    let out = dir.join(format!("wide-{w}x{h}.mp4"));
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            &format!("testsrc=size={w}x{h}:rate=2:duration=1"),
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
        ],
        &out,
    )
}

/// A Matroska stream written as live (no duration, no index), as an endless capture looks.
pub fn live_mkv(dir: &Path, seconds: u32) -> Vec<u8> {
    let out = dir.join(format!("live-{seconds}.mkv"));
    ffmpeg(
        &[
            "-f",
            "lavfi",
            "-i",
            &format!("testsrc=size=320x240:rate=10:duration={seconds}"),
            "-c:v",
            "libx264",
            "-preset",
            "ultrafast",
            "-pix_fmt",
            "yuv420p",
            "-live",
            "1",
            "-f",
            "matroska",
        ],
        &out,
    )
}

/// An ordinary clip: `seconds` of ffmpeg's test picture, `w`×`h`, with a tone when `audio`.
pub fn clip_mp4(dir: &Path, seconds: u32, w: u32, h: u32, audio: bool) -> Vec<u8> {
    let out = dir.join(format!("clip-{seconds}-{w}x{h}-{audio}.mp4"));
    let src = format!("testsrc2=size={w}x{h}:rate=24:duration={seconds}");
    let tone = format!("sine=frequency=330:duration={seconds}");
    let mut args = vec!["-f", "lavfi", "-i", &src];
    if audio {
        args.extend(["-f", "lavfi", "-i", &tone, "-c:a", "aac", "-shortest"]);
    }
    args.extend(["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p"]);
    ffmpeg(&args, &out)
}

/// A photo-like picture (gradients and noise) encoded as `format`.
pub fn picture(w: u32, h: u32, format: image::ImageFormat) -> Vec<u8> {
    let mut seed = 0x9E3779B97F4A7C15u64;
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let n = (seed % 16) as u32;
        image::Rgb([((x / 3 + n) % 256) as u8, ((y / 2 + n) % 256) as u8, (((x + y) / 5) % 256) as u8])
    });
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, format).expect("encode");
    out.into_inner()
}

/// An HLS playlist and an ffconcat list, each pointing at local and remote files.
pub fn playlists() -> Vec<(&'static str, Vec<u8>)> {
    vec![
        ("playlist", b"#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:10,\nhttp://127.0.0.1:9/a.ts\n#EXTINF:10,\n/etc/passwd\n#EXT-X-ENDLIST\n".to_vec()),
        ("concat", b"ffconcat version 1.0\nfile '/etc/passwd'\nfile 'http://127.0.0.1:9/b.mp4'\n".to_vec()),
    ]
}
