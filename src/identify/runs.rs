//! The engine runs inside one identification request, collected while it runs so that the
//! request can record one analytics event per run (the Insight tab's per-engine success
//! rate and latency). `select` reports every engine call through [`report`]; outside
//! [`collect`] reporting does nothing.
use std::cell::RefCell;
use std::future::Future;

use super::engine::{EngineAnswer, EngineError, EngineId};
pub use crate::services::analytics::EngineRun;

tokio::task_local! {
    static RUNS: RefCell<Vec<EngineRun>>;
}

/// Records one engine call of the current request, if it is being collected.
pub fn report(engine: EngineId, result: &Result<EngineAnswer, EngineError>, ms: u64) {
    let outcome = match result {
        Ok(a) if !a.candidates.is_empty() => "identified",
        Ok(_) => "no_match",
        Err(EngineError::Timeout) => "timeout",
        Err(_) => "failed",
    };
    let _ = RUNS.try_with(|runs| runs.borrow_mut().push(EngineRun { engine: engine.as_str(), outcome, ms }));
}

/// Runs `f`, returning its output and every engine run reported while it ran (on this task).
pub async fn collect<F: Future>(f: F) -> (F::Output, Vec<EngineRun>) {
    RUNS.scope(RefCell::new(Vec::new()), async move {
        let out = f.await;
        let runs = RUNS.with(|r| r.take());
        (out, runs)
    })
    .await
}
