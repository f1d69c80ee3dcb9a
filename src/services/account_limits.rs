//! The brakes on guessing and abuse around accounts, all in the shared throttle store
//! (`services::throttle`), so a deployment of several nodes counts once.
//!
//! **Sign-in.** Every attempt counts *before* the password is checked: attempts still in
//! flight count, so a burst of parallel guesses meets the limit as surely as a sequence
//! does. The client address is judged first ([`LOGIN_ADDR`]): an address already refused
//! counts against nothing else. Then the pair of account and address ([`LOGIN_USER`]): one
//! address guessing one account is refused after a few tries, while the account's owner,
//! signing in from their own address, is never locked out by someone else's guesses. Across
//! addresses, the account's attempts ([`LOGIN_ACCOUNT`]) only slow its answers down, never
//! refuse them (a refusal there would be the lock-out again). A correct password clears the
//! pair's count and gives its attempt back to the address and the account. Past
//! [`LOGIN_USER_FREE`] (or [`LOGIN_ADDR_FREE`], [`LOGIN_ACCOUNT_FREE`]) earlier attempts the
//! answer slows down by [`DELAY_STEP`] each (at most [`DELAY_CAP`]); past a maximum it is
//! 429 until the 15-minute window ends.
use std::time::Duration;

use sea_orm::{ConnectionTrait, DbErr};

use crate::services::throttle::Limit;

const FIFTEEN_MINUTES: Duration = Duration::from_secs(15 * 60);
const HOUR: Duration = Duration::from_secs(3600);

/// Sign-in attempts per account from one address, and per address (which may try many
/// accounts).
pub const LOGIN_USER: Limit = Limit::new("login-pair", 8, FIFTEEN_MINUTES);
pub const LOGIN_ADDR: Limit = Limit::new("login-addr", 30, FIFTEEN_MINUTES);
/// Sign-in attempts per account from every address: counted for the delay only.
pub const LOGIN_ACCOUNT: Limit = Limit::new("login-account", u32::MAX, FIFTEEN_MINUTES);
/// Attempts that pass without delay.
pub const LOGIN_USER_FREE: u64 = 3;
pub const LOGIN_ADDR_FREE: u64 = 10;
pub const LOGIN_ACCOUNT_FREE: u64 = 20;
pub const DELAY_STEP: Duration = Duration::from_millis(200);
pub const DELAY_CAP: Duration = Duration::from_secs(2);

/// New accounts per address.
pub const REGISTER_ADDR: Limit = Limit::new("register-addr", 5, HOUR);
/// One verification mail per address a minute (SPEC: 60 s resend cooldown).
pub const RESEND_EMAIL: Limit = Limit::new("resend-verification", 1, Duration::from_secs(60));
/// One password-reset mail per email address a minute, and a few per client address.
pub const RESET_EMAIL: Limit = Limit::new("password-reset-email", 1, Duration::from_secs(60));
pub const RESET_ADDR: Limit = Limit::new("password-reset-addr", 5, FIFTEEN_MINUTES);
/// Wrong current passwords (change password, delete account) per account.
pub const REAUTH_USER: Limit = Limit::new("reauth-user", 8, FIFTEEN_MINUTES);
/// Test notifications per account.
pub const PUSH_TEST: Limit = Limit::new("push-test", 5, Duration::from_secs(10 * 60));

/// What to do with a sign-in attempt before checking the password.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead, after waiting this long (zero while under the free attempts).
    Proceed(Duration),
    /// Refuse with 429; the window ends after this long.
    Blocked(Duration),
}

/// The account part of a sign-in subject: a fixed-length digest of the compared name, so
/// that every (account, address) bucket of one account shares a prefix ([`forget_account`]).
fn account_tag(username: &str) -> String {
    use sha2::{Digest, Sha256};
    let key = crate::services::users::username_key(username);
    hex::encode(&Sha256::digest(key.as_bytes())[..16])
}

fn pair_subject(username: &str, addr: &str) -> String {
    format!("{}|{addr}", account_tag(username))
}

/// Counts a sign-in attempt for `username` from `addr` and judges it.
pub async fn login_attempt(db: &impl ConnectionTrait, username: &str, addr: &str) -> Result<Verdict, DbErr> {
    let by_addr = LOGIN_ADDR.hit(db, addr).await?;
    if by_addr.count > u64::from(LOGIN_ADDR.max) {
        return Ok(Verdict::Blocked(by_addr.reset_after));
    }
    let by_pair = LOGIN_USER.hit(db, &pair_subject(username, addr)).await?;
    if by_pair.count > u64::from(LOGIN_USER.max) {
        return Ok(Verdict::Blocked(by_pair.reset_after));
    }
    let by_account = LOGIN_ACCOUNT.hit(db, &account_tag(username)).await?;
    // Earlier attempts in the window, beyond the free ones.
    let over = [
        (by_pair.count - 1).saturating_sub(LOGIN_USER_FREE),
        (by_addr.count - 1).saturating_sub(LOGIN_ADDR_FREE),
        (by_account.count - 1).saturating_sub(LOGIN_ACCOUNT_FREE),
    ]
    .into_iter()
    .max()
    .unwrap_or(0);
    Ok(Verdict::Proceed((DELAY_STEP * over.min(100) as u32).min(DELAY_CAP)))
}

/// The password was right: the pair starts afresh, the address and the account get this
/// attempt back (signing in to one's own account must not spend a guessing budget, nor
/// reset one).
pub async fn login_succeeded(db: &impl ConnectionTrait, username: &str, addr: &str) -> Result<(), DbErr> {
    LOGIN_USER.clear(db, &pair_subject(username, addr)).await?;
    LOGIN_ACCOUNT.refund(db, &account_tag(username), 1).await?;
    LOGIN_ADDR.refund(db, addr, 1).await
}

/// The account's guessing budgets start afresh, from every address (its password was just
/// reset by someone who holds its mailbox).
pub async fn forget_account(db: &impl ConnectionTrait, username: &str) -> Result<(), DbErr> {
    let tag = account_tag(username);
    LOGIN_USER.clear_prefix(db, &format!("{tag}|")).await?;
    LOGIN_ACCOUNT.clear(db, &tag).await
}
