//! Reelfind: identify the movie or TV show behind a screenshot or clip.
//!
//! Start at [`routes`] to find any handler, [`app::build_router`] for the layers.
pub mod app;
pub mod auth;
pub mod cli;
pub mod config;
pub mod db;
pub mod entities;
pub mod error;
pub mod identify;
pub mod library;
pub mod routes;
pub mod services;
pub mod state;
pub mod views;
