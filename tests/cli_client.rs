//! `reelfind identify FILE|URL --server URL`: the real binary as a client of a real server
//! process, with the key from `REELFIND_API_KEY`.
use std::process::Command;

use serde_json::{Value, json};

use crate::identify_support::{answer, jpeg, openai_fake, tmdb_fake};
use crate::server::{Client, Server};

fn run_cli(args: &[&str], key: Option<&str>) -> (bool, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_reelfind"));
    cmd.env_clear().env("PATH", std::env::var("PATH").unwrap_or_default()).args(args);
    if let Some(k) = key {
        cmd.env("REELFIND_API_KEY", k);
    }
    let out = cmd.output().expect("run reelfind");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn the_cli_identifies_a_file_with_a_key_from_the_environment() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.82)).await;
    let tmdb = tmdb_fake().await;
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("REELFIND_DATA_DIR", dir.path().join("data").display().to_string()),
        ("OPENAI_API_KEY", "sk-test".to_owned()),
        ("OPENAI_BASE_URL", format!("{}/v1", openai.uri())),
        ("TMDB_READ_TOKEN", "tmdb-token".to_owned()),
        ("TMDB_BASE_URL", format!("{}/3", tmdb.uri())),
    ];
    let mut server = Server::start("cli", dir.path(), &env).await;
    let mut me = Client::new(&server.origin);
    let (status, body) = me
        .post_json("/api/register", &json!({"username": "cli", "email": "cli@example.com", "password": "secret1"}))
        .await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = me.post_json("/api/keys", &json!({"name": "terminal"})).await;
    assert_eq!(status, 201, "{body}");
    let key = serde_json::from_str::<Value>(&body).unwrap()["key"].as_str().unwrap().to_owned();

    let file = dir.path().join("scene.jpg");
    std::fs::write(&file, jpeg(800, 450)).unwrap();
    let file = file.display().to_string();
    let origin = server.origin.clone();

    // Readable.
    let (ok, out, err) = run_cli(&["identify", &file, "--server", &origin, "--mode", "openai"], Some(&key));
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(out.starts_with("The Matrix (1999)\n"), "{out}");
    assert!(out.contains("Confidence  82%"), "{out}");
    assert!(out.contains(&format!("{origin}/?id=")), "{out}");

    // JSON, as the server answered, with candidates.
    let (ok, out, err) = run_cli(
        &["identify", &file, "--server", &origin, "--json", "--mode", "openai", "--candidates", "3"],
        Some(&key),
    );
    assert!(ok, "stdout: {out}\nstderr: {err}");
    let r: Value = serde_json::from_str(&out).expect("--json prints JSON");
    assert_eq!(r["title"], "The Matrix");
    assert_eq!(r["candidates"][0]["title"], "The Matrix");

    // Without a key, or with a revoked one: a clear message and a failing status.
    let (ok, _, err) = run_cli(&["identify", &file, "--server", &origin], None);
    assert!(!ok);
    assert!(err.contains("REELFIND_API_KEY"), "{err}");
    let (ok, _, err) =
        run_cli(&["identify", &file, "--server", &origin], Some("rf_0000000000000000000000000000000000000000"));
    assert!(!ok);
    assert!(err.contains("Invalid or revoked API key (HTTP 401)"), "{err}");
    assert_eq!(err.matches("Invalid or revoked API key").count(), 1, "the error is said once: {err}");
    assert!(err.starts_with("reelfind: "), "{err}");
    let (ok, _, err) = run_cli(&["identify", "/no/such/file.jpg", "--server", &origin], Some(&key));
    assert!(!ok);
    assert!(err.contains("cannot open /no/such/file.jpg"), "{err}");

    // A URL goes to the server to fetch; this one is private, so the server refuses it.
    let (ok, _, err) = run_cli(&["identify", "http://127.0.0.1:9/a.jpg", "--server", &origin], Some(&key));
    assert!(!ok);
    assert!(err.contains("private, local or reserved address") && err.contains("(HTTP 422)"), "{err}");
    server.stop();
}

/// Sends a 3 MB upload to `/api/identify` the slow way (the head, a pause in which the server
/// decides, then the body) and returns what the server answered.
async fn refusal_of_an_upload(server: &Server, auth: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // More than the sockets' buffers hold, less than the server reads of a refused body.
    let mut body = b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n\
                     Content-Type: image/jpeg\r\n\r\n"
        .to_vec();
    body.extend(std::iter::repeat_n(b'x', 3 << 20));
    body.extend_from_slice(b"\r\n--b--\r\n");
    let addr = server.origin.trim_start_matches("http://").to_owned();
    let mut conn = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST /api/identify HTTP/1.1\r\nHost: {addr}\r\n{auth}\
         Content-Type: multipart/form-data; boundary=b\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes()).await.unwrap();
    // The server has refused the request by now; the body comes after.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    for part in body.chunks(64 << 10) {
        conn.write_all(part).await.expect("the server still reads the body");
    }
    let mut answer = Vec::new();
    let mut chunk = [0u8; 4096];
    while !String::from_utf8_lossy(&answer).contains("\"code\"") {
        let n = conn.read(&mut chunk).await.expect("the refusal can be read");
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&chunk[..n]);
    }
    String::from_utf8_lossy(&answer).into_owned()
}

/// A refusal that comes before the upload has been sent still reaches the client: the server
/// reads what is left of a small body first, instead of closing the connection under a
/// client that is still writing (which then saw "broken pipe" and not the answer).
#[tokio::test]
async fn a_refused_upload_is_read_before_the_refusal_is_sent() {
    let dir = tempfile::tempdir().unwrap();
    let env = vec![("REELFIND_DATA_DIR", dir.path().join("data").display().to_string())];
    let mut server = Server::start("drain", dir.path(), &env).await;
    let answer =
        refusal_of_an_upload(&server, "Authorization: Bearer rf_0000000000000000000000000000000000000000\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains("Invalid or revoked API key"), "{answer}");
    server.stop();
}

/// The same for a visitor without a key, refused by the handler itself (here: the address's
/// rate limit) after the `Multipart` extractor has taken the body.
#[tokio::test]
async fn a_visitor_refused_before_the_upload_is_read_gets_the_refusal() {
    let dir = tempfile::tempdir().unwrap();
    let env = vec![
        ("REELFIND_DATA_DIR", dir.path().join("data").display().to_string()),
        ("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", "1".to_owned()),
    ];
    let mut server = Server::start("drain-visitor", dir.path(), &env).await;
    // The address's one identification this minute (a form without a file: 400).
    let first = reqwest::Client::new()
        .post(format!("{}/api/identify", server.origin))
        .multipart(reqwest::multipart::Form::new().text("mode", "auto"))
        .send()
        .await
        .unwrap();
    assert_eq!(first.status(), 400);
    let answer = refusal_of_an_upload(&server, "").await;
    assert!(answer.starts_with("HTTP/1.1 429"), "{answer}");
    assert!(answer.contains("rate_limited"), "{answer}");
    server.stop();
}
