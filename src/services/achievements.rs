//! Achievements: a small set of milestones that reward what makes Reelfind better for
//! everyone (identifying, saving, reviewing), read from what is stored.
//!
//! There is no counter anywhere: each rule is a question asked of the stored activity
//! (identifications, collection items, reviews) that answers "when did this first hold?".
//! The first time the answer is a date, one row goes into `achievements` with that date, so
//! an achievement is awarded once and keeps its date even after the activity behind it is
//! gone (a cleared history does not take it back). Two nodes awarding at once meet the
//! unique index on (user, key); the second insert does nothing.
//!
//! Rules are evaluated when someone asks (the profile, and the check the browser makes
//! after an identification, a saved title or a review) and before a history is cleared,
//! never on a timer. Rules already awarded are not asked again, so a person who has them
//! all costs one query.
use std::collections::HashSet;

use chrono::{DateTime, Duration, NaiveDate, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, QuerySelect, Set, TryInsertResult};
use serde::Serialize;

use crate::entities::{achievement, collection_item, identification, testimonial};

/// What a rule asks of the stored activity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// At least one identification.
    FirstIdentification,
    /// Identifications of this many different titles (type, title and year).
    DistinctTitles(usize),
    /// A video clip identified with its sound track analysed.
    ClipWithAudio,
    /// A title saved to the collection.
    FirstCollectionItem,
    /// A review written (whatever its moderation state).
    FirstReview,
    /// A correction the person sent was accepted: by the corrections rule or by an
    /// administrator (`services::feedback`).
    AcceptedCorrection,
    /// An identification on each of this many consecutive days (UTC).
    DailyStreak(u32),
}

/// One achievement as people see it.
#[derive(Clone, Copy, Debug)]
pub struct Definition {
    pub key: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub rule: Rule,
}

impl Definition {
    /// Whether the activity the rule reads exists in this build (every rule's does now).
    pub fn available(&self) -> bool {
        true
    }
}

/// Every achievement, in the order the profile lists them.
pub const ALL: &[Definition] = &[
    Definition {
        key: "first_identification",
        title: "First Scene",
        description: "Identified your first screenshot or clip.",
        rule: Rule::FirstIdentification,
    },
    Definition {
        key: "ten_titles",
        title: "Film Buff",
        description: "Identified ten different movies or shows.",
        rule: Rule::DistinctTitles(10),
    },
    Definition {
        key: "clip_with_audio",
        title: "All Ears",
        description: "Identified a video clip with its sound analysed.",
        rule: Rule::ClipWithAudio,
    },
    Definition {
        key: "first_collection_item",
        title: "Collector",
        description: "Saved a title to your collection.",
        rule: Rule::FirstCollectionItem,
    },
    Definition {
        key: "first_review",
        title: "Critic",
        description: "Wrote a review of an identification.",
        rule: Rule::FirstReview,
    },
    Definition {
        key: "accepted_correction",
        title: "Sharp Eye",
        description: "Sent a correction that was confirmed or accepted.",
        rule: Rule::AcceptedCorrection,
    },
    Definition {
        key: "week_streak",
        title: "Week of Scenes",
        description: "Identified a scene every day for seven days in a row.",
        rule: Rule::DailyStreak(7),
    },
];

/// The definition of `key`, if there is one.
pub fn definition(key: &str) -> Option<&'static Definition> {
    ALL.iter().find(|d| d.key == key)
}

/// An achievement a person holds, with the date it was earned (the profile response's
/// `achievements` items).
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Earned {
    pub key: String,
    pub title: String,
    pub description: String,
    pub earned_at: DateTime<Utc>,
}

/// An achievement not earned yet, and what earns it (the profile's "still to earn").
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Locked {
    pub key: String,
    pub title: String,
    pub description: String,
}

fn earned_view(row: &achievement::Model) -> Option<Earned> {
    let d = definition(&row.key)?;
    Some(Earned {
        key: d.key.into(),
        title: d.title.into(),
        description: d.description.into(),
        earned_at: row.earned_at,
    })
}

/// When `rule` first held for `user_id`, read from the stored activity; `None` while it
/// does not hold.
pub async fn first_held(
    db: &impl ConnectionTrait,
    user_id: i64,
    rule: Rule,
) -> Result<Option<DateTime<Utc>>, sea_orm::DbErr> {
    use identification::Column as I;
    let mine = || identification::Entity::find().filter(I::UserId.eq(user_id));
    Ok(match rule {
        Rule::FirstIdentification => {
            mine().select_only().column(I::CreatedAt).order_by_asc(I::CreatedAt).into_tuple().one(db).await?
        }
        Rule::DistinctTitles(n) => {
            let rows: Vec<(String, Option<String>, String, DateTime<Utc>)> = mine()
                .select_only()
                .columns([I::Title, I::Year, I::MediaType, I::CreatedAt])
                .order_by_asc(I::CreatedAt)
                .into_tuple()
                .all(db)
                .await?;
            nth_distinct_title(&rows, n)
        }
        Rule::ClipWithAudio => {
            // The flag sits in the stored result JSON; the LIKE only narrows the rows read,
            // the parsed JSON decides.
            let rows: Vec<(String, DateTime<Utc>)> = mine()
                .filter(I::Result.like("%\"hasAudio\":true%"))
                .select_only()
                .columns([I::Result, I::CreatedAt])
                .order_by_asc(I::CreatedAt)
                .into_tuple()
                .all(db)
                .await?;
            rows.into_iter().find(|(json, _)| is_clip_with_audio(json)).map(|(_, at)| at)
        }
        Rule::FirstCollectionItem => {
            use collection_item::Column as C;
            collection_item::Entity::find()
                .filter(C::UserId.eq(user_id))
                .select_only()
                .column(C::CreatedAt)
                .order_by_asc(C::CreatedAt)
                .into_tuple()
                .one(db)
                .await?
        }
        Rule::FirstReview => {
            use testimonial::Column as T;
            testimonial::Entity::find()
                .filter(T::UserId.eq(user_id))
                .select_only()
                .column(T::CreatedAt)
                .order_by_asc(T::CreatedAt)
                .into_tuple()
                .one(db)
                .await?
        }
        Rule::AcceptedCorrection => {
            use crate::entities::answer_vote::Column as V;
            crate::entities::answer_vote::Entity::find()
                .filter(V::UserId.eq(user_id))
                .filter(V::Status.eq("accepted"))
                .filter(V::DecidedAt.is_not_null())
                .select_only()
                .column(V::DecidedAt)
                .order_by_asc(V::DecidedAt)
                .into_tuple::<Option<DateTime<Utc>>>()
                .one(db)
                .await?
                .flatten()
        }
        Rule::DailyStreak(days) => {
            let times: Vec<DateTime<Utc>> =
                mine().select_only().column(I::CreatedAt).order_by_asc(I::CreatedAt).into_tuple().all(db).await?;
            streak_reached(&times, days)
        }
    })
}

/// The time of the identification that brought the count of different titles to `n`.
/// A title is its type, its title (case and outer spaces aside) and its year.
fn nth_distinct_title(rows: &[(String, Option<String>, String, DateTime<Utc>)], n: usize) -> Option<DateTime<Utc>> {
    if n == 0 {
        return None;
    }
    let mut seen = HashSet::new();
    for (title, year, media_type, at) in rows {
        let key = (media_type.as_str(), title.trim().to_lowercase(), year.as_deref().map(str::trim));
        if !title.trim().is_empty() && seen.insert(key) && seen.len() == n {
            return Some(*at);
        }
    }
    None
}

/// A stored result of a video whose sound track was asked for and present.
fn is_clip_with_audio(json: &str) -> bool {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(json) else { return false };
    let audio = &v["audioAnalysisResults"];
    v["mediaKind"] == "video" && audio["requested"] == true && audio["hasAudio"] == true
}

/// The first identification on the `days`-th day of a run of consecutive UTC days with at
/// least one identification each. `times` is in ascending order.
fn streak_reached(times: &[DateTime<Utc>], days: u32) -> Option<DateTime<Utc>> {
    if days == 0 {
        return None;
    }
    let mut run = 0u32;
    let mut last: Option<NaiveDate> = None;
    for at in times {
        let day = at.date_naive();
        match last {
            Some(d) if d == day => continue,
            Some(d) if d + Duration::days(1) == day => run += 1,
            _ => run = 1,
        }
        last = Some(day);
        if run == days {
            return Some(*at);
        }
    }
    None
}

/// Awards every achievement whose rule now holds and that `user_id` does not hold yet,
/// and answers all they hold, oldest first.
pub async fn award(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<Earned>, sea_orm::DbErr> {
    let held = rows(db, user_id).await?;
    let have: HashSet<&str> = held.iter().map(|r| r.key.as_str()).collect();
    let mut added = false;
    for d in ALL.iter().filter(|d| d.available() && !have.contains(d.key)) {
        let Some(at) = first_held(db, user_id, d.rule).await? else { continue };
        let res = achievement::Entity::insert(achievement::ActiveModel {
            user_id: Set(user_id),
            key: Set(d.key.into()),
            earned_at: Set(at),
            announced_at: Set(None),
            ..Default::default()
        })
        .on_conflict_do_nothing_on([achievement::Column::UserId, achievement::Column::Key])
        .exec(db)
        .await?;
        added |= matches!(res, TryInsertResult::Inserted(_));
    }
    let held = if added { rows(db, user_id).await? } else { held };
    Ok(held.iter().filter_map(earned_view).collect())
}

/// What `user_id` holds, without evaluating the rules.
pub async fn held(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<Earned>, sea_orm::DbErr> {
    Ok(rows(db, user_id).await?.iter().filter_map(earned_view).collect())
}

/// The achievements people can earn in this build that `earned` does not hold.
pub fn still_to_earn(earned: &[Earned]) -> Vec<Locked> {
    ALL.iter()
        .filter(|d| d.available() && !earned.iter().any(|e| e.key == d.key))
        .map(|d| Locked { key: d.key.into(), title: d.title.into(), description: d.description.into() })
        .collect()
}

/// Awards what now holds, then answers the achievements `user_id` has not been told about
/// yet and marks them told. Each is claimed by one conditional update, so two tabs or two
/// nodes asking at once announce it once.
pub async fn announce(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<Earned>, sea_orm::DbErr> {
    award(db, user_id).await?;
    let now = Utc::now();
    let mut told = Vec::new();
    for row in rows(db, user_id).await?.into_iter().filter(|r| r.announced_at.is_none()) {
        let claimed = achievement::Entity::update_many()
            .col_expr(achievement::Column::AnnouncedAt, Expr::value(now))
            .filter(achievement::Column::Id.eq(row.id))
            .filter(achievement::Column::AnnouncedAt.is_null())
            .exec(db)
            .await?
            .rows_affected
            == 1;
        if claimed && let Some(e) = earned_view(&row) {
            told.push(e);
        }
    }
    Ok(told)
}

async fn rows(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<achievement::Model>, sea_orm::DbErr> {
    achievement::Entity::find()
        .filter(achievement::Column::UserId.eq(user_id))
        .order_by_asc(achievement::Column::EarnedAt)
        .order_by_asc(achievement::Column::Id)
        .all(db)
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn at(day: u32, hour: u32) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, day, hour, 0, 0).unwrap()
    }

    #[test]
    fn a_streak_counts_days_not_identifications() {
        let mut times: Vec<_> = (1..=6).map(|d| at(d, 12)).collect();
        times.insert(1, at(1, 23));
        assert_eq!(streak_reached(&times, 7), None, "six days, however many identifications");
        times.push(at(7, 0));
        times.push(at(7, 5));
        assert_eq!(streak_reached(&times, 7), Some(at(7, 0)), "the first identification of the seventh day");
    }

    #[test]
    fn a_missed_day_starts_the_run_again() {
        let times: Vec<_> = [1, 2, 3, 5, 6, 7, 8, 9, 10].iter().map(|&d| at(d, 9)).collect();
        assert_eq!(streak_reached(&times, 7), None);
        let times: Vec<_> = [1, 2, 3, 5, 6, 7, 8, 9, 10, 11].iter().map(|&d| at(d, 9)).collect();
        assert_eq!(streak_reached(&times, 7), Some(at(11, 9)));
    }

    #[test]
    fn distinct_titles_ignore_case_and_repeats_but_not_the_year() {
        let row = |t: &str, y: Option<&str>, d| (t.to_owned(), y.map(str::to_owned), "movie".to_owned(), at(d, 8));
        let rows = vec![
            row("Heat", Some("1995"), 1),
            row("heat ", Some("1995"), 2),
            row("Heat", Some("1986"), 3),
            row("", None, 4),
            row("Alien", Some("1979"), 5),
        ];
        assert_eq!(nth_distinct_title(&rows, 3), Some(at(5, 8)));
        assert_eq!(nth_distinct_title(&rows, 4), None);
    }

    #[test]
    fn only_a_video_with_its_sound_analysed_is_a_clip_with_audio() {
        let r = |kind: &str, requested: bool, has: bool| {
            serde_json::json!({"mediaKind": kind, "audioAnalysisResults": {"requested": requested, "hasAudio": has}})
                .to_string()
        };
        assert!(is_clip_with_audio(&r("video", true, true)));
        assert!(!is_clip_with_audio(&r("video", false, true)), "sound not asked for");
        assert!(!is_clip_with_audio(&r("video", true, false)), "a silent clip");
        assert!(!is_clip_with_audio(&r("image", true, true)));
        assert!(!is_clip_with_audio("not json"));
    }

    #[test]
    fn the_correction_achievement_can_be_earned_now() {
        let d = definition("accepted_correction").unwrap();
        assert!(d.available());
        assert!(still_to_earn(&[]).iter().any(|l| l.key == "accepted_correction"));
        assert_eq!(ALL.iter().map(|d| d.key).collect::<HashSet<_>>().len(), ALL.len(), "keys are unique");
    }
}
