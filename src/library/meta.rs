//! Title, year, season and episode of a video file: from a Kodi/Jellyfin `.nfo` beside it,
//! else from its name (`Title (Year).ext`, `Show - S01E02.ext`, `Show.1x02.ext`, scene
//! names like `Title.2019.1080p.BluRay.mkv`).
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;

use crate::library::index::store::VideoMeta;

/// Metadata for `video`: the `.nfo` when one is there and names a title, else the file name.
pub fn for_file(video: &Path) -> VideoMeta {
    let candidates = [video.with_extension("nfo"), video.with_file_name("movie.nfo")];
    for nfo in candidates {
        if let Ok(text) = std::fs::read_to_string(&nfo)
            && let Some(meta) = parse_nfo(&text)
        {
            return meta;
        }
    }
    from_file_name(video)
}

fn tag(text: &str, name: &str) -> Option<String> {
    let re = Regex::new(&format!(r"(?is)<{name}(?:\s[^>]*)?>(.*?)</{name}>")).ok()?;
    let raw = re.captures(text)?.get(1)?.as_str().trim();
    let raw = raw.strip_prefix("<![CDATA[").and_then(|s| s.strip_suffix("]]>")).unwrap_or(raw);
    let value = raw
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    let value = value.trim().to_owned();
    (!value.is_empty()).then_some(value)
}

/// Reads `<movie>` and `<episodedetails>` documents; `None` when there is no title.
pub fn parse_nfo(text: &str) -> Option<VideoMeta> {
    let is_episode = text.to_ascii_lowercase().contains("<episodedetails");
    let title = tag(text, "title")?;
    let year = tag(text, "year")
        .and_then(|y| y.parse().ok())
        .or_else(|| tag(text, "premiered").or_else(|| tag(text, "aired")).and_then(|d| d.get(..4)?.parse().ok()));
    let mut meta = VideoMeta { title, year, source: "nfo".into(), ..Default::default() };
    if is_episode {
        meta.show = tag(text, "showtitle");
        meta.season = tag(text, "season").and_then(|s| s.parse().ok());
        meta.episode = tag(text, "episode").and_then(|s| s.parse().ok());
    }
    Some(meta)
}

static EPISODE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(?P<show>.*?)[\s._\-]*(?:s(?P<s>\d{1,2})[\s._\-]*e(?P<e>\d{1,3})|(?P<s2>\d{1,2})x(?P<e2>\d{1,3}))(?P<rest>.*)$")
        .expect("episode pattern")
});
static YEAR_PAREN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(?P<title>.*?)\s*[\(\[](?P<year>(?:19|20)\d{2})[\)\]]").expect("year pattern"));
static YEAR_SCENE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?P<title>.+?)[\s._\-]+(?P<year>(?:19|20)\d{2})(?:[\s._\-]|$)").expect("scene pattern")
});

fn tidy(s: &str) -> String {
    let spaced = if s.contains(' ') { s.to_owned() } else { s.replace(['.', '_'], " ") };
    spaced
        .trim_matches(|c: char| c.is_whitespace() || c == '-' || c == '.')
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Guesses the metadata from the file name alone.
pub fn from_file_name(video: &Path) -> VideoMeta {
    let stem = video.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let mut meta = VideoMeta { source: "filename".into(), ..Default::default() };
    if let Some(c) = EPISODE.captures(&stem) {
        let show = tidy(c.name("show").map_or("", |m| m.as_str()));
        let season = c.name("s").or(c.name("s2")).and_then(|m| m.as_str().parse().ok());
        let episode = c.name("e").or(c.name("e2")).and_then(|m| m.as_str().parse().ok());
        let rest = tidy(c.name("rest").map_or("", |m| m.as_str()));
        if !show.is_empty() {
            let (show, year) = match YEAR_PAREN.captures(&show) {
                Some(y) => (tidy(&y["title"]), y["year"].parse().ok()),
                None => (show, None),
            };
            meta.title = if rest.is_empty() { show.clone() } else { rest };
            meta.show = Some(show);
            meta.year = year;
            meta.season = season;
            meta.episode = episode;
            return meta;
        }
    }
    if let Some(c) = YEAR_PAREN.captures(&stem).or_else(|| YEAR_SCENE.captures(&stem)) {
        let title = tidy(&c["title"]);
        if !title.is_empty() {
            meta.title = title;
            meta.year = c["year"].parse().ok();
            return meta;
        }
    }
    meta.title = tidy(&stem);
    if meta.title.is_empty() {
        meta.title = stem;
    }
    meta
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> VideoMeta {
        from_file_name(Path::new(s))
    }

    #[test]
    fn movie_names() {
        let m = name("/m/Big Buck Bunny (2008).mp4");
        assert_eq!((m.title.as_str(), m.year, m.is_tv()), ("Big Buck Bunny", Some(2008), false));
        let m = name("The.Matrix.1999.1080p.BluRay.x264.mkv");
        assert_eq!((m.title.as_str(), m.year), ("The Matrix", Some(1999)));
        let m = name("bigbuckbunny.mp4");
        assert_eq!((m.title.as_str(), m.year), ("bigbuckbunny", None));
    }

    #[test]
    fn episode_names() {
        let m = name("Show Name - S01E02 - Pilot.mkv");
        assert_eq!(m.show.as_deref(), Some("Show Name"));
        assert_eq!((m.season, m.episode, m.title.as_str()), (Some(1), Some(2), "Pilot"));
        let m = name("Some.Show.s03e10.720p.mkv");
        assert_eq!((m.show.as_deref(), m.season, m.episode), (Some("Some Show"), Some(3), Some(10)));
        let m = name("Show (2010) 2x05.avi");
        assert_eq!((m.show.as_deref(), m.year, m.season, m.episode), (Some("Show"), Some(2010), Some(2), Some(5)));
    }

    #[test]
    fn nfo_documents() {
        let movie = "<?xml version=\"1.0\"?><movie><title>Sintel &amp; Co</title><year>2010</year></movie>";
        let m = parse_nfo(movie).unwrap();
        assert_eq!((m.title.as_str(), m.year, m.source.as_str()), ("Sintel & Co", Some(2010), "nfo"));
        let ep = "<episodedetails><title>Pilot</title><showtitle>Show</showtitle><season>1</season>\
                  <episode>2</episode><aired>2011-04-17</aired></episodedetails>";
        let m = parse_nfo(ep).unwrap();
        assert_eq!((m.show.as_deref(), m.season, m.episode, m.year), (Some("Show"), Some(1), Some(2), Some(2011)));
        assert!(parse_nfo("<movie></movie>").is_none());
    }
}
