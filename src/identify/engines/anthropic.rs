//! Anthropic Messages API: base64 image blocks before the question, and the answer as a
//! forced tool call whose `input_schema` is our answer schema (provider-apis.md §2.4; works
//! on every tool-capable Claude model).
use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{
    ErrorStyle, Provider, SYSTEM_PROMPT, answer_schema, b64, parse_answer, remaining, require_key, send_with_retry,
    user_prompt,
};
use crate::identify::engine::{Engine, EngineAnswer, EngineError, EngineId, Sample};

pub const ANTHROPIC_VERSION: &str = "2023-06-01";
const TOOL: &str = "report_identification";

pub struct Anthropic(pub Provider);

impl Anthropic {
    pub fn request_body(&self, sample: &Sample) -> Value {
        let mut content: Vec<Value> = sample
            .frames
            .iter()
            .map(|f| json!({"type": "image", "source": {"type": "base64", "media_type": "image/jpeg", "data": b64(&f.jpeg)}}))
            .collect();
        content.push(json!({"type": "text", "text": format!("{}\nReport your answer with the {TOOL} tool.", user_prompt(sample))}));
        json!({
            "model": self.0.model,
            "max_tokens": 2000,
            "system": SYSTEM_PROMPT,
            "messages": [{"role": "user", "content": content}],
            "tools": [{
                "name": TOOL,
                "description": "Report the identified movie or TV show candidates.",
                "input_schema": answer_schema()
            }],
            "tool_choice": {"type": "tool", "name": TOOL, "disable_parallel_tool_use": true}
        })
    }
}

struct AnthropicErrors;
impl ErrorStyle for AnthropicErrors {
    fn retryable(&self, status: reqwest::StatusCode, _body: &[u8]) -> bool {
        matches!(status.as_u16(), 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
    }
}

#[derive(Deserialize)]
struct MessageResponse {
    #[serde(default)]
    content: Vec<Value>,
    #[serde(default)]
    stop_reason: Option<String>,
}

#[async_trait]
impl Engine for Anthropic {
    fn id(&self) -> EngineId {
        EngineId::Anthropic
    }

    fn available(&self) -> bool {
        self.0.key.is_some()
    }

    async fn identify(&self, sample: &Sample, deadline: Instant) -> Result<EngineAnswer, EngineError> {
        let key = require_key(&self.0, EngineId::Anthropic)?;
        if sample.frames.is_empty() {
            return Err(EngineError::Unsupported("no frames to look at".into()));
        }
        let body = self.request_body(sample);
        let url = self.0.url("v1/messages");
        let bytes = send_with_retry(EngineId::Anthropic, deadline, &AnthropicErrors, || {
            self.0
                .http
                .post(&url)
                .header("x-api-key", key.expose())
                .header("anthropic-version", ANTHROPIC_VERSION)
                .timeout(remaining(deadline))
                .json(&body)
        })
        .await?;
        let resp: MessageResponse = serde_json::from_slice(&bytes)
            .map_err(|e| EngineError::BadAnswer(format!("unexpected message shape: {e}")))?;
        if resp.stop_reason.as_deref() == Some("refusal") {
            return Err(EngineError::Refused("the model declined".into()));
        }
        // Prefer the tool call; fall back to a JSON text block.
        let answer = resp
            .content
            .iter()
            .find(|b| b["type"] == "tool_use" && b["name"] == TOOL)
            .map(|b| b["input"].clone())
            .or_else(|| resp.content.iter().find(|b| b["type"] == "text").map(|b| b["text"].clone()))
            .ok_or_else(|| EngineError::BadAnswer("no tool call or text in the answer".into()))?;
        Ok(EngineAnswer { candidates: parse_answer(answer)?, model: self.0.model.clone() })
    }
}
