//! A real Milvus server for tests and benchmarks: `.ci/milvus-server` (PyPI's `milvus`
//! 2.3.5, installed into `.ci/.milvus-venv` by `bash .ci/setup --test`) started on free
//! ports with its data in a temporary folder, killed, restarted and stopped on command.
//!
//! `MILVUS_URL=HOST:PORT` makes [`shared`] use a server someone else runs instead. When
//! neither is there, [`shared`] answers `None` so a developer without the venv can run the
//! rest of the suite; under CI (`CI` set) or `REELFIND_REQUIRE_MILVUS=1` it panics instead,
//! so the Milvus tests never skip silently where they are meant to run.
#![doc(hidden)]
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

/// One running `.ci/milvus-server` and the server it controls.
pub struct MilvusServer {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    /// `127.0.0.1:PORT`
    pub addr: String,
    /// The Milvus process (for its memory), while it runs.
    pub pid: u32,
    _data: Option<tempfile::TempDir>,
}

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The venv's Python (`REELFIND_MILVUS_PYTHON` overrides).
pub fn python() -> PathBuf {
    std::env::var_os("REELFIND_MILVUS_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join(".ci/.milvus-venv/bin/python"))
}

/// Whether this run must have Milvus (CI, or asked for).
pub fn required() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty() && v != "false")
        || std::env::var("REELFIND_REQUIRE_MILVUS").is_ok_and(|v| v == "1")
}

impl MilvusServer {
    /// Starts a server with its data in a new temporary folder; waits until it is healthy.
    pub fn start() -> anyhow::Result<Self> {
        let data = tempfile::Builder::new().prefix("reelfind-milvus-").tempdir()?;
        let mut s = Self::start_in(data.path().to_path_buf())?;
        s._data = Some(data);
        Ok(s)
    }

    fn start_in(data: PathBuf) -> anyhow::Result<Self> {
        let python = python();
        anyhow::ensure!(
            python.exists(),
            "{} is missing: run `bash .ci/setup --test` to install Milvus for the tests",
            python.display()
        );
        let mut child = Command::new(&python)
            .arg(repo_root().join(".ci/milvus-server"))
            .arg("--data")
            .arg(&data)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()?;
        let stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let stdout = BufReader::new(child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?);
        let mut s = Self { child, stdin: Some(stdin), stdout, addr: String::new(), pid: 0, _data: None };
        let first = s.answer()?;
        s.addr = first["url"].as_str().ok_or_else(|| anyhow::anyhow!("milvus-server said {first}"))?.to_owned();
        s.pid = first["pid"].as_u64().unwrap_or(0) as u32;
        Ok(s)
    }

    fn answer(&mut self) -> anyhow::Result<serde_json::Value> {
        let mut line = String::new();
        self.stdout.read_line(&mut line)?;
        let v: serde_json::Value =
            serde_json::from_str(line.trim()).map_err(|e| anyhow::anyhow!("milvus-server said {line:?}: {e}"))?;
        if let Some(e) = v.get("error") {
            anyhow::bail!("milvus-server: {e}");
        }
        Ok(v)
    }

    fn command(&mut self, cmd: &str) -> anyhow::Result<()> {
        let stdin = self.stdin.as_mut().ok_or_else(|| anyhow::anyhow!("milvus-server stopped"))?;
        writeln!(stdin, "{cmd}")?;
        stdin.flush()?;
        let v = self.answer()?;
        self.pid = v["pid"].as_u64().unwrap_or(0) as u32;
        Ok(())
    }

    /// SIGKILL: a crash, nothing flushed.
    pub fn kill(&mut self) -> anyhow::Result<()> {
        self.command("kill")
    }

    /// Starts the server again on the same port and data; returns when it is healthy.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.command("start")
    }

    /// `milvus://127.0.0.1:PORT/{name}`
    pub fn url(&self, name: &str) -> String {
        format!("milvus://{}/{name}", self.addr)
    }
}

impl Drop for MilvusServer {
    fn drop(&mut self) {
        // Closing stdin stops the server (gracefully, at most 10 s); wait so its folder can go.
        drop(self.stdin.take());
        let _ = self.child.wait();
    }
}

/// The server shared by a whole test binary (each test uses its own collection names):
/// `MILVUS_URL` when set, else one started on first use and stopped when the process exits
/// (its control script sees stdin close). `None` when Milvus is not installed and not
/// [`required`].
pub fn shared() -> Option<String> {
    static SHARED: OnceLock<Option<String>> = OnceLock::new();
    static SERVER: Mutex<Option<MilvusServer>> = Mutex::new(None);
    SHARED
        .get_or_init(|| {
            if let Ok(addr) = std::env::var("MILVUS_URL")
                && !addr.is_empty()
            {
                return Some(addr.trim_start_matches("http://").trim_end_matches('/').to_owned());
            }
            if !python().exists() && !required() {
                eprintln!(
                    "Milvus is not installed ({}): Milvus tests skipped; `bash .ci/setup --test` installs it",
                    python().display()
                );
                return None;
            }
            match MilvusServer::start() {
                Ok(s) => {
                    let addr = s.addr.clone();
                    if let Ok(mut slot) = SERVER.lock() {
                        *slot = Some(s);
                    }
                    Some(addr)
                }
                Err(e) => panic!("cannot start Milvus for the tests: {e:#}"),
            }
        })
        .clone()
}

/// A collection name no other test of this run uses.
pub fn unique_name(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!("{prefix}_{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}
