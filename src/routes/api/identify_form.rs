//! The multipart form of `POST /api/identify` (SPEC section 7): its fields read with their
//! bounds, the `file` field streamed into the request's folder through
//! `identify::upload::write_upload`, or the `url` field fetched by `identify::upload::fetch_url`.
use crate::error::{AppError, ErrorCode};
use crate::identify::upload::{Upload, UploadError, UploadRules, WorkDir, fetch_url, write_upload};
use crate::outbound::StrictClient;
use crate::routes::multipart::{BodyFault, FormError, MeteredField, MeteredForm};

/// The fields of `POST /api/identify`.
pub struct IdentifyForm {
    pub upload: Upload,
    pub mode: String,
    pub use_audio_analysis: bool,
    pub use_enhanced_analysis: bool,
    /// `candidates`: how many of the best candidates to list beside the winner (0 = none).
    pub candidates: usize,
}

/// Most candidates an answer lists.
pub const MAX_CANDIDATES: usize = 10;

const MAX_TEXT_FIELD: usize = 256;

/// Longest `url` field accepted.
const MAX_URL: usize = 2048;

/// Reads the whole form, streaming the `file` field to `work`, or (with a `url` field
/// instead) fetching the URL with the strict outbound client into `work`, sniffed and
/// bounded exactly like an upload.
pub async fn read_form(
    mut multipart: MeteredForm,
    work: &WorkDir,
    rules: &UploadRules,
    outbound: &StrictClient,
) -> Result<IdentifyForm, AppError> {
    let mut upload = None;
    let mut url = None;
    let mut mode = String::new();
    let mut use_audio = true;
    let mut enhanced = true;
    let mut candidates = 0;
    while let Some(field) = multipart.next_field().await.map_err(multipart_error(rules))? {
        let name = field.name().unwrap_or("").to_owned();
        match name.as_str() {
            "file" => {
                if upload.is_some() {
                    return Err(AppError::BadRequest("Please upload one file at a time.".into())
                        .with_code(ErrorCode::TooManyFiles));
                }
                if url.is_some() {
                    return Err(both());
                }
                upload = Some(stream_file(field, work, rules).await?);
            }
            "url" => {
                if upload.is_some() {
                    return Err(both());
                }
                url = Some(bounded_field(field, rules, MAX_URL).await?).filter(|u| !u.is_empty());
            }
            "candidates" => {
                let v = text_field(field, rules).await?;
                candidates = match v.parse::<usize>() {
                    Ok(n) if n <= MAX_CANDIDATES => n,
                    _ => {
                        return Err(AppError::BadRequest(format!(
                            "candidates must be a whole number from 0 to {MAX_CANDIDATES}."
                        )));
                    }
                };
            }
            "mode" => mode = text_field(field, rules).await?,
            "useAudioAnalysis" => use_audio = parse_flag(&text_field(field, rules).await?, true),
            "useEnhancedAnalysis" => enhanced = parse_flag(&text_field(field, rules).await?, true),
            // Unknown fields are read and ignored (bounded like the others).
            _ => {
                text_field(field, rules).await?;
            }
        }
    }
    let upload = match (upload, url) {
        (Some(_), Some(_)) => return Err(both()),
        (Some(u), None) => u,
        (None, Some(url)) => fetch_url(&url, work, rules, outbound).await?,
        (None, None) => {
            return Err(AppError::BadRequest(
                "No file was uploaded. Attach an image or video in the \"file\" field, or give its address in the \"url\" field.".into(),
            )
            .with_code(ErrorCode::FileMissing));
        }
    };
    Ok(IdentifyForm { upload, mode, use_audio_analysis: use_audio, use_enhanced_analysis: enhanced, candidates })
}

fn both() -> AppError {
    AppError::BadRequest("Send either a file or a url, not both.".into()).with_code(ErrorCode::TooManyFiles)
}

fn parse_flag(v: &str, default: bool) -> bool {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => true,
        "false" | "0" | "no" | "off" => false,
        _ => default,
    }
}

/// A form that could not be read: over the size limit, cut off, too slow, or malformed.
pub fn form_error(rules: &UploadRules, e: FormError) -> AppError {
    match e {
        FormError::Body(BodyFault::TooLarge) => UploadError::TooLarge { max_mb: rules.max_mb }.into(),
        FormError::Body(BodyFault::TooSlow) => {
            AppError::UploadTimeout("Upload timed out. Please try a smaller file or check your connection.".into())
        }
        FormError::Body(BodyFault::Malformed) => {
            AppError::BadRequest("The upload could not be read: the form's parts never ended. Please try again.".into())
                .with_code(ErrorCode::UploadInterrupted)
        }
        FormError::NotMultipart => {
            AppError::BadRequest("Send the upload as a multipart/form-data form (a \"file\" or \"url\" field).".into())
                .with_code(ErrorCode::InvalidBody)
        }
        FormError::Parse(e) => UploadError::Interrupted(e.body_text()).into(),
    }
}

fn multipart_error(rules: &UploadRules) -> impl Fn(FormError) -> AppError + '_ {
    move |e| form_error(rules, e)
}

async fn text_field(field: MeteredField<'_>, rules: &UploadRules) -> Result<String, AppError> {
    bounded_field(field, rules, MAX_TEXT_FIELD).await
}

async fn bounded_field(mut field: MeteredField<'_>, rules: &UploadRules, max: usize) -> Result<String, AppError> {
    let mut buf = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(multipart_error(rules))? {
        buf.extend_from_slice(&chunk);
        if buf.len() > max {
            return Err(AppError::BadRequest("A form field is too long.".into()));
        }
    }
    Ok(String::from_utf8_lossy(&buf).trim().to_owned())
}

/// The `file` field streamed into `work`. A fault of the raw body is kept aside while the
/// writer sees only "interrupted", and wins when the writer stops.
async fn stream_file(field: MeteredField<'_>, work: &WorkDir, rules: &UploadRules) -> Result<Upload, AppError> {
    use futures::TryStreamExt;
    let filename = field.file_name().map(str::to_owned);
    let fault = std::sync::Mutex::new(None);
    let chunks = field.map_err(|e| {
        let what = match &e {
            FormError::Parse(p) => p.body_text(),
            other => format!("{other:?}"),
        };
        if let Ok(mut f) = fault.lock() {
            *f = Some(e);
        }
        UploadError::Interrupted(what)
    });
    match write_upload(chunks, filename, work, rules).await {
        Ok(u) => Ok(u),
        Err(e) => match fault.lock().ok().and_then(|mut f| f.take()) {
            Some(fe) => Err(form_error(rules, fe)),
            None => Err(e.into()),
        },
    }
}
