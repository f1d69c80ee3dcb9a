//! Reelfind's integration tests: one binary, modules mirror the route tree.
//! Every test gets its own database: SQLite in memory, or a fresh PostgreSQL database when
//! `TEST_DATABASE_URL` is set (e.g. `postgres://postgres@127.0.0.1:5432/test`).
mod support;

mod accounts;
mod accounts_google;
mod accounts_mail;
mod accounts_pages;
mod admin;
mod admin_library;
mod api_site;
mod blog;
mod collections;
mod identify;
mod identify_history;
mod identify_support;
mod library;
mod library_audio;
mod notifications;
mod pages;
mod profiles;
mod testimonials;
