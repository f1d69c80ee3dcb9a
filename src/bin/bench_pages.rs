//! Requests per second of the public pages and API against a bare axum program answering the
//! same bytes. Not a test: it reports, it does not assert.
//!
//! Run: `cargo build --release --bin reelfind --bin bench_pages && nice -n 10 target/release/bench_pages`
//! (`--secs 5 --rounds 3 --connections 32 --threads 2 --server target/release/reelfind`).
//! Needs `wrk` (Debian: `apt-get install wrk`).
//!
//! It starts the release server with its defaults on a fresh SQLite data folder (the seeded
//! blog, no demo indexing so that nothing else runs), reads each route once as an anonymous
//! visitor, and starts a second copy of itself as the bare server: plain axum on a tokio
//! multi-thread runtime, each route answering those bytes with the same `Content-Type` (and
//! `Content-Encoding`). Then, round after round, `wrk` measures each route on each server,
//! the order rotated every round, and prints requests/s, the load average before each run,
//! the medians and their ratio. Targets (issue 43): `/api/settings` at least 0.5 of bare,
//! every page at least 0.3, `/healthz` at least 0.8.
//!
//! * `--baseline PATH`: another build of the server (the one before a change), started on a
//!   data folder of its own and measured in the same rounds, so that old and new meet the
//!   same machine load.
//! * `--gzip`: every request says `Accept-Encoding: gzip`, as browsers and crawlers do; the
//!   bare server answers the gzipped bytes Reelfind gave.
#[path = "common/proc.rs"]
mod proc;
use proc::{arg, loadavg};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("its address").port()
}

/// A child process killed when dropped.
struct Proc(Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_listening(port: u16, what: &str) {
    let until = Instant::now() + Duration::from_secs(120);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "{what} did not start listening");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One route as the benchmark sees it: what Reelfind answered to an anonymous GET.
struct Route {
    path: String,
    content_type: String,
    /// `Content-Encoding` of the answer ("" for none).
    encoding: String,
    body: Vec<u8>,
}

fn main() {
    if let Some(dir) = arg("--bare") {
        bare::serve(Path::new(&dir), arg("--port").and_then(|p| p.parse().ok()).expect("--port"));
        return;
    }
    let secs: u64 = arg("--secs").and_then(|s| s.parse().ok()).unwrap_or(5);
    let rounds: usize = arg("--rounds").and_then(|s| s.parse().ok()).unwrap_or(3);
    let connections: u32 = arg("--connections").and_then(|s| s.parse().ok()).unwrap_or(32);
    let threads: u32 = arg("--threads").and_then(|s| s.parse().ok()).unwrap_or(2);
    let exe = std::env::current_exe().expect("own path");
    let server_bin =
        arg("--server").map(PathBuf::from).unwrap_or_else(|| exe.parent().expect("bin folder").join("reelfind"));
    assert!(server_bin.exists(), "no server binary at {} (build it with --release)", server_bin.display());
    assert!(
        Command::new("wrk").arg("--version").stdout(Stdio::null()).stderr(Stdio::null()).status().is_ok(),
        "wrk is needed (apt-get install wrk)"
    );

    let gzip = std::env::args().any(|a| a == "--gzip");
    let baseline_bin = arg("--baseline").map(PathBuf::from);
    let data = tempfile::tempdir().expect("temp dir");
    let (port, _server) = start_server(&server_bin, &data.path().join("server"));
    let baseline = baseline_bin.as_ref().map(|bin| start_server(bin, &data.path().join("baseline")));

    let _ = rustls::crypto::ring::default_provider().install_default();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let routes = rt.block_on(read_routes(&format!("http://127.0.0.1:{port}"), gzip));
    let bare_dir = data.path().join("bare");
    std::fs::create_dir_all(&bare_dir).expect("bare folder");
    let mut manifest = String::new();
    for (i, r) in routes.iter().enumerate() {
        std::fs::write(bare_dir.join(format!("{i}.body")), &r.body).expect("write body");
        manifest.push_str(&format!("{}\t{}\t{i}.body\t{}\n", r.path, r.content_type, r.encoding));
    }
    std::fs::write(bare_dir.join("routes.tsv"), manifest).expect("write manifest");
    let bare_port = free_port();
    let _bare = Proc(
        Command::new(&exe)
            .args(["--bare", &bare_dir.display().to_string(), "--port", &bare_port.to_string()])
            .spawn()
            .expect("the bare server starts"),
    );
    wait_listening(bare_port, "the bare server");

    let mut servers = vec![("reelfind", port)];
    if let Some((p, _)) = &baseline {
        servers.push(("baseline", *p));
    }
    servers.push(("bare axum", bare_port));
    let accept = if gzip { "Accept-Encoding: gzip" } else { "" };
    println!(
        "wrk -t{threads} -c{connections} -d{secs}s{}, {rounds} rounds, alternated; server {}{}",
        if gzip { " -H 'Accept-Encoding: gzip'" } else { "" },
        server_bin.display(),
        baseline_bin.as_ref().map(|b| format!(", baseline {}", b.display())).unwrap_or_default()
    );
    for r in &routes {
        println!(
            "  {} {} bytes ({}{})",
            r.path,
            r.body.len(),
            r.content_type,
            if r.encoding.is_empty() { String::new() } else { format!(", {}", r.encoding) }
        );
    }
    // The first answers fill what a server keeps ready; a short run on each warms them all.
    for r in &routes {
        for (_, p) in &servers {
            wrk(*p, &r.path, 1, threads, connections, accept);
        }
    }
    let mut results: BTreeMap<(usize, &str), Vec<f64>> = BTreeMap::new();
    println!("\n| round | route | server | requests/s | non-2xx | load average before |");
    println!("|---|---|---|---|---|---|");
    for round in 1..=rounds {
        for (i, r) in routes.iter().enumerate() {
            let mut order = servers.clone();
            order.rotate_left((round - 1) % servers.len());
            for (name, p) in order {
                let load = loadavg();
                let (rps, errors) = wrk(p, &r.path, secs, threads, connections, accept);
                println!("| {round} | `{}` | {name} | {rps:.0} | {errors} | {load} |", r.path);
                results.entry((i, name)).or_default().push(rps);
            }
        }
    }
    let with_baseline = baseline.is_some();
    if with_baseline {
        println!(
            "\n| route | bytes | reelfind median req/s | baseline median req/s | bare median req/s | ratio | baseline ratio | target |"
        );
        println!("|---|---|---|---|---|---|---|---|");
    } else {
        println!("\n| route | bytes | reelfind median req/s | bare median req/s | ratio | target |");
        println!("|---|---|---|---|---|---|");
    }
    for (i, r) in routes.iter().enumerate() {
        let ours = median(&results[&(i, "reelfind")]);
        let bare = median(&results[&(i, "bare axum")]);
        let target = match r.path.as_str() {
            "/api/settings" => 0.5,
            "/healthz" => 0.8,
            _ => 0.3,
        };
        let ratio = ours / bare;
        let met = if ratio >= target { "met" } else { "NOT met" };
        if with_baseline {
            let old = median(&results[&(i, "baseline")]);
            println!(
                "| `{}` | {} | {ours:.0} | {old:.0} | {bare:.0} | {ratio:.2} | {:.2} | >= {target} ({met}) |",
                r.path,
                r.body.len(),
                old / bare
            );
        } else {
            println!("| `{}` | {} | {ours:.0} | {bare:.0} | {ratio:.2} | >= {target} ({met}) |", r.path, r.body.len());
        }
    }
    println!("\nload average at the end: {}", loadavg());
}

/// Starts a server binary on a fresh data folder; its port and the process.
fn start_server(bin: &Path, data: &Path) -> (u16, Proc) {
    std::fs::create_dir_all(data).expect("data folder");
    let port = free_port();
    let proc = Proc(
        Command::new(bin)
            .env("REELFIND_ADDR", format!("127.0.0.1:{port}"))
            .env("REELFIND_PUBLIC_URL", format!("http://127.0.0.1:{port}"))
            .env("REELFIND_DATA_DIR", data)
            .env("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
            .env("REELFIND_LIBRARY_DEMO", "false")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{} does not start: {e}", bin.display())),
    );
    wait_listening(port, &bin.display().to_string());
    (port, proc)
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

/// Requests/s and non-2xx/3xx answers of one wrk run (`header`: one request header, or "").
fn wrk(port: u16, path: &str, secs: u64, threads: u32, connections: u32, header: &str) -> (f64, u64) {
    let mut cmd = Command::new("wrk");
    cmd.args([&format!("-t{threads}"), &format!("-c{connections}"), &format!("-d{secs}s")]);
    if !header.is_empty() {
        cmd.args(["-H", header]);
    }
    let out = cmd.arg(format!("http://127.0.0.1:{port}{path}")).output().expect("wrk runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let number = |prefix: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(prefix))
            .and_then(|v| v.split_whitespace().next()?.parse::<f64>().ok())
    };
    let rps = number("Requests/sec:").unwrap_or_else(|| panic!("wrk said:\n{text}"));
    let errors = number("Non-2xx or 3xx responses:").unwrap_or(0.0) as u64;
    (rps, errors)
}

/// Reads each measured route once, as a visitor without cookies (asking for gzip when `gzip`).
async fn read_routes(origin: &str, gzip: bool) -> Vec<Route> {
    let http = reqwest::Client::new();
    let list: serde_json::Value = http
        .get(format!("{origin}/api/blog?limit=1"))
        .send()
        .await
        .expect("GET /api/blog")
        .json()
        .await
        .expect("a JSON post list");
    let slug = list["posts"][0]["slug"].as_str().expect("the seeded blog has a post").to_owned();
    let mut routes = Vec::new();
    for path in ["/api/settings", "/", "/about", "/blog", &format!("/blog/{slug}"), "/healthz"] {
        let mut req = http.get(format!("{origin}{path}"));
        if gzip {
            req = req.header(reqwest::header::ACCEPT_ENCODING, "gzip");
        }
        let res = req.send().await.expect("GET");
        assert!(res.status().is_success(), "{path} answered {}", res.status());
        let content_type = res
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("application/octet-stream")
            .to_owned();
        let encoding =
            res.headers().get(reqwest::header::CONTENT_ENCODING).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
        let body = res.bytes().await.expect("body").to_vec();
        routes.push(Route { path: path.to_owned(), content_type, encoding, body });
    }
    routes
}

/// The comparison: axum with nothing but the routes, each answering fixed bytes.
mod bare {
    use std::path::Path;

    use axum::Router;
    use axum::http::{HeaderValue, header};
    use axum::routing::get;
    use bytes::Bytes;

    pub fn serve(dir: &Path, port: u16) {
        let manifest = std::fs::read_to_string(dir.join("routes.tsv")).expect("routes.tsv");
        let mut app = Router::new();
        for line in manifest.lines() {
            let mut f = line.split('\t');
            let (Some(path), Some(ct), Some(file)) = (f.next(), f.next(), f.next()) else { continue };
            let body = Bytes::from(std::fs::read(dir.join(file)).expect("body file"));
            let ct = HeaderValue::from_str(ct).expect("content type");
            match f.next().filter(|e| !e.is_empty()) {
                Some(enc) => {
                    let enc = HeaderValue::from_str(enc).expect("content encoding");
                    app =
                        app.route(
                            path,
                            get(move || async move {
                                ([(header::CONTENT_TYPE, ct), (header::CONTENT_ENCODING, enc)], body)
                            }),
                        );
                }
                None => app = app.route(path, get(move || async move { ([(header::CONTENT_TYPE, ct)], body) })),
            }
        }
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.expect("bind");
            axum::serve(listener, app).await.expect("serve");
        });
    }
}
