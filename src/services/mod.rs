//! Business rules. Services take a database connection and know nothing of HTTP.
pub mod settings;
pub mod users;
