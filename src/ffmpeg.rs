//! Every ffmpeg and ffprobe child of the server, identification and Library alike, is
//! started here, so that none of them can outlive its work or take the node with it:
//!
//! - **OS limits** of its own (`setrlimit` before `exec`): address space, CPU seconds and
//!   the size of any file it writes ([`Limits`]). A decoder bug or a hostile stream then
//!   kills that child, not the machine.
//! - **Its own process group**, killed as a whole when the work is cancelled (deadline,
//!   client gone, shutdown) or when the handle is dropped.
//! - **Dies with the server**: on Linux the child asks the kernel for SIGKILL when its
//!   parent dies (`PR_SET_PDEATHSIG`), so even an OOM kill or `kill -9` of the server
//!   leaves no ffmpeg running.
//! - **Bounded input**: `-protocol_whitelist file` (no network, no pipes, no nested
//!   playlists reaching elsewhere) and a demuxer forced from the sniffed type or picked from
//!   an allow-list ([`Input`]); the path is passed as `file:` so a name can never be read
//!   as an option or a protocol.
//! - **Bounded output**: what we read from a child is capped ([`run`]'s `max_stdout`).
use std::ffi::OsString;
use std::io::Read;
use std::path::Path;
use std::process::{Child, ChildStdout, Stdio};
use std::thread::JoinHandle;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// OS limits of one child process.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// RLIMIT_AS: virtual address space in bytes (ffmpeg maps ~400 MB of libraries before it
    /// decodes anything; a 4K H.264 decode with two threads fits in 768 MB).
    pub address_space: u64,
    /// RLIMIT_CPU: CPU seconds (SIGXCPU, then SIGKILL a second later). 0: unlimited.
    pub cpu_secs: u64,
    /// RLIMIT_FSIZE: largest file the child may write, bytes (pipes are not files).
    pub file_size: u64,
}

impl Limits {
    /// Work on a visitor's upload: a probe, a scene pass, a frame, the sound track, a
    /// Library query. The request's deadline stops it first; these hold if something else fails.
    pub const UPLOAD: Self = Self { address_space: 1 << 30, cpu_secs: 300, file_size: 64 << 20 };
    /// Indexing the operator's own files (a film may take minutes of CPU); output goes to a pipe.
    pub const INDEX: Self = Self { address_space: 1 << 30, cpu_secs: 0, file_size: 16 << 20 };
    /// One preview picture.
    pub const PREVIEW: Self = Self { address_space: 1 << 30, cpu_secs: 30, file_size: 16 << 20 };
}

/// Demuxers ffmpeg may use on the operator's files (names as ffmpeg lists them).
pub const LIBRARY_FORMATS: &str = "mov,matroska,avi,flv,asf,mpeg,mpegts,ogg";

/// Where a child reads from: a local file, with the demuxer forced or allow-listed.
pub struct Input<'a> {
    pub path: &'a Path,
    /// `-f` of the input: the demuxer of the sniffed type (uploads). `None`: probe, but only
    /// among [`LIBRARY_FORMATS`].
    pub format: Option<&'static str>,
}

impl<'a> Input<'a> {
    /// An upload whose real type was sniffed as `ext` (see `identify::upload::sniff`).
    pub fn upload(path: &'a Path, ext: &str) -> Self {
        Self { path, format: demuxer_for(ext) }
    }
    /// One of the operator's library files.
    pub fn library(path: &'a Path) -> Self {
        Self { path, format: None }
    }

    /// The input options and `-i file:PATH`. Options that bound reading (e.g. `-t`) go
    /// before this.
    pub fn args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = vec!["-protocol_whitelist".into(), "file".into()];
        match self.format {
            Some(f) => a.extend(["-f".into(), f.into()]),
            None => a.extend(["-format_whitelist".into(), LIBRARY_FORMATS.into()]),
        }
        a.push("-i".into());
        a.push(file_url(self.path));
        a
    }
}

/// The ffmpeg demuxer for a sniffed extension; `None` for anything we do not accept.
pub fn demuxer_for(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "mp4" | "mov" | "m4v" => "mov",
        "webm" | "mkv" => "matroska",
        "avi" => "avi",
        "flv" => "flv",
        _ => return None,
    })
}

/// `file:` + the path: ffmpeg never reads a path as a protocol or an option.
pub fn file_url(path: &Path) -> OsString {
    let mut s = OsString::from("file:");
    s.push(path.as_os_str());
    s
}

/// A `std::process::Command` for `program` with `limits`, its own process group, death with
/// the server, and stdin closed.
pub fn command(program: &str, limits: Limits) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    cmd.stdin(Stdio::null());
    harden(&mut cmd, limits);
    cmd
}

/// Applies [`command`]'s protections to a command built elsewhere.
pub fn harden(cmd: &mut std::process::Command, limits: Limits) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
        #[cfg(target_os = "linux")]
        let parent = std::process::id() as libc::pid_t;
        // Safety: the closure runs in the child between fork and exec and only makes
        // async-signal-safe system calls (setrlimit, prctl, getppid); it allocates nothing.
        unsafe {
            cmd.pre_exec(move || {
                let set = |resource, soft: u64, hard: u64| {
                    let l = libc::rlimit { rlim_cur: soft, rlim_max: hard };
                    if libc::setrlimit(resource, &l) != 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
                };
                set(libc::RLIMIT_AS, limits.address_space, limits.address_space)?;
                if limits.cpu_secs > 0 {
                    // SIGXCPU at the soft limit, SIGKILL a second later.
                    set(libc::RLIMIT_CPU, limits.cpu_secs, limits.cpu_secs + 1)?;
                }
                set(libc::RLIMIT_FSIZE, limits.file_size, limits.file_size)?;
                #[cfg(target_os = "linux")]
                {
                    if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    // The server died between fork and prctl: nobody will read our output.
                    if libc::getppid() != parent {
                        return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                    }
                }
                Ok(())
            });
        }
    }
    #[cfg(not(unix))]
    let _ = (cmd, limits);
}

/// SIGKILL to the process group led by `pid` (our children lead their own group).
pub fn kill_group(pid: u32) {
    #[cfg(unix)]
    if pid > 0 {
        // Safety: plain system call. A group that is already gone gives ESRCH, ignored.
        unsafe {
            libc::kill(-(pid as libc::pid_t), libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// Why a child's run did not give an answer.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{0} is not installed on the server (install ffmpeg)")]
    NotInstalled(&'static str),
    #[error("{0} could not start: {1}")]
    Spawn(&'static str, std::io::Error),
    #[error("stopped: the work was cancelled")]
    Cancelled,
    #[error("{0} printed more than the allowed {1} bytes")]
    TooMuchOutput(&'static str, usize),
    #[error("reading from {0} failed: {1}")]
    Io(&'static str, std::io::Error),
}

/// What a finished child left.
pub struct Output {
    pub success: bool,
    pub stdout: Vec<u8>,
    /// At most 64 KiB of its complaints.
    pub stderr: String,
}

impl Output {
    pub fn first_complaint(&self) -> String {
        first_line(&self.stderr)
    }
}

pub fn first_line(s: &str) -> String {
    s.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("unknown error").chars().take(200).collect()
}

const STDERR_CAP: usize = 64 * 1024;

fn spawn_error(what: &'static str, e: std::io::Error) -> RunError {
    if e.kind() == std::io::ErrorKind::NotFound { RunError::NotInstalled(what) } else { RunError::Spawn(what, e) }
}

/// Kills the child's group when dropped before the child was reaped.
struct GroupGuard(Option<u32>);
impl Drop for GroupGuard {
    fn drop(&mut self) {
        if let Some(pid) = self.0.take() {
            kill_group(pid);
        }
    }
}

/// Runs a child to its end, reading at most `max_stdout` bytes of its output. Cancelling
/// `cancel` (or dropping the future) kills its process group at once.
pub async fn run(
    cmd: std::process::Command,
    what: &'static str,
    max_stdout: usize,
    cancel: &CancellationToken,
) -> Result<Output, RunError> {
    if cancel.is_cancelled() {
        return Err(RunError::Cancelled);
    }
    let mut cmd = tokio::process::Command::from(cmd);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|e| spawn_error(what, e))?;
    let pid = child.id();
    let mut guard = GroupGuard(pid);
    let mut out = child.stdout.take();
    let mut err = child.stderr.take();
    let work = async {
        let read_out = async {
            let mut buf = Vec::new();
            if let Some(o) = out.as_mut() {
                let n = o.take(max_stdout as u64 + 1).read_to_end(&mut buf).await.map_err(|e| RunError::Io(what, e))?;
                if n > max_stdout {
                    // Stop it now: it would block on the full pipe and hold its stderr open.
                    kill_group(pid.unwrap_or(0));
                    return Err(RunError::TooMuchOutput(what, max_stdout));
                }
            }
            Ok(buf)
        };
        let read_err = async {
            let mut buf = Vec::new();
            if let Some(e) = err.as_mut() {
                let _ = e.take(STDERR_CAP as u64).read_to_end(&mut buf).await;
                // Drain the rest so a chatty child never blocks on a full pipe.
                let _ = tokio::io::copy(e, &mut tokio::io::sink()).await;
            }
            String::from_utf8_lossy(&buf).into_owned()
        };
        let (stdout, stderr) = tokio::join!(read_out, read_err);
        let stdout = stdout?;
        let status = child.wait().await.map_err(|e| RunError::Io(what, e))?;
        Ok::<_, RunError>(Output { success: status.success(), stdout, stderr })
    };
    let result = tokio::select! {
        r = work => r,
        _ = cancel.cancelled() => Err(RunError::Cancelled),
    };
    if result.as_ref().is_ok() {
        // Reaped: the pid (and so the group id) may be reused now; never signal it again.
        guard.0 = None;
    }
    result
}

/// A child streaming raw pixels or samples to a pipe that blocking code reads (the Library's
/// decoders), its complaints collected on a thread of their own so that a full stderr pipe
/// never stalls it. With a cancel token, a watcher kills the child as soon as the token is
/// cancelled, which also ends a read blocked on the pipe. Dropping the pipe kills the child.
pub struct Pipe {
    child: Child,
    pub stdout: ChildStdout,
    stderr: Option<JoinHandle<String>>,
    watcher: Option<(futures::channel::oneshot::Sender<()>, JoinHandle<()>)>,
    cancel: Option<CancellationToken>,
    reaped: bool,
}

impl Pipe {
    /// Starts `cmd` (built by [`command`], writing to `pipe:1`) with piped output.
    pub fn spawn(cmd: &mut std::process::Command, cancel: Option<&CancellationToken>) -> anyhow::Result<Self> {
        use anyhow::Context;
        if cancel.is_some_and(CancellationToken::is_cancelled) {
            anyhow::bail!("stopped: the work was cancelled");
        }
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .context("cannot run ffmpeg (is it installed?)")?;
        let mut err = child.stderr.take().context("no stderr")?;
        let stderr = std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut err).take(STDERR_CAP as u64).read_to_end(&mut buf);
            let _ = std::io::copy(&mut err, &mut std::io::sink());
            String::from_utf8_lossy(&buf).into_owned()
        });
        let stdout = child.stdout.take().context("no stdout")?;
        let watcher = cancel.map(|token| {
            let (tx, rx) = futures::channel::oneshot::channel::<()>();
            let token = token.clone();
            let pid = child.id();
            let handle = std::thread::spawn(move || {
                futures::executor::block_on(async {
                    tokio::select! {
                        _ = token.cancelled() => kill_group(pid),
                        _ = rx => {}
                    }
                });
            });
            (tx, handle)
        });
        Ok(Self { child, stdout, stderr: Some(stderr), watcher, cancel: cancel.cloned(), reaped: false })
    }

    fn stop_watcher(&mut self) {
        if let Some((tx, handle)) = self.watcher.take() {
            drop(tx);
            let _ = handle.join();
        }
    }

    /// Waits for ffmpeg to exit. A failure is `what` with ffmpeg's first complaint; on
    /// success the complaints (warnings about a damaged stream, say) are returned.
    pub fn finish(mut self, what: &str) -> anyhow::Result<String> {
        self.stop_watcher();
        let status = self.child.wait()?;
        self.reaped = true;
        let complaints = self.stderr.take().and_then(|h| h.join().ok()).unwrap_or_default();
        if self.cancel.as_ref().is_some_and(CancellationToken::is_cancelled) {
            anyhow::bail!("stopped: the work was cancelled");
        }
        if !status.success() {
            anyhow::bail!("{what}: {}", first_line(&complaints));
        }
        Ok(complaints)
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        self.stop_watcher();
        if !self.reaped {
            kill_group(self.child.id());
            let _ = self.child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_local_files_with_a_known_demuxer() {
        let a = Input::upload(Path::new("/tmp/x/upload"), "mp4").args();
        let a: Vec<String> = a.iter().map(|s| s.to_string_lossy().into_owned()).collect();
        assert_eq!(a, ["-protocol_whitelist", "file", "-f", "mov", "-i", "file:/tmp/x/upload"]);
        let a = Input::library(Path::new("-rf.mkv")).args();
        assert_eq!(a.last().unwrap(), "file:-rf.mkv");
        assert!(a.iter().any(|s| s == "-format_whitelist"));
        assert_eq!(demuxer_for("webm"), Some("matroska"));
        assert_eq!(demuxer_for("m3u8"), None);
    }

    /// How long a wait here may last before it is called a hang. These tests assert that
    /// something happens (the group is gone, the read ends), not how fast: the sleeps they
    /// start run for an hour, so only the kill can end them within this limit.
    const HANG: std::time::Duration = std::time::Duration::from_secs(60);

    /// Processes whose command line is exactly `cmdline` (arguments NUL-separated).
    #[cfg(target_os = "linux")]
    fn running(cmdline: &str) -> usize {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| std::fs::read_to_string(e.ok()?.path().join("cmdline")).ok())
            .filter(|c| c.trim_end_matches('\0') == cmdline)
            .count()
    }

    /// [`wait_for`] for async tests: the runtime keeps running the work meanwhile.
    #[cfg(target_os = "linux")]
    async fn settle(what: &str, mut ok: impl FnMut() -> bool) {
        let until = std::time::Instant::now() + HANG;
        while !ok() {
            assert!(std::time::Instant::now() < until, "still waiting for {what} after {HANG:?}: a hang");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Polls `ok` until it holds; only a hang fails.
    #[cfg(target_os = "linux")]
    fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
        let until = std::time::Instant::now() + HANG;
        while !ok() {
            assert!(std::time::Instant::now() < until, "still waiting for {what} after {HANG:?}: a hang");
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn limits_apply_and_cancel_kills_the_group() {
        // The limits are visible to the child.
        let mut cmd = command("sh", Limits { address_space: 1 << 30, cpu_secs: 7, file_size: 4096 });
        cmd.args(["-c", "ulimit -t; ulimit -f"]);
        let out = run(cmd, "sh", 1024, &CancellationToken::new()).await.unwrap();
        // `ulimit -f` counts 512-byte blocks.
        assert_eq!(String::from_utf8_lossy(&out.stdout).split_whitespace().collect::<Vec<_>>(), ["7", "8"]);

        // Cancelling kills the child and whatever it started: a grandchild that would
        // otherwise sleep for an hour is gone once the work is cancelled.
        let grandchild = "sleep\x003600.17";
        let token = CancellationToken::new();
        let mut cmd = command("sh", Limits::UPLOAD);
        cmd.args(["-c", "sleep 3600.17 & echo $!; wait"]);
        let t = token.clone();
        let task = tokio::spawn(async move { run(cmd, "sh", 1024, &t).await });
        settle("the grandchild to start", || running(grandchild) == 1).await;
        token.cancel();
        let result = tokio::time::timeout(HANG, task).await.expect("run returns once cancelled").unwrap();
        assert!(matches!(result, Err(RunError::Cancelled)));
        settle("the grandchild to be killed with its group", || running(grandchild) == 0).await;

        // Output past the cap is refused.
        let mut cmd = command("sh", Limits::UPLOAD);
        cmd.args(["-c", "yes | head -c 100000"]);
        assert!(matches!(run(cmd, "sh", 1000, &CancellationToken::new()).await, Err(RunError::TooMuchOutput(..))));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn a_cancelled_pipe_ends_a_blocked_read() {
        let child = "sleep\x003600.29";
        let token = CancellationToken::new();
        let mut cmd = command("sh", Limits::UPLOAD);
        cmd.args(["-c", "sleep 3600.29"]);
        let mut pipe = Pipe::spawn(&mut cmd, Some(&token)).unwrap();
        // Cancel once the child is at work (the reader below is then blocked, or about to be).
        let t = token.clone();
        std::thread::spawn(move || {
            wait_for("the child to start", || running(child) == 1);
            t.cancel();
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 16];
            let n = pipe.stdout.read(&mut buf).unwrap();
            tx.send(()).unwrap();
            (n, pipe)
        });
        rx.recv_timeout(HANG).expect("the read ends when the work is cancelled (the child sleeps for an hour)");
        let (n, pipe) = reader.join().unwrap();
        assert_eq!(n, 0, "end of file: the child was killed");
        assert!(pipe.finish("sleep").is_err());
        wait_for("the child to be gone", || running(child) == 0);
    }
}
