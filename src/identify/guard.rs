//! Who may identify: rate limits and the guest's one free identification. Every count lives
//! in the shared throttle store (`services::throttle`), so several nodes enforce one limit.
//!
//! **Rate limits** (429 with `Retry-After`): every request counts against its client
//! address (`REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE`, default 30), and a signed-in
//! person's also against their account (`REELFIND_IDENTIFY_PER_MINUTE`, default 10), so
//! neither opening many free accounts nor sharing one account across many addresses walks
//! around a limit. Addresses are IPv4 addresses or IPv6 /64 networks.
//!
//! **Guest quota** (SPEC: one free identification, enforced on the server too). A guest is
//! recognised two ways, and either one being used up blocks (403 `{requiresAuth: true}`):
//! - a guest cookie (`auth::GUEST_COOKIE`, read and set by the route) holding a random
//!   128-bit id and its HMAC-SHA256 under the server's secret key ([`IdentifyState`]), so a
//!   client cannot mint ids of its choosing; the id may identify once;
//! - the client address, which may spend [`GUEST_ADDRESS_ALLOWANCE`] free identification per
//!   24 hours, so clearing cookies does not give another one.
//!
//! The free identification is **reserved before the work** ([`reserve_guest`]), atomically,
//! so parallel uploads cannot all pass; it is given back when the work fails, is cancelled
//! or the client leaves ([`GuestReservation`] refunds on drop unless committed).
use std::net::IpAddr;
use std::time::Duration;

use hmac::{Hmac, Mac};
use sea_orm::DatabaseConnection;
use sha2::Sha256;

use crate::config::Config;
use crate::services::throttle::{Decision, Limit, address_subject};

/// Free identifications per guest cookie (ever) and per address (per 24 hours).
pub const GUEST_FREE: u32 = 1;
pub const GUEST_ADDRESS_ALLOWANCE: u32 = 1;
pub const GUEST_AUTH_MESSAGE: &str =
    "First trial complete! Please sign in or create a free account to keep identifying movies and TV shows.";
pub const TOO_MANY: &str = "Too many requests. Please wait a moment before trying again.";

/// The guest cookie id's free identification. The window is ten years: "ever", in practice.
pub const GUEST: Limit = Limit::new("guest", GUEST_FREE, Duration::from_secs(10 * 365 * 24 * 3600));
/// The free identifications of one client address.
pub const GUEST_ADDRESS: Limit = Limit::new("guest-addr", GUEST_ADDRESS_ALLOWANCE, Duration::from_secs(24 * 3600));
/// Identifications per minute per signed-in account (max from `REELFIND_IDENTIFY_PER_MINUTE`).
pub const IDENTIFY_USER: Limit = Limit::new("identify-user", 10, Duration::from_secs(60));
/// Identifications per minute per address (max from `REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE`).
pub const IDENTIFY_ADDRESS: Limit = Limit::new("identify-addr", 30, Duration::from_secs(60));
/// Analytics events per minute per account or address.
pub const ANALYTICS: Limit = Limit::new("analytics", 120, Duration::from_secs(60));

/// Per-process identification state: the key that signs guest cookies.
pub struct IdentifyState {
    key: Vec<u8>,
}

impl IdentifyState {
    pub fn new(keys: &crate::keys::Keys) -> Self {
        Self { key: keys.guest_cookie.to_vec() }
    }

    /// The guest id of a signed value (`id.signature`) when the signature is ours.
    pub fn verify_guest(&self, signed: &str) -> Option<String> {
        let (id, sig) = signed.split_once('.')?;
        let expected = self.sign(id);
        let same: bool = subtle::ConstantTimeEq::ct_eq(expected.as_bytes(), sig.as_bytes()).into();
        same.then(|| id.to_owned())
    }

    fn sign(&self, id: &str) -> String {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(b"guest:");
        mac.update(id.as_bytes());
        hex::encode(mac.finalize().into_bytes())
    }

    /// The guest id with its signature, as the guest cookie carries it.
    pub fn sign_guest(&self, id: &str) -> String {
        format!("{id}.{}", self.sign(id))
    }
}

/// Why an identification may not start. The route answers 429 with the limit's headers,
/// or 403 `{requiresAuth: true}`.
#[derive(Debug, thiserror::Error)]
pub enum Denied {
    #[error("{TOO_MANY}")]
    TooMany(Decision),
    /// The guest's free identification is used up (by cookie or by address).
    #[error("{GUEST_AUTH_MESSAGE}")]
    GuestUsedUp,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// Takes one identification from the caller's rate limits: the address always, the account
/// too when signed in. 429 with `Retry-After` when either is used up.
pub async fn check_rate(
    db: &DatabaseConnection,
    config: &Config,
    user_id: Option<i64>,
    addr: Option<IpAddr>,
) -> Result<(), Denied> {
    let by_addr =
        IDENTIFY_ADDRESS.with_max(config.identify.per_address_per_minute).consume(db, &address_subject(addr)).await?;
    if !by_addr.allowed {
        return Err(Denied::TooMany(by_addr));
    }
    if let Some(id) = user_id {
        let by_user = IDENTIFY_USER.with_max(config.identify.per_minute).consume(db, &id.to_string()).await?;
        if !by_user.allowed {
            return Err(Denied::TooMany(by_user));
        }
    }
    Ok(())
}

/// One analytics event from this account or address; 429 past [`ANALYTICS`].
pub async fn check_analytics_rate(
    db: &DatabaseConnection,
    user_id: Option<i64>,
    addr: Option<IpAddr>,
) -> Result<(), Denied> {
    let subject = match user_id {
        Some(id) => format!("user:{id}"),
        None => format!("addr:{}", address_subject(addr)),
    };
    let d = ANALYTICS.consume(db, &subject).await?;
    if d.allowed { Ok(()) } else { Err(Denied::TooMany(d)) }
}

/// A guest's free identification, taken before the work. Dropping it without
/// [`GuestReservation::commit`] gives it back (in the background), so a failed, cancelled
/// or abandoned identification does not use the free try up.
pub struct GuestReservation {
    db: DatabaseConnection,
    /// The guest id: from the cookie, or new (then the answer must set the cookie).
    pub guest_id: String,
    /// No valid cookie came with the request.
    pub new_cookie: bool,
    address: String,
    committed: bool,
}

/// Reserves the guest's free identification (cookie id and address, both or neither);
/// 403 `{requiresAuth: true}` when either is used up.
pub async fn reserve_guest(
    db: &DatabaseConnection,
    guest_id: Option<String>,
    addr: Option<IpAddr>,
) -> Result<GuestReservation, Denied> {
    let new_cookie = guest_id.is_none();
    let guest_id = guest_id.unwrap_or_else(super::store::new_id);
    let address = address_subject(addr);
    if !GUEST.consume(db, &guest_id).await?.allowed {
        return Err(Denied::GuestUsedUp);
    }
    if !GUEST_ADDRESS.consume(db, &address).await?.allowed {
        GUEST.refund(db, &guest_id, 1).await?;
        return Err(Denied::GuestUsedUp);
    }
    Ok(GuestReservation { db: db.clone(), guest_id, new_cookie, address, committed: false })
}

impl GuestReservation {
    /// The identification succeeded: the free try is spent.
    pub fn commit(mut self) {
        self.committed = true;
    }

    /// The identification failed: gives the free try back now (not in the background).
    pub async fn release(mut self) {
        self.committed = true;
        let res = async {
            GUEST.refund(&self.db, &self.guest_id, 1).await?;
            GUEST_ADDRESS.refund(&self.db, &self.address, 1).await
        };
        if let Err(e) = res.await {
            tracing::warn!(error = %e, "could not give a guest's free identification back");
        }
    }
}

impl Drop for GuestReservation {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        let (db, id, address) =
            (self.db.clone(), std::mem::take(&mut self.guest_id), std::mem::take(&mut self.address));
        let refund = async move {
            let res = async {
                GUEST.refund(&db, &id, 1).await?;
                GUEST_ADDRESS.refund(&db, &address, 1).await
            };
            if let Err(e) = res.await {
                tracing::warn!(error = %e, "could not give a guest's free identification back");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => {
                rt.spawn(refund);
            }
            Err(_) => tracing::warn!("guest reservation dropped outside the runtime; not refunded"),
        }
    }
}
