//! `POST /api/identify` end to end against local fakes of every provider, TMDB and OMDb.
use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use serde_json::Value;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::identify_support::*;
use crate::support::TestApp;

async fn app_with(env: Vec<(String, String)>) -> TestApp {
    TestApp::with_env(env).await
}

fn env(pairs: &[(&str, String)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect()
}

#[tokio::test]
async fn openai_identifies_a_screenshot_and_tmdb_omdb_enrich_it() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.82)).await;
    let tmdb = tmdb_fake().await;
    let omdb = omdb_fake().await;
    let app = app_with(env(&[
        ("OPENAI_API_KEY", "sk-test".into()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "tmdb-token".into()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
        ("OMDB_API_KEY", "omdb-key".into()),
        ("OMDB_BASE_URL", format!("{}/", omdb.uri())),
    ]))
    .await;
    let res = upload(&app, Upload::image(jpeg(1920, 1080), "openai")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["title"], "The Matrix");
    assert_eq!(r["id"], 603);
    assert_eq!(r["year"], "1999");
    assert_eq!(r["type"], "movie");
    assert_eq!(r["runtime"], "2h 16m");
    assert_eq!(r["director"], "Lilly Wachowski, Lana Wachowski");
    assert_eq!(r["rating"], 8.2);
    assert_eq!(r["confidence"], 0.82);
    assert_eq!(r["confidenceScore"], 0.82);
    assert_eq!(r["genres"], serde_json::json!(["Action", "Science Fiction"]));
    assert_eq!(r["posterUrl"], "https://image.tmdb.org/t/p/w500/f89U3ADr1oiB1s9GkdPOEpXUk5H.jpg");
    assert_eq!(r["trailerUrl"], "https://www.youtube.com/watch?v=vKQi3bBA1y8");
    assert_eq!(r["trailers"][0]["embedUrl"], "https://www.youtube.com/embed/vKQi3bBA1y8");
    assert_eq!(r["trailers"].as_array().unwrap().len(), 2, "Vimeo is left out");
    assert_eq!(r["cast"][0]["name"], "Keanu Reeves");
    assert_eq!(r["cast"][0]["character"], "Neo");
    assert_eq!(r["cast"][0]["profileUrl"], "https://image.tmdb.org/t/p/w185/4D0PpNI0kmP58hgrwGC3wCjxhnm.jpg");
    assert_eq!(r["language"], "English");
    assert_eq!(r["country"], "United States of America");
    assert_eq!(r["classification"], "R");
    assert_eq!(r["streamingPlatforms"]["flatrate"][0]["name"], "Netflix");
    assert_eq!(r["streamingPlatforms"]["rent"][0]["name"], "Amazon Video");
    assert_eq!(
        r["streamingPlatforms"]["buy"][0]["logoUrl"],
        "https://image.tmdb.org/t/p/w92/peURlLlr8jggOwK53fJ5wdQl05y.jpg"
    );
    assert_eq!(r["streamingPlatforms"]["link"], "https://www.themoviedb.org/movie/603-the-matrix/watch?locale=US");
    assert_eq!(r["similarMovies"][0]["title"], "The Matrix Reloaded");
    assert_eq!(r["similarMovies"][0]["year"], "2003");
    assert_eq!(r["boxOffice"]["budget"], "$63,000,000");
    assert_eq!(r["boxOffice"]["worldwide"], "$463,517,383");
    assert_eq!(r["boxOffice"]["domestic"], "$172,076,928");
    assert_eq!(r["awards"][0]["organization"], "Academy Awards");
    assert_eq!(r["awards"][0]["result"], "Won");
    assert_eq!(r["funFacts"][0], "The bullet-time rig used 120 still cameras.");
    assert_eq!(r["imdbId"], "tt0133093");
    assert_eq!(r["engine"], "openai");
    assert_eq!(r["mode"], "openai");
    assert_eq!(r["detailsUnavailable"], false);
    assert!(r["audioAnalysisResults"].is_null(), "stills have no audio analysis");

    // What our client sent OpenAI.
    let sent = openai.received_requests().await.unwrap();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].headers.get("authorization").unwrap(), "Bearer sk-test");
    let body: Value = serde_json::from_slice(&sent[0].body).unwrap();
    assert_eq!(body["model"], "gpt-4.1-mini");
    assert_eq!(body["response_format"]["type"], "json_schema");
    assert_eq!(body["response_format"]["json_schema"]["strict"], true);
    assert_eq!(body["response_format"]["json_schema"]["schema"]["additionalProperties"], false);
    let parts = body["messages"][1]["content"].as_array().unwrap();
    let image = parts.iter().find(|p| p["type"] == "image_url").unwrap();
    let url = image["image_url"]["url"].as_str().unwrap();
    assert!(url.starts_with("data:image/jpeg;base64,/9j/"), "{}", &url[..40]);
    // The 1920 px frame was scaled to the 1568 px provider bound.
    use base64::Engine as _;
    let jpeg_bytes = base64::engine::general_purpose::STANDARD.decode(&url["data:image/jpeg;base64,".len()..]).unwrap();
    assert_eq!(image::load_from_memory(&jpeg_bytes).unwrap().width(), 1568);

    // What our client sent TMDB and OMDb.
    let t = tmdb.received_requests().await.unwrap();
    assert!(t.iter().all(|q| q.headers.get("authorization").unwrap() == "Bearer tmdb-token"));
    let details = t.iter().find(|q| q.url.path() == "/3/movie/603").unwrap();
    let append = details.url.query_pairs().find(|(k, _)| k == "append_to_response").unwrap().1.to_string();
    for part in ["credits", "videos", "watch/providers", "recommendations", "external_ids"] {
        assert!(append.contains(part), "{append}");
    }
    let o = omdb.received_requests().await.unwrap();
    assert!(o[0].url.query_pairs().any(|(k, v)| k == "i" && v == "tt0133093"));
    assert!(o[0].url.query_pairs().any(|(k, v)| k == "apikey" && v == "omdb-key"));

    // Stored and shareable.
    let id = r["identificationId"].as_str().unwrap();
    assert_eq!(id.len(), 22);
    let again = app.get(&format!("/api/identification/{id}")).await;
    assert_eq!(again.status, 200);
    assert_eq!(again.json()["title"], "The Matrix");
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));
}

#[tokio::test]
async fn anthropic_gets_base64_blocks_and_a_forced_tool() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .respond_with(ResponseTemplate::new(200).set_body_json(anthropic_message(&answer("Heat", 1995, "movie", 0.77))))
        .mount(&s)
        .await;
    let app = app_with(env(&[("ANTHROPIC_API_KEY", "sk-ant".into()), ("ANTHROPIC_BASE_URL", s.uri())])).await;
    let res = upload(&app, Upload::image(jpeg(640, 360), "anthropic")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["title"], "Heat");
    assert_eq!(r["engine"], "anthropic");
    assert_eq!(r["detailsUnavailable"], true);
    // Visitors read a neutral sentence; the reason tells an administrator's view what to set up.
    assert_eq!(r["notice"], "Movie details are unavailable right now. Showing what the AI engine recognised.");
    assert_eq!(r["detailsReason"], "noCatalogKey");
    let req = &s.received_requests().await.unwrap()[0];
    assert_eq!(req.headers.get("x-api-key").unwrap(), "sk-ant");
    assert_eq!(req.headers.get("anthropic-version").unwrap(), "2023-06-01");
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert!(body["max_tokens"].as_u64().unwrap() > 0);
    let content = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "image", "image first");
    assert_eq!(content[0]["source"]["type"], "base64");
    assert_eq!(content[0]["source"]["media_type"], "image/jpeg");
    assert!(content[0]["source"]["data"].as_str().unwrap().starts_with("/9j/"));
    assert_eq!(body["tool_choice"]["type"], "tool");
    assert_eq!(body["tools"][0]["name"], body["tool_choice"]["name"]);
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
}

#[tokio::test]
async fn gemini_gets_inline_data_and_a_json_schema() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:generateContent"))
        .respond_with(ResponseTemplate::new(200).set_body_json(gemini_response(&answer("Jaws", 1975, "movie", 0.88))))
        .mount(&s)
        .await;
    let app =
        app_with(env(&[("GEMINI_API_KEY", "g-key".into()), ("GEMINI_BASE_URL", format!("{}/v1beta", s.uri()))])).await;
    let res = upload(&app, Upload::image(jpeg(800, 600), "google")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "Jaws");
    assert_eq!(res.json()["engine"], "google");
    let req = &s.received_requests().await.unwrap()[0];
    assert_eq!(req.headers.get("x-goog-api-key").unwrap(), "g-key");
    let body: Value = serde_json::from_slice(&req.body).unwrap();
    let parts = body["contents"][0]["parts"].as_array().unwrap();
    assert_eq!(parts[0]["inlineData"]["mimeType"], "image/jpeg");
    assert!(parts[0]["inlineData"]["data"].as_str().unwrap().starts_with("/9j/"));
    assert_eq!(body["generationConfig"]["responseMimeType"], "application/json");
    assert_eq!(body["generationConfig"]["responseJsonSchema"]["type"], "object");
}

#[tokio::test]
async fn xai_speaks_chat_completions_and_its_errors_are_mapped() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(serde_json::json!({
            "code": "Client specified an invalid argument", "error": "Incorrect API key provided: xa***."
        })))
        .mount(&s)
        .await;
    let app = app_with(env(&[("XAI_API_KEY", "xai-key".into()), ("XAI_BASE_URL", format!("{}/v1", s.uri()))])).await;
    let res = upload(&app, Upload::image(jpeg(640, 360), "xai")).await;
    assert_eq!(res.status, 502, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("AI engine"));
    let reqs = s.received_requests().await.unwrap();
    assert_eq!(reqs.len(), 1, "a 400 is not retried");
    assert_eq!(reqs[0].headers.get("authorization").unwrap(), "Bearer xai-key");
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["model"], "grok-4.3");
    assert_eq!(body["messages"][1]["content"][1]["type"], "image_url");
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after", "0")
                .set_body_json(serde_json::json!({"error": {"message": "Rate limit", "type": "requests", "param": null, "code": "rate_limit_exceeded"}})),
        )
        .up_to_n_times(1)
        .mount(&s)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(&answer("Alien", 1979, "movie", 0.9))))
        .mount(&s)
        .await;
    let app = app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", s.uri()))])).await;
    let res = upload(&app, Upload::image(jpeg(320, 200), "openai")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "Alien");
    assert_eq!(s.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn ensemble_agreement_raises_confidence_and_a_failing_engine_abstains() {
    // Each fake answers only at its provider's path with its own key: a request sent
    // elsewhere, or with another engine's key, gets a 404 and costs that engine its vote.
    let openai = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer a"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(&answer(
            "The Matrix",
            1999,
            "movie",
            0.7,
        ))))
        .mount(&openai)
        .await;
    let gemini = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1beta/models/gemini-2.5-flash:generateContent"))
        .and(header("x-goog-api-key", "b"))
        .respond_with(ResponseTemplate::new(200).set_body_json(gemini_response(&answer("Matrix", 1999, "movie", 0.7))))
        .mount(&gemini)
        .await;
    // xAI hangs past the deadline: it costs its own vote, not the request.
    let xai = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer c"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_completion(&answer("Dark City", 1998, "movie", 0.8)))
                .set_delay(std::time::Duration::from_secs(30)),
        )
        .mount(&xai)
        .await;
    let anthropic = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "d"))
        .respond_with(ResponseTemplate::new(529).set_body_json(
            serde_json::json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
        ))
        .mount(&anthropic)
        .await;
    let app = app_with(env(&[
        ("OPENAI_API_KEY", "a".into()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("GEMINI_API_KEY", "b".into()),
        ("GEMINI_BASE_URL", format!("{}/v1beta", gemini.uri())),
        ("XAI_API_KEY", "c".into()),
        ("XAI_BASE_URL", format!("{}/v1", xai.uri())),
        ("ANTHROPIC_API_KEY", "d".into()),
        ("ANTHROPIC_BASE_URL", anthropic.uri()),
        ("REELFIND_IDENTIFY_TIMEOUT_SECS", "4".into()),
    ]))
    .await;
    let res = upload(&app, Upload::image(jpeg(640, 360), "ensemble")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    // Without a catalog the title is the spelling of one of the agreeing engines.
    assert!(r["title"] == "The Matrix" || r["title"] == "Matrix", "{}", r["title"]);
    assert_eq!(r["engine"], "ensemble");
    assert_eq!(r["confidence"], 0.91, "two engines at 0.7 agree");
    let votes = r["engineVotes"].as_array().unwrap();
    assert_eq!(votes.len(), 4);
    let vote = |e: &str| votes.iter().find(|v| v["engine"] == e).unwrap().clone();
    assert_eq!(vote("openai")["agreed"], true);
    assert_eq!(vote("google")["agreed"], true);
    assert_eq!(vote("xai")["agreed"], false);
    assert!(vote("xai")["error"].as_str().unwrap().contains("deadline"), "{}", vote("xai"));
    assert!(vote("anthropic")["error"].is_string(), "overloaded engine abstains");

    // What each engine was sent: its own model, in its own wire format, and the same picture.
    let one = |reqs: Vec<wiremock::Request>, who: &str| -> Value {
        assert!(!reqs.is_empty(), "{who} was never asked");
        serde_json::from_slice(&reqs[0].body).unwrap_or_else(|e| panic!("{who} was sent no JSON: {e}"))
    };
    let sent = one(openai.received_requests().await.unwrap(), "openai");
    assert_eq!(sent["model"], "gpt-4.1-mini");
    let openai_image = data_url_base64(&sent["messages"][1]["content"], "openai");
    let sent = one(xai.received_requests().await.unwrap(), "xai");
    assert_eq!(sent["model"], "grok-4.3");
    let xai_image = data_url_base64(&sent["messages"][1]["content"], "xai");
    let sent = one(gemini.received_requests().await.unwrap(), "gemini");
    let parts = sent["contents"][0]["parts"].as_array().expect("gemini parts");
    let inline = parts.iter().find(|p| p["inlineData"].is_object()).expect("gemini got the picture inline");
    assert_eq!(inline["inlineData"]["mimeType"], "image/jpeg");
    let gemini_image = inline["inlineData"]["data"].as_str().unwrap().to_owned();
    let anthropic_reqs = anthropic.received_requests().await.unwrap();
    for req in &anthropic_reqs {
        assert_eq!(req.headers.get("anthropic-version").unwrap(), "2023-06-01");
    }
    let sent = one(anthropic_reqs, "anthropic");
    assert_eq!(sent["model"], "claude-sonnet-4-6");
    let block = &sent["messages"][0]["content"][0];
    assert_eq!((block["type"].as_str(), block["source"]["media_type"].as_str()), (Some("image"), Some("image/jpeg")));
    let anthropic_image = block["source"]["data"].as_str().unwrap().to_owned();
    use base64::Engine as _;
    let picture = |b64: &str| {
        let bytes = base64::engine::general_purpose::STANDARD.decode(b64).expect("base64");
        let img = image::load_from_memory(&bytes).expect("a picture");
        (img.width(), img.height())
    };
    assert_eq!(picture(&openai_image), (640, 360));
    for (who, img) in [("xai", &xai_image), ("gemini", &gemini_image), ("anthropic", &anthropic_image)] {
        assert_eq!(img, &openai_image, "{who} was sent another picture than openai");
    }
}

/// The base64 of the one `data:image/jpeg` URL among a Chat Completions message's parts.
fn data_url_base64(parts: &Value, who: &str) -> String {
    let urls: Vec<&str> = parts
        .as_array()
        .unwrap_or_else(|| panic!("{who}: no content parts"))
        .iter()
        .filter(|p| p["type"] == "image_url")
        .filter_map(|p| p["image_url"]["url"].as_str())
        .collect();
    assert_eq!(urls.len(), 1, "{who}: one picture");
    urls[0].strip_prefix("data:image/jpeg;base64,").unwrap_or_else(|| panic!("{who}: {}", &urls[0][..30])).to_owned()
}

#[tokio::test]
async fn no_engine_configured_is_503_naming_the_variables() {
    let app = TestApp::new().await;
    let res = upload(&app, Upload::image(jpeg(320, 200), "auto")).await;
    assert_eq!(res.status, 503);
    let msg = res.json()["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("OPENAI_API_KEY") && msg.contains("GEMINI_API_KEY"), "{msg}");
    assert_eq!(res.json()["code"], "engine_unavailable");
    let res = upload(&app, Upload::image(jpeg(320, 200), "anthropic")).await;
    assert_eq!(res.status, 503);
    assert!(res.json()["error"].as_str().unwrap().contains("ANTHROPIC_API_KEY"));
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn too_large_is_413_with_the_spec_text() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "max_file_size", "1").await.unwrap();
    let mut big = jpeg(64, 64);
    big.resize(1024 * 1024 + 10, 0);
    let res = upload(&app, Upload::image(big, "auto")).await;
    assert_eq!(res.status, 413);
    assert_eq!(res.json()["error"], "File too large. Maximum allowed size is 1MB.");
    assert_eq!(res.json()["code"], "file_too_large");
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn a_text_file_named_jpg_is_422() {
    let app = TestApp::new().await;
    let res = upload(&app, Upload::image(b"just some text, not a picture at all\n".repeat(20), "auto")).await;
    assert_eq!(res.status, 422);
    let msg = res.json()["error"].as_str().unwrap().to_owned();
    assert!(msg.contains("Invalid file format"), "{msg}");
    assert!(msg.contains("jpg, jpeg, png, webp, mp4, mov"), "{msg}");
    assert_eq!(res.json()["code"], "invalid_file_format");
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn a_type_outside_the_allowed_list_is_422_with_the_spec_text() {
    let openai = openai_fake(&answer("X", 2000, "movie", 0.5)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    let res = upload(
        &app,
        Upload { filename: "a.gif", content_type: "image/gif", bytes: gif(20, 20), mode: "auto", audio: false },
    )
    .await;
    assert_eq!(res.status, 422);
    assert_eq!(
        res.json()["error"],
        "File type \"gif\" not supported. Please upload one of these formats: jpg, jpeg, png, webp, mp4, mov."
    );
    assert!(openai.received_requests().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_corrupt_image_is_422_and_no_engine_is_paid() {
    let openai = openai_fake(&answer("X", 2000, "movie", 0.5)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    let mut broken = jpeg(400, 300);
    broken.truncate(300);
    let res = upload(&app, Upload::image(broken, "openai")).await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("corrupt"));
    assert!(openai.received_requests().await.unwrap().is_empty());
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn a_video_without_audio_works_and_says_so() {
    let openai = openai_fake(&answer("Test Pattern", 2001, "movie", 0.6)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    let clip = mp4(app.data_dir(), 4, false);
    let res = upload(&app, Upload::video(clip, "openai", true)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(r["mediaKind"], "video");
    assert_eq!(r["audioAnalysisResults"]["requested"], true);
    assert_eq!(r["audioAnalysisResults"]["hasAudio"], false);
    assert!(r["audioAnalysisResults"]["summary"].as_str().unwrap().contains("no sound track"));
    let body = &bodies(&openai).await[0];
    let images = body["messages"][1]["content"].as_array().unwrap().iter().filter(|p| p["type"] == "image_url").count();
    assert!((2..=6).contains(&images), "{images} frames");
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));
}

#[tokio::test]
async fn a_clip_with_audio_is_transcribed_and_the_transcript_reaches_the_engine() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.9)).await;
    Mock::given(method("POST"))
        .and(path("/v1/audio/transcriptions"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(
                serde_json::json!({"text": "I know kung fu.", "usage": {"type": "duration", "seconds": 3}}),
            ),
        )
        .mount(&openai)
        .await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    let clip = mp4(app.data_dir(), 3, true);
    let res = upload(&app, Upload::video(clip, "openai", true)).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let a = &res.json()["audioAnalysisResults"];
    assert_eq!(a["hasAudio"], true);
    assert_eq!(a["transcribed"], true);
    assert_eq!(a["transcript"], "I know kung fu.");
    let reqs = openai.received_requests().await.unwrap();
    let tr = reqs.iter().find(|r| r.url.path() == "/v1/audio/transcriptions").unwrap();
    let ct = tr.headers.get("content-type").unwrap().to_str().unwrap();
    assert!(ct.starts_with("multipart/form-data"), "{ct}");
    let form = String::from_utf8_lossy(&tr.body);
    assert!(form.contains("name=\"model\"") && form.contains("gpt-4o-mini-transcribe"));
    assert!(form.contains("filename=\"audio.wav\""));
    let chat = reqs.iter().find(|r| r.url.path() == "/v1/chat/completions").unwrap();
    assert!(String::from_utf8_lossy(&chat.body).contains("I know kung fu."));
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));
}

#[tokio::test]
async fn a_guest_gets_one_free_identification() {
    let openai = openai_fake(&answer("Heat", 1995, "movie", 0.8)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    let first = upload(&app, Upload::image(jpeg(320, 200), "auto")).await;
    assert_eq!(first.status, 200, "{}", first.text());
    assert!(app.cookie("rf_guest").is_some(), "a signed guest cookie is set");
    let second = upload(&app, Upload::image(jpeg(321, 200), "auto")).await;
    assert_eq!(second.status, 403);
    assert_eq!(second.json()["requiresAuth"], true);
    assert_eq!(second.json()["code"], "sign_in_required");
    // The address counts too: a client that drops its cookie gets no second try from the
    // same address (an IPv6 address counts as its /64), while another address gets its own.
    let from = |ip: &str, i: u32| {
        let mut req = Upload::image(jpeg(330 + i, 200), "auto").request();
        req.extensions_mut().insert(ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 5555)));
        req
    };
    let mut statuses = Vec::new();
    for (i, ip) in ["203.0.113.7", "203.0.113.7", "2001:db8:1:2::1", "2001:db8:1:2:ffff::9", "2001:db8:1:3::1"]
        .into_iter()
        .enumerate()
    {
        app.clear_cookies();
        statuses.push(app.send(from(ip, i as u32)).await.status.as_u16());
    }
    assert_eq!(statuses, vec![200, 403, 200, 403, 200]);
    assert_eq!(openai.received_requests().await.unwrap().len(), 4);
}

#[tokio::test]
async fn too_many_requests_is_429() {
    let app = app_with(env(&[("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", "2".into())])).await;
    // The limit counts requests, whatever they end with: the first two are let through (and
    // refused by the engine check, 503), the third is the limit's.
    let mut statuses = Vec::new();
    for _ in 0..3 {
        statuses.push(upload(&app, Upload::image(jpeg(32, 32), "auto")).await.status.as_u16());
    }
    assert_eq!(statuses, [503, 503, 429], "exactly the first two are let through");
    let res = upload(&app, Upload::image(jpeg(32, 32), "auto")).await;
    assert_eq!(res.status, 429);
    assert_eq!(res.json()["error"], "Too many requests. Please wait a moment before trying again.");
    assert_eq!(res.json()["code"], "rate_limited", "{}", res.text());
    let retry: u64 = res.header("retry-after").expect("Retry-After").parse().expect("Retry-After in seconds");
    assert!((1..=60).contains(&retry), "the window is a minute: Retry-After {retry}");
    assert_eq!(res.json()["retryAfter"], retry, "the body says the same: {}", res.text());
}

#[tokio::test]
async fn past_the_deadline_is_504_and_nothing_is_left() {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_completion(&answer("Slow", 2000, "movie", 0.9)))
                .set_delay(std::time::Duration::from_secs(5)),
        )
        .mount(&s)
        .await;
    let app = app_with(env(&[
        ("OPENAI_API_KEY", "k".into()),
        ("OPENAI_BASE_URL", format!("{}/v1", s.uri())),
        ("REELFIND_IDENTIFY_TIMEOUT_SECS", "1".into()),
    ]))
    .await;
    let res = upload(&app, Upload::image(jpeg(320, 200), "openai")).await;
    assert_eq!(res.status, 504, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("timed out"));
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn the_same_file_and_mode_reuses_the_stored_answer() {
    let openai = openai_fake(&answer("Heat", 1995, "movie", 0.8)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    let file = jpeg(300, 200);
    let first = upload(&app, Upload::image(file.clone(), "openai")).await;
    assert_eq!(first.status, 200);
    let second = upload_as_new_guest(&app, Upload::image(file.clone(), "openai"), 1).await;
    assert_eq!(second.status, 200, "{}", second.text());
    // Another person's answer is reused without saying so (tests/hardening.rs: what it keeps).
    assert_eq!(second.json()["cached"], false);
    assert_eq!(second.json()["title"], "Heat");
    assert_ne!(second.json()["identificationId"], first.json()["identificationId"]);
    assert_eq!(openai.received_requests().await.unwrap().len(), 1, "the engine was paid once");
    let other_mode = upload_as_new_guest(&app, Upload::image(file, "auto"), 2).await;
    assert_eq!(other_mode.status, 200);
    assert_eq!(other_mode.json()["cached"], false);
}

#[tokio::test]
async fn models_report_real_availability_and_follow_settings() {
    let app = app_with(env(&[("OPENAI_API_KEY", "k".into()), ("GEMINI_API_KEY", "g".into())])).await;
    let m = app.get("/api/models").await.json();
    assert_eq!(m["available"]["openai"], true);
    assert_eq!(m["available"]["google"], true);
    assert_eq!(m["available"]["xai"], false);
    assert_eq!(m["available"]["anthropic"], false);
    assert_eq!(m["available"]["ensemble"], true);
    assert_eq!(m["recommended"], "google");
    app.state.settings.set(&app.db, "allowed_engines", "openai,anthropic,ensemble").await.unwrap();
    let m = app.get("/api/models").await.json();
    assert_eq!(m["available"]["google"], false);
    assert_eq!(m["available"]["ensemble"], false, "one engine cannot vote");
    assert_eq!(m["recommended"], "openai");
    // A key from the admin settings counts too, and never leaks through /api/settings.
    app.state.settings.set(&app.db, "anthropic_api_key", "from-admin").await.unwrap();
    let m = app.get("/api/models").await.json();
    assert_eq!(m["available"]["anthropic"], true);
    assert!(app.get("/api/settings").await.json().get("anthropic_api_key").is_none());
}

#[tokio::test]
async fn unknown_identification_is_404_with_the_spec_text() {
    let app = TestApp::new().await;
    let res = app.get("/api/identification/AAAAAAAAAAAAAAAAAAAAAA").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "This shared identification link is no longer available");
    assert_eq!(app.get("/api/identification/..%2F..").await.status, 404);
}

#[tokio::test]
async fn unknown_mode_is_400() {
    let app = TestApp::new().await;
    let res = upload(&app, Upload::image(jpeg(32, 32), "bard")).await;
    assert_eq!(res.status, 400);
    assert!(leftovers(&app).is_empty());
}

/// Inserts an EXIF APP1 segment with this orientation right after the JPEG's SOI marker.
fn with_exif_orientation(jpeg: &[u8], orientation: u16) -> Vec<u8> {
    let mut tiff = Vec::new();
    tiff.extend_from_slice(b"MM\x00\x2a\x00\x00\x00\x08"); // big-endian TIFF, IFD at 8
    tiff.extend_from_slice(&1u16.to_be_bytes()); // one entry
    tiff.extend_from_slice(&0x0112u16.to_be_bytes()); // Orientation
    tiff.extend_from_slice(&3u16.to_be_bytes()); // SHORT
    tiff.extend_from_slice(&1u32.to_be_bytes()); // count
    tiff.extend_from_slice(&orientation.to_be_bytes());
    tiff.extend_from_slice(&[0, 0]);
    tiff.extend_from_slice(&0u32.to_be_bytes()); // no next IFD
    let mut app1 = b"Exif\x00\x00".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = jpeg[..2].to_vec();
    out.extend_from_slice(&[0xFF, 0xE1]);
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&jpeg[2..]);
    out
}

fn sent_image(body: &Value) -> image::DynamicImage {
    use base64::Engine as _;
    let url = body["messages"][1]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["type"] == "image_url")
        .unwrap()["image_url"]["url"]
        .as_str()
        .unwrap()
        .to_owned();
    let bytes = base64::engine::general_purpose::STANDARD.decode(&url["data:image/jpeg;base64,".len()..]).unwrap();
    image::load_from_memory(&bytes).unwrap()
}

#[tokio::test]
async fn exif_orientation_is_applied_before_the_engine_sees_the_picture() {
    let openai = openai_fake(&answer("Heat", 1995, "movie", 0.8)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    // Stored landscape 400x200, EXIF says "rotate 90° clockwise": the engine gets 200x400.
    let res = upload(&app, Upload::image(with_exif_orientation(&jpeg(400, 200), 6), "openai")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let img = sent_image(&bodies(&openai).await[0]);
    assert_eq!((img.width(), img.height()), (200, 400));
}

#[tokio::test]
async fn a_decompression_bomb_is_refused_without_decoding() {
    let openai = openai_fake(&answer("X", 2000, "movie", 0.5)).await;
    let app =
        app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", openai.uri()))])).await;
    // A small JPEG whose frame header claims 30000x30000 pixels.
    let mut bomb = jpeg(64, 64);
    let sof = bomb.windows(2).position(|w| w == [0xFF, 0xC0]).expect("baseline SOF0");
    bomb[sof + 5..sof + 7].copy_from_slice(&30000u16.to_be_bytes());
    bomb[sof + 7..sof + 9].copy_from_slice(&30000u16.to_be_bytes());
    let res = upload(&app, Upload::image(bomb, "openai")).await;
    assert_eq!(res.status, 422, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().contains("too large"), "{}", res.text());
    assert!(openai.received_requests().await.unwrap().is_empty());
    assert!(leftovers(&app).is_empty());
}

#[tokio::test]
async fn a_client_that_disconnects_mid_upload_leaves_nothing_behind() {
    let app = app_with(env(&[("OPENAI_API_KEY", "k".into())])).await;
    let full = Upload::image(jpeg(800, 600), "openai").request();
    let (parts, body) = full.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    let half = bytes.slice(..bytes.len() / 2);
    let stream = futures::stream::iter(vec![
        Ok::<_, std::io::Error>(half),
        Err(std::io::Error::new(std::io::ErrorKind::ConnectionReset, "client went away")),
    ]);
    let req = axum::http::Request::from_parts(parts, axum::body::Body::from_stream(stream));
    let res = app.send(req).await;
    assert_eq!(res.status, 400, "{}", res.text());
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));
}

#[tokio::test]
async fn an_abandoned_request_deletes_its_files() {
    use tower::ServiceExt;
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_completion(&answer("Slow", 2000, "movie", 0.9)))
                .set_delay(std::time::Duration::from_secs(10)),
        )
        .mount(&s)
        .await;
    let app = app_with(env(&[("OPENAI_API_KEY", "k".into()), ("OPENAI_BASE_URL", format!("{}/v1", s.uri()))])).await;
    let mut req = Upload::image(jpeg(640, 480), "openai").request();
    req.headers_mut().insert(axum::http::header::ORIGIN, crate::support::ORIGIN.parse().unwrap());
    let router = app.router.clone();
    let task = tokio::spawn(async move { router.oneshot(req).await });
    // Wait until the engine is being asked (the upload is on disk), then hang up.
    for _ in 0..100 {
        if !s.received_requests().await.unwrap_or_default().is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(!leftovers(&app).is_empty(), "the request folder exists while it runs");
    task.abort();
    let _ = task.await;
    assert!(leftovers(&app).is_empty(), "{:?}", leftovers(&app));
}

#[tokio::test]
async fn catalog_answers_are_cached() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.82)).await;
    let tmdb = tmdb_fake().await;
    let app = app_with(env(&[
        ("OPENAI_API_KEY", "k".into()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "t".into()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
        ("REELFIND_IDENTIFY_PER_MINUTE", "100".into()),
    ]))
    .await;
    for i in 0..2 {
        let res = upload_as_new_guest(&app, Upload::image(jpeg(300 + i, 200), "openai"), i as u8).await;
        assert_eq!(res.status, 200, "{}", res.text());
        assert_eq!(res.json()["id"], 603);
    }
    assert_eq!(openai.received_requests().await.unwrap().len(), 2, "two different files, two engine calls");
    let calls = tmdb.received_requests().await.unwrap();
    assert_eq!(calls.iter().filter(|r| r.url.path() == "/3/movie/603").count(), 1, "details fetched once");
    assert_eq!(calls.iter().filter(|r| r.url.path() == "/3/search/movie").count(), 1, "search made once");
}
