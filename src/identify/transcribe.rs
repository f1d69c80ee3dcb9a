//! Speech to text of a clip's sound track, for audio analysis: OpenAI's
//! `audio/transcriptions` (multipart, provider-apis.md §1.5) when an OpenAI key is set,
//! else Gemini's native audio input. The transcript goes into every engine's prompt and
//! into the result's `audioAnalysisResults`.
//!
//! The sound track (at most the clip's measured length, see `media`) is streamed from disk
//! on each attempt, never held whole in memory: a retry reads the file again.
use std::path::{Path, PathBuf};

use base64::Engine as _;
use tokio::io::AsyncReadExt;
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
        let len = tokio::fs::metadata(wav)
            .await
            .map_err(|e| EngineError::Unsupported(format!("sound track unreadable: {e}")))?
            .len();
        match self {
            Self::OpenAi { provider, model } => {
                let key = provider.key.as_ref().ok_or_else(|| EngineError::NotConfigured("OPENAI_API_KEY".into()))?;
                let url = provider.url("audio/transcriptions");
                let body = send_with_retry(EngineId::Openai, deadline, &Plain, || {
                    let part = reqwest::multipart::Part::stream_with_length(file_body(wav.to_path_buf(), None), len)
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
            Self::Gemini(g) => g.transcribe(wav, deadline).await,
        }
    }
}

/// Bytes read from disk per chunk (a multiple of 3, so base64 chunks join seamlessly).
const CHUNK: usize = 48 * 1024;

/// The file as a request body, read in chunks when the request is sent; with `base64`, each
/// chunk is encoded and the body is `prefix`, the encoded file, `suffix`.
pub fn file_body(path: PathBuf, base64: Option<(Vec<u8>, Vec<u8>)>) -> reqwest::Body {
    struct State {
        path: Option<PathBuf>,
        file: Option<tokio::fs::File>,
        prefix: Option<Vec<u8>>,
        suffix: Option<Vec<u8>>,
        encode: bool,
    }
    let encode = base64.is_some();
    let (prefix, suffix) = base64.map_or((None, None), |(p, s)| (Some(p), Some(s)));
    let state = State { path: Some(path), file: None, prefix, suffix, encode };
    let stream = futures::stream::unfold(state, |mut st| async move {
        if let Some(p) = st.prefix.take() {
            return Some((Ok(bytes::Bytes::from(p)), st));
        }
        if let Some(path) = st.path.take() {
            match tokio::fs::File::open(&path).await {
                Ok(f) => st.file = Some(f),
                Err(e) => return Some((Err(e), st)),
            }
        }
        if let Some(file) = st.file.as_mut() {
            let mut buf = vec![0u8; CHUNK];
            let mut filled = 0;
            while filled < CHUNK {
                match file.read(&mut buf[filled..]).await {
                    Ok(0) => break,
                    Ok(n) => filled += n,
                    Err(e) => return Some((Err(e), st)),
                }
            }
            if filled > 0 {
                buf.truncate(filled);
                let chunk =
                    if st.encode { base64::engine::general_purpose::STANDARD.encode(&buf).into_bytes() } else { buf };
                return Some((Ok(bytes::Bytes::from(chunk)), st));
            }
            st.file = None;
        }
        st.suffix.take().map(|s| (Ok(bytes::Bytes::from(s)), st))
    });
    reqwest::Body::wrap_stream(stream)
}

struct Plain;
impl ErrorStyle for Plain {}
