//! The Library engine end to end: real ffmpeg decoding of the bundled demo clip, search by a
//! still and by a clip, the signed preview link, idempotent re-adding, damaged files.
use std::path::{Path, PathBuf};
use std::process::Command;

use reelfind::library::{AddOutcome, LibraryIndex, Quiet};

use crate::support::TestApp;

pub fn demo_clip() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/demo/big-buck-bunny.mp4")
}

/// Runs ffmpeg with `args`, whose last one is the file it writes.
///
/// What the tests render is kept under cargo's temporary folder for tests, named by what made
/// it: the arguments, with each input file named by a hash of its bytes (a copy of the demo
/// clip in a test's own folder is the same input), the output by its extension, and ffmpeg's
/// version. The same render asked again (by another test, or by the next pass of a CI run) is
/// a copy of the kept file: rendering is most of what the Library's tests cost (one phone
/// video of a screen is a minute of CPU), and the engine under test reads the same bytes
/// either way.
pub fn ffmpeg(args: &[&str]) {
    let (output, inputs) = args.split_last().expect("ffmpeg is given its output");
    let kept = render_cache().join(render_key(inputs, output));
    if std::fs::copy(&kept, output).is_ok() {
        return;
    }
    let out = Command::new("ffmpeg").args(["-nostdin", "-v", "error", "-y"]).args(args).output().expect("ffmpeg runs");
    assert!(out.status.success(), "ffmpeg {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    // Kept under a name of its own first and then renamed: two tests rendering the same
    // picture at once each keep a whole file.
    let part = kept.with_extension(format!("part-{}", uuid::Uuid::new_v4()));
    if std::fs::copy(output, &part).is_ok() {
        let _ = std::fs::rename(&part, &kept);
    }
}

fn render_cache() -> &'static Path {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ffmpeg-renders");
        std::fs::create_dir_all(&dir).unwrap();
        dir
    })
}

/// The name a render is kept under (see [`ffmpeg`]).
fn render_key(inputs: &[&str], output: &str) -> String {
    use sha2::{Digest, Sha256};
    static VERSION: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let version = VERSION.get_or_init(|| Command::new("ffmpeg").arg("-version").output().expect("ffmpeg runs").stdout);
    let mut key = Sha256::new();
    key.update(version);
    for arg in inputs {
        let path = Path::new(arg);
        match path.is_file().then(|| std::fs::read(path)) {
            Some(Ok(bytes)) => {
                key.update(b"\0file\0");
                key.update(Sha256::digest(&bytes));
            }
            _ => {
                key.update(b"\0arg\0");
                key.update(arg.as_bytes());
            }
        }
    }
    let ext = Path::new(output).extension().and_then(|e| e.to_str()).unwrap_or("out");
    format!("{}.{ext}", hex::encode(key.finalize()))
}

/// Writes a 4 s silent test-pattern video (ffmpeg's `testsrc2`) to `out`.
pub fn test_pattern_video(out: &Path) {
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=320x240:rate=25",
        "-t",
        "4",
        "-pix_fmt",
        "yuv420p",
        out.to_str().unwrap(),
    ]);
}

/// Title of the second film of [`library_folder`].
pub const SECOND_FILM: &str = "Sierpinski";

/// The second film: 6 s made by ffmpeg (3 s of a scrolling Sierpinski carpet, then 3 s of
/// triangles, in orange on black, over a beeping tone), with an `.nfo` saying it is
/// "Sierpinski" (1916). Made once per test run, under cargo's temporary folder for tests.
pub fn second_film() -> &'static Path {
    static FILM: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FILM.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("second-film-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let film = dir.join("sierpinski.mp4");
        let part = dir.join("sierpinski.part.mp4");
        ffmpeg(&[
            "-f",
            "lavfi",
            "-i",
            "sierpinski=size=480x270:rate=25:type=carpet:seed=3",
            "-f",
            "lavfi",
            "-i",
            "sierpinski=size=480x270:rate=25:type=triangle:seed=5",
            "-f",
            "lavfi",
            "-i",
            "sine=frequency=440:beep_factor=3",
            "-filter_complex",
            "[0:v]trim=0:3,setpts=PTS-STARTPTS[a];[1:v]trim=0:3,setpts=PTS-STARTPTS[b];\
             [a][b]concat=n=2:v=1,format=rgb24,lutrgb=g=val*0.55:b=val*0.1[v]",
            "-map",
            "[v]",
            "-map",
            "2:a",
            "-t",
            "6",
            "-pix_fmt",
            "yuv420p",
            "-c:a",
            "aac",
            "-shortest",
            part.to_str().unwrap(),
        ]);
        std::fs::rename(&part, &film).unwrap();
        std::fs::write(
            film.with_extension("nfo"),
            "<movie><title>Sierpinski</title><year>1916</year><plot>Carpets and triangles.</plot></movie>",
        )
        .unwrap();
        film
    })
}

/// A copy of the demo clip with its `.nfo` in a folder of the test's own.
pub fn library_folder() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(demo_clip(), dir.path().join("big-buck-bunny.mp4")).unwrap();
    std::fs::copy(demo_clip().with_extension("nfo"), dir.path().join("big-buck-bunny.nfo")).unwrap();
    dir
}

/// [`library_folder`] with a second film beside the demo clip ([`second_film`], with its
/// `.nfo`), so that naming the right title is a choice: the tests that check which title a
/// picture answers index both.
pub fn two_films_folder() -> tempfile::TempDir {
    let dir = library_folder();
    std::fs::copy(second_film(), dir.path().join("sierpinski.mp4")).unwrap();
    std::fs::copy(second_film().with_extension("nfo"), dir.path().join("sierpinski.nfo")).unwrap();
    dir
}

fn still_at(video: &Path, at: f64, out: &Path) -> image::DynamicImage {
    still_through(video, at, "null", out)
}

/// Writes the frame at `at` through ffmpeg's filter chain `vf` as a JPEG (quality 3) at `out`.
pub fn frame_file(video: &Path, at: f64, vf: &str, out: &Path) {
    ffmpeg(&[
        "-ss",
        &format!("{at}"),
        "-i",
        video.to_str().unwrap(),
        "-frames:v",
        "1",
        "-vf",
        vf,
        "-q:v",
        "3",
        out.to_str().unwrap(),
    ]);
}

/// The frame at `at` through ffmpeg's filter chain `vf`, as a JPEG at `out`.
fn still_through(video: &Path, at: f64, vf: &str, out: &Path) -> image::DynamicImage {
    frame_file(video, at, vf, out);
    image::open(out).unwrap()
}

fn index_of(app: &TestApp) -> &LibraryIndex {
    &app.state.library
}

#[tokio::test]
async fn a_frame_is_found_with_its_title_second_and_a_preview_that_works() {
    let app = TestApp::new().await;
    let folder = two_films_folder();
    let report = index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (2, 0), "{report:?}");

    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 2.6, &folder.path().join("q.jpg"));
    let answer = index_of(&app).search_image(&still).unwrap();
    let m = answer.best.unwrap_or_else(|| panic!("no match: {:?}", answer.reason));
    assert_eq!((m.title.as_str(), m.year, m.media_type), ("Big Buck Bunny", Some(2008), "movie"));
    assert!((m.at - 2.6).abs() <= 0.5, "at {}", m.at);
    assert!(m.from <= m.at && m.at <= m.to);
    assert!(m.similarity >= 0.5 && m.similarity <= 1.0, "{}", m.similarity);
    assert_eq!(m.file, "big-buck-bunny.mp4");

    // The mirrored picture is the same moment.
    let mirrored = index_of(&app).search_image(&still.fliph()).unwrap().best.expect("mirrored still matches");
    assert!(mirrored.mirrored && (mirrored.at - 2.6).abs() <= 0.5, "{mirrored:?}");

    let res = app.get(&m.preview_url).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("content-type").as_deref(), Some("image/jpeg"));
    assert_eq!(&res.body[..2], &[0xFF, 0xD8]);
    let preview = image::load_from_memory(&res.body).unwrap();
    assert_eq!(preview.width(), 480);

    // A token that was tampered with (another video id) is refused.
    let token = m.preview_url.rsplit('/').next().unwrap();
    let (_, sig) = token.split_once('.').unwrap();
    use base64::Engine as _;
    let forged = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode("1.0.99999999999");
    let res = app.get(&format!("/api/library/preview/{forged}.{sig}")).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "This preview link is not valid.");
}

/// An ingest that died after writing its entries and before publishing its video leaves its
/// id pending: the entries are not a video of the library, and once the id is older than the
/// sweep's bound they are removed and the id forgotten (on either backend: this test runs in
/// the Milvus pass too). A fresh one is left alone: its ingest may still be running.
#[tokio::test]
async fn the_entries_of_an_ingest_that_died_are_swept() {
    use reelfind::library::add::ABANDONED_AFTER;
    use reelfind::library::index::entries::VideoEntries;
    let app = TestApp::new().await;
    let lib = app.state.library.clone();
    tokio::task::spawn_blocking(move || {
        let before = lib.frame_count();
        let id = lib.reserve_id().unwrap();
        let frames: Vec<([u64; 4], u32)> = (0..50u64).map(|i| ([i, !i, i << 7, 42], i as u32 * 125)).collect();
        lib.entries().put(id, &VideoEntries { frames: &frames, ..Default::default() }).unwrap();
        assert!(lib.entries().holds_current(id));
        assert!(lib.list().is_empty(), "not published: no video");

        assert!(lib.sweep_abandoned(ABANDONED_AFTER).unwrap().is_empty(), "a running ingest is left alone");
        assert!(lib.entries().holds_current(id));
        assert_eq!(lib.sweep_abandoned(std::time::Duration::ZERO).unwrap(), vec![id]);
        assert!(!lib.entries().holds_current(id), "its entries are gone");
        assert_eq!(lib.frame_count(), before);
        assert!(lib.sweep_abandoned(std::time::Duration::ZERO).unwrap().is_empty(), "and its id forgotten");
        // The next id is a new one: an id is never given twice.
        assert!(lib.reserve_id().unwrap() > id);
    })
    .await
    .unwrap();
}

/// Two films are indexed: a frame of each is found with its own title, second and file, by
/// the index and through `POST /api/identify`, and a frame of neither is no answer.
#[tokio::test]
async fn of_two_films_each_frame_answers_its_own_title_and_a_frame_of_neither_none() {
    let app = TestApp::new().await;
    let folder = two_films_folder();
    let report = index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (2, 0), "{report:?}");
    let cases = [
        ("big-buck-bunny.mp4", "Big Buck Bunny", 2008, 2.6),
        ("sierpinski.mp4", SECOND_FILM, 1916, 1.4),
        ("big-buck-bunny.mp4", "Big Buck Bunny", 2008, 4.4),
        ("sierpinski.mp4", SECOND_FILM, 1916, 4.6),
    ];
    for (file, title, year, at) in cases {
        let still = still_at(&folder.path().join(file), at, &folder.path().join("q.jpg"));
        let answer = index_of(&app).search_image(&still).unwrap();
        let m = answer.best.unwrap_or_else(|| panic!("{file} at {at}: no match: {:?}", answer.reason));
        assert_eq!((m.title.as_str(), m.year, m.file.as_str()), (title, Some(year), file), "{file} at {at}");
        assert!((m.at - at).abs() <= 0.5, "{file} at {at}: answered {}", m.at);
    }
    // Signed in: a guest's one free identification would not cover the pictures below.
    assert!(app.register("viewer", "secret123").await.status.is_success());
    let still = still_at(&folder.path().join("sierpinski.mp4"), 4.6, &folder.path().join("q.jpg"));
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(&still), "library"))
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!((res.json()["title"].as_str(), res.json()["year"].as_str()), (Some(SECOND_FILM), Some("1916")));

    // Frames of neither film: a fractal, and ffmpeg's moving test pattern.
    let fractal = folder.path().join("fractal.png");
    ffmpeg(&["-f", "lavfi", "-i", "mandelbrot=size=640x360", "-frames:v", "1", fractal.to_str().unwrap()]);
    let pattern = folder.path().join("pattern.mkv");
    test_pattern_video(&pattern);
    let neither = [image::open(&fractal).unwrap(), still_at(&pattern, 2.0, &folder.path().join("p.jpg"))];
    for (i, img) in neither.iter().enumerate() {
        let answer = index_of(&app).search_image(img).unwrap();
        assert!(answer.best.is_none(), "picture {i} of neither film answered {:?}", answer.best);
        let res =
            crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(img), "library"))
                .await;
        assert_eq!(res.status, 404, "picture {i} of neither film: {}", res.text());
        assert_eq!(res.json()["noMatch"], true);
    }
}

#[tokio::test]
async fn an_unrelated_picture_is_no_match() {
    let app = TestApp::new().await;
    let folder = two_films_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let out = folder.path().join("other.png");
    ffmpeg(&["-f", "lavfi", "-i", "mandelbrot=size=640x360", "-frames:v", "1", out.to_str().unwrap()]);
    let answer = index_of(&app).search_image(&image::open(&out).unwrap()).unwrap();
    assert!(answer.best.is_none(), "{:?}", answer.best);
    assert_eq!(answer.reason.as_deref(), Some("No match in the library."));

    let black = image::DynamicImage::new_rgb8(640, 360);
    let answer = index_of(&app).search_image(&black).unwrap();
    assert!(answer.best.is_none());
    assert!(answer.reason.unwrap().contains("too dark or too flat"));
}

/// Indexes the demo clip, cuts 3 s of it from 1.5 s with ffmpeg's `filter` (`[0:v]` is the
/// demo, further inputs come from `inputs`), searches the cut and returns the match.
async fn find_cut(filter: &str, inputs: &[&str]) -> reelfind::library::LibraryMatch {
    let app = TestApp::new().await;
    let folder = library_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let clip = folder.path().join("clip.mkv");
    let src = folder.path().join("big-buck-bunny.mp4");
    let mut args = vec!["-ss", "1.5", "-i", src.to_str().unwrap()];
    args.extend_from_slice(inputs);
    args.extend(["-t", "3", "-filter_complex", filter, "-an", clip.to_str().unwrap()]);
    ffmpeg(&args);
    let answer = index_of(&app).search_clip(&clip).unwrap();
    answer.best.unwrap_or_else(|| panic!("no match: {:?}", answer.reason))
}

#[tokio::test]
async fn a_clip_is_found_by_temporal_voting() {
    let m = find_cut("[0:v]scale=640:-2", &[]).await;
    assert_eq!((m.title.as_str(), m.tier), ("Big Buck Bunny", "clip"));
    assert!((m.from - 1.5).abs() <= 0.5, "from {}", m.from);
    assert!((m.to - 4.5).abs() <= 0.6, "to {}", m.to);
}

/// The clip of a picture centred over a mirror fill (see the still's test below): its frames
/// vote on where each film shape would lie.
#[tokio::test]
async fn a_clip_centred_over_a_mirror_fill_is_found() {
    let m = find_cut("[0:v]scale=640:360,pad=640:768:0:204,fillborders=top=204:bottom=204:mode=mirror", &[]).await;
    assert_eq!(m.title, "Big Buck Bunny");
    assert!((m.from - 1.5).abs() <= 0.5, "from {}", m.from);
}

/// A phone's video of a screen in a room (a dark bezel, a wall, the camera tilted, a lamp's
/// glare, the camera's moiré, blur and noise). The demo film's large calm shapes survive
/// even the squeeze to the frame square, so any clip tier may answer here (on real footage
/// it is mostly the screens of `insets`: `src/library/README.md`, "What happens to a clip, in
/// order"); the window test below is the one only `insets` passes.
#[tokio::test]
async fn a_phone_video_of_a_screen_in_a_room_is_found() {
    let m = find_cut(
        "[0:v]pad=trunc(iw*1.08/2)*2:trunc(ih*1.1/2)*2:(ow-iw)/2:(oh-ih)/2:0x0a0a0a,\
         pad=trunc(iw*1.3/2)*2:trunc(ih*1.35/2)*2:(ow-iw)/2:(oh-ih)/2:0x6b5a48,\
         perspective=x0=W*0.08:y0=H*0.06:x1=W*0.95:y1=H*0.02:x2=W*0.03:y2=H*0.97:x3=W*0.9:y3=H*0.92:\
         sense=destination,format=yuv444p,geq=lum='clip(lum(X\\,Y)+8*sin(X*0.9+Y*0.35)+70*exp(-((X-W*0.65)*(X-W*0.65)+\
         (Y-H*0.3)*(Y-H*0.3))/(2*W*W*0.0144))\\,0\\,255)':cb='cb(X\\,Y)':cr='cr(X\\,Y)',gblur=sigma=0.8,noise=alls=8:allf=t",
        &[],
    )
    .await;
    assert_eq!(m.title, "Big Buck Bunny");
    assert!((m.from - 1.5).abs() <= 0.5, "from {}", m.from);
}

/// A video playing small and off centre over other moving pictures (a web page's player, a
/// picture-in-picture): found by the window around it in the clip decoded larger.
#[tokio::test]
async fn a_clip_of_a_picture_in_a_window_over_another_picture_is_found() {
    let background = ["-f", "lavfi", "-i", "testsrc2=size=1280x720:rate=25"];
    let m = find_cut(
        "[1:v]setpts=PTS-STARTPTS[bg];[0:v]setpts=PTS-STARTPTS,scale=480:-2[pip];\
         [bg][pip]overlay=x=W*0.55:y=H*0.12:shortest=1",
        &background,
    )
    .await;
    assert_eq!((m.title.as_str(), m.tier), ("Big Buck Bunny", "clip inset"));
    assert!((m.from - 1.5).abs() <= 0.5, "from {}", m.from);
}

#[tokio::test]
async fn a_clip_whose_lower_part_is_covered_is_found() {
    // The bottom 43% of every frame replaced by other moving pictures (a big lower third).
    let cover = ["-f", "lavfi", "-i", "testsrc2=size=1280x310:rate=25"];
    let m = find_cut("[0:v][1:v]overlay=0:410:shortest=1,scale=640:-2", &cover).await;
    assert_eq!(m.title, "Big Buck Bunny");
    assert!((m.from - 1.5).abs() <= 0.5, "from {}", m.from);
}

#[tokio::test]
async fn adding_again_is_a_no_op_and_a_changed_file_is_reindexed() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let before = lib.list();
    let again = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((again.added, again.reindexed, again.unchanged), (0, 0, 1));
    assert_eq!(lib.list(), before);

    // Same content, new modification time: still unchanged (the partial hash agrees).
    let file = folder.path().join("big-buck-bunny.mp4");
    let f = std::fs::File::options().write(true).open(&file).unwrap();
    f.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
    assert_eq!(lib.add_video(&file, None, &mut Quiet).unwrap(), AddOutcome::Unchanged);

    // Different content under the same name: re-indexed, old segment replaced.
    test_pattern_video(&file);
    let out = lib.add_video(&file, None, &mut Quiet).unwrap();
    assert!(matches!(out, AddOutcome::Reindexed { .. }), "{out:?}");
    assert_eq!(lib.list().len(), 1);
    assert!((lib.list()[0].duration - 4.0).abs() < 0.2);
}

#[tokio::test]
async fn a_truncated_video_is_reported_and_the_run_goes_on() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let bytes = std::fs::read(demo_clip()).unwrap();
    std::fs::write(folder.path().join("broken.mp4"), &bytes[..bytes.len() / 3]).unwrap();
    std::fs::write(folder.path().join("notes.txt"), "not a video").unwrap();
    let report = index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!(report.added, 1, "{report:?}");
    assert_eq!(report.failed.len(), 1, "{report:?}");
    assert!(report.failed[0].0.ends_with("broken.mp4"));
    let titles: Vec<String> = index_of(&app).list().into_iter().map(|v| v.meta.title).collect();
    assert_eq!(titles, ["Big Buck Bunny"]);
}

#[tokio::test]
async fn a_cropped_screenshot_is_found_by_the_crop_tier() {
    let app = TestApp::new().await;
    let folder = library_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 3.1, &folder.path().join("q.jpg"));
    // 90% of each side, from the top right corner.
    let (w, h) = (still.width(), still.height());
    let crop = still.crop_imm(w / 10, 0, w * 9 / 10, h * 9 / 10);
    let m = index_of(&app).search_image(&crop).unwrap().best.expect("the crop is found");
    assert_eq!(m.title, "Big Buck Bunny");
    assert!((m.at - 3.1).abs() <= 1.0, "at {}", m.at);
    assert!(m.similarity >= 0.5, "{m:?}");
    let mirrored = index_of(&app).search_image(&crop.fliph()).unwrap().best.expect("the mirrored crop is found");
    assert!(mirrored.mirrored && (mirrored.at - 3.1).abs() <= 1.0, "{mirrored:?}");
}

#[tokio::test]
async fn a_phone_photo_of_the_screen_in_a_room_is_found_by_the_screen_tier() {
    let app = TestApp::new().await;
    let folder = library_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let photo = folder.path().join("photo.jpg");
    // The frame on a screen with a dark bezel, on a plain wall, photographed at an angle.
    ffmpeg(&[
        "-ss",
        "3.1",
        "-i",
        folder.path().join("big-buck-bunny.mp4").to_str().unwrap(),
        "-vf",
        "pad=trunc(iw*1.08/2)*2:trunc(ih*1.1/2)*2:(ow-iw)/2:(oh-ih)/2:0x0a0a0a,\
         pad=trunc(iw*1.3/2)*2:trunc(ih*1.35/2)*2:(ow-iw)/2:(oh-ih)/2:0x6b5a48,\
         perspective=x0=W*0.08:y0=H*0.06:x1=W*0.95:y1=H*0.02:x2=W*0.03:y2=H*0.97:x3=W*0.9:y3=H*0.92:sense=destination,\
         noise=alls=6:allf=t",
        "-frames:v",
        "1",
        "-q:v",
        "4",
        photo.to_str().unwrap(),
    ]);
    let photo = image::open(&photo).unwrap();
    let m = index_of(&app).search_image(&photo).unwrap().best.expect("the photo is found");
    assert_eq!(m.title, "Big Buck Bunny");
    assert_eq!(m.tier, "screen", "{m:?}");
    assert!(m.from - 0.5 <= 3.1 && 3.1 <= m.to + 0.5, "{m:?}");
}

/// Covers the rows from `from` (share of the height) down with two bands of big outlined
/// "letters": bright blocks with dark outlines on a dark band, as burned-in subtitles are.
fn cover_with_subtitle_blocks(img: &image::DynamicImage, from: f32) -> image::DynamicImage {
    let mut rgb = img.to_rgb8();
    let (w, h) = rgb.dimensions();
    let top = (h as f32 * from) as u32;
    for y in top..h {
        let band = (y - top) * 2 / (h - top).max(1);
        for x in 0..w {
            let cell = (x / 9 + band * 3) % 4;
            let inner = (y - top) % ((h - top) / 2).max(1) > 4 && x % 9 > 1 && x % 9 < 7;
            let v = if cell != 0 && inner { 250 } else { 12 };
            rgb.put_pixel(x, y, image::Rgb([v, v, v.saturating_sub(40)]));
        }
    }
    image::DynamicImage::ImageRgb8(rgb)
}

#[tokio::test]
async fn a_still_whose_lower_part_is_covered_is_found_by_the_upper_tier() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert!(lib.list()[0].upper_frames > 0, "the upper tier is indexed");
    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 3.1, &folder.path().join("q.jpg"));
    let covered = cover_with_subtitle_blocks(&still, 0.6);
    let m = lib.search_image(&covered).unwrap().best.expect("the covered still is found");
    assert_eq!(m.title, "Big Buck Bunny");
    assert_eq!(m.tier, "upper", "{m:?}");
    assert!(m.from - 0.5 <= 3.1 && 3.1 <= m.to + 0.5, "{m:?}");
    let mirrored = lib.search_image(&covered.fliph()).unwrap().best.expect("the mirrored still is found");
    assert!(mirrored.mirrored && mirrored.from - 0.5 <= 3.1 && 3.1 <= mirrored.to + 0.5, "{mirrored:?}");
}

/// `still` is found by `tier`, its range holding `at` (within half a second).
fn assert_found(lib: &LibraryIndex, still: &image::DynamicImage, at: f64, tier: &str) {
    let m = lib.search_image(still).unwrap().best.unwrap_or_else(|| panic!("the still at {at} s is found"));
    assert_eq!(m.tier, tier, "{m:?}");
    assert!(m.from - 0.5 <= at && at <= m.to + 0.5, "{at}: {m:?}");
}

/// The demo clip through ffmpeg's filter options `filter` (`-vf ...`, or `-filter_complex ...`
/// with its output mapped), silent, as `name` in a folder of its own, added to `lib`: the folder
/// and the video's path.
fn index_demo_through(lib: &LibraryIndex, name: &str, filter: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let folder = tempfile::tempdir().unwrap();
    let video = folder.path().join(name);
    let demo = demo_clip();
    let mut args = vec!["-i", demo.to_str().unwrap()];
    args.extend_from_slice(filter);
    args.extend(["-an", video.to_str().unwrap()]);
    ffmpeg(&args);
    let report = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (1, 0), "{report:?}");
    (folder, video)
}

/// A film whose sides are flat and dark (the index cuts them as it cuts bars), covered below
/// by blocks that reach across the whole width, as big subtitles and a player's controls do:
/// the query's own rule cannot cut the sides there, so the top is judged on its own.
#[tokio::test]
async fn a_covered_still_of_a_film_with_dark_sides_is_found_by_its_top() {
    let app = TestApp::new().await;
    let lib = index_of(&app);
    let dark = "color=0x0a0a0a:t=fill";
    let sides = format!("drawbox=x=0:y=0:w=iw*0.13:h=ih:{dark},drawbox=x=iw*0.87:y=0:w=iw*0.13:h=ih:{dark}");
    let (folder, video) = index_demo_through(lib, "dark-sides.mp4", &["-vf", &sides]);
    for at in [1.3, 3.1] {
        let still = still_at(&video, at, &folder.path().join("q.jpg"));
        assert_found(lib, &cover_with_subtitle_blocks(&still, 0.6), at, "upper");
    }
}

/// A shot whose top returns later over another lower part (here the frame at 1.3 s held for
/// two seconds with its lower part mirrored): under big subtitles the tops of the two are
/// all the upper tier sees, and the later, longer run would win; the whole picture's own hit,
/// closer by the hash and more alike as a whole, decides for the moment itself.
#[tokio::test]
async fn a_covered_still_whose_top_returns_over_another_picture_is_found_at_its_own_moment() {
    let app = TestApp::new().await;
    let lib = index_of(&app);
    let graph = "[0:v]split[x][y];[x]trim=0:3,setpts=PTS-STARTPTS[a];\
        [y]trim=start=1.3:duration=0.04,setpts=PTS-STARTPTS,tpad=stop_mode=clone:stop_duration=2,split[t][u];\
        [u]hflip,crop=iw:ih*0.45:0:ih*0.55[low];[t][low]overlay=0:H*0.55[b];[a][b]concat=n=2:v=1[out]";
    let (folder, video) = index_demo_through(lib, "returns.mp4", &["-filter_complex", graph, "-map", "[out]"]);
    let subtitles = "drawbox=x=iw*0.18:y=ih*0.62:w=iw*0.64:h=ih*0.1:color=yellow:t=fill,\
        drawbox=x=iw*0.22:y=ih*0.76:w=iw*0.56:h=ih*0.1:color=yellow:t=fill";
    let still = still_through(&video, 1.3, subtitles, &folder.path().join("q.jpg"));
    let m = lib.search_image(&still).unwrap().best.expect("the covered still is found");
    assert!(m.from - 0.5 <= 1.3 && 1.3 <= m.to + 0.5, "{m:?}");
}

/// A dark film under a broadcaster's bright box in a corner: the box moves the whole
/// picture's hash too far, and with that corner painted out it is found.
#[tokio::test]
async fn a_dark_film_under_a_bright_corner_logo_is_found_by_the_corner_tier() {
    let app = TestApp::new().await;
    let lib = index_of(&app);
    let (folder, video) = index_demo_through(lib, "night.mp4", &["-vf", "eq=brightness=-0.3:contrast=0.5"]);
    let query = folder.path().join("logo.jpg");
    let logo = "drawbox=x=iw*0.05:y=ih*0.05:w=iw*0.16:h=ih*0.12:color=white@0.8:t=fill";
    for at in [1.2, 3.4] {
        assert_found(lib, &still_through(&video, at, logo, &query), at, "corner");
    }
}

/// A 16:9 picture centred in a portrait canvas whose bars mirror the picture (an editor's
/// "mirror" fill): no edge, no change in detail, nothing tells where the picture ends but its
/// shape.
#[tokio::test]
async fn a_picture_centred_over_a_mirror_fill_is_found_by_its_shape() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let query = folder.path().join("mirror-fill.jpg");
    // 1280x720 in 1280x1536: 408 rows of mirrored picture above and below.
    let fill = "pad=1280:1536:0:408,fillborders=top=408:bottom=408:mode=mirror";
    for at in [1.4, 3.6] {
        assert_found(lib, &still_through(&demo_clip(), at, fill, &query), at, "shape");
    }
}

/// The frame small, off centre, over a busy coloured picture (a video in a window of a page,
/// a picture-in-picture): neither flat bars nor a blurred copy nor centred.
#[tokio::test]
async fn a_picture_in_a_window_over_another_picture_is_found_by_the_window_tier() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let query = folder.path().join("window.jpg");
    for (at, x, y) in [(1.4, "0.6", "0.1"), (3.6, "0.05", "0.45")] {
        // Both inputs from their own first frame: the overlay waits for matching timestamps.
        let graph = format!(
            "[1:v]setpts=PTS-STARTPTS[bg];[0:v]setpts=PTS-STARTPTS,scale=480:-2[pip];\
             [bg][pip]overlay=x=W*{x}:y=H*{y}"
        );
        ffmpeg(&[
            "-ss",
            &format!("{at}"),
            "-i",
            demo_clip().to_str().unwrap(),
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=1280x720",
            "-filter_complex",
            &graph,
            "-frames:v",
            "1",
            "-q:v",
            "3",
            query.to_str().unwrap(),
        ]);
        assert_found(lib, &image::open(&query).unwrap(), at, "window");
    }
}

/// Indexes the demo folder, rewrites its segment as an older version wrote it (`older` gets
/// the record, the segment's bytes and the count of its entries), opens the library again as a
/// server starting on it would, and checks that the segment is stale yet searched, and that the
/// next `add` re-indexes it. Returns the library's videos after that.
async fn older_segment_is_searched_then_reindexed(
    older: impl FnOnce(&reelfind::library::index::store::VideoRecord, &[u8], usize) -> Vec<u8>,
) -> Vec<reelfind::library::index::store::VideoRecord> {
    // Segment files are the embedded index's (the Milvus pass has none).
    let app = TestApp::with_env([("REELFIND_LIBRARY_INDEX", "local")]).await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let record = lib.list()[0].clone();
    let seg = lib.dir().join("segments").join(format!("{}.seg", record.id));
    let bytes = std::fs::read(&seg).unwrap();
    let count = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    // The column and deep-crop tiers' counts, in the header only.
    let total = (record.frames + record.crop_frames + record.upper_frames) as usize + count(28) + count(32);
    std::fs::write(&seg, older(&record, &bytes, total)).unwrap();
    let lib = LibraryIndex::open(lib.dir()).unwrap();
    assert_eq!(lib.stale_files().len(), 1, "an older segment is not current");
    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 1.2, &folder.path().join("q.jpg"));
    assert!(
        lib.search_image(&still).unwrap().best.is_some_and(|m| (m.at - 1.2).abs() <= 0.5),
        "still searched meanwhile"
    );

    let again = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((again.added, again.reindexed, again.unchanged), (0, 1, 0), "{again:?}");
    assert!(lib.stale_files().is_empty());
    lib.list()
}

#[tokio::test]
async fn a_segment_without_the_upper_tier_is_searched_until_the_next_add_reindexes_it() {
    // As version 2 wrote it: the same tiers without the upper one, no stretches.
    let videos = older_segment_is_searched_then_reindexed(|record, bytes, total| {
        let kept = (record.frames + record.crop_frames) as usize;
        segment_before(bytes, kept, total, b"RFLIBSG2", false)
    })
    .await;
    assert!(videos[0].upper_frames > 0);
}

/// A current segment's bytes (a 40-byte header) with only its first `kept` entries of `total`,
/// as a version before the tiers after them wrote them (a 32-byte header; counts of tiers it
/// did not know zero), under `magic`; the static stretches after them when `stretches`.
fn segment_before(bytes: &[u8], kept: usize, total: usize, magic: &[u8; 8], stretches: bool) -> Vec<u8> {
    const H: usize = 40;
    let mut old = bytes[..32].to_vec();
    old[..8].copy_from_slice(magic);
    let version = magic[7] - b'0';
    if version < 5 {
        old[28..32].fill(0);
    }
    if version < 4 {
        old[24..28].fill(0);
    }
    if version < 3 {
        old[20..24].fill(0);
    }
    old.extend_from_slice(&bytes[H..H + kept * 8]);
    old.extend_from_slice(&bytes[H + total * 8..H + total * 8 + kept * 24]);
    old.extend_from_slice(&bytes[H + total * 32..H + total * 32 + kept * 4]);
    if stretches {
        old.extend_from_slice(&bytes[H + total * 36..]);
    }
    old
}

#[tokio::test]
async fn a_segment_without_static_stretches_is_searched_until_the_next_add_reindexes_it() {
    // As version 3 wrote it: the same entries but the column tier's, no stretches after them.
    older_segment_is_searched_then_reindexed(|record, bytes, total| {
        let kept = (record.frames + record.crop_frames + record.upper_frames) as usize;
        segment_before(bytes, kept, total, b"RFLIBSG3", false)
    })
    .await;
}

#[tokio::test]
async fn a_segment_without_the_column_tier_is_searched_until_the_next_add_reindexes_it() {
    // As version 4 wrote it: every tier but the column tier, the stretches after them.
    older_segment_is_searched_then_reindexed(|record, bytes, total| {
        let kept = (record.frames + record.crop_frames + record.upper_frames) as usize;
        assert!(total > kept, "the column tier is indexed");
        segment_before(bytes, kept, total, b"RFLIBSG4", true)
    })
    .await;
}

#[tokio::test]
async fn a_segment_without_the_deep_crop_tier_is_searched_until_the_next_add_reindexes_it() {
    // As version 5 wrote it: every tier but the deep-crop tier under a 32-byte header.
    older_segment_is_searched_then_reindexed(|record, bytes, total| {
        let columns = u32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
        let kept = (record.frames + record.crop_frames + record.upper_frames) as usize + columns;
        assert!(total > kept, "the deep-crop tier is indexed");
        segment_before(bytes, kept, total, b"RFLIBSG5", true)
    })
    .await;
}

/// A vertical repost of the demo clip: a 9:16 column of the frame `left` of the way across the
/// room beside it, scaled to 360x640 under a white caption band, with a button over its side.
const VERTICAL_REPOST: &str = "crop=ih*9/16:ih:(iw-ih*9/16)*{LEFT}:0,scale=360:640,setsar=1,pad=360:760:0:120:white,\
     drawbox=x=318:y=500:w=30:h=30:color=white@0.85:t=fill";

#[tokio::test]
async fn a_vertical_repost_is_found_by_the_column_tier_still_and_clip() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let video = folder.path().join("big-buck-bunny.mp4");
    // A third of the frame cannot match a whole frame: only the column windows find it.
    for (k, (at, left)) in [(1.2, "0.3"), (4.1, "0.62")].into_iter().enumerate() {
        let vf = VERTICAL_REPOST.replace("{LEFT}", left);
        let still = still_through(&video, at, &vf, &folder.path().join(format!("repost{k}.jpg")));
        assert_found(lib, &still, at, "column");
        assert_found(lib, &still.fliph(), at, "column");
    }
    let m = find_cut(&format!("[0:v]{}", VERTICAL_REPOST.replace("{LEFT}", "0.5")), &[]).await;
    assert_eq!((m.title.as_str(), m.tier), ("Big Buck Bunny", "clip column"), "{m:?}");
    assert!((m.from - 1.5).abs() <= 0.5, "{m:?}");
}

#[tokio::test]
async fn a_segment_of_an_older_index_format_is_reindexed_by_the_next_add() {
    let app = TestApp::with_env([("REELFIND_LIBRARY_INDEX", "local")]).await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert!(lib.stale_files().is_empty());
    // Make the segment look like one written by the first index version.
    let seg = lib.dir().join("segments").join(format!("{}.seg", lib.list()[0].id));
    let mut bytes = std::fs::read(&seg).unwrap();
    bytes[..8].copy_from_slice(b"RFLIBSG1");
    std::fs::write(&seg, &bytes).unwrap();
    assert_eq!(lib.stale_files().len(), 1);

    let again = lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!((again.added, again.reindexed, again.unchanged), (0, 1, 0), "{again:?}");
    assert!(lib.stale_files().is_empty());
    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 1.2, &folder.path().join("q.jpg"));
    assert!(lib.search_image(&still).unwrap().best.is_some_and(|m| (m.at - 1.2).abs() <= 0.5));
}

#[tokio::test]
async fn removing_a_video_forgets_it() {
    let app = TestApp::new().await;
    let folder = library_folder();
    let lib = index_of(&app);
    lib.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let removed = lib.remove("big-buck-bunny.mp4").unwrap();
    assert_eq!(removed.len(), 1);
    assert!(lib.list().is_empty());
    assert_eq!(lib.frame_count(), 0);
}

fn jpeg_bytes(img: &image::DynamicImage) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    img.to_rgb8().write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

#[tokio::test]
async fn identify_with_mode_library_answers_title_second_and_preview() {
    let app = TestApp::new().await;
    let folder = two_films_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let models = app.get("/api/models").await.json();
    assert_eq!(models["available"]["library"], true, "{models}");

    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 2.6, &folder.path().join("q.jpg"));
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(&still), "library"))
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["title"], "Big Buck Bunny");
    assert_eq!(r["engine"], "library");
    let at = r["timestamp"]["at"].as_f64().unwrap();
    assert!((at - 2.6).abs() <= 0.5, "{}", r["timestamp"]);
    let preview = r["previewUrl"].as_str().unwrap();
    assert!(preview.starts_with("/api/library/preview/"), "{preview}");
    assert_eq!(app.get(preview).await.status, 200);

    // A node that cannot read the video's file (it lives on another machine) still answers
    // with the title and the time; it offers no preview link rather than one that fails.
    let other = still_at(&folder.path().join("big-buck-bunny.mp4"), 1.2, &folder.path().join("q2.jpg"));
    let away = tempfile::tempdir().unwrap();
    std::fs::rename(folder.path().join("big-buck-bunny.mp4"), away.path().join("big-buck-bunny.mp4")).unwrap();
    // (A guest has one identification; this is the second.)
    assert!(app.register("previewer", "secret-pass-1").await.status.is_success());
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(&other), "library"))
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["title"], "Big Buck Bunny");
    assert!((r["timestamp"]["at"].as_f64().unwrap() - 1.2).abs() <= 0.5, "{}", r["timestamp"]);
    assert!(r["previewUrl"].is_null(), "{r}");
}

#[tokio::test]
async fn identify_with_mode_library_says_no_match_for_an_unrelated_picture() {
    let app = TestApp::new().await;
    let folder = two_films_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let out = folder.path().join("other.png");
    ffmpeg(&["-f", "lavfi", "-i", "mandelbrot=size=640x360", "-frames:v", "1", out.to_str().unwrap()]);
    let img = image::open(&out).unwrap();
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(&img), "library"))
            .await;
    assert_eq!(res.status, 404, "a non-match is never presented as an identification: {}", res.text());
    assert_eq!(res.json()["noMatch"], true);
}

#[tokio::test]
async fn auto_answers_from_a_confident_library_match_without_paying_a_cloud_engine() {
    use wiremock::matchers::method;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let cloud = MockServer::start().await;
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(500)).expect(0).mount(&cloud).await;
    let app = TestApp::with_env([
        ("OPENAI_API_KEY", "sk-test".to_string()),
        ("OPENAI_BASE_URL", format!("{}/v1", cloud.uri())),
    ])
    .await;
    let folder = library_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 1.2, &folder.path().join("q.jpg"));
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(&still), "auto")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!((r["title"].as_str(), r["engine"].as_str()), (Some("Big Buck Bunny"), Some("library")));
    cloud.verify().await;
}

/// Runs ffmpeg with `inputs` (each a list of input arguments) joined by `filter` into `out`.
fn compose(inputs: &[&[&str]], filter: &str, out: &Path) {
    let mut args: Vec<&str> = Vec::new();
    for input in inputs {
        args.extend_from_slice(input);
    }
    args.extend_from_slice(&["-filter_complex", filter, "-an", out.to_str().unwrap()]);
    ffmpeg(&args);
}

/// The demo's frame at 2.6 s at 320x240, as a PNG at `out`: a textured picture to hold still.
fn demo_frame(out: &Path) {
    let demo = demo_clip();
    ffmpeg(&[
        "-ss",
        "2.6",
        "-i",
        demo.to_str().unwrap(),
        "-frames:v",
        "1",
        "-vf",
        "scale=320:240",
        out.to_str().unwrap(),
    ]);
}

/// Indexes `name`: 2 s of motion, a 5 s shot of the demo's frame (2 s to 7 s) through
/// `hold` (an ffmpeg filter chain: grain, darkening), 2 s of motion. Returns the video's path.
fn index_static_shot(app: &TestApp, dir: &Path, name: &str, hold: &str) -> PathBuf {
    let frozen = dir.join("frozen.png");
    demo_frame(&frozen);
    let video = dir.join(name);
    compose(
        &[
            &["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2"],
            &["-loop", "1", "-framerate", "25", "-t", "5", "-i", frozen.to_str().unwrap()],
            &["-f", "lavfi", "-i", "cellauto=s=320x240:rule=110:rate=25,trim=duration=2"],
        ],
        &format!(
            "[0:v]setsar=1[a];[1:v]setsar=1,{hold}[b];[2:v]setsar=1[c];[a][b][c]concat=n=3:v=1:a=0,format=yuv420p"
        ),
        &video,
    );
    let report = index_of(app).add_paths(std::slice::from_ref(&video), &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (1, 0), "{report:?}");
    video
}

/// Stills at `moments` of the static shot of [`index_static_shot`] answer `title` over the whole
/// shot.
fn assert_spans_the_shot(app: &TestApp, video: &Path, title: &str, moments: &[f64]) {
    for &at in moments {
        let still = still_at(video, at, &video.with_extension("jpg"));
        let m = index_of(app).search_image(&still).unwrap().best.unwrap_or_else(|| panic!("no match at {at}"));
        assert_eq!(m.title, title);
        assert!(m.from <= 2.1 && m.to >= 6.8, "a still at {at} s spans the shot 2-7 s, not {}..{}", m.from, m.to);
        assert!(m.from <= m.at && m.at <= m.to, "{m:?}");
        assert!(m.also_in.is_empty(), "{m:?}");
    }
}

#[tokio::test]
async fn a_still_of_a_static_shot_spans_the_whole_shot() {
    let app = TestApp::new().await;
    let dir = tempfile::tempdir().unwrap();
    // The picture under film grain.
    let video = index_static_shot(&app, dir.path(), "Static Shot (2001).mp4", "noise=alls=6:allf=t");
    assert_spans_the_shot(&app, &video, "Static Shot", &[2.4, 4.3, 6.6]);
    // A still of the moving part is not stretched over the static shot.
    let moving = index_of(&app).search_image(&still_at(&video, 1.0, &dir.path().join("q.jpg"))).unwrap().best.unwrap();
    assert!(moving.to < 2.0 && (moving.at - 1.0).abs() <= 0.5, "{moving:?}");
}

/// A dark, soft picture held for 5 s under heavy grain (a night scene): the grain moves its
/// hash by more than a run of entries allows, so the hash alone finds pieces of the shot; the
/// static stretch found at indexing gives the whole of it.
#[tokio::test]
async fn a_still_of_a_grainy_dark_static_shot_spans_the_whole_shot() {
    let app = TestApp::new().await;
    let dir = tempfile::tempdir().unwrap();
    let hold = "gblur=sigma=6,eq=brightness=-0.3:contrast=0.5,noise=alls=24:allf=t";
    let video = index_static_shot(&app, dir.path(), "Night Shot (2002).mp4", hold);
    assert_spans_the_shot(&app, &video, "Night Shot", &[2.6, 4.5, 6.3]);
}

/// Two shots of one picture that differ only in detail the hash does not keep (a plaid of 12
/// cycles across the width under a soft round window, in opposite phase: above the 8 cycles
/// the hash's 16 lowest frequencies reach): the hash finds both about equally close, and the
/// frames in the source decide.
#[tokio::test]
async fn moments_the_hash_cannot_tell_apart_are_decided_by_the_source() {
    let app = TestApp::new().await;
    let dir = tempfile::tempdir().unwrap();
    let frame = dir.path().join("frame.png");
    demo_frame(&frame);
    let checker = |phase: f64| {
        format!(
            "format=yuv444p,geq=lum='clip(lum(X\\,Y)+30*exp(-((X-110)*(X-110)+(Y-120)*(Y-120))/3200)\
             *sin(2*PI*X/26.67+{phase})*sin(2*PI*Y/26.67)\\,0\\,255)':cb='cb(X\\,Y)':cr='cr(X\\,Y)',\
             noise=alls=3:allf=t,setsar=1"
        )
    };
    let video = dir.path().join("Twins (2004).mp4");
    let held = ["-loop", "1", "-framerate", "25", "-t", "2", "-i", frame.to_str().unwrap()];
    compose(
        &[&held, &["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2"], &held],
        &format!(
            "[0:v]{}[x];[1:v]setsar=1[y];[2:v]{}[z];[x][y][z]concat=n=3:v=1:a=0,format=yuv420p",
            checker(0.0),
            checker(std::f64::consts::PI)
        ),
        &video,
    );
    let report = index_of(&app).add_paths(std::slice::from_ref(&video), &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (1, 0), "{report:?}");
    for (at, shot) in [(0.7, 0.0..2.0), (1.5, 0.0..2.0), (4.6, 4.0..6.0), (5.4, 4.0..6.0)] {
        let m = index_of(&app).search_image(&still_at(&video, at, &dir.path().join("q.jpg"))).unwrap().best.unwrap();
        assert!(shot.contains(&m.at) && m.from >= shot.start - 0.2 && m.to <= shot.end + 0.2, "a still at {at}: {m:?}");
        assert!(m.looked.is_some(), "the source was looked at: {m:?}");
    }
}

#[tokio::test]
async fn a_scene_shared_by_two_episodes_names_both_and_the_public_result_no_files() {
    let app = TestApp::new().await;
    let dir = tempfile::tempdir().unwrap();
    let demo = demo_clip();
    let demo = demo.to_str().unwrap();
    // The same 3 s of the demo clip after 2 s of another picture in one episode, before 2 s
    // of another in the next (a recap).
    let first = dir.path().join("Show - S01E01 - Pilot.mp4");
    compose(
        &[&["-f", "lavfi", "-i", "testsrc2=size=320x240:rate=24:duration=2"], &["-ss", "1", "-t", "3", "-i", demo]],
        "[0:v]setsar=1[a];[1:v]scale=320:240,fps=24,setsar=1[b];[a][b]concat=n=2:v=1:a=0,format=yuv420p",
        &first,
    );
    let second = dir.path().join("Show - S01E02 - Recap.mp4");
    compose(
        &[
            &["-ss", "1", "-t", "3", "-i", demo],
            &["-f", "lavfi", "-i", "cellauto=s=320x240:rule=110:rate=24,trim=duration=2"],
        ],
        "[0:v]scale=320:240,fps=24,setsar=1[a];[1:v]setsar=1[b];[a][b]concat=n=2:v=1:a=0,format=yuv420p",
        &second,
    );
    let report = index_of(&app).add_paths(&[dir.path().to_path_buf()], &mut Quiet);
    assert_eq!((report.added, report.failed.len()), (2, 0), "{report:?}");

    // 2.6 s of the demo clip: 3.6 s into the first episode, 1.6 s into the second.
    let still = still_at(Path::new(demo), 2.6, &dir.path().join("q.jpg"));
    let m = index_of(&app).search_image(&still).unwrap().best.expect("the shared scene matches");
    assert_eq!(m.also_in.len(), 1, "{m:?}");
    let other = &m.also_in[0];
    let mut found: Vec<(Option<u32>, f64, f64, f64)> =
        vec![(m.episode, m.from, m.at, m.to), (other.episode, other.from, other.at, other.to)];
    found.sort_by_key(|f| f.0);
    assert_eq!((found[0].0, found[1].0), (Some(1), Some(2)), "{m:?}");
    for ((_, from, at, to), truth) in found.iter().zip([3.6, 1.6]) {
        assert!(*from <= truth + 0.1 && truth - 0.1 <= *to, "{truth} outside {from}..{to}");
        assert!((at - truth).abs() <= 0.5, "at {at}, truth {truth}");
    }

    // A clip of the shared part (1.5 s to 2.5 s of the demo) names both episodes too, each
    // with its own start: 2.5 s into the first, 0.5 s into the second.
    let clip = dir.path().join("q.mp4");
    ffmpeg(&["-ss", "1.5", "-t", "1", "-i", demo, "-an", "-vf", "scale=320:240", clip.to_str().unwrap()]);
    let c = index_of(&app).search_clip(&clip).unwrap().best.expect("the shared clip matches");
    assert_eq!(c.also_in.len(), 1, "{c:?}");
    let mut starts = [(c.episode, c.from), (c.also_in[0].episode, c.also_in[0].from)];
    starts.sort_by_key(|s| s.0);
    assert_eq!((starts[0].0, starts[1].0), (Some(1), Some(2)), "{c:?}");
    for ((_, from), truth) in starts.iter().zip([2.5, 0.5]) {
        assert!((from - truth).abs() <= 0.3, "clip start {from}, truth {truth}: {c:?}");
    }

    // Through /api/identify: the other episode is listed by title and episode, never by file.
    let res =
        crate::identify_support::upload(&app, crate::identify_support::Upload::image(jpeg_bytes(&still), "library"))
            .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["title"], "Show");
    let also = r["alsoIn"].as_array().expect("alsoIn is a list");
    assert_eq!(also.len(), 1, "{r}");
    assert_eq!(also[0]["title"], "Show");
    assert_eq!(also[0]["type"], "tv");
    assert!(also[0]["episode"] == 1 || also[0]["episode"] == 2, "{}", also[0]);
    assert_ne!(also[0]["episode"], r["episode"]);
    assert!(also[0]["timestamp"]["at"].is_f64());
    assert!(!res.text().contains(".mp4"), "file names stay on the server: {}", res.text());
}

#[tokio::test]
async fn library_candidates_carry_the_time_range() {
    let app = TestApp::new().await;
    let folder = library_folder();
    index_of(&app).add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    let still = still_at(&folder.path().join("big-buck-bunny.mp4"), 2.6, &folder.path().join("q.jpg"));
    let mut req = crate::identify_support::Upload::image(jpeg_bytes(&still), "library").request();
    // `candidates=3` as one more form field, before the closing boundary.
    let body = futures::executor::block_on(http_body_util::BodyExt::collect(req.body_mut())).unwrap().to_bytes();
    let closing = b"------reelfind-test-boundary--";
    let end = body.windows(closing.len()).rposition(|w| w == closing).unwrap();
    let mut with = body[..end].to_vec();
    with.extend_from_slice(
        b"------reelfind-test-boundary\r\nContent-Disposition: form-data; name=\"candidates\"\r\n\r\n3\r\n",
    );
    with.extend_from_slice(&body[end..]);
    *req.body_mut() = axum::body::Body::from(with);
    let res = app.send(req).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let c = res.json()["candidates"].clone();
    assert_eq!(c[0]["title"], "Big Buck Bunny", "{c}");
    let ts = &c[0]["timestamp"];
    let (from, at, to) = (ts["from"].as_f64().unwrap(), ts["at"].as_f64().unwrap(), ts["to"].as_f64().unwrap());
    assert!(from <= at && at <= to, "{ts}");
    assert!((at - 2.6).abs() <= 0.5, "{ts}");
}
