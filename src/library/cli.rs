//! `reelfind library add|list|remove|search|migrate|edit`: the operator's side of the library.
use std::path::{Path, PathBuf};

use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};

use crate::config::Config;
use crate::library::edit::MetaPatch;
use crate::library::index::shared::CatalogDatabase;
use crate::library::{AddOutcome, LibraryIndex, Progress, SearchAnswer};

#[derive(Subcommand, Debug)]
pub enum LibraryCommand {
    /// Index video files and folders (recursively). Unchanged files are skipped.
    Add {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// List the indexed videos.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Remove videos from the index, by id, path or file name.
    Remove {
        #[arg(required = true)]
        videos: Vec<String>,
    },
    /// Find a screenshot or a clip in the library.
    Search {
        file: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// Copy the index to another backend (`milvus://HOST:PORT/NAME`, or `local`) from the one
    /// REELFIND_LIBRARY_INDEX names; run it again to finish one cut short. Then point
    /// REELFIND_LIBRARY_INDEX at the destination on every node.
    Migrate {
        #[arg(long, value_name = "INDEX")]
        to: String,
    },
    /// Correct a video's title, year, season and episode.
    Edit {
        id: u32,
        #[arg(long)]
        title: String,
        #[arg(long)]
        year: Option<i32>,
        /// Series name, for an episode.
        #[arg(long)]
        show: Option<String>,
        #[arg(long)]
        season: Option<u32>,
        #[arg(long)]
        episode: Option<u32>,
    },
}

/// A progress bar over seconds of video.
struct Bar {
    bar: ProgressBar,
}

impl Progress for Bar {
    fn start(&mut self, files: usize, total_seconds: f64) {
        self.bar.set_length(total_seconds.ceil() as u64);
        self.bar.println(format!("{files} video file(s), {:.0} s of video", total_seconds));
    }
    fn file(&mut self, path: &Path) {
        self.bar.set_message(path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default());
    }
    fn advance(&mut self, seconds: f64) {
        // Whole seconds only, so accumulate through the position in milliseconds.
        let ms = (seconds * 1000.0) as u64;
        let pos_ms = self.bar.position() * 1000 + ms;
        self.bar.set_position(pos_ms / 1000);
    }
    fn outcome(&mut self, path: &Path, outcome: &AddOutcome) {
        let line = match outcome {
            AddOutcome::Added { frames, .. } => format!("added      {} ({frames} frames)", path.display()),
            AddOutcome::Reindexed { frames, .. } => format!("re-indexed {} ({frames} frames)", path.display()),
            AddOutcome::Unchanged => format!("unchanged  {}", path.display()),
            AddOutcome::Failed(e) => format!("FAILED     {}: {e}", path.display()),
        };
        self.bar.println(line);
    }
}

pub async fn run(cmd: LibraryCommand, config: Config) -> anyhow::Result<()> {
    let dir = config.library.dir.clone();
    let backend = config.library.index.clone();
    // With Milvus the catalog lives in the database every node shares.
    let database = CatalogDatabase::url(config.database_url.expose());
    tokio::task::spawn_blocking(move || run_blocking(cmd, &dir, &backend, database)).await?
}

fn run_blocking(
    cmd: LibraryCommand,
    dir: &Path,
    backend: &crate::library::index::backend::Backend,
    database: CatalogDatabase,
) -> anyhow::Result<()> {
    let index = LibraryIndex::open_in(dir, backend, Some(database))?;
    match cmd {
        LibraryCommand::Add { paths } => {
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} s  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            let mut progress = Bar { bar };
            let report = index.add_paths(&paths, &mut progress);
            progress.bar.finish_and_clear();
            let speed = if report.wall_seconds > 0.0 { report.video_seconds / report.wall_seconds } else { 0.0 };
            println!(
                "{} added, {} re-indexed, {} unchanged, {} failed ({:.0} s of video in {:.1} s, {speed:.1}x real time)",
                report.added,
                report.reindexed,
                report.unchanged,
                report.failed.len(),
                report.video_seconds,
                report.wall_seconds
            );
            for (path, why) in &report.failed {
                eprintln!("skipped {}: {why}", path.display());
            }
            if let Some(m) = index.milvus() {
                // Seal what was written and give the collection the index its size calls for.
                let plan = m.fit_index()?;
                println!("{}: {} entries, {}", index.backend(), index.frame_count(), plan.name());
            }
            Ok(())
        }
        LibraryCommand::Migrate { to } => {
            let to: crate::library::index::backend::Backend = to.parse().map_err(|e: String| anyhow::anyhow!(e))?;
            let bar = ProgressBar::new(0);
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} videos  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            let report = index.migrate_to(&to, |done, all, title| {
                bar.set_length(all as u64);
                bar.set_position(done as u64);
                bar.set_message(title.to_owned());
            })?;
            bar.finish_and_clear();
            println!(
                "{} -> {to}: {} copied ({} entries), {} already there, {} not in the index",
                index.backend(),
                report.copied,
                report.entries,
                report.already,
                report.missing.len()
            );
            match report.catalog {
                Some("database") => println!("The catalog is now in the database every node shares."),
                Some(_) => println!("The catalog is now catalog.json in {}.", index.dir().display()),
                None => {}
            }
            for id in &report.missing {
                eprintln!(
                    "video {id} has no entries in {}: index it again with `reelfind library add`",
                    index.backend()
                );
            }
            println!("Now set REELFIND_LIBRARY_INDEX={to} on every node (and for these commands).");
            Ok(())
        }
        LibraryCommand::List { json } => {
            let videos = index.list();
            if json {
                println!("{}", serde_json::to_string_pretty(&videos)?);
                return Ok(());
            }
            println!(
                "index: {} ({} entries), catalog in the {}",
                index.backend(),
                index.frame_count(),
                index.catalog_place()
            );
            if videos.is_empty() {
                println!("The library is empty. Add videos with: reelfind library add PATH...");
            }
            for v in &videos {
                let m = &v.meta;
                let mut what = m.display_title().to_owned();
                if let Some(y) = m.year {
                    what.push_str(&format!(" ({y})"));
                }
                if let (Some(s), Some(e)) = (m.season, m.episode) {
                    what.push_str(&format!(" S{s:02}E{e:02} {}", m.title));
                }
                println!("{:>5}  {what}  [{:.0} s, {} frames]  {}", v.id, v.duration, v.frames, v.path.display());
            }
            Ok(())
        }
        LibraryCommand::Remove { videos } => {
            for key in videos {
                let gone = index.remove(&key)?;
                if gone.is_empty() {
                    anyhow::bail!("no indexed video matches {key:?}");
                }
                for v in gone {
                    println!("removed {} {}", v.id, v.path.display());
                }
            }
            Ok(())
        }
        LibraryCommand::Search { file, json } => {
            let answer = search_file(&index, &file)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&answer)?);
            } else {
                match &answer.best {
                    Some(m) => {
                        let mut what = m.title.clone();
                        if let Some(y) = m.year {
                            what.push_str(&format!(" ({y})"));
                        }
                        if let (Some(s), Some(e)) = (m.season, m.episode) {
                            what.push_str(&format!(" S{s:02}E{e:02}"));
                        }
                        println!(
                            "{what} at {} (from {} to {}), similarity {:.2}, {}",
                            clock(m.at),
                            clock(m.from),
                            clock(m.to),
                            m.similarity,
                            m.file
                        );
                    }
                    None => println!("no match: {}", answer.reason.as_deref().unwrap_or("")),
                }
                eprintln!("searched {} frames in {:.1} ms", answer.frames_searched, answer.elapsed_ms);
            }
            Ok(())
        }
        LibraryCommand::Edit { id, title, year, show, season, episode } => {
            // Every field is given (an omitted option clears it), checked like the admin's edits.
            let patch = MetaPatch {
                title: Some(title),
                year: Some(year),
                show: Some(show),
                season: Some(season),
                episode: Some(episode),
            };
            let v = index.edit_meta(id, &patch).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("updated {}: {}", v.id, v.meta.display_title());
            Ok(())
        }
    }
}

/// A picture is searched as a still; anything else is treated as a clip.
pub fn search_file(index: &LibraryIndex, file: &Path) -> anyhow::Result<SearchAnswer> {
    let bytes = std::fs::read(file)?;
    match image::load_from_memory(&bytes) {
        Ok(img) => index.search_image(&img),
        Err(_) => index.search_clip_av(file),
    }
}

fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0);
    let (h, m, sec) = ((s / 3600.0) as u64, ((s % 3600.0) / 60.0) as u64, s % 60.0);
    if h > 0 { format!("{h}:{m:02}:{sec:05.2}") } else { format!("{m}:{sec:05.2}") }
}
