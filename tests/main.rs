//! Reelfind's integration tests: one binary, modules mirror the route tree.
//! Every test gets its own database: SQLite in memory, or a fresh PostgreSQL database when
//! `TEST_DATABASE_URL` is set (e.g. `postgres://postgres@127.0.0.1:5432/test`).
#[path = "../src/bin/bench_load/hostile.rs"]
mod hostile;
mod support;

mod account;
mod accounts;
mod accounts_google;
mod accounts_mail;
mod accounts_mail_failures;
mod accounts_pages;
mod achievements;
mod admin;
mod admin_library;
mod admin_quotas;
mod analytics_tag;
mod api_keys;
mod api_site;
mod architecture;
mod authorization;
mod blog;
mod blog_studio;
mod cli_client;
mod collections;
mod hardening;
mod harness;
mod identify;
mod identify_history;
mod identify_hostile;
mod identify_support;
mod identify_url;
mod insight;
mod library;
mod library_audio;
mod library_milvus;
mod limits;
mod memory;
mod nodes;
mod notifications;
mod openapi;
mod pages;
mod profiles;
mod public_answers;
mod races;
mod secrets;
mod security_headers;
mod server;
mod sharing;
mod shutdown;
mod testimonials;
