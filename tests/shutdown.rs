//! The real binary, started as an operator would: on SIGTERM it stops its work rather than
//! waiting for it (the request in flight is told 503, the background indexing says it was
//! stopped, nothing is left to the last-resort exit) and exits cleanly with its ffmpeg
//! children and upload folders gone; a `kill -9` mid-upload leaves nothing that the next
//! start does not sweep.
//!
//! These tests assert events, never durations: each wait has a generous limit that only
//! turns a hang into a failure. How long a shutdown takes is measured by `bench_shutdown`.
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// How long any wait here may last before it is called a hang (not a speed target).
const HANG: Duration = Duration::from_secs(120);

use crate::hostile;
use crate::identify_hostile::children;

struct Server {
    child: Child,
    port: u16,
    data: PathBuf,
    log: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A folder on PATH whose `ffmpeg` is the real one reading its input at native speed
/// (`-re`), so that a test can catch a child mid-work.
fn slow_ffmpeg_dir(root: &Path) -> PathBuf {
    let dir = root.join("slow-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let real = String::from_utf8(Command::new("sh").args(["-c", "command -v ffmpeg"]).output().unwrap().stdout)
        .unwrap()
        .trim()
        .to_owned();
    let script = dir.join("ffmpeg");
    std::fs::write(&script, format!("#!/bin/sh\nexec {real} -re \"$@\"\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    dir
}

impl Server {
    fn start(data: &Path, slow_ffmpeg: bool) -> Self {
        let (cmd, port) = Self::command(data, slow_ffmpeg);
        Self::launch(cmd, port, data)
    }

    /// The command [`Self::start`] runs (for a test to add to) and the port it listens on.
    fn command(data: &Path, slow_ffmpeg: bool) -> (Command, u16) {
        let port = free_port();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_reelfind"));
        cmd.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("REELFIND_ADDR", format!("127.0.0.1:{port}"))
            .env("REELFIND_DATA_DIR", data)
            .env("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets"))
            .env("REELFIND_LIBRARY_DEMO", "false")
            .env("OPENAI_API_KEY", "k")
            // Never reached: every test stops the server before the engine is asked.
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
            // Our own lines at info: the tests read how the server stopped.
            .env("RUST_LOG", "warn,reelfind=info")
            // Each test connection says it is another client (guests get one identification each).
            .env("REELFIND_TRUST_PROXY", "true")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(Self::log_path(data, port)).unwrap());
        if slow_ffmpeg {
            let path =
                format!("{}:{}", slow_ffmpeg_dir(data.parent().unwrap()).display(), std::env::var("PATH").unwrap());
            cmd.env("PATH", path);
        }
        (cmd, port)
    }

    /// Where the server started on `port` with `data` writes its log (beside the data folder).
    fn log_path(data: &Path, port: u16) -> PathBuf {
        data.parent().unwrap().join(format!("server-{port}.log"))
    }

    fn launch(mut cmd: Command, port: u16, data: &Path) -> Self {
        let child = cmd.spawn().expect("the reelfind binary starts");
        let mut server = Self { child, port, data: data.to_path_buf(), log: Self::log_path(data, port) };
        wait_for("the server to listen", || {
            assert!(server.child.try_wait().unwrap().is_none(), "the server exited at start: {}", server.log_text());
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        server
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn signal(&self, sig: i32) {
        // Safety: plain system call on our own child.
        unsafe {
            libc::kill(self.child.id() as i32, sig);
        }
    }

    /// Waits for the process to exit (a hang fails the test) and returns how it ended.
    fn exit(&mut self) -> ExitStatus {
        let mut status = None;
        wait_for("the server to exit", || {
            status = self.child.try_wait().unwrap();
            status.is_some()
        });
        status.unwrap()
    }

    /// Waits for the process to exit after a signal and checks that it stopped its work
    /// rather than being cut off: a clean exit, and no last-resort exit in the log.
    fn exits_cleanly(&mut self) {
        let status = self.exit();
        let log = self.log_text();
        assert!(status.success(), "the server exited with {status}: {log}");
        assert!(log.contains("stopped cleanly"), "{log}");
        for cut_off in ["requests still running", "background work still running", "mail still being sent"] {
            assert!(!log.contains(cut_off), "the server was waiting for work it should have stopped: {log}");
        }
    }

    fn tmp_entries(&self) -> Vec<PathBuf> {
        std::fs::read_dir(self.data.join("tmp"))
            .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default()
    }

    /// Starts `POST /api/identify` with `file`, sending all of it or only its first half
    /// (a client still uploading). Returns the open connection.
    fn post(&self, file: &[u8], whole: bool) -> TcpStream {
        let boundary = "reelfind-server-test";
        let mut body = Vec::new();
        for (k, v) in [("mode", "openai"), ("useAudioAnalysis", "true")] {
            body.extend(format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{k}\"\r\n\r\n{v}\r\n").bytes());
        }
        body.extend(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"clip.mp4\"\r\nContent-Type: video/mp4\r\n\r\n")
                .bytes(),
        );
        body.extend_from_slice(file);
        body.extend(format!("\r\n--{boundary}--\r\n").bytes());
        static CLIENT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
        let client = CLIENT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        write!(
            s,
            "POST /api/identify HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Forwarded-For: 198.51.100.{client}\r\nContent-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .unwrap();
        let send = if whole { body.len() } else { body.len() / 2 };
        s.write_all(&body[..send]).expect("the server reads the upload");
        s.flush().unwrap();
        s
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `ok` until it holds; only a hang ([`HANG`]) fails.
fn wait_for(what: &str, mut ok: impl FnMut() -> bool) {
    let until = Instant::now() + HANG;
    while !ok() {
        assert!(Instant::now() < until, "still waiting for {what} after {} s: a hang", HANG.as_secs());
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn ffmpeg_children(data: &Path) -> Vec<String> {
    children(data).into_iter().filter(|c| c.contains("ffmpeg") || c.contains("ffprobe")).collect()
}

#[test]
fn sigterm_mid_identification_exits_promptly_with_children_and_uploads_gone() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    // A 40 s clip: with `-re` its scene pass alone takes 40 s of wall time.
    let clip = hostile::clip_mp4(root.path(), 40, 320, 240, true);
    let mut server = Server::start(&data, true);
    let mut conn = server.post(&clip, true);
    wait_for("an ffmpeg child at work", || !ffmpeg_children(&data).is_empty());
    assert!(!server.tmp_entries().is_empty(), "the upload is on disk while it is analysed");

    server.signal(libc::SIGTERM);
    // The client is told, in the SPEC's words; silence (a dropped connection) fails.
    let mut answer = String::new();
    conn.set_read_timeout(Some(HANG)).unwrap();
    conn.read_to_string(&mut answer).expect("the answer to the request in flight");
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer:?}");
    assert!(answer.contains("Server temporarily unavailable"), "{answer}");
    server.exits_cleanly();
    wait_for("ffmpeg children to go", || ffmpeg_children(&data).is_empty());
    assert!(server.tmp_entries().is_empty(), "{:?}", server.tmp_entries());
}

#[test]
fn sigterm_mid_upload_deletes_the_partial_upload() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let clip = hostile::clip_mp4(root.path(), 4, 320, 240, false);
    let mut server = Server::start(&data, false);
    let _conn = server.post(&clip, false);
    wait_for("the upload folder", || !server.tmp_entries().is_empty());
    server.signal(libc::SIGTERM);
    server.exits_cleanly();
    assert!(server.tmp_entries().is_empty(), "{:?}", server.tmp_entries());
}

#[test]
fn sigkill_mid_upload_then_restart_finds_the_temp_folder_empty() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    let clip = hostile::clip_mp4(root.path(), 40, 320, 240, true);
    let mut server = Server::start(&data, true);
    // One request still uploading, one being analysed by ffmpeg.
    let _uploading = server.post(&clip, false);
    let _analysing = server.post(&clip, true);
    wait_for("an ffmpeg child at work", || !ffmpeg_children(&data).is_empty());
    server.signal(libc::SIGKILL);
    server.exit();
    // Children die with their parent, even one killed without a chance to clean up (the
    // clip would keep a live ffmpeg busy for 40 s and more: far past this wait's usual end).
    wait_for("ffmpeg children to die with the server", || ffmpeg_children(&data).is_empty());
    assert!(!server.tmp_entries().is_empty(), "kill -9 leaves the folders (nothing ran to delete them)");
    drop(server);

    let server = Server::start(&data, false);
    assert!(server.tmp_entries().is_empty(), "the start sweep deleted {:?}", server.tmp_entries());
}

/// Starts the server with an empty library and a 40 s demo clip read at native speed, so
/// that the start-up indexing is still at work when `sig` arrives.
fn signal_during_the_demo_indexing(sig: i32) {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    // Under the data dir, so that the indexing's ffmpeg children are found by their input path.
    hostile::clip_mp4(&data, 40, 320, 240, true);
    let demo = data.join("clip-40-320x240-true.mp4");
    let (mut cmd, port) = Server::command(&data, true);
    cmd.env("REELFIND_LIBRARY_DEMO", "true").env("REELFIND_LIBRARY_DEMO_FILE", &demo).env("RUST_LOG", "info");
    let mut server = Server::launch(cmd, port, &data);
    // The picture and the soundtrack are each decoded by an ffmpeg of their own.
    wait_for("the indexing's ffmpeg children", || {
        ffmpeg_children(&data).iter().filter(|c| !c.contains("ffprobe")).count() >= 2
    });

    server.signal(sig);
    // Without the cancellation the server waited for the blocking indexing task (its log
    // then says the background work was still running) and the half-read clip's ffmpeg
    // children lived on until the runtime's exit timeout.
    server.exits_cleanly();
    wait_for("ffmpeg children to go", || ffmpeg_children(&data).is_empty());
    let log = server.log_text();
    let stopped = log.find("indexing stopped by the shutdown").unwrap_or_else(|| panic!("{log}"));
    let clean = log.find("stopped cleanly").unwrap_or_else(|| panic!("{log}"));
    assert!(stopped < clean, "the indexing stopped before the server said it had: {log}");
    assert!(!log.contains("demo ready"), "the half-decoded clip was not published: {log}");
}

#[test]
fn sigterm_during_the_demo_indexing_stops_it_and_exits_promptly() {
    signal_during_the_demo_indexing(libc::SIGTERM);
}

#[test]
fn sigint_during_the_demo_indexing_stops_it_and_exits_promptly() {
    signal_during_the_demo_indexing(libc::SIGINT);
}

/// A mail server that takes `delay` to greet, then accepts one message; reports each
/// accepted message's text.
fn slow_smtp(delay: Duration) -> (u16, std::sync::mpsc::Receiver<String>) {
    use std::io::BufRead;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                std::thread::sleep(delay);
                let mut write = stream.try_clone().unwrap();
                let mut lines = std::io::BufReader::new(stream);
                let _ = write.write_all(b"220 slow.smtp ESMTP\r\n");
                let (mut data, mut message) = (false, String::new());
                let mut line = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    if data {
                        if line == ".\r\n" {
                            data = false;
                            let _ = tx.send(std::mem::take(&mut message));
                            let _ = write.write_all(b"250 queued\r\n");
                        } else {
                            message.push_str(&line);
                        }
                        continue;
                    }
                    let upper = line.to_ascii_uppercase();
                    let reply: &[u8] = if upper.starts_with("EHLO") {
                        b"250-slow.smtp\r\n250 8BITMIME\r\n"
                    } else if upper.starts_with("DATA") {
                        data = true;
                        b"354 go on\r\n"
                    } else if upper.starts_with("QUIT") {
                        let _ = write.write_all(b"221 bye\r\n");
                        return;
                    } else {
                        b"250 OK\r\n"
                    };
                    let _ = write.write_all(reply);
                }
            });
        }
    });
    (port, rx)
}

/// A person asks for a reset link and the server is told to stop while the mail is still
/// on its way (the mail server takes 1.5 s to answer): the mail is finished, not dropped,
/// and the server then exits on its own.
#[test]
fn sigterm_while_a_reset_mail_is_being_sent_lets_the_mail_finish() {
    let root = tempfile::tempdir().unwrap();
    let data = root.path().join("data");
    std::fs::create_dir_all(&data).unwrap();
    let (smtp_port, mails) = slow_smtp(Duration::from_millis(1500));
    let smtp = format!("smtp://127.0.0.1:{smtp_port}?tls=none");

    let (mut cli, _) = Server::command(&data, false);
    let mut create = cli
        .args(["user", "create", "--username", "rosa", "--email", "rosa@example.com"])
        .env("SMTP_URL", &smtp)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    create.stdin.take().unwrap().write_all(b"secret-pass\n").unwrap();
    assert!(create.wait().unwrap().success(), "the account is created");

    let (mut cmd, port) = Server::command(&data, false);
    cmd.env("SMTP_URL", &smtp);
    let mut server = Server::launch(cmd, port, &data);
    let body = r#"{"email":"rosa@example.com"}"#;
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "POST /api/forgot-password HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");

    server.signal(libc::SIGTERM);
    let mail = mails.recv_timeout(HANG).expect("the reset mail reached the mail server");
    assert!(mail.contains("reset-password"), "{mail}");
    // It exits once the mail is out, on its own and cleanly (not cut off while sending).
    server.exits_cleanly();
}
