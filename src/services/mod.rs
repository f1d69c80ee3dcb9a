//! Business rules. Services take a database connection and know nothing of HTTP.
pub mod admin;
pub mod blog;
pub mod collections;
pub mod google;
pub mod mail;
pub mod profiles;
pub mod push;
pub mod sessions;
pub mod settings;
pub mod testimonials;
pub mod throttle;
pub mod users;
pub mod verification;
