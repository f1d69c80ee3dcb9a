//! The Library engine: the operator's own video files, indexed offline, searched by a
//! screenshot or a clip to the exact title, episode and second.
//!
//! The floor plan, from the ground up (the pipeline in words: `src/library/README.md`):
//! - [`picture`]: what is inside a picture, for the index and the query alike: the 256-bit
//!   frame hash ([`picture::hash`]), bars and blurred copies ([`picture::borders`]),
//!   subtitles and logos painted out ([`picture::overlay`]), a phone photo's screen
//!   ([`picture::screen`], with [`picture::light`] and [`picture::glare`] taking a photo's
//!   light off first) and a picture inside a picture ([`picture::window`]).
//! - [`index`]: [`LibraryIndex`], the library folder and its catalog ([`index::store`]), and
//!   the seam every search asks ([`index::entries::EntryIndex`]): the segments scanned on
//!   all cores ([`index::mapped`], [`index::scan`]) or a Milvus collection
//!   ([`index::milvus`], through the client in [`milvus`]); a video's static stretches
//!   ([`index::stretches`]).
//! - [`frames`]: ffmpeg/ffprobe decoding, previews, soundtrack; [`fingerprint`]: which frames
//!   of a video are kept; [`meta`]: titles from `.nfo` files and names; [`add`]: indexing
//!   files and folders (skip unchanged, re-index changed).
//! - [`policy`]: the tiers, their thresholds and when one look or both must agree, in one
//!   table.
//! - [`still`]: searching a screenshot (`still::StillSearch`): the picture cut into every
//!   tier's hypotheses ([`still::query`]), screens moved onto a candidate
//!   ([`still::refine`]), near-equal moments decided by the source ([`still::verify`]).
//! - [`clip`]: searching a clip (`clip::ClipSearch`): the frames' vote on one offset
//!   ([`clip::vote`]), a clip's screens and windows ([`clip::insets`]); fused with the
//!   soundtrack's answer.
//! - [`audio`]: landmark fingerprints of the soundtrack and their search
//!   ([`clip::soundtrack`]).
//! - [`shot`]: the whole shot a match spans and the other videos that share it; [`answer`]:
//!   the match a search returns.
//! - The doors: [`engine`] (the identify pipeline's engine), [`cli`] (`reelfind library`),
//!   [`edit`] (the admin's validated edit), [`preview`] (signed, expiring preview links),
//!   [`demo`] (the demo clip indexed on first run), [`bench`] (what the benchmark reads).
//!
//! Every method of [`LibraryIndex`] blocks (CPU and subprocess work), so async callers wrap
//! it in `spawn_blocking`.
pub mod add;
pub mod answer;
pub mod audio;
pub mod bench;
pub mod blocking;
pub mod cli;
pub mod clip;
pub mod demo;
pub mod edit;
pub mod engine;
pub mod fingerprint;
pub mod frames;
pub mod index;
pub mod meta;
pub mod milvus;
pub mod picture;
pub mod policy;
pub mod preview;
pub mod shot;
pub mod still;

pub use add::{AddOutcome, AddReport, Progress, Quiet, VIDEO_EXTENSIONS, partial_hash};
pub use answer::{Appearance, LibraryMatch, SearchAnswer, similarity};
pub use fingerprint::{Fingerprints, fingerprint_video};
pub use index::LibraryIndex;
pub use policy::{CLIP_CANDIDATE, GUESS_ACCEPT, STILL_ACCEPT};
pub use still::query::{hash_image, hash_image_hypotheses};
