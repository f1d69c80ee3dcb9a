//! Resolve and enrich: the winning candidate becomes a full identification result.
//!
//! TMDB gives the catalog id, details, cast, trailers, watch providers for the configured
//! region, recommendations and the IMDb id; OMDb (by IMDb id) adds box office and awards.
//! Without a TMDB key, or when TMDB does not know the title, the result carries what the
//! engine said and says so in `detailsUnavailable` / `notice`.
use serde_json::Value;
use tokio::time::Instant;

use super::engine::{Candidate, TitleKind};
use super::metadata::{Omdb, Tmdb};
use super::result::*;

/// Fills `r` from the candidate, then from the catalogs when they are configured.
pub async fn enrich(
    r: &mut IdentificationResult,
    c: &Candidate,
    tmdb: Option<&Tmdb>,
    omdb: Option<&Omdb>,
    deadline: Instant,
) {
    from_candidate(r, c);
    let Some(tmdb) = tmdb else {
        // Visitors get a neutral sentence; the reason lets an administrator's view name the
        // set-up (islands/src/identify/ResultView.tsx).
        r.details_unavailable = true;
        r.details_reason = Some(DetailsReason::NoCatalogKey);
        r.notice = Some(NOTICE_NO_CATALOG.into());
        return;
    };
    let hit = match c.tmdb_id {
        Some(id) => {
            Ok(Some(super::metadata::Hit { id, kind: c.kind, title: c.title.clone(), year: c.year, popularity: 0.0 }))
        }
        None => tmdb.resolve(&c.title, c.year, c.kind, c.imdb_id.as_deref(), deadline).await,
    };
    let hit = match hit {
        Ok(Some(h)) => h,
        Ok(None) => {
            r.details_unavailable = true;
            r.details_reason = Some(DetailsReason::NotFound);
            r.notice =
                Some("This title was not found in the movie database, so only the AI engine's answer is shown.".into());
            return;
        }
        Err(e) => {
            tracing::warn!(error = %e, "TMDB search failed");
            r.details_unavailable = true;
            r.details_reason = Some(DetailsReason::CatalogFailed);
            r.notice = Some("Movie details are temporarily unavailable. Showing what the AI engine recognised.".into());
            return;
        }
    };
    let details = match tmdb.details(hit.id, hit.kind, deadline).await {
        Ok(d) => d,
        Err(e) => {
            tracing::warn!(error = %e, "TMDB details failed");
            r.details_unavailable = true;
            r.details_reason = Some(DetailsReason::CatalogFailed);
            r.notice = Some("Movie details are temporarily unavailable. Showing what the AI engine recognised.".into());
            return;
        }
    };
    apply_tmdb(r, &details, hit.kind, tmdb);
    if hit.kind == TitleKind::Tv
        && let (Some(s), Some(e)) = (r.season, r.episode)
        && let Ok(ep) = tmdb.episode(hit.id, s, e, deadline).await
    {
        r.episode_title = ep["name"].as_str().map(str::to_owned).filter(|s| !s.is_empty());
    }
    if let (Some(omdb), Some(imdb)) = (omdb, r.imdb_id.clone()) {
        match omdb.by_imdb(&imdb, deadline).await {
            Ok(Some(o)) => apply_omdb(r, &o),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "OMDb failed"),
        }
    }
}

/// What the engine said, before any catalog.
pub fn from_candidate(r: &mut IdentificationResult, c: &Candidate) {
    r.title = c.title.clone();
    r.year = c.year.map(|y| y.to_string());
    r.media_type = c.kind.as_str().into();
    r.season = c.season;
    r.episode = c.episode;
    r.confidence = round2(f64::from(c.confidence));
    r.confidence_score = r.confidence;
    r.reasons = c.reasons.clone();
    r.fun_facts = c.fun_facts.clone();
    r.tmdb_id = c.tmdb_id;
    r.id = c.tmdb_id;
    r.imdb_id = c.imdb_id.clone();
    r.timestamp = c.timestamp;
    r.preview_url = c.preview_url.clone();
    r.also_in = c.also_in.clone();
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

fn s(v: &Value) -> Option<String> {
    v.as_str().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

fn year_of(v: &Value) -> Option<String> {
    s(v).and_then(|d| d.get(..4).map(str::to_owned))
}

/// Minutes as `"2h 16m"` / `"45m"`.
pub fn runtime_text(minutes: u32) -> String {
    match (minutes / 60, minutes % 60) {
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h {m}m"),
    }
}

/// `$63,000,000`.
pub fn dollars(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    format!("${out}")
}

pub fn apply_tmdb(r: &mut IdentificationResult, d: &Value, kind: TitleKind, tmdb: &Tmdb) {
    let id = d["id"].as_i64();
    r.id = id;
    r.tmdb_id = id;
    r.media_type = kind.as_str().into();
    r.details_unavailable = false;
    r.notice = None;
    r.details_reason = None;
    match kind {
        TitleKind::Movie => {
            r.title = s(&d["title"]).unwrap_or_else(|| r.title.clone());
            r.original_title = s(&d["original_title"]).filter(|o| *o != r.title);
            r.year = year_of(&d["release_date"]).or(r.year.take());
            r.runtime_minutes = d["runtime"].as_u64().filter(|m| *m > 0).map(|m| m as u32);
            let directors: Vec<String> = d["credits"]["crew"]
                .as_array()
                .map(|crew| {
                    crew.iter().filter(|c| c["job"] == "Director").filter_map(|c| s(&c["name"])).take(2).collect()
                })
                .unwrap_or_default();
            r.director = (!directors.is_empty()).then(|| directors.join(", "));
            r.imdb_id = s(&d["imdb_id"]).or_else(|| s(&d["external_ids"]["imdb_id"])).or(r.imdb_id.take());
            r.classification = d["release_dates"]["results"].as_array().and_then(|rs| {
                let region = rs.iter().find(|x| x["iso_3166_1"] == tmdb.region.as_str())?;
                let dates = region["release_dates"].as_array()?;
                dates.iter().filter(|x| x["type"] == 3).chain(dates.iter()).find_map(|x| s(&x["certification"]))
            });
            let budget = d["budget"].as_i64().filter(|b| *b > 0).map(dollars);
            let revenue = d["revenue"].as_i64().filter(|b| *b > 0).map(dollars);
            if budget.is_some() || revenue.is_some() {
                r.box_office = Some(BoxOffice { budget, worldwide: revenue, domestic: None });
            }
            r.tmdb_url = id.map(|i| format!("https://www.themoviedb.org/movie/{i}"));
        }
        TitleKind::Tv => {
            r.title = s(&d["name"]).unwrap_or_else(|| r.title.clone());
            r.original_title = s(&d["original_name"]).filter(|o| *o != r.title);
            let first = year_of(&d["first_air_date"]);
            let last = year_of(&d["last_air_date"]);
            let running = d["in_production"].as_bool().unwrap_or(false);
            r.year = match (first, last) {
                (Some(f), _) if running => Some(format!("{f}-Present")),
                (Some(f), Some(l)) if l != f => Some(format!("{f}-{l}")),
                (Some(f), _) => Some(f),
                (None, _) => r.year.take(),
            };
            r.runtime_minutes = d["episode_run_time"]
                .as_array()
                .and_then(|a| a.first())
                .and_then(Value::as_u64)
                .or_else(|| d["last_episode_to_air"]["runtime"].as_u64())
                .filter(|m| *m > 0)
                .map(|m| m as u32);
            let creators: Vec<String> = d["created_by"]
                .as_array()
                .map(|c| c.iter().filter_map(|p| s(&p["name"])).take(2).collect())
                .unwrap_or_default();
            r.director = (!creators.is_empty()).then(|| creators.join(", "));
            r.imdb_id = s(&d["external_ids"]["imdb_id"]).or(r.imdb_id.take());
            r.classification = d["content_ratings"]["results"]
                .as_array()
                .and_then(|rs| rs.iter().find(|x| x["iso_3166_1"] == tmdb.region.as_str()))
                .and_then(|x| s(&x["rating"]));
            r.tmdb_url = id.map(|i| format!("https://www.themoviedb.org/tv/{i}"));
        }
    }
    r.runtime = r.runtime_minutes.map(runtime_text);
    r.rating = d["vote_average"]
        .as_f64()
        .filter(|v| *v > 0.0 && d["vote_count"].as_i64().unwrap_or(1) > 0)
        .map(|v| (v * 10.0).round() / 10.0);
    r.genres = d["genres"].as_array().map(|g| g.iter().filter_map(|x| s(&x["name"])).collect()).unwrap_or_default();
    r.description = s(&d["overview"]);
    r.tagline = s(&d["tagline"]);
    r.poster_url = tmdb.image("w500", &d["poster_path"]);
    r.backdrop_url = tmdb.image("w1280", &d["backdrop_path"]);
    r.language = d["spoken_languages"]
        .as_array()
        .and_then(|l| l.first())
        .and_then(|l| s(&l["english_name"]).or_else(|| s(&l["name"])))
        .or_else(|| s(&d["original_language"]));
    r.country = d["production_countries"]
        .as_array()
        .and_then(|c| c.first())
        .and_then(|c| s(&c["name"]))
        .or_else(|| d["origin_country"].as_array().and_then(|c| c.first()).and_then(s));

    // Trailers: YouTube only; official trailers first, then teasers and the rest.
    let mut videos: Vec<&Value> = d["videos"]["results"]
        .as_array()
        .map(|v| v.iter().filter(|x| x["site"] == "YouTube").collect())
        .unwrap_or_default();
    let rank = |v: &Value| {
        let t = match v["type"].as_str() {
            Some("Trailer") => 0,
            Some("Teaser") => 1,
            _ => 2,
        };
        (t, if v["official"] == true { 0 } else { 1 })
    };
    videos.sort_by_key(|v| rank(v));
    r.trailers = videos
        .iter()
        .filter_map(|v| {
            let key = s(&v["key"])?;
            Some(Trailer {
                embed_url: format!("https://www.youtube.com/embed/{key}"),
                url: format!("https://www.youtube.com/watch?v={key}"),
                name: s(&v["name"]).unwrap_or_else(|| "Trailer".into()),
                key,
            })
        })
        .take(6)
        .collect();
    r.trailer_url = r.trailers.first().map(|t| t.url.clone());

    let mut cast: Vec<&Value> = d["credits"]["cast"].as_array().map(|c| c.iter().collect()).unwrap_or_default();
    cast.sort_by_key(|c| c["order"].as_i64().unwrap_or(i64::MAX));
    r.cast = cast
        .into_iter()
        .filter_map(|c| {
            Some(CastMember {
                id: c["id"].as_i64(),
                name: s(&c["name"])?,
                character: s(&c["character"]),
                profile_url: tmdb.image("w185", &c["profile_path"]),
            })
        })
        .take(20)
        .collect();

    let region = &d["watch/providers"]["results"][tmdb.region.as_str()];
    let link = s(&region["link"]);
    let list = |k: &str| -> Vec<Platform> {
        region[k]
            .as_array()
            .map(|a| {
                let mut a: Vec<&Value> = a.iter().collect();
                a.sort_by_key(|p| p["display_priority"].as_i64().unwrap_or(i64::MAX));
                a.into_iter()
                    .filter_map(|p| {
                        Some(Platform {
                            name: s(&p["provider_name"])?,
                            url: link.clone(),
                            logo_url: tmdb.image("w92", &p["logo_path"]),
                            provider_id: p["provider_id"].as_i64(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    r.streaming_platforms = StreamingPlatforms {
        flatrate: list("flatrate"),
        rent: list("rent"),
        buy: list("buy"),
        link: link.clone(),
        region: Some(tmdb.region.clone()),
    };

    r.similar_movies = d["recommendations"]["results"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| {
                    let is_tv = x["media_type"] == "tv" || (x["title"].is_null() && !x["name"].is_null());
                    let title = if is_tv { s(&x["name"]) } else { s(&x["title"]) }?;
                    Some(SimilarTitle {
                        id: x["id"].as_i64(),
                        title,
                        year: if is_tv { year_of(&x["first_air_date"]) } else { year_of(&x["release_date"]) },
                        poster_url: tmdb.image("w342", &x["poster_path"]),
                        media_type: if is_tv { "tv" } else { "movie" }.into(),
                    })
                })
                .take(12)
                .collect()
        })
        .unwrap_or_default();
}

/// OMDb: domestic box office, awards, and gaps TMDB left (rating, age rating, director).
pub fn apply_omdb(r: &mut IdentificationResult, o: &Value) {
    let val = |k: &str| s(&o[k]).filter(|v| v != "N/A");
    if let Some(domestic) = val("BoxOffice") {
        r.box_office.get_or_insert_with(BoxOffice::default).domestic = Some(domestic);
    }
    if r.rating.is_none() {
        r.rating = val("imdbRating").and_then(|v| v.parse().ok());
    }
    if r.classification.is_none() {
        r.classification = val("Rated");
    }
    if r.director.is_none() {
        r.director = val("Director");
    }
    if let Some(text) = val("Awards") {
        r.awards = parse_awards(&text, val("Year").as_deref());
    }
}

/// OMDb's awards line, e.g. `"Won 4 Oscars. 42 wins & 51 nominations total"`, as entries.
pub fn parse_awards(text: &str, year: Option<&str>) -> Vec<Award> {
    let year = year.and_then(|y| y.get(..4)).map(str::to_owned);
    text.split('.')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|part| {
            let lower = part.to_lowercase();
            let organization = if lower.contains("oscar") {
                Some("Academy Awards".to_owned())
            } else if lower.contains("golden globe") {
                Some("Golden Globe Awards".to_owned())
            } else if lower.contains("bafta") {
                Some("BAFTA Awards".to_owned())
            } else if lower.contains("primetime emmy") || lower.contains("emmy") {
                Some("Emmy Awards".to_owned())
            } else {
                None
            };
            let result = if lower.starts_with("won") || (lower.contains("win") && !lower.starts_with("nominated")) {
                "Won"
            } else {
                "Nominated"
            };
            Award { name: part.to_owned(), year: year.clone(), organization, result: result.into() }
        })
        .take(5)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_and_time() {
        assert_eq!(dollars(63_000_000), "$63,000,000");
        assert_eq!(dollars(999), "$999");
        assert_eq!(runtime_text(136), "2h 16m");
        assert_eq!(runtime_text(45), "45m");
    }

    #[test]
    fn awards_parse() {
        let a = parse_awards("Won 4 Oscars. 42 wins & 51 nominations total", Some("1999"));
        assert_eq!(a.len(), 2);
        assert_eq!(a[0].organization.as_deref(), Some("Academy Awards"));
        assert_eq!(a[0].result, "Won");
        assert_eq!(a[1].result, "Won");
        let a = parse_awards("Nominated for 1 Oscar. 3 nominations total", None);
        assert_eq!(a[0].result, "Nominated");
        assert_eq!(a[1].result, "Nominated");
    }
}
