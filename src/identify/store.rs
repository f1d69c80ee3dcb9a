//! Stored identifications: the share link, history and the reuse of earlier answers
//! (analytics events live in `services::analytics`). Results are stored as JSON with a few
//! columns copied out for lists; the media is never stored, only the sha256 of its bytes.
use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
    Set,
};
use serde::Serialize;
use serde_json::{Value, json};

use super::result::IdentificationResult;
use crate::entities::identification;

/// A reused answer must be younger than this.
pub const REUSE_DAYS: i64 = 30;

pub use crate::services::identification_ids::{new_id, valid_id};

pub struct NewRow<'a> {
    pub user_id: Option<i64>,
    pub content_hash: &'a str,
    pub mode: &'a str,
    pub result: &'a IdentificationResult,
    /// The remembered answer it was answered from or remembered as (`identify::memory`).
    pub memory_id: Option<i64>,
}

pub async fn insert(db: &impl ConnectionTrait, row: NewRow<'_>) -> Result<(), sea_orm::DbErr> {
    let r = row.result;
    let created: DateTime<Utc> =
        DateTime::parse_from_rfc3339(&r.created_at).map(|d| d.with_timezone(&Utc)).unwrap_or_else(|_| Utc::now());
    identification::ActiveModel {
        id: Set(r.identification_id.clone()),
        user_id: Set(row.user_id),
        title: Set(r.title.chars().take(300).collect()),
        year: Set(r.year.clone().map(|y| y.chars().take(32).collect())),
        media_type: Set(r.media_type.clone()),
        poster_url: Set(r.poster_url.clone().filter(|u| u.len() <= 1000)),
        confidence: Set(r.confidence),
        rating: Set(r.rating),
        engine: Set(r.engine.chars().take(32).collect()),
        mode: Set(row.mode.to_owned()),
        content_hash: Set(row.content_hash.to_owned()),
        result: Set(serde_json::to_string(r).unwrap_or_else(|_| "{}".into())),
        total_ms: Set(r.timings.total_ms as i64),
        created_at: Set(created),
        shared: Set(true),
        memory_id: Set(row.memory_id),
    }
    .insert(db)
    .await?;
    Ok(())
}

fn parse(row: &identification::Model) -> Option<IdentificationResult> {
    serde_json::from_str(&row.result).ok()
}

/// A stored identification and who may see what of it.
pub struct Stored {
    pub result: IdentificationResult,
    /// The person who made it (`None`: a guest).
    pub user_id: Option<i64>,
    pub shared: bool,
    /// The remembered answer it is linked to.
    pub memory_id: Option<i64>,
}

impl Stored {
    /// `viewer` made this identification: they see the whole stored result.
    pub fn is_owner(&self, viewer: Option<i64>) -> bool {
        self.user_id.is_some() && self.user_id == viewer
    }
}

pub async fn find(db: &impl ConnectionTrait, id: &str) -> Result<Option<Stored>, sea_orm::DbErr> {
    if !valid_id(id) {
        return Ok(None);
    }
    let Some(row) = identification::Entity::find_by_id(id.to_owned()).one(db).await? else { return Ok(None) };
    Ok(parse(&row).map(|result| Stored { result, user_id: row.user_id, shared: row.shared, memory_id: row.memory_id }))
}

/// Starts or stops sharing `id`, which must be `user_id`'s; false when it is not theirs.
pub async fn set_shared(
    db: &impl ConnectionTrait,
    id: &str,
    user_id: i64,
    shared: bool,
) -> Result<bool, sea_orm::DbErr> {
    if !valid_id(id) {
        return Ok(false);
    }
    let res = identification::Entity::update_many()
        .col_expr(identification::Column::Shared, sea_orm::sea_query::Expr::value(shared))
        .filter(identification::Column::Id.eq(id))
        .filter(identification::Column::UserId.eq(user_id))
        .exec(db)
        .await?;
    Ok(res.rows_affected == 1)
}

/// An earlier answer for the same bytes and mode, if recent: the asker's own first, else anyone's.
pub async fn find_reusable(
    db: &impl ConnectionTrait,
    content_hash: &str,
    mode: &str,
    asker: Option<i64>,
) -> Result<Option<Stored>, sea_orm::DbErr> {
    let since = Utc::now() - chrono::Duration::days(REUSE_DAYS);
    let recent = || {
        identification::Entity::find()
            .filter(identification::Column::ContentHash.eq(content_hash))
            .filter(identification::Column::Mode.eq(mode))
            .filter(identification::Column::CreatedAt.gt(since))
            .order_by_desc(identification::Column::CreatedAt)
    };
    let mut row = None;
    if let Some(me) = asker {
        row = recent().filter(identification::Column::UserId.eq(me)).one(db).await?;
    }
    if row.is_none() {
        row = recent().one(db).await?;
    }
    Ok(row.and_then(|row| {
        parse(&row).map(|result| Stored { result, user_id: row.user_id, shared: row.shared, memory_id: row.memory_id })
    }))
}

/// One history entry (SPEC section 3 "History item").
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct HistoryItem {
    pub id: String,
    pub title: String,
    pub description: Option<String>,
    pub year: Option<String>,
    pub rating: Option<f64>,
    pub poster_url: Option<String>,
    pub director: Option<String>,
    /// The leading cast, by billing.
    pub stars: Vec<String>,
    pub genres: Vec<String>,
    pub runtime: Option<String>,
    pub classification: Option<String>,
    pub confidence_score: f64,
    #[serde(rename = "type")]
    pub media_type: String,
    pub created_at: String,
    pub streaming_platforms: Value,
    pub full_result: Value,
}

fn history_item(row: &identification::Model) -> HistoryItem {
    let r = parse(row).unwrap_or_default();
    let mut full = serde_json::to_value(&r).unwrap_or_else(|_| json!({}));
    if let Value::Object(m) = &mut full {
        // The names the history view reads from `fullResult` (SPEC section 3).
        m.insert("poster".into(), json!(r.poster_url));
        m.insert("streaming_platforms".into(), json!(r.streaming_platforms));
        // History is the owner's own: the result view offers to stop (or resume) sharing.
        m.insert("isOwner".into(), json!(true));
        m.insert("shared".into(), json!(row.shared));
    }
    HistoryItem {
        id: row.id.clone(),
        title: row.title.clone(),
        description: r.description.clone(),
        year: row.year.clone(),
        rating: row.rating,
        poster_url: row.poster_url.clone(),
        director: r.director.clone(),
        stars: r.cast.iter().take(5).map(|c| c.name.clone()).collect(),
        genres: r.genres.clone(),
        runtime: r.runtime.clone(),
        classification: r.classification.clone(),
        confidence_score: row.confidence,
        media_type: row.media_type.clone(),
        created_at: row.created_at.to_rfc3339(),
        streaming_platforms: json!(r.streaming_platforms),
        full_result: full,
    }
}

/// A page of the user's history, newest first, and the total.
/// The history screen's search, type filter and order (SPEC "History screen"), applied in
/// the database so they cover every page, not just the one on screen.
#[derive(Debug, Default, Clone)]
pub struct HistoryFilter {
    /// Part of the title, any case.
    pub search: Option<String>,
    /// `movie` or `tv`; anything else means all types.
    pub media_type: Option<String>,
    pub sort: HistorySort,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum HistorySort {
    #[default]
    Newest,
    Oldest,
    Rating,
    Confidence,
}

impl HistorySort {
    /// `newest`, `oldest`, `rating`, `confidence`; anything else is newest.
    pub fn parse(s: &str) -> Self {
        match s.trim().to_ascii_lowercase().as_str() {
            "oldest" => Self::Oldest,
            "rating" => Self::Rating,
            "confidence" => Self::Confidence,
            _ => Self::Newest,
        }
    }
}

/// A page of `user_id`'s identifications that match `filter`, the number that match, and
/// the number the person has in all.
pub async fn history(
    db: &impl ConnectionTrait,
    user_id: i64,
    filter: &HistoryFilter,
    page: u64,
    limit: u64,
) -> Result<(Vec<HistoryItem>, u64, u64), sea_orm::DbErr> {
    use identification::Column as C;
    use sea_orm::Order;
    use sea_orm::sea_query::{Expr, ExprTrait, Func, LikeExpr, NullOrdering};

    let mine = identification::Entity::find().filter(C::UserId.eq(user_id));
    let all = mine.clone().count(db).await?;
    let mut q = mine;
    if let Some(search) = filter.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        let escaped: String = search
            .to_lowercase()
            .chars()
            .flat_map(|c| match c {
                '\\' | '%' | '_' => vec!['\\', c],
                c => vec![c],
            })
            .collect();
        q = q.filter(
            Expr::expr(Func::lower(Expr::col(C::Title))).like(LikeExpr::new(format!("%{escaped}%")).escape('\\')),
        );
    }
    if let Some(t) = filter.media_type.as_deref().filter(|t| matches!(*t, "movie" | "tv")) {
        q = q.filter(C::MediaType.eq(t));
    }
    let total = if filter.search.is_some() || filter.media_type.is_some() { q.clone().count(db).await? } else { all };
    q = match filter.sort {
        HistorySort::Newest => q.order_by_desc(C::CreatedAt).order_by_desc(C::Id),
        HistorySort::Oldest => q.order_by_asc(C::CreatedAt).order_by_asc(C::Id),
        // Unrated titles last on every database (PostgreSQL sorts NULL first when descending).
        HistorySort::Rating => {
            q.order_by_with_nulls(C::Rating, Order::Desc, NullOrdering::Last).order_by_desc(C::CreatedAt)
        }
        HistorySort::Confidence => q.order_by_desc(C::Confidence).order_by_desc(C::CreatedAt),
    };
    let skip = crate::db::sql_offset(Ord::max(page, 1).saturating_sub(1).saturating_mul(limit));
    let rows = q.offset(skip).limit(limit).all(db).await?;
    let verdicts =
        crate::services::feedback::verdicts(db, user_id, rows.iter().map(|r| r.id.clone()).collect()).await?;
    let items = rows
        .iter()
        .map(|row| {
            let mut item = history_item(row);
            if let (Some(v), Value::Object(m)) = (verdicts.get(&row.id), &mut item.full_result) {
                m.insert("feedback".into(), json!(v));
            }
            item
        })
        .collect();
    Ok((items, total, all))
}

/// Deletes `user_id`'s identifications. What they earned from them is awarded first, so
/// clearing a history never loses an achievement that was due.
pub async fn clear_history(db: &impl ConnectionTrait, user_id: i64) -> Result<u64, sea_orm::DbErr> {
    crate::services::achievements::award(db, user_id).await?;
    Ok(identification::Entity::delete_many()
        .filter(identification::Column::UserId.eq(user_id))
        .exec(db)
        .await?
        .rows_affected)
}

/// For the home page: the most confident recent identifications, one per title. Catalog
/// facts only: no identification id (which would open someone's result), no user, no
/// engine votes, no transcript. Unshared identifications are left out.
#[derive(Serialize, Debug, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TopItem {
    pub title: String,
    pub year: Option<String>,
    pub poster_url: Option<String>,
    pub rating: Option<f64>,
    pub confidence_score: f64,
    #[serde(rename = "type")]
    pub media_type: String,
    pub genres: Vec<String>,
    /// The catalog page (TMDB), when the title was resolved.
    pub tmdb_url: Option<String>,
    pub created_at: String,
}

pub async fn top_confident(db: &impl ConnectionTrait, n: usize) -> Result<Vec<TopItem>, sea_orm::DbErr> {
    let since = Utc::now() - chrono::Duration::days(30);
    let rows = identification::Entity::find()
        .filter(identification::Column::CreatedAt.gt(since))
        .filter(identification::Column::Shared.eq(true))
        .order_by_desc(identification::Column::Confidence)
        .order_by_desc(identification::Column::CreatedAt)
        .limit(50)
        .all(db)
        .await?;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    for row in rows {
        if !seen.insert((row.title.to_lowercase(), row.year.clone())) {
            continue;
        }
        let r = parse(&row).unwrap_or_default();
        out.push(TopItem {
            title: row.title.clone(),
            year: row.year.clone(),
            poster_url: row.poster_url.clone(),
            rating: row.rating,
            confidence_score: row.confidence,
            media_type: row.media_type.clone(),
            genres: r.genres,
            tmdb_url: r.tmdb_url,
            created_at: row.created_at.to_rfc3339(),
        });
        if out.len() == n {
            break;
        }
    }
    Ok(out)
}
