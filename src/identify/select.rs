//! Choosing and running engines for a mode, and the ensemble vote.
//!
//! - A named engine runs alone.
//! - `ensemble` runs every usable engine concurrently under the request deadline. Answers
//!   are grouped (same TMDB id or IMDb id, else the same normalised title with years at
//!   most one apart); each engine counts once per group with its best confidence, and a
//!   group's confidence is the noisy-OR `1 - Π(1 - cᵢ)`: two engines at 0.7 make 0.91, so
//!   agreement raises confidence while a lone answer keeps its own. An engine that fails or
//!   times out abstains; the request fails only when every engine failed.
//! - `auto` (SPEC section 4): the admin's `ai_primary_model`, else the user's
//!   `defaultAiModel`, else the recommended engine, the first of these that is usable. A
//!   usable Library engine is asked first: a confident match (≥ [`LIBRARY_SHORTCUT`])
//!   answers without paying a cloud engine. Then an answer from the answer memory
//!   (`identify::memory`), when the pipeline found one, answers without any engine. When the
//!   chosen cloud engine fails, the next usable one is tried while time remains.
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

use super::engine::{Candidate, Engine, EngineAnswer, EngineError, EngineId, Mode};
use super::registry::EngineSet;
use super::result::EngineVote;

/// A Library match at least this confident answers `auto` on its own.
pub const LIBRARY_SHORTCUT: f32 = 0.85;
/// Preference order for the recommendation and for `auto`'s fallbacks.
pub const PREFERENCE: [EngineId; 5] =
    [EngineId::Google, EngineId::Openai, EngineId::Anthropic, EngineId::Xai, EngineId::Library];

/// What the engines concluded.
#[derive(Debug, Default)]
pub struct Outcome {
    /// The winning candidate (merged for the ensemble); `None` when nothing was recognised.
    pub best: Option<Candidate>,
    /// `openai`, `library`, ... or `ensemble`.
    pub engine: String,
    pub model: Option<String>,
    pub votes: Vec<EngineVote>,
    /// Every distinct candidate, best first, at most [`MAX_RANKED`] (the winner first).
    pub ranked: Vec<Candidate>,
}

/// Candidates kept for an answer's `candidates` list.
pub const MAX_RANKED: usize = 10;

/// Why no engine could be run at all.
#[derive(Debug)]
pub enum PlanError {
    /// No engine is usable: the operator must configure one.
    NoneConfigured,
    /// The asked-for engine lacks its key or index.
    NotAvailable(EngineId),
    /// The admin does not allow this engine or mode.
    NotAllowed(String),
}

/// The recommended engine: the first usable in [`PREFERENCE`]; `auto` when none is.
pub fn recommended(set: &EngineSet) -> String {
    PREFERENCE
        .iter()
        .find(|id| set.usable(**id).is_some())
        .map(|id| id.as_str().to_owned())
        .unwrap_or_else(|| "auto".into())
}

/// Runs the engines the mode calls for. `remembered` is the answer memory's answer for this
/// sample, as an outcome (engine `memory`): `auto` gives it after the Library's shortcut and
/// before any cloud engine; a named engine and the ensemble are still asked.
pub async fn run(
    mode: Mode,
    set: &EngineSet,
    primary_setting: &str,
    user_default: Option<&str>,
    sample: &super::engine::Sample,
    deadline: Instant,
    remembered: Option<Outcome>,
) -> Result<Result<Outcome, EngineError>, PlanError> {
    match mode {
        Mode::Engine(id) => {
            if !set.allows(id.as_str()) {
                return Err(PlanError::NotAllowed(id.as_str().into()));
            }
            let engine = set.usable(id).ok_or(PlanError::NotAvailable(id))?;
            Ok(run_single(engine, sample, deadline).await)
        }
        Mode::Ensemble => {
            if !set.allows("ensemble") {
                return Err(PlanError::NotAllowed("ensemble".into()));
            }
            let engines = set.all_usable();
            if engines.is_empty() {
                return Err(PlanError::NoneConfigured);
            }
            Ok(run_ensemble(&engines, sample, deadline).await)
        }
        Mode::Auto => run_auto(set, primary_setting, user_default, sample, deadline, remembered).await,
    }
}

async fn run_auto(
    set: &EngineSet,
    primary_setting: &str,
    user_default: Option<&str>,
    sample: &super::engine::Sample,
    deadline: Instant,
    remembered: Option<Outcome>,
) -> Result<Result<Outcome, EngineError>, PlanError> {
    let usable = set.all_usable();
    if usable.is_empty() {
        return Err(PlanError::NoneConfigured);
    }
    // The mode auto resolves to, per SPEC section 4.
    let pick =
        [Some(primary_setting), user_default].into_iter().flatten().filter_map(|s| s.parse::<Mode>().ok()).find(|m| {
            match m {
                Mode::Auto => false,
                Mode::Ensemble => set.ensemble_usable(),
                Mode::Engine(id) => set.usable(*id).is_some(),
            }
        });
    let mut library_vote = None;
    let mut library_failed = None;
    if pick != Some(Mode::Engine(EngineId::Library))
        && let Some(lib) = set.usable(EngineId::Library)
    {
        // The library answers in well under a second; give it a bounded slice of time.
        let lib_deadline = deadline.min(Instant::now() + Duration::from_secs(20));
        let out = run_single(lib, sample, lib_deadline).await;
        match out {
            Ok(o) if o.best.as_ref().is_some_and(|b| b.confidence >= LIBRARY_SHORTCUT) => return Ok(Ok(o)),
            Ok(o) => library_vote = Some(o),
            Err(e) => {
                tracing::warn!(error = %e, "library engine failed; asking the cloud engines");
                library_failed = Some(e);
            }
        }
    }
    if let Some(o) = remembered {
        return Ok(Ok(o));
    }
    if pick == Some(Mode::Ensemble) {
        let engines: Vec<_> =
            usable.into_iter().filter(|e| e.id() != EngineId::Library || library_vote.is_none()).collect();
        return Ok(run_ensemble(&engines, sample, deadline).await);
    }
    // One engine: the pick, then the others in preference order as fallbacks.
    let mut order: Vec<EngineId> = Vec::new();
    if let Some(Mode::Engine(id)) = pick {
        order.push(id);
    }
    let rest: Vec<EngineId> = PREFERENCE.iter().copied().filter(|id| !order.contains(id)).collect();
    order.extend(rest);
    // The library's failure stands when no other engine gets to answer.
    let library_asked = library_vote.is_some() || library_failed.is_some();
    let mut last_err = library_failed;
    for id in order {
        if id == EngineId::Library && library_asked {
            continue;
        }
        let Some(engine) = set.usable(id) else { continue };
        if Instant::now() >= deadline {
            break;
        }
        match run_single(engine, sample, deadline).await {
            Ok(o) => return Ok(Ok(o)),
            Err(e) => {
                tracing::warn!(engine = %id, error = %e, "engine failed; trying the next one");
                last_err = Some(e);
            }
        }
    }
    // Only the library was usable and it found nothing: that is the answer.
    if let Some(o) = library_vote {
        return Ok(Ok(o));
    }
    Ok(Err(last_err.unwrap_or(EngineError::Timeout)))
}

async fn timed(
    engine: &Arc<dyn Engine>,
    sample: &super::engine::Sample,
    deadline: Instant,
) -> (Result<EngineAnswer, EngineError>, u64) {
    let start = Instant::now();
    let res = match tokio::time::timeout_at(deadline, engine.identify(sample, deadline)).await {
        Ok(r) => r,
        Err(_) => Err(EngineError::Timeout),
    };
    let ms = start.elapsed().as_millis() as u64;
    super::runs::report(engine.id(), &res, ms);
    (res, ms)
}

pub async fn run_single(
    engine: Arc<dyn Engine>,
    sample: &super::engine::Sample,
    deadline: Instant,
) -> Result<Outcome, EngineError> {
    let (res, ms) = timed(&engine, sample, deadline).await;
    let answer = res?;
    let mut ranked = answer.candidates;
    ranked.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    ranked.truncate(MAX_RANKED);
    let best = ranked.first().cloned();
    let vote = EngineVote {
        engine: engine.id().as_str().into(),
        title: best.as_ref().map(|b| b.title.clone()),
        year: best.as_ref().and_then(|b| b.year),
        confidence: best.as_ref().map(|b| b.confidence),
        error: None,
        ms,
        agreed: best.is_some(),
    };
    Ok(Outcome { best, engine: engine.id().as_str().into(), model: Some(answer.model), votes: vec![vote], ranked })
}

pub async fn run_ensemble(
    engines: &[Arc<dyn Engine>],
    sample: &super::engine::Sample,
    deadline: Instant,
) -> Result<Outcome, EngineError> {
    use futures::StreamExt;
    let mut pending: futures::stream::FuturesUnordered<_> = engines
        .iter()
        .map(|e| async move {
            let (res, ms) = timed(e, sample, deadline).await;
            (e.id(), res, ms)
        })
        .collect();
    let started = Instant::now();
    let mut runs = Vec::new();
    let mut soft_deadline = deadline;
    loop {
        match tokio::time::timeout_at(soft_deadline, pending.next()).await {
            Ok(Some(run)) => {
                if run.1.as_ref().is_ok_and(|a| !a.candidates.is_empty()) {
                    // Once one engine has answered, the others get a bounded grace period.
                    soft_deadline = soft_deadline.min(Instant::now() + ENSEMBLE_GRACE);
                }
                runs.push(run);
            }
            Ok(None) => break,
            Err(_) => break,
        }
    }
    drop(pending);
    let waited = started.elapsed().as_millis() as u64;
    for e in engines {
        if !runs.iter().any(|(id, _, _)| *id == e.id()) {
            let timed_out = Err(EngineError::Timeout);
            super::runs::report(e.id(), &timed_out, waited);
            runs.push((e.id(), timed_out, waited));
        }
    }
    vote(runs)
}

/// How long the ensemble waits for the rest after the first engine has answered.
pub const ENSEMBLE_GRACE: Duration = Duration::from_secs(20);

/// The ensemble vote over each engine's answer (see the module docs).
pub fn vote(runs: Vec<(EngineId, Result<EngineAnswer, EngineError>, u64)>) -> Result<Outcome, EngineError> {
    struct Group {
        members: Vec<(EngineId, Candidate)>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut votes = Vec::new();
    let mut errors = Vec::new();
    let mut models = Vec::new();
    for (id, res, ms) in runs {
        match res {
            Err(e) => {
                tracing::warn!(engine = %id, error = %e, "ensemble member failed");
                votes.push(EngineVote {
                    engine: id.as_str().into(),
                    error: Some(crate::config::redact(&e.to_string()).into_owned()),
                    ms,
                    ..Default::default()
                });
                errors.push(e);
            }
            Ok(answer) => {
                models.push(format!("{id}:{}", answer.model));
                let top = answer.candidates.first().cloned();
                votes.push(EngineVote {
                    engine: id.as_str().into(),
                    title: top.as_ref().map(|c| c.title.clone()),
                    year: top.as_ref().and_then(|c| c.year),
                    confidence: top.as_ref().map(|c| c.confidence),
                    error: None,
                    ms,
                    agreed: false,
                });
                for c in answer.candidates {
                    match groups.iter_mut().find(|g| g.members.iter().any(|(_, m)| same_title(m, &c))) {
                        Some(g) => match g.members.iter_mut().find(|(e, _)| *e == id) {
                            Some((_, existing)) if existing.confidence >= c.confidence => {}
                            Some(slot) => slot.1 = c,
                            None => g.members.push((id, c)),
                        },
                        None => groups.push(Group { members: vec![(id, c)] }),
                    }
                }
            }
        }
    }
    if votes.iter().all(|v| v.error.is_some()) {
        // Every engine failed: report the most telling error.
        return Err(errors.into_iter().min_by_key(error_rank).unwrap_or(EngineError::Timeout));
    }
    let score = |g: &Group| 1.0 - g.members.iter().map(|(_, c)| 1.0 - f64::from(c.confidence)).product::<f64>();
    let better = |a: &Group, b: &Group| score(a).total_cmp(&score(b)).then(a.members.len().cmp(&b.members.len()));
    let win = groups.iter().enumerate().max_by(|(_, a), (_, b)| better(a, b)).map(|(i, _)| i);
    // The candidates list: the winner first, then the other groups by score.
    let mut order: Vec<usize> = (0..groups.len()).filter(|i| Some(*i) != win).collect();
    order.sort_by(|a, b| better(&groups[*b], &groups[*a]));
    let mut ranked: Vec<Candidate> = win
        .into_iter()
        .chain(order)
        .take(MAX_RANKED)
        .filter_map(|i| {
            let g = &groups[i];
            let mut top = g.members.iter().max_by(|a, b| a.1.confidence.total_cmp(&b.1.confidence))?.1.clone();
            top.confidence = score(g).min(0.99) as f32;
            Some(top)
        })
        .collect();
    let winner = win.map(|i| groups.swap_remove(i));
    let Some(g) = winner else {
        return Ok(Outcome { best: None, engine: "ensemble".into(), model: Some(models.join(", ")), votes, ranked });
    };
    let confidence = score(&g).min(0.99) as f32;
    let agreed: Vec<EngineId> = g.members.iter().map(|(e, _)| *e).collect();
    for v in &mut votes {
        v.agreed = agreed.iter().any(|e| e.as_str() == v.engine);
    }
    let mut members = g.members;
    members.sort_by(|a, b| b.1.confidence.total_cmp(&a.1.confidence));
    let mut best = members[0].1.clone();
    for (_, m) in &members[1..] {
        best.tmdb_id = best.tmdb_id.or(m.tmdb_id);
        best.imdb_id = best.imdb_id.clone().or_else(|| m.imdb_id.clone());
        best.year = best.year.or(m.year);
        if best.season.is_none() && best.episode.is_none() {
            best.season = m.season;
            best.episode = m.episode;
        }
        best.timestamp = best.timestamp.or(m.timestamp);
        best.preview_url = best.preview_url.clone().or_else(|| m.preview_url.clone());
        if best.also_in.is_empty() {
            best.also_in = m.also_in.clone();
        }
        for r in &m.reasons {
            if !best.reasons.contains(r) {
                best.reasons.push(r.clone());
            }
        }
        for f in &m.fun_facts {
            if !best.fun_facts.contains(f) && best.fun_facts.len() < 6 {
                best.fun_facts.push(f.clone());
            }
        }
    }
    best.confidence = confidence;
    // The winner's list entry carries what its members merged.
    if let Some(first) = ranked.first_mut() {
        *first = best.clone();
    }
    Ok(Outcome { best: Some(best), engine: "ensemble".into(), model: Some(models.join(", ")), votes, ranked })
}

/// Lower is more telling for the person: a config problem beats a timeout.
fn error_rank(e: &EngineError) -> u8 {
    match e {
        EngineError::NotConfigured(_) => 0,
        EngineError::Provider { .. } => 1,
        EngineError::Refused(_) => 2,
        EngineError::RateLimited => 3,
        EngineError::Unavailable(_)
        | EngineError::BadAnswer(_)
        | EngineError::Unsupported(_)
        | EngineError::IndexUnavailable(_) => 4,
        EngineError::Timeout => 5,
    }
}

/// Whether two candidates name the same title.
pub fn same_title(a: &Candidate, b: &Candidate) -> bool {
    if let (Some(x), Some(y)) = (a.tmdb_id, b.tmdb_id) {
        return x == y && a.kind == b.kind;
    }
    if let (Some(x), Some(y)) = (&a.imdb_id, &b.imdb_id) {
        return x == y;
    }
    normalise_title(&a.title) == normalise_title(&b.title)
        && match (a.year, b.year) {
            (Some(x), Some(y)) => (x - y).abs() <= 1,
            _ => true,
        }
}

/// Lower case, `&` as `and`, punctuation dropped, a leading article removed.
pub fn normalise_title(t: &str) -> String {
    let t = t.to_lowercase().replace('&', " and ");
    let cleaned: String = t.chars().map(|c| if c.is_alphanumeric() { c } else { ' ' }).collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    let words = match words.first() {
        Some(&"the") | Some(&"a") | Some(&"an") if words.len() > 1 => &words[1..],
        _ => &words[..],
    };
    words.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identify::engine::TitleKind;

    fn cand(title: &str, year: i32, c: f32) -> Candidate {
        Candidate { title: title.into(), year: Some(year), kind: TitleKind::Movie, confidence: c, ..Default::default() }
    }
    fn ans(c: Vec<Candidate>) -> Result<EngineAnswer, EngineError> {
        Ok(EngineAnswer { candidates: c, model: "m".into() })
    }

    #[test]
    fn agreement_raises_confidence() {
        let out = vote(vec![
            (EngineId::Openai, ans(vec![cand("The Matrix", 1999, 0.7)]), 10),
            (EngineId::Google, ans(vec![cand("Matrix", 1999, 0.7)]), 10),
            (EngineId::Xai, ans(vec![cand("Dark City", 1998, 0.8)]), 10),
        ])
        .unwrap();
        let best = out.best.unwrap();
        assert_eq!(best.title, "The Matrix");
        assert!((best.confidence - 0.91).abs() < 1e-3, "{}", best.confidence);
        assert!(out.votes.iter().find(|v| v.engine == "openai").unwrap().agreed);
        assert!(!out.votes.iter().find(|v| v.engine == "xai").unwrap().agreed);
    }

    #[test]
    fn a_failing_member_abstains_but_all_failing_fails() {
        let out = vote(vec![
            (EngineId::Openai, Err(EngineError::Timeout), 10),
            (EngineId::Google, ans(vec![cand("Heat", 1995, 0.6)]), 10),
        ])
        .unwrap();
        assert_eq!(out.best.unwrap().title, "Heat");
        assert!(out.votes[0].error.is_some());
        assert!(vote(vec![(EngineId::Openai, Err(EngineError::Timeout), 1)]).is_err());
    }

    #[test]
    fn titles_normalise() {
        assert_eq!(normalise_title("The Lord of the Rings: The Two Towers"), "lord of the rings the two towers");
        assert_eq!(normalise_title("Law & Order"), "law and order");
        assert!(!same_title(&cand("Dune", 1984, 0.5), &cand("Dune", 2021, 0.5)));
    }
}
