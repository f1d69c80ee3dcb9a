//! The cloud vision engines and what they share: the prompt, the answer schema, parsing
//! the answer into candidates, and the retrying HTTP call with error mapping.
//!
//! Every provider gets the same instructions and the same JSON Schema (every property
//! required, nullable as `["T","null"]`, `additionalProperties: false`), which OpenAI strict
//! mode, xAI, Anthropic tools and Gemini's `responseJsonSchema` all accept.
pub mod anthropic;
pub mod gemini;
pub mod openai;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::engine::{Candidate, Engine, EngineError, EngineId, Sample, TitleKind};
use crate::config::{IdentifyConfig, ProviderConfig, Secret};
use crate::services::settings::SettingsMap;

/// One cloud engine's connection: key, base URL, model, and the shared HTTP client.
#[derive(Clone, Debug)]
pub struct Provider {
    pub key: Option<Secret>,
    pub base_url: String,
    pub model: String,
    pub http: reqwest::Client,
}

impl Provider {
    /// The env key wins; else the admin setting `{engine}_api_key`; the `{engine}_model`
    /// setting may override the model.
    pub fn resolve(cfg: &ProviderConfig, engine: EngineId, settings: &SettingsMap, http: &reqwest::Client) -> Self {
        let setting = |k: String| settings.get(&k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
        let key = cfg.api_key.clone().or_else(|| setting(format!("{engine}_api_key")).map(Secret::new));
        let model = setting(format!("{engine}_model")).unwrap_or_else(|| cfg.model.clone());
        Self { key, base_url: cfg.base_url.as_str().trim_end_matches('/').to_owned(), model, http: http.clone() }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url, path.trim_start_matches('/'))
    }
}

/// The variable an operator sets to enable an engine.
pub fn key_variable(engine: EngineId) -> &'static str {
    match engine {
        EngineId::Google => "GEMINI_API_KEY",
        EngineId::Openai => "OPENAI_API_KEY",
        EngineId::Xai => "XAI_API_KEY",
        EngineId::Anthropic => "ANTHROPIC_API_KEY",
        EngineId::Library => "a library index (reelfind library add PATH)",
    }
}

/// The cloud engines, built from configuration and current settings.
pub fn build(
    cfg: &IdentifyConfig,
    settings: &SettingsMap,
    http: &reqwest::Client,
) -> BTreeMap<EngineId, Arc<dyn Engine>> {
    let mut m: BTreeMap<EngineId, Arc<dyn Engine>> = BTreeMap::new();
    m.insert(
        EngineId::Openai,
        Arc::new(openai::OpenAiCompatible::openai(Provider::resolve(&cfg.openai, EngineId::Openai, settings, http))),
    );
    m.insert(
        EngineId::Xai,
        Arc::new(openai::OpenAiCompatible::xai(Provider::resolve(&cfg.xai, EngineId::Xai, settings, http))),
    );
    m.insert(
        EngineId::Anthropic,
        Arc::new(anthropic::Anthropic(Provider::resolve(&cfg.anthropic, EngineId::Anthropic, settings, http))),
    );
    m.insert(
        EngineId::Google,
        Arc::new(gemini::Gemini(Provider::resolve(&cfg.gemini, EngineId::Google, settings, http))),
    );
    m
}

pub const SYSTEM_PROMPT: &str = "You are a film and television expert. You identify the movie or TV show \
(and, for TV, the season and episode when you can tell) that still frames come from. Use every clue: \
recognisable actors, sets, costumes, props, on-screen text, logos, cinematography, era, and any dialogue \
transcript provided. Answer only with the JSON schema. List up to 3 candidates, most likely first, each \
with an honest confidence between 0 and 1 (0.9+ only when you are sure). Give short evidence strings \
naming what you saw, and up to 3 true, verifiable fun facts about the title. If you cannot tell, return \
an empty candidates list; never invent a title.";

/// The question for one sample, with the transcript when there is one.
pub fn user_prompt(sample: &Sample) -> String {
    let mut q = match sample.kind {
        super::engine::MediaKind::Image => {
            "Which movie or TV show is this screenshot from? Include the release year.".to_owned()
        }
        super::engine::MediaKind::Video => format!(
            "These {} frames are taken, in order, from one video clip{}. Which movie or TV show is it from? \
             Include the release year.",
            sample.frames.len(),
            sample.duration.map(|d| format!(" of {d:.0} seconds")).unwrap_or_default()
        ),
    };
    if let Some(t) = sample.transcript.as_deref().filter(|t| !t.trim().is_empty()) {
        let t: String = t.chars().take(4000).collect();
        q.push_str("\n\nDialogue heard in the clip (speech to text):\n\"\"\"\n");
        q.push_str(&t);
        q.push_str("\n\"\"\"");
    }
    q
}

/// The answer schema (JSON Schema, strict-mode compatible).
pub fn answer_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["candidates"],
        "properties": {
            "candidates": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["media_type", "title", "year", "season", "episode", "confidence", "imdb_id", "evidence", "fun_facts"],
                    "properties": {
                        "media_type": {"type": "string", "enum": ["movie", "tv"]},
                        "title": {"type": "string"},
                        "year": {"type": ["integer", "null"]},
                        "season": {"type": ["integer", "null"]},
                        "episode": {"type": ["integer", "null"]},
                        "confidence": {"type": "number"},
                        "imdb_id": {"type": ["string", "null"]},
                        "evidence": {"type": "array", "items": {"type": "string"}},
                        "fun_facts": {"type": "array", "items": {"type": "string"}}
                    }
                }
            }
        }
    })
}

#[derive(Deserialize)]
struct RawAnswer {
    #[serde(default)]
    candidates: Vec<RawCandidate>,
}

#[derive(Deserialize)]
struct RawCandidate {
    #[serde(default)]
    media_type: Option<String>,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    year: Option<Value>,
    #[serde(default)]
    season: Option<Value>,
    #[serde(default)]
    episode: Option<Value>,
    #[serde(default)]
    confidence: Option<Value>,
    #[serde(default)]
    imdb_id: Option<String>,
    #[serde(default)]
    evidence: Vec<String>,
    #[serde(default)]
    fun_facts: Vec<String>,
}

fn as_i64(v: &Option<Value>) -> Option<i64> {
    match v {
        Some(Value::Number(n)) => n.as_i64().or_else(|| n.as_f64().map(|f| f as i64)),
        Some(Value::String(s)) => s.trim().get(..4.min(s.trim().len())).and_then(|p| p.parse().ok()),
        _ => None,
    }
}

/// Turns the model's JSON (text or object) into candidates, dropping empty titles and
/// clamping confidences. A missing confidence is the SPEC's default 0.7.
pub fn parse_answer(value: Value) -> Result<Vec<Candidate>, EngineError> {
    let value = match value {
        Value::String(s) => serde_json::from_str(strip_fences(&s))
            .map_err(|e| EngineError::BadAnswer(format!("answer is not JSON: {e}")))?,
        v => v,
    };
    let raw: RawAnswer = serde_json::from_value(value)
        .map_err(|e| EngineError::BadAnswer(format!("answer has the wrong shape: {e}")))?;
    let mut out: Vec<Candidate> = raw
        .candidates
        .into_iter()
        .filter_map(|c| {
            let title = c.title?.trim().to_owned();
            if title.is_empty() || title.eq_ignore_ascii_case("unknown") {
                return None;
            }
            let confidence = match &c.confidence {
                Some(Value::Number(n)) => n.as_f64().unwrap_or(0.7),
                Some(Value::String(s)) => s.trim_end_matches('%').parse::<f64>().unwrap_or(0.7),
                _ => 0.7,
            };
            let confidence = if confidence > 1.0 { confidence / 100.0 } else { confidence };
            let kind = match c.media_type.as_deref() {
                Some("tv") | Some("series") | Some("episode") => TitleKind::Tv,
                _ => TitleKind::Movie,
            };
            Some(Candidate {
                title,
                year: as_i64(&c.year).and_then(|y| i32::try_from(y).ok()).filter(|y| (1870..=2100).contains(y)),
                kind,
                season: as_i64(&c.season).and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0),
                episode: as_i64(&c.episode).and_then(|v| u32::try_from(v).ok()).filter(|v| *v > 0),
                confidence: confidence.clamp(0.0, 1.0) as f32,
                reasons: c.evidence.into_iter().filter(|s| !s.trim().is_empty()).take(8).collect(),
                fun_facts: c.fun_facts.into_iter().filter(|s| !s.trim().is_empty()).take(5).collect(),
                tmdb_id: None,
                imdb_id: c.imdb_id.map(|s| s.trim().to_owned()).filter(|s| super::metadata::valid_imdb_id(s)),
                timestamp: None,
                preview_url: None,
                also_in: Vec::new(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    out.truncate(3);
    Ok(out)
}

fn strip_fences(s: &str) -> &str {
    let t = s.trim();
    let t = t.strip_prefix("```json").or_else(|| t.strip_prefix("```")).unwrap_or(t);
    t.strip_suffix("```").unwrap_or(t).trim()
}

/// How a provider's error body is read and whether a status is retryable.
pub trait ErrorStyle: Sync {
    /// The provider's message from an error body (raw text if it is not JSON).
    fn message(&self, body: &[u8]) -> String {
        error_message(body)
    }
    /// Whether this failed response may succeed when tried again.
    fn retryable(&self, status: StatusCode, body: &[u8]) -> bool {
        let _ = body;
        matches!(status.as_u16(), 408 | 429 | 500 | 502 | 503 | 504 | 529)
    }
    /// A wait the provider asked for in its body (Gemini's `RetryInfo.retryDelay`).
    fn body_retry_delay(&self, body: &[u8]) -> Option<Duration> {
        let _ = body;
        None
    }
}

/// Reads the common error shapes in order: OpenAI/Google `{error:{message}}`, Anthropic
/// `{type:"error",error:{message}}`, xAI `{code,error:"text"}`.
pub fn error_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body) {
        if let Some(m) = v["error"]["message"].as_str() {
            return m.to_owned();
        }
        if let Some(m) = v["error"].as_str() {
            return m.to_owned();
        }
        if let Some(m) = v["message"].as_str() {
            return m.to_owned();
        }
    }
    String::from_utf8_lossy(body).chars().take(300).collect()
}

pub const MAX_ATTEMPTS: u32 = 3;

/// Sends a request built by `build`, retrying retryable failures with exponential
/// backoff (1 s, 2 s, ... with jitter) or the provider's `Retry-After`, never past the
/// deadline. Returns the body of the first success.
pub async fn send_with_retry<F>(
    engine: impl std::fmt::Display,
    deadline: Instant,
    style: &dyn ErrorStyle,
    build: F,
) -> Result<bytes::Bytes, EngineError>
where
    F: Fn() -> reqwest::RequestBuilder,
{
    let mut attempt = 0;
    loop {
        attempt += 1;
        let now = Instant::now();
        if now >= deadline {
            return Err(EngineError::Timeout);
        }
        let res = tokio::time::timeout_at(deadline, build().send()).await;
        let (wait, last_err) = match res {
            Err(_) => return Err(EngineError::Timeout),
            Ok(Err(e)) => {
                // reqwest's text names the URL, and a URL may carry a key (OMDb, TMDB v3).
                let timeout = e.is_timeout();
                let builder = e.is_builder();
                let text = crate::config::redact(&e.without_url().to_string()).into_owned();
                tracing::warn!(%engine, attempt, error = %text, "provider request failed");
                if builder {
                    return Err(EngineError::Unavailable(text));
                }
                (None, EngineError::Unavailable(if timeout { "timed out".into() } else { text }))
            }
            Ok(Ok(resp)) => {
                let status = resp.status();
                let headers = resp.headers().clone();
                let body = match tokio::time::timeout_at(deadline, resp.bytes()).await {
                    Err(_) => return Err(EngineError::Timeout),
                    Ok(Err(e)) => {
                        let text = crate::config::redact(&e.without_url().to_string()).into_owned();
                        tracing::warn!(%engine, attempt, error = %text, "provider answer broke off");
                        bytes::Bytes::new()
                    }
                    Ok(Ok(b)) => b,
                };
                if status.is_success() && body.is_empty() {
                    (None, EngineError::Unavailable("the provider's answer broke off".into()))
                } else {
                    if status.is_success() {
                        return Ok(body);
                    }
                    // A provider may quote the key it refused; the message is logged and
                    // may be stored with the result.
                    let message = crate::config::redact(&style.message(&body)).into_owned();
                    tracing::warn!(%engine, attempt, status = status.as_u16(), %message, "provider answered with an error");
                    if !style.retryable(status, &body) {
                        return Err(EngineError::Provider { status: status.as_u16(), message });
                    }
                    let err = if status == StatusCode::TOO_MANY_REQUESTS {
                        EngineError::RateLimited
                    } else {
                        EngineError::Unavailable(format!("HTTP {}: {message}", status.as_u16()))
                    };
                    (retry_after(&headers).or_else(|| style.body_retry_delay(&body)), err)
                }
            }
        };
        if attempt >= MAX_ATTEMPTS {
            return Err(last_err);
        }
        if let Some(w) = wait {
            // The provider's own wait does not fit in our time: give up now with its error.
            if Instant::now() + w >= deadline {
                return Err(last_err);
            }
        }
        backoff(attempt, wait, deadline).await?;
    }
}

async fn backoff(attempt: u32, wait: Option<Duration>, deadline: Instant) -> Result<(), EngineError> {
    let wait = wait.unwrap_or_else(|| {
        let base = Duration::from_millis(1000 * 2u64.pow(attempt.saturating_sub(1)));
        let jitter = Duration::from_millis(rand::random::<u64>() % 250);
        (base + jitter).min(Duration::from_secs(30))
    });
    let until = Instant::now() + wait;
    if until >= deadline {
        return Err(EngineError::Timeout);
    }
    tokio::time::sleep_until(until).await;
    Ok(())
}

/// `Retry-After` / `retry-after` in seconds (the form every provider here uses).
fn retry_after(h: &HeaderMap) -> Option<Duration> {
    let v = h.get("retry-after")?.to_str().ok()?.trim();
    v.parse::<f64>().ok().filter(|s| s.is_finite() && *s >= 0.0).map(|s| Duration::from_millis((s * 1000.0) as u64))
}

/// The deadline as a timeout for reqwest (so a stuck connection is abandoned too).
pub fn remaining(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now()).max(Duration::from_millis(1))
}

/// Maps a missing key to the operator-facing message.
pub fn require_key(p: &Provider, engine: EngineId) -> Result<&Secret, EngineError> {
    p.key.as_ref().ok_or_else(|| {
        EngineError::NotConfigured(format!(
            "The {engine} engine has no API key. Set {} (or the admin setting {engine}_api_key).",
            key_variable(engine)
        ))
    })
}

/// base64 of a frame (standard alphabet, padded).
pub fn b64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_parse_leniently() {
        let c = parse_answer(json!(
            "```json\n{\"candidates\":[{\"media_type\":\"tv\",\"title\":\"Breaking Bad\",\"year\":2008,\"season\":1,\"episode\":null,\"confidence\":0.9,\"imdb_id\":\"tt0903747\",\"evidence\":[\"RV in the desert\"],\"fun_facts\":[]},{\"media_type\":\"movie\",\"title\":\"\",\"year\":null,\"season\":null,\"episode\":null,\"confidence\":0.1,\"imdb_id\":null,\"evidence\":[],\"fun_facts\":[]}]}\n```"
        ))
        .unwrap();
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].title, "Breaking Bad");
        assert_eq!(c[0].kind, TitleKind::Tv);
        assert_eq!(c[0].season, Some(1));
        assert_eq!(c[0].imdb_id.as_deref(), Some("tt0903747"));
        assert!(parse_answer(json!("not json")).is_err());
        let c = parse_answer(json!({"candidates":[{"title":"Heat","year":"1995","confidence":85}]})).unwrap();
        assert_eq!(c[0].year, Some(1995));
        assert!((c[0].confidence - 0.85).abs() < 1e-6);
    }
}
