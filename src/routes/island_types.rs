//! The props of every island, typed once in Rust: the TypeScript types the islands import
//! are generated from these structs (ts-rs) into `islands/src/generated/`, one file per
//! type, and committed. `views::Island::new` takes only props that derive `TS`; a new
//! island's props type is added to [`export_all`] below. So is [`ErrorCode`], the `code` of
//! the server's JSON errors, which the islands classify errors by (`lib/errors.ts`).
//!
//! Regenerate after changing a props type (or a type it carries):
//! `UPDATE_ISLAND_TYPES=1 cargo test --lib island_types`. Without the variable that test
//! fails when a committed file differs from what the Rust types generate.
use std::path::Path;

use ts_rs::{Config, ExportError, TS};

use crate::error_code::ErrorCode;
use crate::routes::accounts::{AuthScreenProps, PendingVerificationProps, ProfileProps, VerifyEmailProps};
use crate::routes::admin::blog::BlogEditorProps;
use crate::routes::admin::insight::InsightProps;
use crate::routes::pages::home::{RecentIdentificationsProps, UploaderProps};
use crate::routes::pages::shells::{HistoryProps, PwaSettingsProps, TestPageProps};

/// Where the generated files live, relative to the repository root.
pub const DIR: &str = "islands/src/generated";

/// Integers as `number`: they travel as JSON numbers, and every count and id here stays far
/// below 2^53 (ts-rs would otherwise type `u64`/`i64` as `bigint`, which JSON never gives).
fn config(dir: &Path) -> Config {
    Config::new().with_out_dir(dir).with_large_int("number")
}

/// Writes the props type of every island, and every type those carry, into `dir`.
pub fn export_all(dir: &Path) -> Result<(), ExportError> {
    let cfg = config(dir);
    AuthScreenProps::export_all(&cfg)?;
    BlogEditorProps::export_all(&cfg)?;
    HistoryProps::export_all(&cfg)?;
    InsightProps::<'static>::export_all(&cfg)?;
    PendingVerificationProps::<'static>::export_all(&cfg)?;
    ProfileProps::<'static>::export_all(&cfg)?;
    PwaSettingsProps::export_all(&cfg)?;
    RecentIdentificationsProps::export_all(&cfg)?;
    TestPageProps::export_all(&cfg)?;
    UploaderProps::export_all(&cfg)?;
    VerifyEmailProps::<'static>::export_all(&cfg)?;
    ErrorCode::export_all(&cfg)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};

    use super::{DIR, export_all};

    const REGENERATE: &str = "UPDATE_ISLAND_TYPES=1 cargo test --lib island_types";

    /// The `.ts` files directly in `dir`, by name.
    fn ts_files(dir: &Path) -> BTreeMap<String, String> {
        let Ok(entries) = std::fs::read_dir(dir) else { return BTreeMap::new() };
        entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "ts"))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), std::fs::read_to_string(e.path()).unwrap()))
            .collect()
    }

    fn committed_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(DIR)
    }

    /// The committed files are exactly what the Rust types generate: a props change without
    /// regeneration, a hand edit, a left-over file of a removed type all fail here.
    #[test]
    fn island_types_are_generated_from_the_rust_props() {
        let committed = committed_dir();
        if std::env::var_os("UPDATE_ISLAND_TYPES").is_some() {
            for name in ts_files(&committed).keys() {
                std::fs::remove_file(committed.join(name)).unwrap();
            }
            export_all(&committed).unwrap();
            return;
        }
        let fresh = tempfile::tempdir().unwrap();
        export_all(fresh.path()).unwrap();
        let (want, have) = (ts_files(fresh.path()), ts_files(&committed));
        assert!(want.contains_key("UploaderProps.ts"), "the export wrote nothing useful: {:?}", want.keys());
        let mut problems = Vec::new();
        for (name, text) in &want {
            match have.get(name) {
                None => problems.push(format!("{DIR}/{name} is missing")),
                Some(old) if old != text => problems.push(format!("{DIR}/{name} differs from the Rust type")),
                Some(_) => {}
            }
        }
        for name in have.keys().filter(|n| !want.contains_key(*n)) {
            problems.push(format!("{DIR}/{name} is not generated from any Rust type (left over?)"));
        }
        assert!(
            problems.is_empty(),
            "the island props types are stale:\n  {}\nregenerate them with `{REGENERATE}` and commit the result",
            problems.join("\n  ")
        );
    }
}
