//! Collections: the titles a signed-in person saved from a result with "Add to Collection"
//! (SPEC sections 3 and 7). One flat list per person; saving the same title again is a no-op
//! that answers the item already there.
use chrono::Utc;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::entities::collection_item;

/// At most this many titles per person (a brake on scripts, far beyond any real shelf).
pub const MAX_ITEMS: u64 = 1000;
pub const MAX_TITLE_CHARS: usize = 300;
pub const MAX_POSTER_URL_CHARS: usize = 1000;

/// The body of `POST /api/collections/items`. Fields are read as raw JSON so a wrong type
/// gets a message naming the field rather than a parser error.
#[derive(Debug, Clone, Default, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct NewItem {
    /// Required (a missing or blank title is refused with 422).
    #[schema(value_type = Option<String>)]
    pub title: Value,
    /// A year (`"1999"` or `1999`), or null.
    #[schema(value_type = Option<String>)]
    pub year: Value,
    #[schema(value_type = Option<String>)]
    pub poster_url: Value,
    #[schema(value_type = Option<i64>)]
    pub tmdb_id: Value,
}

/// A saved title as the API answers it.
#[derive(Debug, Clone, Serialize, PartialEq, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CollectionItemView {
    pub id: i64,
    pub title: String,
    pub year: Option<String>,
    pub poster_url: Option<String>,
    pub tmdb_id: Option<i64>,
    pub created_at: chrono::DateTime<Utc>,
}

impl From<collection_item::Model> for CollectionItemView {
    fn from(m: collection_item::Model) -> Self {
        Self {
            id: m.id,
            title: m.title,
            year: m.year,
            poster_url: m.poster_url,
            tmdb_id: m.tmdb_id,
            created_at: m.created_at,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CollectionError {
    /// The body does not describe a title; the text says which field and why.
    #[error("{0}")]
    Invalid(String),
    #[error("Your collection is full ({MAX_ITEMS} titles). Remove some titles before adding more.")]
    Full,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// What `add` did: stored a new item, or found the same title already saved.
#[derive(Debug)]
pub enum Added {
    Created(CollectionItemView),
    Existing(CollectionItemView),
}

/// A validated item, before it is stored.
#[derive(Debug, PartialEq)]
struct Valid {
    title: String,
    year: Option<String>,
    poster_url: Option<String>,
    tmdb_id: Option<i64>,
}

impl Valid {
    /// Two saves of one title share this key: the catalog id when there is one, else the
    /// title (case and spacing ignored) with its year.
    fn dedupe_key(&self) -> String {
        match self.tmdb_id {
            Some(id) => format!("tmdb:{id}"),
            None => {
                let title = self.title.split_whitespace().collect::<Vec<_>>().join(" ").to_lowercase();
                format!("title:{title}|{}", self.year.as_deref().unwrap_or(""))
            }
        }
    }
}

fn validate(input: NewItem) -> Result<Valid, CollectionError> {
    let invalid = |m: &str| CollectionError::Invalid(m.to_owned());
    let title = match &input.title {
        Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
        _ => return Err(invalid("Title is required")),
    };
    if title.chars().count() > MAX_TITLE_CHARS {
        return Err(CollectionError::Invalid(format!("Title must be at most {MAX_TITLE_CHARS} characters")));
    }
    let year = match &input.year {
        Value::Null => None,
        Value::Number(n) => match n.as_u64() {
            Some(y) if (1870..=2200).contains(&y) => Some(y.to_string()),
            _ => return Err(invalid("Year must be a year such as 1999 or a range such as 2010-Present")),
        },
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) => match normalise_year(s.trim()) {
            Some(y) => Some(y),
            None => return Err(invalid("Year must be a year such as 1999 or a range such as 2010-Present")),
        },
        _ => return Err(invalid("Year must be a year such as 1999 or a range such as 2010-Present")),
    };
    let poster_url = match &input.poster_url {
        Value::Null => None,
        Value::String(s) if s.trim().is_empty() => None,
        Value::String(s) if is_poster_url(s.trim()) => Some(s.trim().to_owned()),
        _ => return Err(invalid("Poster URL must be an http(s) address of at most 1000 characters")),
    };
    let tmdb_id = match &input.tmdb_id {
        Value::Null => None,
        Value::Number(n) => match n.as_i64() {
            Some(id) if id > 0 => Some(id),
            _ => return Err(invalid("tmdbId must be a positive whole number")),
        },
        Value::String(s) => match s.trim().parse::<i64>() {
            Ok(id) if id > 0 => Some(id),
            _ => return Err(invalid("tmdbId must be a positive whole number")),
        },
        _ => return Err(invalid("tmdbId must be a positive whole number")),
    };
    Ok(Valid { title, year, poster_url, tmdb_id })
}

/// `1999`, `2010-Present`, `2008-2013` (an en dash is read as a hyphen).
fn normalise_year(s: &str) -> Option<String> {
    let s = s.replace('\u{2013}', "-");
    let four_digits = |p: &str| p.len() == 4 && p.bytes().all(|b| b.is_ascii_digit());
    match s.split_once('-') {
        None if four_digits(&s) => Some(s),
        Some((from, to)) if four_digits(from.trim()) => {
            let to = to.trim();
            if four_digits(to) {
                Some(format!("{}-{to}", from.trim()))
            } else if to.eq_ignore_ascii_case("present") {
                Some(format!("{}-Present", from.trim()))
            } else {
                None
            }
        }
        _ => None,
    }
}

/// An absolute http(s) URL (catalog images), or a path on this site (Library previews).
fn is_poster_url(s: &str) -> bool {
    if s.chars().count() > MAX_POSTER_URL_CHARS {
        return false;
    }
    if s.starts_with('/') {
        return !s.starts_with("//");
    }
    url::Url::parse(s).is_ok_and(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
}

async fn find_by_key(
    db: &impl ConnectionTrait,
    user_id: i64,
    key: &str,
) -> Result<Option<collection_item::Model>, sea_orm::DbErr> {
    collection_item::Entity::find()
        .filter(collection_item::Column::UserId.eq(user_id))
        .filter(collection_item::Column::DedupeKey.eq(key))
        .one(db)
        .await
}

/// Saves a title to `user_id`'s collection, or answers the one already saved. The cap is
/// checked under the person's row lock in one transaction, so parallel saves cannot pass it
/// together.
pub async fn add(db: &sea_orm::DatabaseConnection, user_id: i64, input: NewItem) -> Result<Added, CollectionError> {
    let item = validate(input)?;
    let key = item.dedupe_key();
    let txn = crate::db::begin_write(db).await?;
    crate::services::users::lock(&txn, user_id).await?;
    if let Some(existing) = find_by_key(&txn, user_id, &key).await? {
        return Ok(Added::Existing(existing.into()));
    }
    let count = collection_item::Entity::find().filter(collection_item::Column::UserId.eq(user_id)).count(&txn).await?;
    if count >= MAX_ITEMS {
        return Err(CollectionError::Full);
    }
    let row = collection_item::ActiveModel {
        user_id: Set(user_id),
        tmdb_id: Set(item.tmdb_id),
        title: Set(item.title),
        year: Set(item.year),
        poster_url: Set(item.poster_url),
        dedupe_key: Set(key.clone()),
        created_at: Set(Utc::now()),
        ..Default::default()
    };
    let created = row.insert(&txn).await?;
    txn.commit().await?;
    Ok(Added::Created(created.into()))
}

/// `user_id`'s saved titles, newest first.
pub async fn list(db: &impl ConnectionTrait, user_id: i64) -> Result<Vec<CollectionItemView>, sea_orm::DbErr> {
    Ok(collection_item::Entity::find()
        .filter(collection_item::Column::UserId.eq(user_id))
        .order_by_desc(collection_item::Column::CreatedAt)
        .order_by_desc(collection_item::Column::Id)
        .all(db)
        .await?
        .into_iter()
        .map(Into::into)
        .collect())
}

/// Removes item `id` when it belongs to `user_id`; false when there is no such item of theirs.
pub async fn remove(db: &impl ConnectionTrait, user_id: i64, id: i64) -> Result<bool, sea_orm::DbErr> {
    let res = collection_item::Entity::delete_many()
        .filter(collection_item::Column::Id.eq(id))
        .filter(collection_item::Column::UserId.eq(user_id))
        .exec(db)
        .await?;
    Ok(res.rows_affected > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(v: Value) -> Result<Valid, CollectionError> {
        validate(serde_json::from_value(v).unwrap())
    }

    #[test]
    fn years_are_read_as_the_result_writes_them() {
        assert_eq!(normalise_year("1999").as_deref(), Some("1999"));
        assert_eq!(normalise_year("2010-present").as_deref(), Some("2010-Present"));
        assert_eq!(normalise_year("2008 \u{2013} 2013").as_deref(), Some("2008-2013"));
        for bad in ["99", "next year", "2010-", "2010-soon", "12345"] {
            assert_eq!(normalise_year(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_same_title_has_the_same_key() {
        let a = item(json!({"title": "The  Matrix", "year": 1999})).unwrap();
        let b = item(json!({"title": "the matrix ", "year": "1999"})).unwrap();
        assert_eq!(a.dedupe_key(), b.dedupe_key());
        let c = item(json!({"title": "The Matrix", "year": 1999, "tmdbId": 603})).unwrap();
        assert_eq!(c.dedupe_key(), "tmdb:603");
    }

    #[test]
    fn poster_urls_are_web_addresses_or_site_paths() {
        assert!(is_poster_url("https://image.tmdb.org/t/p/w500/x.jpg"));
        assert!(is_poster_url("/api/library/preview/abc.jpg"));
        assert!(!is_poster_url("//evil.example/x.jpg"));
        assert!(!is_poster_url("javascript:alert(1)"));
        assert!(!is_poster_url("data:image/png;base64,AAAA"));
    }
}
