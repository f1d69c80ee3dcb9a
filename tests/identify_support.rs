//! Test media, multipart uploads and local fakes of the providers (wiremock, speaking the
//! documented wire formats of provider-apis.md).
#![allow(dead_code)]
use std::io::Cursor;
use std::path::Path;

use axum::body::Body;
use axum::http::{Request, header};
use serde_json::{Value, json};
use wiremock::matchers::{method, path, path_regex};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::{TestApp, TestResponse};

/// A JPEG of the given size (a colour gradient, so it is not trivially compressible).
pub fn jpeg(w: u32, h: u32) -> Vec<u8> {
    let img =
        image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, ((x + y) % 256) as u8]));
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgb8(img).write_to(&mut out, image::ImageFormat::Jpeg).unwrap();
    out.into_inner()
}

pub fn gif(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbaImage::from_pixel(w, h, image::Rgba([10, 20, 30, 255]));
    let mut out = Cursor::new(Vec::new());
    image::DynamicImage::ImageRgba8(img).write_to(&mut out, image::ImageFormat::Gif).unwrap();
    out.into_inner()
}

/// An MP4 made by ffmpeg from its test sources: `seconds` of `testsrc`, with a sine sound
/// track when `audio`.
pub fn mp4(dir: &Path, seconds: u32, audio: bool) -> Vec<u8> {
    let out = dir.join(format!("clip-{seconds}-{audio}.mp4"));
    let mut cmd = std::process::Command::new("ffmpeg");
    cmd.args(["-v", "error", "-y", "-f", "lavfi", "-i", &format!("testsrc=duration={seconds}:size=320x240:rate=10")]);
    if audio {
        cmd.args(["-f", "lavfi", "-i", &format!("sine=frequency=440:duration={seconds}")]);
    }
    cmd.args(["-c:v", "libx264", "-pix_fmt", "yuv420p"]);
    if audio {
        cmd.args(["-c:a", "aac", "-shortest"]);
    }
    let status = cmd.arg(&out).status().expect("ffmpeg runs");
    assert!(status.success(), "ffmpeg failed");
    std::fs::read(out).unwrap()
}

pub struct Upload<'a> {
    pub filename: &'a str,
    pub content_type: &'a str,
    pub bytes: Vec<u8>,
    pub mode: &'a str,
    pub audio: bool,
}

impl<'a> Upload<'a> {
    pub fn image(bytes: Vec<u8>, mode: &'a str) -> Self {
        Self { filename: "scene.jpg", content_type: "image/jpeg", bytes, mode, audio: true }
    }
    pub fn video(bytes: Vec<u8>, mode: &'a str, audio: bool) -> Self {
        Self { filename: "clip.mp4", content_type: "video/mp4", bytes, mode, audio }
    }
    pub fn request(&self) -> Request<Body> {
        let boundary = "----reelfind-test-boundary";
        let mut body = Vec::new();
        for (name, value) in [
            ("mode", self.mode.to_string()),
            ("useAudioAnalysis", self.audio.to_string()),
            ("useEnhancedAnalysis", "true".to_string()),
        ] {
            body.extend_from_slice(
                format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n")
                    .as_bytes(),
            );
        }
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{}\"\r\nContent-Type: {}\r\n\r\n",
                self.filename, self.content_type
            )
            .as_bytes(),
        );
        body.extend_from_slice(&self.bytes);
        body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
        Request::post("/api/identify")
            .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
            .body(Body::from(body))
            .unwrap()
    }
}

/// The older spelling of [`TestApp::upload`]; new tests call the method.
pub async fn upload(app: &TestApp, u: Upload<'_>) -> TestResponse {
    app.upload(&u).await
}

/// Uploads as another guest: no cookies, from the client address `198.51.100.{n}` (each
/// address has its own free identification).
pub async fn upload_as_new_guest(app: &TestApp, u: Upload<'_>, n: u8) -> TestResponse {
    app.clear_cookies();
    let mut req = u.request();
    let addr: std::net::SocketAddr = format!("198.51.100.{n}:40000").parse().unwrap();
    req.extensions_mut().insert(axum::extract::ConnectInfo(addr));
    app.send(req).await
}

/// Files left in `{data_dir}/tmp` (must be none after every request).
pub fn leftovers(app: &TestApp) -> Vec<String> {
    match std::fs::read_dir(app.data_dir().join("tmp")) {
        Err(_) => Vec::new(),
        Ok(rd) => rd.filter_map(|e| e.ok()).map(|e| e.path().display().to_string()).collect(),
    }
}

/// The answer object our schema asks for.
pub fn answer(title: &str, year: i64, media_type: &str, confidence: f64) -> Value {
    json!({"candidates": [{
        "media_type": media_type, "title": title, "year": year, "season": null, "episode": null,
        "confidence": confidence, "imdb_id": null,
        "evidence": ["green-tinted city at night"], "fun_facts": ["The bullet-time rig used 120 still cameras."]
    }]})
}

/// A Chat Completions response carrying `answer` as the message content (OpenAI and xAI).
pub fn chat_completion(answer: &Value) -> Value {
    json!({
        "id": "chatcmpl-test", "object": "chat.completion", "created": 1790000000, "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
            "message": {"role": "assistant", "refusal": null, "annotations": [], "content": answer.to_string()}}],
        "usage": {"prompt_tokens": 1105, "completion_tokens": 48, "total_tokens": 1153}
    })
}

/// An Anthropic Messages response with the forced tool call.
pub fn anthropic_message(answer: &Value) -> Value {
    json!({
        "id": "msg_01Test", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": [{"type": "tool_use", "id": "toolu_01", "name": "report_identification", "input": answer}],
        "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 1700, "output_tokens": 55}
    })
}

/// A Gemini generateContent response with the JSON as text.
pub fn gemini_response(answer: &Value) -> Value {
    json!({
        "candidates": [{"content": {"role": "model", "parts": [{"text": answer.to_string()}]}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": 1290, "candidatesTokenCount": 28, "totalTokenCount": 1318},
        "modelVersion": "gemini-2.5-flash", "responseId": "abc"
    })
}

pub async fn openai_fake(answer: &Value) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(chat_completion(answer)))
        .mount(&s)
        .await;
    s
}

/// TMDB fake: search, details (with append_to_response), and a TV episode.
pub async fn tmdb_fake() -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path("/3/search/movie"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "page": 1, "total_pages": 1, "total_results": 2,
            "results": [
                {"id": 999, "title": "The Matrix Revisited", "release_date": "2001-01-01", "popularity": 3.0, "poster_path": null},
                {"id": 603, "title": "The Matrix", "original_title": "The Matrix", "release_date": "1999-03-31",
                 "popularity": 80.5, "poster_path": "/f89U3ADr1oiB1s9GkdPOEpXUk5H.jpg", "overview": "..."}
            ]
        })))
        .mount(&s)
        .await;
    Mock::given(method("GET"))
        .and(path("/3/movie/603"))
        .respond_with(ResponseTemplate::new(200).set_body_json(matrix_details()))
        .mount(&s)
        .await;
    s
}

pub fn matrix_details() -> Value {
    json!({
        "id": 603, "imdb_id": "tt0133093", "title": "The Matrix", "original_title": "The Matrix",
        "overview": "Set in the 22nd century, The Matrix tells the story of a computer hacker.",
        "tagline": "Welcome to the Real World.", "release_date": "1999-03-31", "runtime": 136,
        "genres": [{"id": 28, "name": "Action"}, {"id": 878, "name": "Science Fiction"}],
        "budget": 63000000, "revenue": 463517383, "poster_path": "/f89U3ADr1oiB1s9GkdPOEpXUk5H.jpg",
        "backdrop_path": "/ncEsesgOJDNrTUED89hYbA117wo.jpg", "vote_average": 8.218, "vote_count": 26000,
        "spoken_languages": [{"english_name": "English", "iso_639_1": "en", "name": "English"}],
        "production_countries": [{"iso_3166_1": "US", "name": "United States of America"}],
        "origin_country": ["US"],
        "credits": {
            "cast": [
                {"id": 6384, "name": "Keanu Reeves", "character": "Neo", "order": 0, "profile_path": "/4D0PpNI0kmP58hgrwGC3wCjxhnm.jpg"},
                {"id": 2975, "name": "Laurence Fishburne", "character": "Morpheus", "order": 1, "profile_path": null}
            ],
            "crew": [
                {"id": 9339, "name": "Lilly Wachowski", "job": "Director", "department": "Directing"},
                {"id": 9340, "name": "Lana Wachowski", "job": "Director", "department": "Directing"},
                {"id": 1, "name": "Joel Silver", "job": "Producer", "department": "Production"}
            ]
        },
        "videos": {"results": [
            {"key": "teaser1", "site": "YouTube", "type": "Teaser", "official": true, "name": "Teaser"},
            {"key": "vKQi3bBA1y8", "site": "YouTube", "type": "Trailer", "official": true, "name": "Official Trailer"},
            {"key": "vim1", "site": "Vimeo", "type": "Trailer", "official": true, "name": "Vimeo"}
        ]},
        "watch/providers": {"id": 603, "results": {
            "US": {
                "link": "https://www.themoviedb.org/movie/603-the-matrix/watch?locale=US",
                "flatrate": [{"provider_id": 8, "provider_name": "Netflix", "logo_path": "/pbpMk2JmcoNnQwx5JGpXngfoWtp.jpg", "display_priority": 1}],
                "rent": [{"provider_id": 10, "provider_name": "Amazon Video", "logo_path": "/5NyLm42TmCqCMOZFvH4fcoSNKEW.jpg", "display_priority": 13}],
                "buy": [{"provider_id": 2, "provider_name": "Apple TV", "logo_path": "/peURlLlr8jggOwK53fJ5wdQl05y.jpg", "display_priority": 4}]
            },
            "DE": {"link": "https://www.themoviedb.org/movie/603/watch?locale=DE",
                   "flatrate": [{"provider_id": 30, "provider_name": "WOW", "logo_path": "/x.jpg", "display_priority": 1}]}
        }},
        "recommendations": {"page": 1, "results": [
            {"id": 604, "title": "The Matrix Reloaded", "release_date": "2003-05-15", "poster_path": "/9TGHDvWrqKBzwDxDodHYXEmOE6J.jpg", "media_type": "movie"}
        ]},
        "external_ids": {"imdb_id": "tt0133093"},
        "release_dates": {"results": [
            {"iso_3166_1": "US", "release_dates": [{"certification": "", "type": 1}, {"certification": "R", "type": 3}]}
        ]}
    })
}

pub async fn omdb_fake() -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("GET"))
        .and(path_regex("^/$"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "Title": "The Matrix", "Year": "1999", "Rated": "R", "Runtime": "136 min", "Director": "Lana Wachowski, Lilly Wachowski",
            "Awards": "Won 4 Oscars. 42 wins & 51 nominations total", "BoxOffice": "$172,076,928", "imdbRating": "8.7",
            "imdbID": "tt0133093", "Type": "movie", "Response": "True"
        })))
        .mount(&s)
        .await;
    s
}

/// The JSON bodies a fake received.
pub async fn bodies(s: &MockServer) -> Vec<Value> {
    s.received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .filter_map(|r| serde_json::from_slice(&r.body).ok())
        .collect()
}
