//! Reelfind: identify the movie or TV show behind a screenshot or clip.
//!
//! Start at [`routes`] to find any handler, [`app::build_router`] for the layers.
pub mod app;
pub mod cli;
pub mod client;
pub mod config;
pub mod db;
pub mod entities;
pub mod error;
pub mod error_code;
pub mod ffmpeg;
pub mod identify;
pub mod keys;
pub mod library;
pub mod middleware;
pub mod outbound;
pub mod routes;
pub mod services;
pub mod state;
pub mod views;
