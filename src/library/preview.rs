//! Preview links that expire: `/api/library/preview/{token}`, where the token carries the
//! video id, the moment and an expiry time, signed with HMAC-SHA256. The server's key is
//! derived from `REELFIND_SECRET_KEY` (see `keys`), the same on every node, so any node that
//! sees the library can serve a link another node made; the command line keeps a key in the
//! library folder.
//!
//! The pictures themselves are cut once per (file version, moment) and kept in a bounded
//! on-disk [`Cache`], so a link opened again, or by many people, costs a file read; the
//! route also rate-limits per client and caps how many cuts run at once.
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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
    pub fn from_key(key: [u8; 32]) -> Self {
        Self { key }
    }

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

/// Bytes of preview pictures kept on disk at most (about 2,000 pictures of 480 px).
pub const CACHE_MAX_BYTES: u64 = 64 << 20;

/// Preview pictures on disk, `{key}.jpg`, the least recently used deleted past a size bound.
/// One cut per key at a time: a second request for the same picture waits for the first.
pub struct Cache {
    dir: PathBuf,
    max_bytes: u64,
    cutting: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Cache {
    pub fn new(dir: PathBuf, max_bytes: u64) -> Self {
        Self { dir, max_bytes, cutting: Mutex::new(HashMap::new()) }
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.jpg"))
    }

    /// The cached picture, if any (its time is refreshed: it was used).
    pub fn get(&self, key: &str) -> Option<Vec<u8>> {
        let path = self.path(key);
        let bytes = std::fs::read(&path).ok().filter(|b| !b.is_empty())?;
        if let Ok(f) = std::fs::File::options().write(true).open(&path) {
            let _ = f.set_modified(SystemTime::now());
        }
        Some(bytes)
    }

    /// The cached picture, or `make`'s, stored for next time. Concurrent calls for one key
    /// run `make` once.
    pub fn get_or_make<E>(&self, key: &str, make: impl FnOnce() -> Result<Vec<u8>, E>) -> Result<Vec<u8>, E> {
        let lock = {
            let mut m = self.cutting.lock().unwrap_or_else(|e| e.into_inner());
            m.entry(key.to_owned()).or_default().clone()
        };
        let guard = lock.lock().unwrap_or_else(|e| e.into_inner());
        let out = match self.get(key) {
            Some(b) => Ok(b),
            None => make().inspect(|b| self.store(key, b)),
        };
        drop(guard);
        let mut m = self.cutting.lock().unwrap_or_else(|e| e.into_inner());
        if Arc::strong_count(&lock) <= 2 {
            m.remove(key);
        }
        out
    }

    fn store(&self, key: &str, bytes: &[u8]) {
        if std::fs::create_dir_all(&self.dir).is_err() {
            return;
        }
        let tmp = self.dir.join(format!(".{key}.{}.tmp", std::process::id()));
        if std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, self.path(key))).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return;
        }
        self.prune();
    }

    /// Deletes the least recently used pictures until the cache is under 80% of its bound.
    fn prune(&self) {
        let Ok(rd) = std::fs::read_dir(&self.dir) else { return };
        let mut files: Vec<(SystemTime, u64, PathBuf)> = rd
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "jpg"))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().unwrap_or(UNIX_EPOCH), m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        if total <= self.max_bytes {
            return;
        }
        files.sort();
        for (_, len, path) in files {
            if total <= self.max_bytes * 4 / 5 {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_cuts_once_and_stays_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let cache = Cache::new(dir.path().join("previews"), 10_000);
        let mut cuts = 0;
        for _ in 0..3 {
            let b = cache.get_or_make("7-abc-1250", || {
                cuts += 1;
                Ok::<_, ()>(vec![1u8; 3000])
            });
            assert_eq!(b.unwrap().len(), 3000);
        }
        assert_eq!(cuts, 1, "cut once, then served from disk");
        for i in 0..10 {
            cache.get_or_make(&format!("k{i}"), || Ok::<_, ()>(vec![2u8; 3000])).unwrap();
        }
        let total: u64 = std::fs::read_dir(dir.path().join("previews"))
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .sum();
        assert!(total <= 10_000, "{total}");
        assert!(cache.get("k9").is_some(), "the newest stays");
    }

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
