//! Real server processes (`target/.../reelfind`), for what only a running binary shows: its
//! log, and several nodes on one database.
#![allow(dead_code)]
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// One running `reelfind` with its own log file.
pub struct Server {
    child: Child,
    pub origin: String,
    pub log: PathBuf,
}

/// A free port on 127.0.0.1 (bound and released; the server binds it right after).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

impl Server {
    /// Starts the binary with `env` (plus address, public URL, assets and no demo indexing)
    /// and waits until it answers.
    pub async fn start(name: &str, log_dir: &Path, env: &[(&str, String)]) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let port = free_port();
        let origin = format!("http://127.0.0.1:{port}");
        let log = log_dir.join(format!("{name}.log"));
        let file = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_reelfind"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("REELFIND_ADDR", format!("127.0.0.1:{port}"))
            .env("REELFIND_PUBLIC_URL", &origin)
            .env("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
            .env("REELFIND_LIBRARY_DEMO", "false")
            .env("RUST_LOG", "debug")
            .stdout(Stdio::from(file.try_clone().unwrap()))
            .stderr(Stdio::from(file));
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd.spawn().expect("start reelfind");
        let server = Self { child, origin, log };
        server.wait_ready().await;
        server
    }

    async fn wait_ready(&self) {
        let client = reqwest::Client::new();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(120) {
            if client.get(format!("{}/api/settings", self.origin)).send().await.is_ok_and(|r| r.status().is_success()) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        panic!("{} did not start:\n{}", self.origin, self.log_text());
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// SIGTERM, then waits for the process to end (SIGKILL after 20 s).
    pub fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A browser-like client for one server: keeps cookies, sends our Origin on writes.
pub struct Client {
    http: reqwest::Client,
    origin: String,
    pub cookies: std::collections::BTreeMap<String, String>,
}

impl Client {
    pub fn new(origin: &str) -> Self {
        let http = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
        Self { http, origin: origin.to_owned(), cookies: Default::default() }
    }

    /// The same cookies, sending to another server (a load balancer moving the person).
    pub fn to(&self, origin: &str) -> Self {
        Self { http: self.http.clone(), origin: origin.to_owned(), cookies: self.cookies.clone() }
    }

    fn cookie_header(&self) -> String {
        self.cookies.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ")
    }

    fn keep_cookies(&mut self, res: &reqwest::Response) {
        for v in res.headers().get_all("set-cookie") {
            let v = v.to_str().unwrap_or("");
            if let Some((k, val)) = v.split(';').next().unwrap_or("").split_once('=') {
                if val.is_empty() || v.to_ascii_lowercase().contains("max-age=0") {
                    self.cookies.remove(k.trim());
                } else {
                    self.cookies.insert(k.trim().to_owned(), val.to_owned());
                }
            }
        }
    }

    pub async fn send(&mut self, req: reqwest::RequestBuilder) -> (u16, reqwest::header::HeaderMap, String) {
        let req = req.header("origin", &self.origin).header("cookie", self.cookie_header());
        let res = req.send().await.expect("request");
        self.keep_cookies(&res);
        let status = res.status().as_u16();
        let headers = res.headers().clone();
        (status, headers, res.text().await.unwrap_or_default())
    }

    pub async fn get(&mut self, path: &str) -> (u16, String) {
        let url = format!("{}{path}", self.origin);
        let (s, _, b) = self.send(self.http.get(url)).await;
        (s, b)
    }

    pub async fn get_bytes(&mut self, path: &str) -> (u16, Option<String>, Vec<u8>) {
        let url = format!("{}{path}", self.origin);
        let res = self.http.get(url).header("cookie", self.cookie_header()).send().await.expect("request");
        let status = res.status().as_u16();
        let ct = res.headers().get("content-type").and_then(|v| v.to_str().ok()).map(str::to_owned);
        (status, ct, res.bytes().await.unwrap_or_default().to_vec())
    }

    pub async fn post_json(&mut self, path: &str, body: &serde_json::Value) -> (u16, String) {
        let url = format!("{}{path}", self.origin);
        let (s, _, b) = self.send(self.http.post(url).json(body)).await;
        (s, b)
    }

    /// `POST /api/identify` with one image file.
    pub async fn identify(&mut self, file: Vec<u8>, name: &str, mime: &str, mode: &str) -> (u16, String) {
        let url = format!("{}/api/identify", self.origin);
        let form = reqwest::multipart::Form::new()
            .text("mode", mode.to_owned())
            .text("useAudioAnalysis", "false")
            .text("useEnhancedAnalysis", "true")
            .part("file", reqwest::multipart::Part::bytes(file).file_name(name.to_owned()).mime_str(mime).unwrap());
        let (s, _, b) = self.send(self.http.post(url).multipart(form)).await;
        (s, b)
    }
}
