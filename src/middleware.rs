//! What every request passes through before a handler sees it: who is asking and whether
//! they may ([`auth`]: the session, the Origin check, the extractors that require a user or
//! an administrator), requests made with an API key and their CORS ([`api_keys`]), and the
//! security headers of every answer ([`csp`]); and a refused request's body read away
//! ([`drain`]). `app.rs` puts them in order around the router; they sit below `routes` and
//! above `services` (`tests/architecture.rs`).
pub mod api_keys;
pub mod auth;
pub mod csp;
pub mod drain;
