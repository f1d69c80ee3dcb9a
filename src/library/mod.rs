//! The Library engine: the operator's own video files, indexed offline, searched by a
//! screenshot or a clip to the exact title, episode and second.
//!
//! Where things are:
//! - [`index`]: [`LibraryIndex`], the library folder and its catalog (list, remove, edit).
//! - [`add`]: indexing files and folders (skip unchanged, re-index changed).
//! - [`fingerprint`]: which frames of a video are kept, and hashing a query picture.
//! - [`picture`]: a grey picture and a rectangle of it, shared by every finder.
//! - [`hash`]: the 256-bit DCT frame hash (PDQ-like), mirror twin, flat-border removal.
//! - [`borders`]: finding the picture inside bars of any colour, blurred copies and players.
//! - [`overlay`]: burned-in subtitles and corner logos painted out of a query picture.
//! - [`screen`]: a phone photo's screen found and warped back to a rectangle.
//! - [`refine`]: a screen found a little off its corners moved onto a candidate frame.
//! - [`light`]: a photo's glare and noise taken off before a screen's flat edges are judged.
//! - [`window`]: a picture inside a picture (a video in a web page, picture-in-picture).
//! - [`store`]: `catalog.json` plus one memory-mapped segment file per video.
//! - [`scan`]: the all-cores Hamming scan over the segments.
//! - [`query`]: a still cut into the hypotheses of every tier.
//! - [`policy`]: the tiers, their thresholds and when one look or both must agree, in one
//!   table.
//! - [`still`]: searching a screenshot (whole frames, then the crop, upper, screen, window,
//!   shape and corner tiers).
//! - [`verify`]: near-equal candidates of a still decided by their frames in the source.
//! - [`clip`]: searching a clip by picture, and fused with its soundtrack.
//! - [`vote`]: how a clip's frames agree on one offset into a video.
//! - [`insets`]: a clip's screens and windows (a phone's video of a screen, a video in a
//!   window), found on frames decoded larger and cut out of every frame.
//! - [`stretches`]: the static stretches of a video, found while it is indexed.
//! - [`shot`]: the whole shot a still matches, and the other videos that share it.
//! - [`answer`]: the match a search returns, and distance as similarity.
//! - [`audio`]: landmark fingerprints of the soundtrack, the audio tier for clips;
//!   [`audio_search`]: a clip's soundtrack searched over the library's landmark files.
//! - [`frames`]: ffmpeg/ffprobe decoding, previews, soundtrack.
//! - [`meta`]: title/year/season/episode from `.nfo` files and names.
//! - [`milvus`]: the client of a Milvus server that can hold the entries instead of the folder.
//! - [`edit`]: the admin's validated metadata edit.
//! - [`preview`]: signed, expiring preview links.
//! - [`engine`]: the identify pipeline's engine over the index; [`cli`]: `reelfind library`;
//!   [`demo`]: the demo clip indexed on first run.
//!
//! Every method of [`LibraryIndex`] blocks (CPU and subprocess work), so async callers wrap
//! it in `spawn_blocking`.
pub mod add;
pub mod answer;
pub mod audio;
pub mod audio_search;
pub mod bench;
pub mod borders;
pub mod cli;
pub mod clip;
pub mod demo;
pub mod edit;
pub mod engine;
#[cfg(test)]
pub(crate) mod fake_index;
pub mod fingerprint;
pub mod frames;
pub mod glare;
pub mod hash;
pub mod index;
pub mod insets;
pub mod light;
pub mod meta;
pub mod milvus;
pub mod overlay;
pub mod picture;
pub mod policy;
pub mod preview;
pub mod query;
pub mod refine;
pub mod scan;
pub mod screen;
pub mod shot;
pub mod still;
pub mod store;
pub mod stretches;
pub mod verify;
pub mod vote;
pub mod window;

pub use add::{AddOutcome, AddReport, Progress, Quiet, VIDEO_EXTENSIONS, partial_hash};
pub use answer::{Appearance, LibraryMatch, SearchAnswer, similarity};
pub use fingerprint::{Fingerprints, fingerprint_video};
pub use index::LibraryIndex;
pub use policy::{CLIP_CANDIDATE, GUESS_ACCEPT, STILL_ACCEPT};
pub use query::{hash_image, hash_image_hypotheses};
