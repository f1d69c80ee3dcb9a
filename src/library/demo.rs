//! First run: with an empty library, the bundled demo clip (Big Buck Bunny, Blender
//! Foundation, CC BY 3.0) is indexed in the background so identification works with no key.
use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use crate::config::LibraryConfig;
use crate::library::{AddOutcome, AddReport, LibraryIndex, Progress};

/// Logs progress instead of drawing a bar; stops when the server does.
struct LogProgress {
    seconds: f64,
    logged: f64,
    shutdown: CancellationToken,
}

impl LogProgress {
    fn new(shutdown: CancellationToken) -> Self {
        Self { seconds: 0.0, logged: 0.0, shutdown }
    }
}

impl Progress for LogProgress {
    fn advance(&mut self, seconds: f64) {
        self.seconds += seconds;
        if self.seconds - self.logged >= 60.0 {
            self.logged = self.seconds;
            tracing::info!("library: indexed {:.0} s of video", self.seconds);
        }
    }
    fn outcome(&mut self, path: &Path, outcome: &AddOutcome) {
        match outcome {
            AddOutcome::Failed(e) => tracing::warn!("library: could not index {}: {e}", path.display()),
            other => tracing::info!("library: {} {other:?}", path.display()),
        }
    }
    fn cancel(&self) -> Option<&CancellationToken> {
        Some(&self.shutdown)
    }
}

/// Whether the run was cut short by the shutdown (logged: the next start takes it up again,
/// as nothing of the unfinished file was written).
fn stopped(report: &AddReport) -> bool {
    if report.stopped {
        tracing::info!(
            "library: indexing stopped by the shutdown after {:.1} s; it starts again with the server",
            report.wall_seconds
        );
    }
    report.stopped
}

/// Starts indexing the demo clip on a blocking thread when the library is empty; returns at once.
/// Cancelling `shutdown` stops the work within moments (its ffmpeg children killed, nothing of
/// the unfinished file written), so that the task can be awaited before the process exits.
pub fn spawn_if_empty(
    index: Arc<LibraryIndex>,
    config: &LibraryConfig,
    shutdown: CancellationToken,
) -> Option<tokio::task::JoinHandle<()>> {
    let stale = index.stale_files();
    if !stale.is_empty() {
        // Segments of an older index format: re-index those files (unchanged ones included).
        tracing::info!("library: re-indexing {} video(s) indexed by an older version", stale.len());
        return Some(tokio::task::spawn_blocking(move || {
            let mut progress = LogProgress::new(shutdown);
            let report = index.add_paths(&stale, &mut progress);
            if stopped(&report) {
                return;
            }
            tracing::info!(
                "library: re-indexed {} video(s), {} failed, in {:.1} s",
                report.reindexed,
                report.failed.len(),
                report.wall_seconds
            );
        }));
    }
    if !config.demo || !index.is_empty() {
        return None;
    }
    let file = config.demo_file.clone();
    if !file.is_file() {
        tracing::info!("library: empty, and no demo clip at {} (REELFIND_LIBRARY_DEMO_FILE)", file.display());
        return None;
    }
    tracing::info!("library: empty; indexing the demo clip {} in the background", file.display());
    Some(tokio::task::spawn_blocking(move || {
        let mut progress = LogProgress::new(shutdown);
        let report = index.add_paths(std::slice::from_ref(&file), &mut progress);
        if stopped(&report) {
            return;
        }
        tracing::info!(
            "library: demo ready ({} added, {} failed) in {:.1} s",
            report.added,
            report.failed.len(),
            report.wall_seconds
        );
    }))
}
