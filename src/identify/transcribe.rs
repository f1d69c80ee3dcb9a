//! Speech to text of a clip's sound track, for audio analysis: OpenAI's
//! `audio/transcriptions` (multipart, provider-apis.md §1.5) when an OpenAI key is set,
//! else Gemini's native audio input. The transcript goes into every engine's prompt and
//! into the result's `audioAnalysisResults`.
use std::path::Path;

use tokio::time::Instant;

use super::engine::{EngineError, EngineId};
use super::engines::gemini::Gemini;
use super::engines::{ErrorStyle, Provider, remaining, send_with_retry};
use crate::config::IdentifyConfig;
use crate::services::settings::SettingsMap;

/// Who can transcribe right now.
pub enum Transcriber {
    OpenAi { provider: Provider, model: String },
    Gemini(Gemini),
}

impl Transcriber {
    pub fn pick(cfg: &IdentifyConfig, settings: &SettingsMap, http: &reqwest::Client) -> Option<Self> {
        let openai = Provider::resolve(&cfg.openai, EngineId::Openai, settings, http);
        if openai.key.is_some() {
            return Some(Self::OpenAi { provider: openai, model: cfg.openai_transcribe_model.clone() });
        }
        let gemini = Provider::resolve(&cfg.gemini, EngineId::Google, settings, http);
        gemini.key.is_some().then(|| Self::Gemini(Gemini(gemini)))
    }

    /// A label for the result, e.g. `openai:gpt-4o-mini-transcribe`.
    pub fn label(&self) -> String {
        match self {
            Self::OpenAi { model, .. } => format!("openai:{model}"),
            Self::Gemini(g) => format!("google:{}", g.0.model),
        }
    }

    pub async fn transcribe(&self, wav: &Path, deadline: Instant) -> Result<String, EngineError> {
        let bytes =
            tokio::fs::read(wav).await.map_err(|e| EngineError::Unsupported(format!("sound track unreadable: {e}")))?;
        match self {
            Self::OpenAi { provider, model } => {
                let key = provider.key.as_ref().ok_or_else(|| EngineError::NotConfigured("OPENAI_API_KEY".into()))?;
                let url = provider.url("audio/transcriptions");
                let body = send_with_retry(EngineId::Openai, deadline, &Plain, || {
                    let part = reqwest::multipart::Part::bytes(bytes.clone())
                        .file_name("audio.wav")
                        .mime_str("audio/wav")
                        .expect("static MIME type parses");
                    let form = reqwest::multipart::Form::new()
                        .text("model", model.clone())
                        .text("response_format", "json")
                        .part("file", part);
                    provider.http.post(&url).bearer_auth(key.expose()).timeout(remaining(deadline)).multipart(form)
                })
                .await?;
                let v: serde_json::Value = serde_json::from_slice(&body)
                    .map_err(|e| EngineError::BadAnswer(format!("transcription is not JSON: {e}")))?;
                Ok(v["text"].as_str().unwrap_or("").trim().to_owned())
            }
            Self::Gemini(g) => g.transcribe(&bytes, deadline).await,
        }
    }
}

struct Plain;
impl ErrorStyle for Plain {}
