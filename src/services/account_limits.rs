//! The brakes on guessing and abuse around accounts, all in the shared throttle store
//! (`services::throttle`), so a deployment of several nodes counts once.
//!
//! **Sign-in.** Every attempt counts *before* the password is checked, per username
//! (compared case-insensitively) and per client address: attempts still in flight count,
//! so a burst of parallel guesses meets the limit as surely as a sequence does. A correct
//! password clears the username's count and gives its attempt back to the address.
//! Past [`LOGIN_USER_FREE`] (or [`LOGIN_ADDR_FREE`]) earlier attempts the answer slows down
//! by [`DELAY_STEP`] each (at most [`DELAY_CAP`]); past the maximum it is 429 until the
//! 15-minute window ends.
use std::time::Duration;

use sea_orm::{ConnectionTrait, DbErr};

use crate::services::throttle::Limit;

const FIFTEEN_MINUTES: Duration = Duration::from_secs(15 * 60);
const HOUR: Duration = Duration::from_secs(3600);

/// Sign-in attempts per username, and per address (which may try many usernames).
pub const LOGIN_USER: Limit = Limit::new("login-user", 8, FIFTEEN_MINUTES);
pub const LOGIN_ADDR: Limit = Limit::new("login-addr", 30, FIFTEEN_MINUTES);
/// Attempts that pass without delay.
pub const LOGIN_USER_FREE: u64 = 3;
pub const LOGIN_ADDR_FREE: u64 = 10;
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

fn user_subject(username: &str) -> String {
    username.trim().to_lowercase()
}

/// Counts a sign-in attempt for `username` from `addr` and judges it.
pub async fn login_attempt(db: &impl ConnectionTrait, username: &str, addr: &str) -> Result<Verdict, DbErr> {
    let by_user = LOGIN_USER.hit(db, &user_subject(username)).await?;
    let by_addr = LOGIN_ADDR.hit(db, addr).await?;
    if by_user.count > u64::from(LOGIN_USER.max) {
        return Ok(Verdict::Blocked(by_user.reset_after));
    }
    if by_addr.count > u64::from(LOGIN_ADDR.max) {
        return Ok(Verdict::Blocked(by_addr.reset_after));
    }
    // Earlier attempts in the window, beyond the free ones.
    let over =
        (by_user.count - 1).saturating_sub(LOGIN_USER_FREE).max((by_addr.count - 1).saturating_sub(LOGIN_ADDR_FREE));
    Ok(Verdict::Proceed((DELAY_STEP * over as u32).min(DELAY_CAP)))
}

/// The password was right: the username starts afresh, the address gets this attempt back
/// (signing in to one's own account must not spend a guessing budget, nor reset it).
pub async fn login_succeeded(db: &impl ConnectionTrait, username: &str, addr: &str) -> Result<(), DbErr> {
    LOGIN_USER.clear(db, &user_subject(username)).await?;
    LOGIN_ADDR.refund(db, addr, 1).await
}
