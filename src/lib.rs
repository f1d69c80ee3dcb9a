//! Reelfind: identify the movie or TV show behind a screenshot or clip.
//!
//! Start at [`routes`] to find any handler, [`app::build_router`] for the layers.
pub mod api_keys;
pub mod app;
pub mod auth;
pub mod cli;
pub mod client;
pub mod config;
pub mod csp;
pub mod db;
pub mod entities;
pub mod error;
pub mod error_code;
pub mod ffmpeg;
pub mod identify;
pub mod keys;
pub mod library;
pub mod outbound;
pub mod routes;
pub mod services;
pub mod state;
pub mod views;
