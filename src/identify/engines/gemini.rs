//! Google Gemini `generateContent`: frames as `inlineData` parts, JSON output through
//! `responseMimeType` + `responseJsonSchema` (provider-apis.md §3.2). The key travels in
//! the `x-goog-api-key` header. Also speech to text of a clip's sound track.
use std::time::Duration;

use async_trait::async_trait;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    ErrorStyle, Provider, SYSTEM_PROMPT, answer_schema, b64, parse_answer, remaining, require_key, send_with_retry,
    user_prompt,
};
use crate::identify::engine::{Engine, EngineAnswer, EngineError, EngineId, Sample};

pub struct Gemini(pub Provider);

impl Gemini {
    pub fn request_body(&self, sample: &Sample) -> Value {
        let mut parts: Vec<Value> = sample
            .frames
            .iter()
            .map(|f| json!({"inlineData": {"mimeType": "image/jpeg", "data": b64(&f.jpeg)}}))
            .collect();
        parts.push(json!({"text": user_prompt(sample)}));
        json!({
            "systemInstruction": {"parts": [{"text": SYSTEM_PROMPT}]},
            "contents": [{"role": "user", "parts": parts}],
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseJsonSchema": answer_schema(),
                "maxOutputTokens": 2048,
                "temperature": 0.2
            }
        })
    }

    fn endpoint(&self) -> String {
        self.0.url(&format!("models/{}:generateContent", self.0.model))
    }

    async fn generate(&self, body: &Value, deadline: Instant) -> Result<Value, EngineError> {
        let key = require_key(&self.0, EngineId::Google)?;
        let url = self.endpoint();
        let bytes = send_with_retry(EngineId::Google, deadline, &GeminiErrors, || {
            self.0.http.post(&url).header("x-goog-api-key", key.expose()).timeout(remaining(deadline)).json(body)
        })
        .await?;
        serde_json::from_slice(&bytes).map_err(|e| EngineError::BadAnswer(format!("unexpected response shape: {e}")))
    }

    /// Speech to text of a WAV sound track with Gemini's native audio input. The file is
    /// streamed into the JSON body as base64 (see `transcribe::file_body`), never held whole.
    pub async fn transcribe(&self, wav: &std::path::Path, deadline: Instant) -> Result<String, EngineError> {
        const MARK: &str = "@@REELFIND_AUDIO@@";
        let body = json!({
            "contents": [{"role": "user", "parts": [
                {"inlineData": {"mimeType": "audio/wav", "data": MARK}},
                {"text": "Transcribe the spoken dialogue in this audio verbatim. Answer with the transcript only; answer with nothing if there is no speech."}
            ]}],
            "generationConfig": {"temperature": 0.0, "maxOutputTokens": 4096}
        })
        .to_string();
        let (prefix, suffix) = body.split_once(MARK).unwrap_or((&body, ""));
        let key = require_key(&self.0, EngineId::Google)?;
        let url = self.endpoint();
        let bytes = send_with_retry(EngineId::Google, deadline, &GeminiErrors, || {
            let stream = crate::identify::transcribe::file_body(
                wav.to_path_buf(),
                Some((prefix.as_bytes().to_vec(), suffix.as_bytes().to_vec())),
            );
            self.0
                .http
                .post(&url)
                .header("x-goog-api-key", key.expose())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .timeout(remaining(deadline))
                .body(stream)
        })
        .await?;
        let v: Value = serde_json::from_slice(&bytes)
            .map_err(|e| EngineError::BadAnswer(format!("unexpected response shape: {e}")))?;
        Ok(answer_text(&v)?.trim().to_owned())
    }
}

/// Concatenated text of the first candidate, skipping thoughts; a blocked prompt is a refusal.
fn answer_text(v: &Value) -> Result<String, EngineError> {
    let Some(cand) = v["candidates"].get(0) else {
        let reason = v["promptFeedback"]["blockReason"].as_str().unwrap_or("no candidates");
        return Err(EngineError::Refused(reason.to_owned()));
    };
    let text: String = cand["content"]["parts"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter(|p| p["thought"] != true)
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .concat()
        })
        .unwrap_or_default();
    if text.is_empty() {
        let reason = cand["finishReason"].as_str().unwrap_or("empty answer");
        return Err(if matches!(reason, "SAFETY" | "PROHIBITED_CONTENT" | "BLOCKLIST" | "SPII" | "IMAGE_SAFETY") {
            EngineError::Refused(reason.to_owned())
        } else {
            EngineError::BadAnswer(reason.to_owned())
        });
    }
    Ok(text)
}

struct GeminiErrors;
impl ErrorStyle for GeminiErrors {
    fn retryable(&self, status: reqwest::StatusCode, body: &[u8]) -> bool {
        if status.as_u16() == 429 {
            // A per-day quota does not clear by waiting seconds.
            return !String::from_utf8_lossy(body).contains("PerDay");
        }
        matches!(status.as_u16(), 408 | 500 | 502 | 503 | 504)
    }
    fn body_retry_delay(&self, body: &[u8]) -> Option<Duration> {
        let v: Value = serde_json::from_slice(body).ok()?;
        v["error"]["details"].as_array()?.iter().find_map(|d| {
            let s = d["retryDelay"].as_str()?;
            s.trim_end_matches('s').parse::<f64>().ok().map(|secs| Duration::from_millis((secs * 1000.0) as u64))
        })
    }
}

#[async_trait]
impl Engine for Gemini {
    fn id(&self) -> EngineId {
        EngineId::Google
    }

    fn available(&self) -> bool {
        self.0.key.is_some()
    }

    async fn identify(&self, sample: &Sample, deadline: Instant) -> Result<EngineAnswer, EngineError> {
        if sample.frames.is_empty() {
            return Err(EngineError::Unsupported("no frames to look at".into()));
        }
        let v = self.generate(&self.request_body(sample), deadline).await?;
        let text = answer_text(&v)?;
        Ok(EngineAnswer { candidates: parse_answer(Value::String(text))?, model: self.0.model.clone() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quota_errors_read_retry_info_and_per_day_quotas_are_final() {
        let body = br#"{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED",
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "26s"}]}}"#;
        assert_eq!(GeminiErrors.body_retry_delay(body), Some(Duration::from_secs(26)));
        assert!(GeminiErrors.retryable(reqwest::StatusCode::TOO_MANY_REQUESTS, body));
        let daily = br#"{"error": {"code": 429, "status": "RESOURCE_EXHAUSTED", "details": [{"violations": [{"quotaId": "GenerateRequestsPerDayPerProjectPerModel"}]}]}}"#;
        assert!(!GeminiErrors.retryable(reqwest::StatusCode::TOO_MANY_REQUESTS, daily));
        assert!(!GeminiErrors.retryable(reqwest::StatusCode::BAD_REQUEST, b"{}"));
    }

    #[test]
    fn a_blocked_prompt_is_a_refusal() {
        let v = json!({"promptFeedback": {"blockReason": "SAFETY"}});
        assert!(matches!(answer_text(&v), Err(EngineError::Refused(r)) if r == "SAFETY"));
        let v = json!({"candidates": [{"content": {"parts": [{"text": "thinking", "thought": true}, {"text": "{\"candidates\":[]}"}]}}]});
        assert_eq!(answer_text(&v).unwrap(), "{\"candidates\":[]}");
    }
}
