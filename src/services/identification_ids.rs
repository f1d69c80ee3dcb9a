//! The ids of identifications (share links, history): their making and their shape, used
//! by the identification store and by every service that is handed such an id.
use base64::Engine as _;

/// 128 random bits, base64url without padding (22 characters).
pub fn new_id() -> String {
    let bytes: [u8; 16] = rand::random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Plausible id shape, checked before touching the database.
pub fn valid_id(id: &str) -> bool {
    (16..=32).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}
