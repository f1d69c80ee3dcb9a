//! Hostile uploads, each built here with ffmpeg or `image`: lying lengths on the picture and
//! the sound path, truncated pictures, huge real resolutions, streams without a length,
//! playlists under media names. Every one is refused with a 4xx in words or answered
//! within bounds, never reaches a paid engine when refused, leaves no child process and an
//! empty temp folder.
use axum::body::Body;
use axum::http::header;
use image::ImageFormat;
use wiremock::MockServer;

use crate::hostile;
use crate::identify_support::*;
use crate::support::TestApp;

async fn app_with(extra: &[(&str, &str)]) -> (TestApp, MockServer) {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.8)).await;
    let mut env = vec![
        ("OPENAI_API_KEY".to_string(), "k".to_string()),
        ("OPENAI_BASE_URL".to_string(), format!("{}/v1", openai.uri())),
        ("REELFIND_IDENTIFY_PER_MINUTE".to_string(), "1000".to_string()),
    ];
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    let app = TestApp::with_env(env).await;
    app.state.settings.set(&app.db, "allowed_file_types", "jpg,jpeg,png,webp,gif,mp4,mov,mkv,webm").await.unwrap();
    // Signed in: unlimited identifications (a guest has one).
    let res = crate::accounts::register(&app, "hostile", "a-long-password").await;
    assert!(res.status.is_success(), "{}", res.text());
    (app, openai)
}

/// Processes whose command line names this app's data folder (its ffmpeg children).
pub fn children(data_dir: &std::path::Path) -> Vec<String> {
    let needle = data_dir.display().to_string();
    std::fs::read_dir("/proc")
        .map(|rd| {
            rd.filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
                .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                .filter(|c| c.contains(&needle))
                .collect()
        })
        .unwrap_or_default()
}

/// No child left (given a moment to be reaped) and nothing in `{data_dir}/tmp`.
async fn assert_clean(app: &TestApp) {
    for _ in 0..30 {
        if children(app.data_dir()).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(children(app.data_dir()).is_empty(), "{:?}", children(app.data_dir()));
    assert!(leftovers(app).is_empty(), "{:?}", leftovers(app));
}

fn engine_calls(reqs: &[wiremock::Request]) -> usize {
    reqs.iter().filter(|r| r.url.path().ends_with("/chat/completions")).count()
}

#[tokio::test]
async fn a_clip_that_lies_about_its_length_is_refused_before_any_decode() {
    let (app, openai) = app_with(&[]).await;
    for both_key in [false, true] {
        let clip = hostile::lying_picture_mp4(app.data_dir(), 36_000, both_key);
        assert!(clip.len() < 20_000);
        let res = upload(&app, Upload::video(clip, "openai", true)).await;
        assert_eq!(res.status, 422, "{}", res.text());
        let msg = res.json()["error"].as_str().unwrap().to_owned();
        assert!(
            msg.contains("Video too long") && msg.contains("its pictures run 3600") && msg.contains("claims 1 s"),
            "{msg}"
        );
        assert_clean(&app).await;
    }
    assert_eq!(engine_calls(&openai.received_requests().await.unwrap()), 0);
}

#[tokio::test]
async fn a_sound_track_that_lies_about_its_length_is_refused() {
    let (app, openai) = app_with(&[]).await;
    let clip = hostile::lying_sound_mp4(app.data_dir(), 1800);
    let res = upload(&app, Upload::video(clip, "openai", true)).await;
    assert_eq!(res.status, 422, "{}", res.text());
    let msg = res.json()["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("its sound runs 18"), "{msg}");
    assert!(openai.received_requests().await.unwrap().is_empty());
    assert_clean(&app).await;
}

#[tokio::test]
async fn truncated_pictures_are_refused_and_whole_ones_pass() {
    let (app, openai) = app_with(&[]).await;
    let formats =
        [(ImageFormat::Jpeg, "jpg"), (ImageFormat::Png, "png"), (ImageFormat::WebP, "webp"), (ImageFormat::Gif, "gif")];
    let mut paid = 0;
    for (format, ext) in formats {
        let whole = hostile::picture(640, 480, format);
        let name = format!("scene.{ext}");
        let mime = format!("image/{ext}");
        let send =
            |bytes: Vec<u8>| Upload { filename: &name, content_type: &mime, bytes, mode: "openai", audio: false };
        for cut in [1200, whole.len() / 2, whole.len() - 2] {
            let res = upload(&app, send(whole[..cut].to_vec())).await;
            assert_eq!(res.status, 422, "{ext} cut to {cut} of {}: {}", whole.len(), res.text());
            let msg = res.json()["error"].as_str().unwrap().to_owned();
            assert!(msg.starts_with("Invalid file format"), "{msg}");
            assert_clean(&app).await;
        }
        let res = upload(&app, send(whole)).await;
        assert_eq!(res.status, 200, "whole {ext}: {}", res.text());
        paid += 1;
        assert_eq!(engine_calls(&openai.received_requests().await.unwrap()), paid, "only whole pictures are sent");
    }
    assert_clean(&app).await;
}

#[tokio::test]
async fn a_clip_wider_than_4k_is_refused_with_its_size() {
    let (app, openai) = app_with(&[]).await;
    let clip = hostile::wide_mp4(app.data_dir(), 4608, 256);
    let res = upload(&app, Upload::video(clip, "openai", false)).await;
    assert_eq!(res.status, 422, "{}", res.text());
    let msg = res.json()["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("resolution too large") && msg.contains("4608×256"), "{msg}");
    assert!(openai.received_requests().await.unwrap().is_empty());
    assert_clean(&app).await;
}

#[tokio::test]
async fn a_stream_without_a_declared_length_gets_a_bounded_answer() {
    let (app, _openai) = app_with(&[]).await;
    let clip = hostile::live_mkv(app.data_dir(), 3);
    let res = upload(
        &app,
        Upload { filename: "capture.mkv", content_type: "video/x-matroska", bytes: clip, mode: "openai", audio: false },
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["mediaKind"], "video");
    assert_clean(&app).await;
}

#[tokio::test]
async fn playlists_and_concat_lists_under_media_names_are_refused() {
    let (app, openai) = app_with(&[]).await;
    for (what, bytes) in hostile::playlists() {
        for name in ["clip.mp4", "clip.mov", "scene.jpg"] {
            let u =
                Upload { filename: name, content_type: "video/mp4", bytes: bytes.clone(), mode: "openai", audio: true };
            let res = upload(&app, u).await;
            assert_eq!(res.status, 422, "{what} as {name}: {}", res.text());
            assert!(res.json()["error"].as_str().unwrap().contains("Invalid file format"));
        }
    }
    assert!(openai.received_requests().await.unwrap().is_empty());
    assert_clean(&app).await;
}

#[tokio::test]
async fn a_picture_larger_than_the_decode_budget_is_refused_unread() {
    let (app, openai) = app_with(&[("REELFIND_MEDIA_MEMORY_MB", "16")]).await;
    // 3000 × 2000 RGB decodes to 17 MB.
    let res = upload(&app, Upload::image(hostile::picture(3000, 2000, ImageFormat::Png), "openai")).await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("Image too large"), "{}", res.text());
    assert!(openai.received_requests().await.unwrap().is_empty());
    assert_clean(&app).await;
}

#[tokio::test]
async fn a_full_node_answers_503_with_retry_after_before_reading_the_upload() {
    let (app, openai) = app_with(&[("REELFIND_MEDIA_JOBS", "1"), ("REELFIND_MEDIA_QUEUE", "1")]).await;
    // Two identifications already hold the node (one running, one queued).
    let _running = app.state.admission.enter().unwrap();
    let _queued = app.state.admission.enter().unwrap();
    let polled = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = polled.clone();
    let (parts, body) = Upload::image(jpeg(640, 480), "openai").request().into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let stream = futures::stream::once(async move {
        flag.store(true, std::sync::atomic::Ordering::SeqCst);
        Ok::<_, std::io::Error>(bytes)
    });
    let res = app.send(axum::http::Request::from_parts(parts, Body::from_stream(stream))).await;
    assert_eq!(res.status, 503, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().starts_with("Server temporarily unavailable"));
    assert_eq!(res.json()["code"], "server_busy");
    let retry: u64 = res.header(header::RETRY_AFTER.as_str()).expect("Retry-After").parse().unwrap();
    assert!((1..=60).contains(&retry));
    assert!(!polled.load(std::sync::atomic::Ordering::SeqCst), "the upload was not read");
    assert!(openai.received_requests().await.unwrap().is_empty());
    drop(_queued);
    let res = upload(&app, Upload::image(jpeg(640, 480), "openai")).await;
    assert_eq!(res.status, 200, "a place came free: {}", res.text());
    assert_clean(&app).await;
}

#[tokio::test]
async fn gemini_gets_the_sound_track_streamed_as_valid_base64_json() {
    use wiremock::matchers::{body_string_contains, method, path};
    use wiremock::{Mock, ResponseTemplate};
    let s = MockServer::start().await;
    let endpoint = "/v1beta/models/gemini-2.5-flash:generateContent";
    Mock::given(method("POST"))
        .and(path(endpoint))
        .and(body_string_contains("audio/wav"))
        .respond_with(ResponseTemplate::new(200).set_body_json(serde_json::json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": "Follow the white rabbit."}]}, "finishReason": "STOP"}]
        })))
        .with_priority(1)
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path(endpoint))
        .respond_with(ResponseTemplate::new(200).set_body_json(gemini_response(&answer(
            "The Matrix",
            1999,
            "movie",
            0.9,
        ))))
        .with_priority(2)
        .mount(&s)
        .await;
    let app =
        TestApp::with_env([("GEMINI_API_KEY", "g".to_string()), ("GEMINI_BASE_URL", format!("{}/v1beta", s.uri()))])
            .await;
    let clip = hostile::clip_mp4(app.data_dir(), 7, 320, 240, true);
    let res = upload(&app, Upload::video(clip, "google", true)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["audioAnalysisResults"]["transcript"], "Follow the white rabbit.");
    let reqs = s.received_requests().await.unwrap();
    let tr = reqs.iter().find(|r| String::from_utf8_lossy(&r.body).contains("audio/wav")).unwrap();
    let body: serde_json::Value = serde_json::from_slice(&tr.body).expect("the streamed body is JSON");
    use base64::Engine as _;
    let data = body["contents"][0]["parts"][0]["inlineData"]["data"].as_str().unwrap();
    let wav = base64::engine::general_purpose::STANDARD.decode(data).expect("one valid base64 string");
    assert_eq!(&wav[..4], b"RIFF");
    // 16 kHz mono 16-bit: 32,000 bytes a second, about the clip's 7 s (no more).
    assert!((6 * 32_000..9 * 32_000).contains(&wav.len()), "{} bytes", wav.len());
    assert_clean(&app).await;
}

#[tokio::test]
async fn the_library_decode_stops_at_its_budget_and_at_cancel() {
    use reelfind::library::frames::Budget;
    use tokio_util::sync::CancellationToken;
    let (app, _openai) = app_with(&[]).await;
    let folder = crate::library::library_folder();
    let lib = app.state.library.clone();
    let f = folder.path().to_path_buf();
    tokio::task::spawn_blocking(move || lib.add_paths(&[f], &mut reelfind::library::Quiet)).await.unwrap();

    // Ten hours between two frames (the upload path refuses this at its probe; here the
    // decode itself is fenced): ffmpeg's fps filter would fill the gap with 288,000 frames
    // (5 GB). Reading 2 s of input under the child's 1 GiB address-space limit, it answers
    // or fails within seconds, and the child is gone.
    let lying = app.data_dir().join("lying.mp4");
    std::fs::write(&lying, hostile::lying_picture_mp4(app.data_dir(), 36_000, false)).unwrap();
    let lib = app.state.library.clone();
    let path = lying.clone();
    let search = tokio::task::spawn_blocking(move || {
        lib.search_clip_av_within(&path, &Budget::upload(2.0, "mp4", CancellationToken::new()))
    });
    match tokio::time::timeout(std::time::Duration::from_secs(60), search).await.expect("bounded").unwrap() {
        Ok(answer) => assert!(answer.best.is_none(), "a test pattern is not in the library"),
        Err(e) => assert!(format!("{e:#}").contains("Cannot allocate memory"), "{e:#}"),
    }

    // A cancelled token stops a long decode at once, and its ffmpeg with it.
    let long = app.data_dir().join("long.mp4");
    std::fs::write(&long, hostile::clip_mp4(app.data_dir(), 60, 640, 360, true)).unwrap();
    let token = CancellationToken::new();
    let lib = app.state.library.clone();
    let (path, t) = (long.clone(), token.clone());
    let search = tokio::task::spawn_blocking(move || lib.search_clip_av_within(&path, &Budget::upload(61.0, "mp4", t)));
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    token.cancel();
    // The bound only catches a hang (it failed once at 5 s with load average 20 on the
    // 2-core CI box); that the cancel, not the end of the clip, stopped the search is what
    // `is_err` asserts, since an uncancelled search of a test pattern answers Ok.
    let r = tokio::time::timeout(std::time::Duration::from_secs(30), search)
        .await
        .expect("stopped after the cancel")
        .unwrap();
    assert!(r.is_err(), "a cancelled search gives no answer");
    assert_clean(&app).await;
}
