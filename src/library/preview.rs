//! Preview links that expire: `/api/library/preview/{token}`, where the token carries the
//! video id, the moment and an expiry time, signed with HMAC-SHA256 under a key kept in the
//! library folder. Stateless, so any node sharing the library folder can serve the link.
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use sha2::Sha256;

/// How long a preview link works (a day: stored results are reopened from history).
pub const PREVIEW_TTL: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PreviewError {
    #[error("This preview link is not valid.")]
    Invalid,
    #[error("This preview link has expired.")]
    Expired,
    #[error("This preview is no longer available.")]
    Gone,
}

pub struct Signer {
    key: [u8; 32],
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

impl Signer {
    /// Reads the key file, or creates one with fresh random bytes (readable by the owner only).
    pub fn load_or_create(path: &Path) -> anyhow::Result<Self> {
        if let Ok(bytes) = std::fs::read(path)
            && let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice())
        {
            return Ok(Self { key });
        }
        let key: [u8; 32] = rand::random();
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, key)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o600))?;
        }
        std::fs::rename(&tmp, path)?;
        Ok(Self { key })
    }

    fn mac(&self, payload: &str) -> Vec<u8> {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload.as_bytes());
        mac.finalize().into_bytes()[..18].to_vec()
    }

    pub fn sign(&self, video_id: u32, at_ms: u32) -> String {
        self.sign_until(video_id, at_ms, now() + PREVIEW_TTL.as_secs())
    }

    pub fn sign_until(&self, video_id: u32, at_ms: u32, expires: u64) -> String {
        let payload = format!("{video_id}.{at_ms}.{expires}");
        format!("{}.{}", URL_SAFE_NO_PAD.encode(&payload), URL_SAFE_NO_PAD.encode(self.mac(&payload)))
    }

    /// The video id and moment of a valid, unexpired token.
    pub fn verify(&self, token: &str) -> Result<(u32, u32), PreviewError> {
        let (payload, sig) = token.split_once('.').ok_or(PreviewError::Invalid)?;
        let payload = URL_SAFE_NO_PAD.decode(payload).map_err(|_| PreviewError::Invalid)?;
        let payload = String::from_utf8(payload).map_err(|_| PreviewError::Invalid)?;
        let sig = URL_SAFE_NO_PAD.decode(sig).map_err(|_| PreviewError::Invalid)?;
        if sig.len() < 16 {
            return Err(PreviewError::Invalid);
        }
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(payload.as_bytes());
        mac.verify_truncated_left(&sig).map_err(|_| PreviewError::Invalid)?;
        let mut parts = payload.split('.').map(str::parse::<u64>);
        let (Some(Ok(id)), Some(Ok(at)), Some(Ok(exp)), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(PreviewError::Invalid);
        };
        if exp < now() {
            return Err(PreviewError::Expired);
        }
        Ok((id as u32, at as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_expire_and_resist_tampering() {
        let dir = tempfile::tempdir().unwrap();
        let s = Signer::load_or_create(&dir.path().join("k")).unwrap();
        let t = s.sign(7, 1250);
        assert_eq!(s.verify(&t), Ok((7, 1250)));
        let old = s.sign_until(7, 1250, 10);
        assert_eq!(s.verify(&old), Err(PreviewError::Expired));
        let forged = format!("{}.{}", URL_SAFE_NO_PAD.encode("8.1250.99999999999"), t.split_once('.').unwrap().1);
        assert_eq!(s.verify(&forged), Err(PreviewError::Invalid));
        let again = Signer::load_or_create(&dir.path().join("k")).unwrap();
        assert_eq!(again.verify(&t), Ok((7, 1250)));
    }
}
