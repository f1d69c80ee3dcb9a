//! `reelfind identify FILE|URL --server URL`: the command-line client of the public API.
//!
//! It sends the file (with a progress bar on a terminal) or the URL to `POST /api/identify`
//! with the API key from the environment variable `REELFIND_API_KEY`, and prints the result readably or, with
//! `--json`, exactly as the server answered.
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::Args;
use futures::StreamExt;
use serde_json::Value;

#[derive(Args, Debug)]
pub struct IdentifyArgs {
    /// A screenshot or clip on disk, or an http(s) URL the server should fetch.
    pub target: String,
    /// The Reelfind server, e.g. https://reelfind.example.com
    #[arg(long, env = "REELFIND_SERVER")]
    pub server: String,
    /// Engine: auto, google, openai, xai, anthropic, ensemble or library.
    #[arg(long, default_value = "auto")]
    pub mode: String,
    /// Also list the best N candidates with their scores (0-10).
    #[arg(long, default_value_t = 0)]
    pub candidates: u8,
    /// Print the server's JSON answer instead of a summary.
    #[arg(long)]
    pub json: bool,
}

/// Runs the command; an error becomes the process's message and exit status.
pub async fn identify(args: IdentifyArgs) -> anyhow::Result<()> {
    let server = url::Url::parse(args.server.trim_end_matches('/'))
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https"))
        .context("--server must be an http(s) URL such as https://reelfind.example.com")?;
    let endpoint = server.join("/api/identify")?;
    // Only from the environment, so the key stays out of shell history and process lists.
    let api_key = std::env::var("REELFIND_API_KEY").unwrap_or_default();
    if api_key.trim().is_empty() {
        bail!(
            "set REELFIND_API_KEY to an API key (create one on the server's website: sign in, open Profile, then API keys)"
        );
    }
    let mut form =
        reqwest::multipart::Form::new().text("mode", args.mode.clone()).text("candidates", args.candidates.to_string());
    let is_url = args.target.starts_with("http://") || args.target.starts_with("https://");
    let progress = if is_url {
        form = form.text("url", args.target.clone());
        None
    } else {
        let (part, bar) = file_part(Path::new(&args.target)).await?;
        form = form.part("file", part);
        Some(bar)
    };
    let client = reqwest::Client::builder()
        .user_agent(concat!("reelfind-cli/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(15))
        .build()?;
    let reach = || format!("could not reach {}", server.origin().ascii_serialization());
    // A bad key is said before a file is sent for nothing (reading the quota costs nothing).
    let check =
        client.get(server.join("/api/me/quota")?).bearer_auth(api_key.trim()).send().await.with_context(reach)?;
    if check.status() == reqwest::StatusCode::UNAUTHORIZED {
        return Err(refusal(check).await);
    }
    let res =
        client.post(endpoint.clone()).bearer_auth(api_key.trim()).multipart(form).send().await.with_context(reach)?;
    if let Some(bar) = progress {
        bar.finish_and_clear();
    }
    if !res.status().is_success() {
        return Err(refusal(res).await);
    }
    let remaining = res.headers().get("ratelimit-remaining").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let body: Value = serde_json::from_str(&res.text().await?).unwrap_or(Value::Null);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&body)?);
    } else {
        print!("{}", summary(&body, &server));
        if let Some(r) = remaining {
            eprintln!("({r} API requests left in the current window)");
        }
    }
    Ok(())
}

/// A refusal as one line: the server's own message, the status, and when to retry.
async fn refusal(res: reqwest::Response) -> anyhow::Error {
    let status = res.status();
    let retry_after = res.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(str::to_owned);
    let text = res.text().await.unwrap_or_default();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
    let message = body["error"].as_str().map(str::to_owned).unwrap_or_else(|| text.chars().take(300).collect());
    match retry_after {
        Some(secs) => anyhow::anyhow!("{message} (HTTP {}; retry in {secs} s)", status.as_u16()),
        None => anyhow::anyhow!("{message} (HTTP {})", status.as_u16()),
    }
}

/// The file as a streamed multipart part, and the progress bar its reads advance.
async fn file_part(path: &Path) -> anyhow::Result<(reqwest::multipart::Part, indicatif::ProgressBar)> {
    let file = tokio::fs::File::open(path).await.with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata().await?.len();
    let bar = indicatif::ProgressBar::with_draw_target(Some(len), indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template("uploading {bar:30} {bytes}/{total_bytes} {bytes_per_sec}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let counter = bar.clone();
    let stream = tokio_util::io::ReaderStream::new(file).inspect(move |chunk| {
        if let Ok(c) = chunk {
            counter.inc(c.len() as u64);
        }
    });
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "upload".into());
    let mime = mime_guess::from_path(path).first_or_octet_stream().to_string();
    let part = reqwest::multipart::Part::stream_with_length(reqwest::Body::wrap_stream(stream), len)
        .file_name(name)
        .mime_str(&mime)?;
    Ok((part, bar))
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Seconds as `h:mm:ss` or `m:ss`.
fn clock(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{}:{:02}", s / 60, s % 60)
    }
}

fn span(ts: &Value) -> Option<String> {
    let (from, at, to) = (ts["from"].as_f64()?, ts["at"].as_f64()?, ts["to"].as_f64()?);
    Some(format!("{}-{} (best at {})", clock(from), clock(to), clock(at)))
}

/// The result as a few readable lines.
pub fn summary(r: &Value, server: &url::Url) -> String {
    let mut out = String::new();
    let title = text(&r["title"]).unwrap_or_else(|| "(untitled)".into());
    let year = text(&r["year"]).map(|y| format!(" ({y})")).unwrap_or_default();
    out.push_str(&format!("{title}{year}\n"));
    let mut line = |label: &str, value: Option<String>| {
        if let Some(v) = value {
            out.push_str(&format!("  {label:<12}{v}\n"));
        }
    };
    line("Type", text(&r["type"]).map(|t| if t == "tv" { "TV show".into() } else { t }));
    if let (Some(s), Some(e)) = (r["season"].as_u64(), r["episode"].as_u64()) {
        line(
            "Episode",
            Some(format!("S{s:02}E{e:02}{}", text(&r["episodeTitle"]).map(|t| format!(" {t}")).unwrap_or_default())),
        );
    }
    line("Confidence", r["confidence"].as_f64().map(|c| format!("{:.0}%", c * 100.0)));
    line("Director", text(&r["director"]));
    line("Runtime", text(&r["runtime"]));
    line("Rating", text(&r["rating"]));
    let genres: Vec<String> = r["genres"].as_array().map(|g| g.iter().filter_map(text).collect()).unwrap_or_default();
    line("Genres", (!genres.is_empty()).then(|| genres.join(", ")));
    line("Scene", span(&r["timestamp"]));
    line("Engine", text(&r["engine"]));
    line(
        "Result",
        text(&r["identificationId"]).and_then(|id| server.join(&format!("/?id={id}")).ok()).map(|u| u.to_string()),
    );
    if let Some(cands) = r["candidates"].as_array().filter(|c| !c.is_empty()) {
        out.push_str("  Candidates\n");
        for (i, c) in cands.iter().enumerate() {
            let year = text(&c["year"]).map(|y| format!(" ({y})")).unwrap_or_default();
            let score = c["confidence"].as_f64().map(|s| format!("{:>4.0}%", s * 100.0)).unwrap_or_default();
            let at = span(&c["timestamp"]).map(|s| format!("  {s}")).unwrap_or_default();
            out.push_str(&format!("    {}. {score}  {}{year}{at}\n", i + 1, text(&c["title"]).unwrap_or_default()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_readable_summary() {
        let r = serde_json::json!({
            "title": "Big Buck Bunny", "year": "2008", "type": "movie", "confidence": 0.91,
            "genres": ["Animation", "Comedy"], "engine": "library", "identificationId": "abc",
            "timestamp": {"from": 62.0, "at": 63.5, "to": 65.0},
            "candidates": [{"title": "Big Buck Bunny", "year": 2008, "confidence": 0.91,
                            "timestamp": {"from": 62.0, "at": 63.5, "to": 65.0}}]
        });
        let s = summary(&r, &url::Url::parse("https://rf.example").unwrap());
        assert!(s.starts_with("Big Buck Bunny (2008)\n"), "{s}");
        assert!(s.contains("Confidence  91%"), "{s}");
        assert!(s.contains("Scene       1:02-1:05 (best at 1:04)"), "{s}");
        assert!(s.contains("https://rf.example/?id=abc"), "{s}");
        assert!(s.contains("1.   91%  Big Buck Bunny (2008)  1:02-1:05"), "{s}");
    }
}
