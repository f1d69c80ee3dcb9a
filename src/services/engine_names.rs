//! The names the engines are chosen by: the one list the settings, the profile, the home
//! page's picker, the studio and `identify::engine::Mode` use. The islands' `ENGINE_ORDER`
//! is checked against it (islands/test/engines-source.test.ts).

/// The engines a person can pick and an admin can allow, in the order the product lists
/// them (the Ensemble before the Library).
pub const ENGINES: [&str; 6] = ["google", "openai", "xai", "anthropic", "ensemble", "library"];
/// Every mode that can be named: Auto, then [`ENGINES`].
pub const MODES: [&str; 7] = ["auto", "google", "openai", "xai", "anthropic", "ensemble", "library"];
