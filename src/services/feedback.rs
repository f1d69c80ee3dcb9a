//! "Was this right?": people's votes on answers, and the corrections rule that changes what
//! the answer memory (`identify::memory`) remembers.
//!
//! **Votes.** A signed-in person votes once on each identification of their own: *right*
//! (it confirms the title shown), or *wrong* with the title they pick from the catalog, or
//! *wrong* with "I don't know". Every vote counts toward the person's rate limits
//! ([`FEEDBACK_USER`], [`FEEDBACK_ADDR`]). A vote's **weight** is 1, or ½ from an account
//! younger than a day or whose email address is not verified ([`weight`]). Its **origin**
//! is a keyed digest of the network it came from (an IPv4 address or an IPv6 /64), so that
//! two accounts on one network are not two independent people; the address itself is not
//! kept.
//!
//! **The rule.** A remembered answer's current title *C* and each person's latest vote on
//! identifications linked to it (one per person, whichever identifications they voted on)
//! give: the *support* of *C* (votes naming *C*: a *right* on *C*, or a pick of *C*), the
//! *doubt* of *C* (*wrong* votes on *C* that name no other title or another one), and for
//! every other title *T*, its people, origins and weight. Then:
//! - the memory answers with *C* only while doubt ≤ support (one unanswered "no" makes the
//!   engines look again: it costs a call, never a wrong answer);
//! - *T* replaces *C* when at least [`FLIP_PEOPLE`] people from at least [`FLIP_ORIGINS`]
//!   networks named it, with weight ≥ [`FLIP_WEIGHT`] and more than *C*'s support: a single
//!   person, or several accounts on one network, can never flip anything, and confirmed
//!   answers need more corrections than they have confirmations;
//! - an administrator's decision in the Corrections queue (accept *T*, or reject *T*'s
//!   corrections) pins the answer: the rule no longer flips it, rejected votes stop counting.
//!
//! A flip or an accepted correction marks the corrections naming the new title accepted
//! (the achievement "Sharp Eye"), and the route rewrites the linked identifications' results
//! to the new title (everyone's but those whose owner voted otherwise).
use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, OnConflict};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, QueryOrder, Set, TransactionSession,
    TransactionTrait,
};
use serde::Serialize;

use crate::entities::{answer_vote, identification, remembered_answer, user};
use crate::services::throttle::Limit;

/// Votes per account an hour.
pub const FEEDBACK_USER: Limit = Limit::new("feedback-user", 30, std::time::Duration::from_secs(3600));
/// Votes per network an hour (every account on it together).
pub const FEEDBACK_ADDR: Limit = Limit::new("feedback-addr", 60, std::time::Duration::from_secs(3600));
/// Title searches per account a minute.
pub const TITLE_SEARCH_USER: Limit = Limit::new("title-search-user", 30, std::time::Duration::from_secs(60));

/// A vote's weight from a verified account at least a day old.
pub const FULL_WEIGHT: f64 = 1.0;
/// A vote's weight from an account younger than a day or with an unverified address.
pub const LIGHT_WEIGHT: f64 = 0.5;
/// People who must name a title before it replaces a remembered answer.
pub const FLIP_PEOPLE: usize = 2;
/// Networks those people must come from.
pub const FLIP_ORIGINS: usize = 2;
/// Weight the title's votes must reach (two new accounts: 2 x ½).
pub const FLIP_WEIGHT: f64 = 1.0;

/// The weight of `u`'s votes now.
pub fn weight(u: &user::Model, now: DateTime<Utc>) -> f64 {
    if u.email_verified && now - u.created_at >= chrono::Duration::days(1) { FULL_WEIGHT } else { LIGHT_WEIGHT }
}

/// A catalog title as votes name it.
#[derive(Clone, Debug, PartialEq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Title {
    pub tmdb_id: i64,
    /// `movie` or `tv`.
    #[serde(rename = "type")]
    pub media_type: String,
    pub title: String,
    pub year: Option<String>,
}

/// What a person said.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Right,
    /// Wrong; the right title when they know it.
    Wrong(Option<Title>),
}

/// A title as (catalog id, `movie` or `tv`).
pub type Key = (i64, String);

/// One person's vote, as the rule reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Ballot {
    pub user_id: i64,
    pub right: bool,
    /// The title the identification showed.
    pub shown: Option<Key>,
    /// The title the person names (`None`: "I don't know").
    pub named: Option<Key>,
    pub weight: f64,
    pub origin: String,
}

/// What the votes say of a remembered answer whose title is `current`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub supporters: u32,
    pub support: f64,
    pub doubt: f64,
    pub standing: bool,
    /// The title that replaces `current` by the rule.
    pub flip_to: Option<Key>,
}

/// The rule of the module docs over `ballots` (at most one per person: the latest).
pub fn tally(current: &Key, ballots: &[Ballot], pinned: bool) -> Tally {
    let mut t = Tally::default();
    let mut others: BTreeMap<Key, (HashSet<i64>, HashSet<&str>, f64)> = BTreeMap::new();
    for b in ballots {
        match &b.named {
            Some(k) if k == current => {
                t.supporters += 1;
                t.support += b.weight;
            }
            named => {
                if !b.right && b.shown.as_ref() == Some(current) {
                    t.doubt += b.weight;
                }
                if let Some(k) = named {
                    let e = others.entry(k.clone()).or_default();
                    e.0.insert(b.user_id);
                    e.1.insert(b.origin.as_str());
                    e.2 += b.weight;
                }
            }
        }
    }
    t.standing = t.doubt <= t.support;
    if !pinned {
        t.flip_to = others
            .into_iter()
            .filter(|(_, (people, origins, w))| {
                people.len() >= FLIP_PEOPLE && origins.len() >= FLIP_ORIGINS && *w >= FLIP_WEIGHT && *w > t.support
            })
            .max_by(|a, b| a.1.2.total_cmp(&b.1.2))
            .map(|(k, _)| k);
    }
    t
}

/// Why a vote was not taken.
#[derive(Debug, thiserror::Error)]
pub enum VoteError {
    /// Not an identification of the voter's.
    #[error("not found")]
    NotFound,
    /// The voter already voted on it.
    #[error("already voted")]
    AlreadyVoted,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// A vote taken.
#[derive(Clone, Debug)]
pub struct Voted {
    /// The identification's engine and remembered answer.
    pub memory_id: Option<i64>,
    /// The remembered answer's title changed by the rule: from, to.
    pub flipped: Option<(Title, Title)>,
}

/// The voter.
pub struct Voter<'a> {
    pub user: &'a user::Model,
    /// A keyed digest of their network.
    pub origin: String,
}

fn key_of_result(v: &serde_json::Value) -> Option<Key> {
    Some((v["tmdbId"].as_i64()?, v["type"].as_str().unwrap_or("movie").to_owned()))
}

/// Takes `voter`'s vote on their identification `identification_id`, and applies the rule
/// to its remembered answer, in one transaction.
pub async fn vote<C: ConnectionTrait + TransactionTrait>(
    db: &C,
    voter: Voter<'_>,
    identification_id: &str,
    verdict: Verdict,
) -> Result<Voted, VoteError> {
    let txn = db.begin().await?;
    let row = identification::Entity::find_by_id(identification_id.to_owned())
        .filter(identification::Column::UserId.eq(voter.user.id))
        .one(&txn)
        .await?
        .ok_or(VoteError::NotFound)?;
    let result: serde_json::Value = serde_json::from_str(&row.result).unwrap_or_default();
    // A correction already shown to its owner: the engine's title is what was voted on.
    let shown = match result["correction"]["by"].as_str() {
        Some("you") => None,
        _ => key_of_result(&result),
    };
    let now = Utc::now();
    let (right, named) = match &verdict {
        Verdict::Right => (true, None),
        Verdict::Wrong(t) => (false, t.clone()),
    };
    let named_title = match (&verdict, shown.as_ref()) {
        (Verdict::Right, Some((id, kind))) => {
            Some(Title { tmdb_id: *id, media_type: kind.clone(), title: row.title.clone(), year: row.year.clone() })
        }
        _ => named,
    };
    let inserted = answer_vote::Entity::insert(answer_vote::ActiveModel {
        memory_id: Set(row.memory_id),
        identification_id: Set(row.id.clone()),
        user_id: Set(voter.user.id),
        engine: Set(row.engine.clone()),
        verdict: Set(if right { "right" } else { "wrong" }.into()),
        shown_tmdb_id: Set(shown.as_ref().map(|k| k.0)),
        shown_media_type: Set(shown.as_ref().map(|k| k.1.clone())),
        tmdb_id: Set(named_title.as_ref().map(|t| t.tmdb_id)),
        media_type: Set(named_title.as_ref().map(|t| t.media_type.clone())),
        title: Set(named_title.as_ref().map(|t| t.title.chars().take(300).collect())),
        year: Set(named_title.as_ref().and_then(|t| t.year.clone())),
        weight: Set(weight(voter.user, now)),
        origin: Set(voter.origin.chars().take(32).collect()),
        status: Set("open".into()),
        decided_at: Set(None),
        created_at: Set(now),
        ..Default::default()
    })
    .on_conflict(
        OnConflict::columns([answer_vote::Column::UserId, answer_vote::Column::IdentificationId])
            .do_nothing()
            .to_owned(),
    )
    .exec_without_returning(&txn)
    .await?;
    if inserted == 0 {
        return Err(VoteError::AlreadyVoted);
    }
    let flipped = match row.memory_id {
        Some(m) => retally(&txn, m, None).await?,
        None => None,
    };
    txn.commit().await?;
    Ok(Voted { memory_id: row.memory_id, flipped })
}

async fn ballots(db: &impl ConnectionTrait, memory_id: i64) -> Result<Vec<Ballot>, sea_orm::DbErr> {
    let votes = answer_vote::Entity::find()
        .filter(answer_vote::Column::MemoryId.eq(memory_id))
        .filter(answer_vote::Column::Status.ne("rejected"))
        .order_by_desc(answer_vote::Column::CreatedAt)
        .order_by_desc(answer_vote::Column::Id)
        .all(db)
        .await?;
    let mut seen = HashSet::new();
    Ok(votes
        .into_iter()
        .filter(|v| seen.insert(v.user_id))
        .map(|v| Ballot {
            user_id: v.user_id,
            right: v.verdict == "right",
            shown: v.shown_tmdb_id.map(|id| (id, v.shown_media_type.clone().unwrap_or_default())),
            named: v.tmdb_id.map(|id| (id, v.media_type.clone().unwrap_or_default())),
            weight: v.weight,
            origin: v.origin,
        })
        .collect())
}

/// The title `k` as the latest vote naming it on `memory_id` spelled it.
pub async fn named_title(db: &impl ConnectionTrait, memory_id: i64, k: &Key) -> Result<Option<Title>, sea_orm::DbErr> {
    let v = answer_vote::Entity::find()
        .filter(answer_vote::Column::MemoryId.eq(memory_id))
        .filter(answer_vote::Column::TmdbId.eq(k.0))
        .filter(answer_vote::Column::MediaType.eq(k.1.clone()))
        .order_by_desc(answer_vote::Column::Id)
        .one(db)
        .await?;
    Ok(v.map(|v| Title { tmdb_id: k.0, media_type: k.1.clone(), title: v.title.unwrap_or_default(), year: v.year }))
}

fn title_of(m: &remembered_answer::Model) -> Title {
    Title { tmdb_id: m.tmdb_id, media_type: m.media_type.clone(), title: m.title.clone(), year: m.year.clone() }
}

/// Applies the rule to remembered answer `memory_id` (with `accept`: an administrator's
/// choice instead of the rule's). Writes the tallies, and the new title when it changes;
/// answers (from, to) when it changed.
pub async fn retally(
    db: &impl ConnectionTrait,
    memory_id: i64,
    accept: Option<&Title>,
) -> Result<Option<(Title, Title)>, sea_orm::DbErr> {
    let Some(mut m) = remembered_answer::Entity::find_by_id(memory_id).one(db).await? else { return Ok(None) };
    let all = ballots(db, memory_id).await?;
    let current: Key = (m.tmdb_id, m.media_type.clone());
    let t = tally(&current, &all, m.pinned || accept.is_some());
    let to: Option<Title> = match (accept, &t.flip_to) {
        (Some(a), _) => ((a.tmdb_id, a.media_type.clone()) != current).then(|| a.clone()),
        (None, Some(k)) => named_title(db, memory_id, k).await?,
        (None, None) => None,
    };
    let now = Utc::now();
    let from = title_of(&m);
    let mut changed = None;
    if let Some(to) = to {
        m.previous_title = Some(from.title.clone());
        m.tmdb_id = to.tmdb_id;
        m.media_type = to.media_type.clone();
        m.title = to.title.clone();
        m.year = to.year.clone();
        m.season = None;
        m.episode = None;
        m.corrected_at = Some(now);
        // The corrections naming the new title are accepted.
        answer_vote::Entity::update_many()
            .col_expr(answer_vote::Column::Status, Expr::value("accepted"))
            .col_expr(answer_vote::Column::DecidedAt, Expr::value(now))
            .filter(answer_vote::Column::MemoryId.eq(memory_id))
            .filter(answer_vote::Column::Verdict.eq("wrong"))
            .filter(answer_vote::Column::TmdbId.eq(to.tmdb_id))
            .filter(answer_vote::Column::MediaType.eq(to.media_type.clone()))
            .filter(answer_vote::Column::Status.eq("open"))
            .exec(db)
            .await?;
        changed = Some((from, to));
    }
    // Tallies against the title it has now.
    let current: Key = (m.tmdb_id, m.media_type.clone());
    let t = tally(&current, &all, true);
    // From a model every field is "unchanged": each written one is set again.
    let changed_title = changed.is_some();
    let mut am: remembered_answer::ActiveModel = m.clone().into();
    if changed_title {
        am.tmdb_id = Set(m.tmdb_id);
        am.media_type = Set(m.media_type.clone());
        am.title = Set(m.title.clone());
        am.year = Set(m.year.clone());
        am.season = Set(None);
        am.episode = Set(None);
        am.previous_title = Set(m.previous_title.clone());
        am.corrected_at = Set(m.corrected_at);
    }
    am.supporters = Set(t.supporters as i32);
    am.support_weight = Set(t.support);
    am.doubt_weight = Set(t.doubt);
    am.standing = Set(t.standing);
    am.updated_at = Set(now);
    if accept.is_some() {
        am.pinned = Set(true);
    }
    am.update(db).await?;
    Ok(changed)
}

/// An administrator rejects the corrections naming `title` on `memory_id`: they stop
/// counting, and the answer is pinned (the rule no longer flips it).
pub async fn reject<C: ConnectionTrait + TransactionTrait>(
    db: &C,
    memory_id: i64,
    tmdb_id: i64,
    media_type: &str,
) -> Result<bool, sea_orm::DbErr> {
    let txn = db.begin().await?;
    if remembered_answer::Entity::find_by_id(memory_id).one(&txn).await?.is_none() {
        return Ok(false);
    }
    answer_vote::Entity::update_many()
        .col_expr(answer_vote::Column::Status, Expr::value("rejected"))
        .col_expr(answer_vote::Column::DecidedAt, Expr::value(Utc::now()))
        .filter(answer_vote::Column::MemoryId.eq(memory_id))
        .filter(answer_vote::Column::TmdbId.eq(tmdb_id))
        .filter(answer_vote::Column::MediaType.eq(media_type))
        .filter(answer_vote::Column::Verdict.eq("wrong"))
        .exec(&txn)
        .await?;
    remembered_answer::Entity::update_many()
        .col_expr(remembered_answer::Column::Pinned, Expr::value(true))
        .filter(remembered_answer::Column::Id.eq(memory_id))
        .exec(&txn)
        .await?;
    retally(&txn, memory_id, None).await?;
    txn.commit().await?;
    Ok(true)
}

/// An administrator accepts `title` for `memory_id` (pinning it); (from, to) when it changed.
pub async fn accept<C: ConnectionTrait + TransactionTrait>(
    db: &C,
    memory_id: i64,
    title: &Title,
) -> Result<Option<Option<(Title, Title)>>, sea_orm::DbErr> {
    let txn = db.begin().await?;
    if remembered_answer::Entity::find_by_id(memory_id).one(&txn).await?.is_none() {
        return Ok(None);
    }
    let changed = retally(&txn, memory_id, Some(title)).await?;
    txn.commit().await?;
    Ok(Some(changed))
}

/// A title proposed for a remembered answer, with its votes.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Proposal {
    pub tmdb_id: i64,
    #[serde(rename = "type")]
    pub media_type: String,
    pub title: String,
    pub year: Option<String>,
    pub people: u32,
    pub weight: f64,
}

/// A disputed remembered answer, as the Corrections queue lists it.
#[derive(Clone, Debug, Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct Disputed {
    pub memory_id: i64,
    pub engine: String,
    pub tmdb_id: i64,
    #[serde(rename = "type")]
    pub media_type: String,
    pub title: String,
    pub year: Option<String>,
    /// What the engine first said, when the answer was corrected since.
    pub previous_title: Option<String>,
    pub confirmations: u32,
    pub support_weight: f64,
    /// "Wrong" votes that named no title ("I don't know").
    pub unsure: u32,
    pub doubt_weight: f64,
    pub standing: bool,
    pub pinned: bool,
    /// Titles people named instead, most weight first.
    pub proposals: Vec<Proposal>,
    #[ts(type = "string")]
    pub last_vote_at: DateTime<Utc>,
}

/// Remembered answers with open "wrong" votes, the most recently disputed first (at most
/// `limit`).
pub async fn disputed(db: &impl ConnectionTrait, limit: usize) -> Result<Vec<Disputed>, sea_orm::DbErr> {
    let open = answer_vote::Entity::find()
        .filter(answer_vote::Column::MemoryId.is_not_null())
        .filter(answer_vote::Column::Verdict.eq("wrong"))
        .filter(answer_vote::Column::Status.eq("open"))
        .order_by_desc(answer_vote::Column::CreatedAt)
        .all(db)
        .await?;
    let mut order: Vec<i64> = Vec::new();
    let mut last: BTreeMap<i64, DateTime<Utc>> = BTreeMap::new();
    for v in &open {
        let m = v.memory_id.unwrap_or_default();
        if let std::collections::btree_map::Entry::Vacant(e) = last.entry(m) {
            order.push(m);
            e.insert(v.created_at);
        }
    }
    order.truncate(limit);
    let mut out = Vec::new();
    for m in order {
        let Some(row) = remembered_answer::Entity::find_by_id(m).one(db).await? else { continue };
        let all = ballots(db, m).await?;
        let votes = answer_vote::Entity::find()
            .filter(answer_vote::Column::MemoryId.eq(m))
            .filter(answer_vote::Column::Status.ne("rejected"))
            .order_by_desc(answer_vote::Column::Id)
            .all(db)
            .await?;
        let counted: HashSet<i64> = all.iter().map(|b| b.user_id).collect();
        let mut seen = HashSet::new();
        let mut proposals: BTreeMap<Key, Proposal> = BTreeMap::new();
        let mut unsure = 0;
        for v in votes.iter().filter(|v| counted.contains(&v.user_id) && seen.insert(v.user_id)) {
            if v.verdict != "wrong" {
                continue;
            }
            match v.tmdb_id {
                None => unsure += 1,
                Some(id) if (id, v.media_type.clone().unwrap_or_default()) == (row.tmdb_id, row.media_type.clone()) => {
                }
                Some(id) => {
                    let kind = v.media_type.clone().unwrap_or_default();
                    let p = proposals.entry((id, kind.clone())).or_insert_with(|| Proposal {
                        tmdb_id: id,
                        media_type: kind,
                        title: v.title.clone().unwrap_or_default(),
                        year: v.year.clone(),
                        people: 0,
                        weight: 0.0,
                    });
                    p.people += 1;
                    p.weight += v.weight;
                }
            }
        }
        let mut proposals: Vec<Proposal> = proposals.into_values().collect();
        proposals.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(b.people.cmp(&a.people)));
        out.push(Disputed {
            memory_id: m,
            engine: row.engine.clone(),
            tmdb_id: row.tmdb_id,
            media_type: row.media_type.clone(),
            title: row.title.clone(),
            year: row.year.clone(),
            previous_title: row.previous_title.clone(),
            confirmations: u32::try_from(row.supporters).unwrap_or(0),
            support_weight: row.support_weight,
            unsure,
            doubt_weight: row.doubt_weight,
            standing: row.standing,
            pinned: row.pinned,
            proposals,
            last_vote_at: last[&m],
        });
    }
    Ok(out)
}

/// The identifications linked to `memory_id` that show `from` and whose owner did not say
/// otherwise (no vote naming another title, no correction of their own): the results an
/// accepted correction rewrites.
pub async fn affected(
    db: &impl ConnectionTrait,
    memory_id: i64,
    from: &Title,
) -> Result<Vec<identification::Model>, sea_orm::DbErr> {
    let rows = identification::Entity::find().filter(identification::Column::MemoryId.eq(memory_id)).all(db).await?;
    let dissent: HashSet<String> = answer_vote::Entity::find()
        .filter(answer_vote::Column::MemoryId.eq(memory_id))
        .filter(answer_vote::Column::TmdbId.ne(from.tmdb_id))
        .all(db)
        .await?
        .into_iter()
        .map(|v| v.identification_id)
        .collect();
    Ok(rows
        .into_iter()
        .filter(|r| !dissent.contains(&r.id))
        .filter(|r| {
            let v: serde_json::Value = serde_json::from_str(&r.result).unwrap_or_default();
            v["correction"]["by"].as_str() != Some("you")
                && key_of_result(&v) == Some((from.tmdb_id, from.media_type.clone()))
        })
        .collect())
}

/// `user_id`'s verdicts (`right`, `wrong`) on the identifications `ids`, by id.
pub async fn verdicts(
    db: &impl ConnectionTrait,
    user_id: i64,
    ids: Vec<String>,
) -> Result<std::collections::HashMap<String, String>, sea_orm::DbErr> {
    if ids.is_empty() {
        return Ok(Default::default());
    }
    Ok(answer_vote::Entity::find()
        .filter(answer_vote::Column::UserId.eq(user_id))
        .filter(answer_vote::Column::IdentificationId.is_in(ids))
        .all(db)
        .await?
        .into_iter()
        .map(|v| (v.identification_id, v.verdict))
        .collect())
}

/// Per-engine feedback over votes since `since`: (engine, right, wrong).
pub async fn by_engine(
    db: &impl ConnectionTrait,
    since: DateTime<Utc>,
) -> Result<Vec<(String, u64, u64)>, sea_orm::DbErr> {
    use sea_orm::QuerySelect;
    let rows: Vec<(String, String, i64)> = answer_vote::Entity::find()
        .filter(answer_vote::Column::CreatedAt.gte(since))
        .select_only()
        .column(answer_vote::Column::Engine)
        .column(answer_vote::Column::Verdict)
        .column_as(Expr::col(answer_vote::Column::Id).count(), "n")
        .group_by(answer_vote::Column::Engine)
        .group_by(answer_vote::Column::Verdict)
        .into_tuple()
        .all(db)
        .await?;
    let mut out: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for (engine, verdict, n) in rows {
        let e = out.entry(engine).or_default();
        if verdict == "right" {
            e.0 += u64::try_from(n).unwrap_or(0);
        } else {
            e.1 += u64::try_from(n).unwrap_or(0);
        }
    }
    Ok(out.into_iter().map(|(e, (r, w))| (e, r, w)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ballot(user_id: i64, right: bool, shown: i64, named: Option<i64>, weight: f64, origin: &str) -> Ballot {
        Ballot {
            user_id,
            right,
            shown: Some((shown, "movie".into())),
            named: named.map(|n| (n, "movie".into())),
            weight,
            origin: origin.into(),
        }
    }

    const MATRIX: i64 = 603;
    const HEAT: i64 = 949;

    #[test]
    fn nothing_said_stands() {
        let t = tally(&(MATRIX, "movie".into()), &[], false);
        assert!(t.standing);
        assert_eq!(t.flip_to, None);
    }

    #[test]
    fn one_person_cannot_flip_and_one_no_stops_the_memory_answering() {
        let cur = (MATRIX, "movie".into());
        let t = tally(&cur, &[ballot(1, false, MATRIX, Some(HEAT), 1.0, "a")], false);
        assert_eq!(t.flip_to, None);
        assert!(!t.standing);
    }

    #[test]
    fn two_independent_people_flip_an_unconfirmed_answer() {
        let cur = (MATRIX, "movie".into());
        let two = [ballot(1, false, MATRIX, Some(HEAT), 0.5, "a"), ballot(2, false, MATRIX, Some(HEAT), 0.5, "b")];
        assert_eq!(tally(&cur, &two, false).flip_to, Some((HEAT, "movie".into())));
        // Pinned by an administrator: no.
        assert_eq!(tally(&cur, &two, true).flip_to, None);
        // Two accounts on one network are one origin: no.
        let one_net = [ballot(1, false, MATRIX, Some(HEAT), 1.0, "a"), ballot(2, false, MATRIX, Some(HEAT), 1.0, "a")];
        assert_eq!(tally(&cur, &one_net, false).flip_to, None);
    }

    #[test]
    fn corrections_must_outweigh_confirmations() {
        let cur = (MATRIX, "movie".into());
        let mut votes = vec![
            ballot(1, true, MATRIX, Some(MATRIX), 1.0, "a"),
            ballot(2, true, MATRIX, Some(MATRIX), 1.0, "b"),
            ballot(3, false, MATRIX, Some(HEAT), 1.0, "c"),
            ballot(4, false, MATRIX, Some(HEAT), 1.0, "d"),
        ];
        let t = tally(&cur, &votes, false);
        assert_eq!((t.supporters, t.flip_to.clone()), (2, None));
        assert!(t.standing);
        votes.push(ballot(5, false, MATRIX, Some(HEAT), 0.5, "e"));
        assert_eq!(tally(&cur, &votes, false).flip_to, Some((HEAT, "movie".into())));
    }

    #[test]
    fn light_accounts_count_half() {
        let now = Utc::now();
        let mut u = user::Model {
            id: 1,
            username: "a".into(),
            email: "a@example.com".into(),
            password_hash: None,
            role: user::Role::User,
            email_verified: true,
            display_name: None,
            bio: None,
            profile_picture: None,
            default_ai_model: None,
            google_sub: None,
            created_at: now - chrono::Duration::days(2),
            updated_at: now,
            username_key: "a".into(),
        };
        assert_eq!(weight(&u, now), FULL_WEIGHT);
        u.email_verified = false;
        assert_eq!(weight(&u, now), LIGHT_WEIGHT);
        u.email_verified = true;
        u.created_at = now - chrono::Duration::hours(3);
        assert_eq!(weight(&u, now), LIGHT_WEIGHT);
    }
}
