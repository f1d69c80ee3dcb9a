//! OpenAI and xAI: Chat Completions with image parts as data URLs and a strict JSON Schema
//! `response_format` (provider-apis.md §1.2, §4). xAI speaks the same wire format but has
//! its own error body (`{code, error: "text"}`) and accepts only JPEG/PNG (we send JPEG).
use async_trait::async_trait;
use reqwest::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    ErrorStyle, Provider, SYSTEM_PROMPT, answer_schema, b64, parse_answer, remaining, require_key, send_with_retry,
    user_prompt,
};
use crate::identify::engine::{Engine, EngineAnswer, EngineError, EngineId, Sample};

pub struct OpenAiCompatible {
    id: EngineId,
    provider: Provider,
}

impl OpenAiCompatible {
    pub fn openai(provider: Provider) -> Self {
        Self { id: EngineId::Openai, provider }
    }
    pub fn xai(provider: Provider) -> Self {
        Self { id: EngineId::Xai, provider }
    }

    /// The Chat Completions body for a sample.
    pub fn request_body(&self, sample: &Sample) -> Value {
        let detail = if sample.enhanced { "high" } else { "auto" };
        let mut content = vec![json!({"type": "text", "text": user_prompt(sample)})];
        for f in &sample.frames {
            content.push(json!({
                "type": "image_url",
                "image_url": {"url": format!("data:image/jpeg;base64,{}", b64(&f.jpeg)), "detail": detail}
            }));
        }
        json!({
            "model": self.provider.model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": content}
            ],
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "scene_identification", "strict": true, "schema": answer_schema()}
            },
            "max_completion_tokens": 2000
        })
    }
}

struct OpenAiErrors;
impl ErrorStyle for OpenAiErrors {
    fn retryable(&self, status: StatusCode, body: &[u8]) -> bool {
        // 429 with insufficient_quota is billing: retrying cannot help.
        if status == StatusCode::TOO_MANY_REQUESTS {
            let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
            return v["error"]["code"] != "insufficient_quota" && v["error"]["type"] != "insufficient_quota";
        }
        matches!(status.as_u16(), 408 | 500 | 502 | 503 | 504)
    }
}

#[derive(Deserialize)]
struct ChatResponse {
    #[serde(default)]
    choices: Vec<Choice>,
}
#[derive(Deserialize)]
struct Choice {
    message: Message,
    #[serde(default)]
    finish_reason: Option<String>,
}
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    refusal: Option<String>,
}

#[async_trait]
impl Engine for OpenAiCompatible {
    fn id(&self) -> EngineId {
        self.id
    }

    fn available(&self) -> bool {
        self.provider.key.is_some()
    }

    async fn identify(&self, sample: &Sample, deadline: Instant) -> Result<EngineAnswer, EngineError> {
        let key = require_key(&self.provider, self.id)?;
        if sample.frames.is_empty() {
            return Err(EngineError::Unsupported("no frames to look at".into()));
        }
        let body = self.request_body(sample);
        let url = self.provider.url("chat/completions");
        let bytes = send_with_retry(self.id, deadline, &OpenAiErrors, || {
            self.provider.http.post(&url).bearer_auth(key.expose()).timeout(remaining(deadline)).json(&body)
        })
        .await?;
        let resp: ChatResponse = serde_json::from_slice(&bytes)
            .map_err(|e| EngineError::BadAnswer(format!("unexpected chat completion shape: {e}")))?;
        let choice = resp.choices.into_iter().next().ok_or_else(|| EngineError::BadAnswer("no choices".into()))?;
        if let Some(r) = choice.message.refusal.filter(|r| !r.is_empty()) {
            return Err(EngineError::Refused(r));
        }
        if choice.finish_reason.as_deref() == Some("content_filter") {
            return Err(EngineError::Refused("content filter".into()));
        }
        let text = choice.message.content.ok_or_else(|| EngineError::BadAnswer("empty answer".into()))?;
        if choice.finish_reason.as_deref() == Some("length") {
            tracing::warn!(engine = %self.id, "answer hit the token limit; parsing what arrived");
        }
        Ok(EngineAnswer { candidates: parse_answer(Value::String(text))?, model: self.provider.model.clone() })
    }
}
