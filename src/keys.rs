//! The keys that sign what the server hands out and later trusts again: the guest cookie
//! and Library preview links.
//!
//! Each is derived from one master secret (HMAC-SHA256 of a fixed label under it), so one
//! setting covers them all and a key for one purpose never signs for another. The master is
//! `REELFIND_SECRET_KEY` (required on PostgreSQL: every node must sign and check with the
//! same key), else a random key kept in `{data_dir}/secret.key` (a single SQLite machine).
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::config::Config;

/// Keys for each purpose, 32 bytes each. `Debug` shows nothing.
#[derive(Clone)]
pub struct Keys {
    /// Signs the `rf_guest` cookie (identify::guard).
    pub guest_cookie: [u8; 32],
    /// Signs Library preview links (library::preview).
    pub preview: [u8; 32],
    /// Keys the digest of the network a vote came from (services::feedback).
    pub vote_origin: [u8; 32],
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys([redacted])")
    }
}

impl Keys {
    /// From the configured secret, or the data folder's key file (created the first time).
    pub fn load(config: &Config) -> anyhow::Result<Self> {
        let master = match &config.secret_key {
            Some(s) => s.expose().as_bytes().to_vec(),
            None => load_or_create_file(&config.data_dir)?,
        };
        Ok(Self::derive(&master))
    }

    /// Derives every purpose key from `master`.
    pub fn derive(master: &[u8]) -> Self {
        let sub = |label: &str| -> [u8; 32] {
            let mut mac = Hmac::<Sha256>::new_from_slice(master).expect("HMAC takes any key length");
            mac.update(b"reelfind key v1: ");
            mac.update(label.as_bytes());
            mac.finalize().into_bytes().into()
        };
        Self { guest_cookie: sub("guest cookie"), preview: sub("library preview"), vote_origin: sub("vote origin") }
    }
}

fn load_or_create_file(data_dir: &Path) -> anyhow::Result<Vec<u8>> {
    let path = data_dir.join("secret.key");
    if let Ok(k) = std::fs::read(&path)
        && k.len() >= 32
    {
        return Ok(k);
    }
    let key: [u8; 32] = rand::random();
    std::fs::create_dir_all(data_dir)?;
    let written = {
        use std::io::Write;
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        opts.open(&path).and_then(|mut f| f.write_all(&key))
    };
    match written {
        Ok(()) => Ok(key.to_vec()),
        // Another process made it first: use theirs.
        Err(_) => std::fs::read(&path)
            .ok()
            .filter(|k| k.len() >= 32)
            .ok_or_else(|| anyhow::anyhow!("cannot create or read {}", path.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn purposes_get_different_stable_keys() {
        let a = Keys::derive(b"one secret of enough length for tests....");
        let b = Keys::derive(b"one secret of enough length for tests....");
        assert_eq!(a.guest_cookie, b.guest_cookie);
        assert_ne!(a.guest_cookie, a.preview);
        assert_ne!(Keys::derive(b"another secret").preview, a.preview);
        assert_eq!(format!("{a:?}"), "Keys([redacted])");
    }
}
