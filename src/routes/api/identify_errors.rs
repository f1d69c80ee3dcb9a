//! Where the identification work's own errors (`identify::*`, which know no HTTP) become
//! answers: a status, the SPEC's text and a machine code.
use axum::http::StatusCode;

use crate::error::{AppError, ErrorCode};
use crate::identify::admission::Refused;
use crate::identify::engine::EngineError;
use crate::identify::engines::key_variable;
use crate::identify::guard::Denied;
use crate::identify::media::MediaError;
use crate::identify::pipeline::{self, PipelineError};
use crate::identify::select::PlanError;
use crate::identify::upload::UploadError;
use crate::outbound::OutboundError;

impl From<Refused> for AppError {
    fn from(r: Refused) -> Self {
        if r == Refused::UploadsPerAddress {
            return AppError::retry_later(r.to_string(), r.retry_after());
        }
        let e = AppError::RetryLater {
            status: StatusCode::SERVICE_UNAVAILABLE,
            message: r.to_string(),
            secs: r.retry_after(),
        };
        match r {
            Refused::Stopping => e.with_code(ErrorCode::ShuttingDown),
            Refused::Busy { .. } | Refused::PreviewsBusy | Refused::UploadsPerAddress => e,
        }
    }
}

impl From<Denied> for AppError {
    fn from(d: Denied) -> Self {
        match d {
            Denied::TooMany(decision) => AppError::throttled(d.to_string(), &decision),
            Denied::GuestUsedUp => AppError::SignInRequired(d.to_string()),
            Denied::Db(e) => e.into(),
        }
    }
}

impl From<PipelineError> for AppError {
    fn from(e: PipelineError) -> Self {
        match e {
            PipelineError::Plan(e) => plan_error(e),
            PipelineError::Media(e) => media_error(e),
            PipelineError::Engine(e) => engine_error(e),
            PipelineError::Refused(r) => r.into(),
            PipelineError::NoMatch => AppError::NoMatch,
            PipelineError::Db(e) => e.into(),
        }
    }
}

impl From<PlanError> for AppError {
    fn from(e: PlanError) -> Self {
        plan_error(e)
    }
}

impl From<UploadError> for AppError {
    fn from(e: UploadError) -> Self {
        match e {
            UploadError::TooLarge { .. } => AppError::PayloadTooLarge(e.to_string()).with_code(ErrorCode::FileTooLarge),
            UploadError::Empty | UploadError::NotMedia { .. } | UploadError::NotAllowed { .. } => {
                AppError::Unprocessable(e.to_string()).with_code(ErrorCode::InvalidFileFormat)
            }
            UploadError::Interrupted(_) => AppError::BadRequest(e.to_string()).with_code(ErrorCode::UploadInterrupted),
            UploadError::UrlRedirected(_) | UploadError::UrlStatus(_) => AppError::Unprocessable(e.to_string()),
            UploadError::Url(e) => url_error(e),
            UploadError::Io(e) => AppError::Internal(e.into()),
        }
    }
}

/// The person's message for a URL the strict client refused or could not fetch.
fn url_error(e: OutboundError) -> AppError {
    match e {
        OutboundError::BadUrl(why) => AppError::BadRequest(format!("The url cannot be used: {why}.")),
        OutboundError::NotPublic => AppError::Unprocessable(
            "The url points to a private, local or reserved address. Only public http(s) addresses can be fetched."
                .into(),
        ),
        OutboundError::Unresolved => AppError::Unprocessable("The url's host name could not be found.".into()),
        OutboundError::Timeout => AppError::Unprocessable(
            "Fetching the url took too long. Please try another address or upload the file.".into(),
        ),
        OutboundError::TooLarge(_) => AppError::PayloadTooLarge("The file at the url is too large.".into()),
        OutboundError::Network(_) => {
            AppError::Unprocessable("The url could not be fetched. Please check the address or upload the file.".into())
        }
    }
}

/// How long a client is asked to wait when the Library's index does not answer: about what
/// a restarted Milvus takes to load its collection again.
pub const LIBRARY_RETRY_SECS: u64 = 15;

/// The whole identification ran out of time.
pub fn timeout_error(secs: u64) -> AppError {
    AppError::Timeout(format!(
        "Identification timed out after {secs} seconds. Please try again with a smaller file or a shorter clip."
    ))
}

fn plan_error(e: PlanError) -> AppError {
    match e {
        PlanError::NoneConfigured => {
            AppError::ServiceUnavailable(pipeline::NO_ENGINE.into()).with_code(ErrorCode::EngineUnavailable)
        }
        PlanError::NotAvailable(id) => AppError::ServiceUnavailable(format!(
            "The {id} engine is not available on this server. The operator must set {} to enable it; \
             or choose Auto to use an available engine.",
            key_variable(id)
        ))
        .with_code(ErrorCode::EngineUnavailable),
        PlanError::NotAllowed(name) => AppError::Forbidden(format!(
            "The {name} engine is disabled by the administrator. Please choose another engine."
        ))
        .with_code(ErrorCode::EngineDisabled),
    }
}

fn media_error(e: MediaError) -> AppError {
    match e {
        MediaError::Invalid(m) => AppError::Unprocessable(m).with_code(ErrorCode::InvalidFileFormat),
        MediaError::Limit(m) => AppError::Unprocessable(m),
        // Only a shutdown leaves anyone to read this: a deadline or a client gone drop the answer.
        MediaError::Cancelled => Refused::Stopping.into(),
        MediaError::Internal(m) => AppError::Internal(anyhow::anyhow!(m)),
    }
}

fn engine_error(e: EngineError) -> AppError {
    match e {
        EngineError::NotConfigured(m) => AppError::ServiceUnavailable(m).with_code(ErrorCode::EngineUnavailable),
        EngineError::Timeout => {
            AppError::Timeout("The AI engine timed out before answering. Please try again in a moment.".into())
        }
        EngineError::RateLimited => AppError::ServiceUnavailable(
            "The AI engine is busy right now (rate limited). Please try again in a minute or choose another engine."
                .into(),
        )
        .with_code(ErrorCode::EngineBusy),
        EngineError::Provider { status, message } => {
            tracing::error!(status, %message, "engine rejected the request");
            AppError::BadGateway(
                "The AI engine could not process this request. Please try again or choose another engine.".into(),
            )
        }
        EngineError::Unavailable(m) | EngineError::BadAnswer(m) => {
            tracing::error!(%m, "engine failed");
            AppError::BadGateway("The AI engine is temporarily unavailable. Please try again in a moment.".into())
        }
        EngineError::Refused(m) => {
            tracing::warn!(%m, "engine refused");
            AppError::BadGateway("The AI engine declined to analyse this media. Please try a different frame.".into())
        }
        EngineError::Unsupported(m) => AppError::Unprocessable(m),
        EngineError::IndexUnavailable(m) => {
            tracing::error!(%m, "the Library index does not answer");
            AppError::RetryLater {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message: "The Library's index is unavailable right now. Please try again in a moment.".into(),
                secs: LIBRARY_RETRY_SECS,
            }
            .with_code(ErrorCode::LibraryUnavailable)
        }
    }
}
