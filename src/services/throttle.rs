//! Brakes on guessing: failed logins per username and per client address, and the resend
//! cooldown per email address. Kept in memory: a restart forgets them, and several nodes
//! each count on their own (the limits are per node; still a hard bound per node).
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Failed logins are counted over this window.
pub const LOGIN_WINDOW: Duration = Duration::from_secs(15 * 60);
/// Failures for one username before answers slow down, and before they stop (429).
pub const USER_FREE_FAILURES: u32 = 3;
pub const USER_MAX_FAILURES: u32 = 8;
/// The same for one client address, which may try many usernames.
pub const ADDR_FREE_FAILURES: u32 = 10;
pub const ADDR_MAX_FAILURES: u32 = 30;
/// Extra wait per failure beyond the free ones, and its cap.
pub const DELAY_STEP: Duration = Duration::from_millis(200);
pub const DELAY_CAP: Duration = Duration::from_secs(2);
/// Maps are swept of stale entries once they hold this many keys.
const SWEEP_AT: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Window {
    failures: u32,
    started: Instant,
}

/// What to do with a login attempt before checking the password.
#[derive(Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Go ahead, after waiting this long (zero while under the free failures).
    Proceed(Duration),
    /// Refuse with 429.
    Blocked,
}

#[derive(Default)]
pub struct LoginThrottle {
    windows: Mutex<HashMap<String, Window>>,
}

impl LoginThrottle {
    fn failures(map: &HashMap<String, Window>, key: &str, now: Instant) -> u32 {
        map.get(key).filter(|w| now.duration_since(w.started) < LOGIN_WINDOW).map_or(0, |w| w.failures)
    }

    /// Judges an attempt for `username` (compared case-insensitively) from `addr`.
    pub fn check(&self, username: &str, addr: &str) -> Verdict {
        let now = Instant::now();
        let map = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        let by_user = Self::failures(&map, &user_key(username), now);
        let by_addr = Self::failures(&map, &addr_key(addr), now);
        if by_user >= USER_MAX_FAILURES || by_addr >= ADDR_MAX_FAILURES {
            return Verdict::Blocked;
        }
        let over = by_user.saturating_sub(USER_FREE_FAILURES).max(by_addr.saturating_sub(ADDR_FREE_FAILURES));
        Verdict::Proceed((DELAY_STEP * over).min(DELAY_CAP))
    }

    pub fn record_failure(&self, username: &str, addr: &str) {
        let now = Instant::now();
        let mut map = self.windows.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= SWEEP_AT {
            map.retain(|_, w| now.duration_since(w.started) < LOGIN_WINDOW);
        }
        for key in [user_key(username), addr_key(addr)] {
            let w = map.entry(key).or_insert(Window { failures: 0, started: now });
            if now.duration_since(w.started) >= LOGIN_WINDOW {
                *w = Window { failures: 0, started: now };
            }
            w.failures += 1;
        }
    }

    /// A correct password clears the username's count (not the address's: signing in to
    /// one's own account must not reset a guessing budget).
    pub fn record_success(&self, username: &str) {
        self.windows.lock().unwrap_or_else(|e| e.into_inner()).remove(&user_key(username));
    }
}

fn user_key(username: &str) -> String {
    format!("u:{}", username.trim().to_lowercase())
}

fn addr_key(addr: &str) -> String {
    format!("a:{addr}")
}

/// One request per key per period (the resend-verification cooldown).
pub struct Cooldown {
    period: Duration,
    last: Mutex<HashMap<String, Instant>>,
}

impl Cooldown {
    pub fn new(period: Duration) -> Self {
        Self { period, last: Mutex::new(HashMap::new()) }
    }

    /// `Ok` and starts the period when `key` is free; otherwise the seconds left.
    pub fn try_start(&self, key: &str) -> Result<(), u64> {
        let now = Instant::now();
        let mut map = self.last.lock().unwrap_or_else(|e| e.into_inner());
        if map.len() >= SWEEP_AT {
            let period = self.period;
            map.retain(|_, at| now.duration_since(*at) < period);
        }
        if let Some(at) = map.get(key) {
            let elapsed = now.duration_since(*at);
            if elapsed < self.period {
                return Err((self.period - elapsed).as_secs_f64().ceil() as u64);
            }
        }
        map.insert(key.to_owned(), now);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slows_down_then_blocks_per_username() {
        let t = LoginThrottle::default();
        for _ in 0..USER_FREE_FAILURES {
            assert_eq!(t.check("Alice", "1.2.3.4"), Verdict::Proceed(Duration::ZERO));
            t.record_failure("alice", "1.2.3.4");
        }
        t.record_failure("ALICE", "5.6.7.8");
        assert_eq!(t.check("alice", "9.9.9.9"), Verdict::Proceed(DELAY_STEP));
        for _ in USER_FREE_FAILURES + 1..USER_MAX_FAILURES {
            t.record_failure("alice", "9.9.9.9");
        }
        assert_eq!(t.check("alice", "10.0.0.1"), Verdict::Blocked);
        assert_eq!(t.check("bob", "10.0.0.1"), Verdict::Proceed(Duration::ZERO));
        t.record_success("alice");
        assert_eq!(t.check("alice", "10.0.0.1"), Verdict::Proceed(Duration::ZERO));
    }

    #[test]
    fn blocks_an_address_trying_many_names() {
        let t = LoginThrottle::default();
        for i in 0..ADDR_MAX_FAILURES {
            t.record_failure(&format!("user{i}"), "6.6.6.6");
        }
        assert_eq!(t.check("someone-new", "6.6.6.6"), Verdict::Blocked);
        assert_eq!(t.check("someone-new", "7.7.7.7"), Verdict::Proceed(Duration::ZERO));
    }

    #[test]
    fn cooldown_counts_down() {
        let c = Cooldown::new(Duration::from_secs(60));
        assert!(c.try_start("a@example.com").is_ok());
        let left = c.try_start("a@example.com").unwrap_err();
        assert!((59..=60).contains(&left), "{left}");
        assert!(c.try_start("b@example.com").is_ok());
    }
}
