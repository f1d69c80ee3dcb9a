//! Identification, the heart of Reelfind: from an uploaded screenshot or clip to a
//! stored, enriched identification result.
//!
//! ```text
//! POST /api/identify ── routes::api::identify
//!   upload    stream to a temp file under {data_dir}/tmp (size cap), sniff the real type
//!   media     image: EXIF-oriented, pixel-bounded, JPEG ≤ 1568 px
//!             video: ffprobe limits, frames at scene changes, optional 16 kHz mono audio
//!   engines   mode → one engine, or the ensemble (concurrent, one deadline, votes)
//!   resolve   best candidate → TMDB id; enrich with TMDB details and OMDb
//!   store     identifications row (never the media), history for signed-in users
//! ```
//!
//! Engines plug in through the [`Engine`] trait ([`engine`] module): they receive a
//! prepared [`Sample`] and a deadline, and answer with ranked [`Candidate`]s. Cloud engines
//! are built per request from keys in the environment or admin settings; long-lived
//! engines (the Library engine) are registered once in [`EngineRegistry`]
//! (`AppState::engines`).
pub mod admission;
pub mod engine;
pub mod engines;
pub mod enrich;
pub mod guard;
pub mod media;
pub mod memory;
pub mod metadata;
pub mod pipeline;
pub mod public;
pub mod registry;
pub mod result;
pub mod runs;
pub mod select;
pub mod store;
pub mod transcribe;
pub mod upload;

pub use engine::{
    Candidate, Engine, EngineAnswer, EngineError, EngineId, Frame, MediaKind, Mode, Sample, SceneAppearance, Timestamp,
    TitleKind,
};
pub use guard::IdentifyState;
pub use registry::{EngineRegistry, EngineSet};
