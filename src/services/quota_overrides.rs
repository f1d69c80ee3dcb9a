//! The admin's per-person and per-key API quota overrides: the overview and the two writes.
//! Used by the admin API (`/api/admin/api-quotas`, ...) and the dashboard's forms alike; the
//! rules of which value wins live in [`super::api_quota`].
use chrono::Utc;
use sea_orm::sea_query::OnConflict;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set,
};
use serde::{Deserialize, Serialize};

use super::api_quota::{Overrides, defaults};
use super::settings::SettingsMap;
use crate::entities::{api_key, api_quota, user};

/// Live keys the overview lists at most (most recently used first).
pub const MAX_KEYS_LISTED: u64 = 1000;

/// One person's override in the admin overview.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PersonQuota {
    pub user_id: i64,
    pub username: String,
    #[serde(flatten)]
    pub quota: Overrides,
}

/// One live key in the admin overview.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct KeyQuota {
    pub id: i64,
    pub user_id: i64,
    pub username: String,
    pub name: String,
    pub prefix: String,
    pub created_at: chrono::DateTime<Utc>,
    pub last_used_at: Option<chrono::DateTime<Utc>>,
    #[serde(flatten)]
    pub quota: Overrides,
}

impl KeyQuota {
    /// Whether the admin gave this key any value of its own.
    pub fn overridden(&self) -> bool {
        self.quota != Overrides::default()
    }
}

/// `GET /api/admin/api-quotas`.
#[derive(Debug, Clone, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct QuotaOverview {
    pub defaults: Overrides,
    pub people: Vec<PersonQuota>,
    pub keys: Vec<KeyQuota>,
}

fn ov(per_minute: Option<i32>, per_day: Option<i32>, concurrent: Option<i32>) -> Overrides {
    let u = |v: Option<i32>| v.and_then(|n| u32::try_from(n).ok());
    Overrides { per_minute: u(per_minute), per_day: u(per_day), concurrent: u(concurrent) }
}

fn col(v: Option<u32>) -> Option<i32> {
    v.and_then(|n| i32::try_from(n).ok())
}

/// The defaults, every person override (by user id), and every live key (at most
/// [`MAX_KEYS_LISTED`], most recently used first) with its own override.
pub async fn overview(db: &impl ConnectionTrait, settings: &SettingsMap) -> Result<QuotaOverview, sea_orm::DbErr> {
    let (m, d, c) = defaults(settings);
    let people = api_quota::Entity::find()
        .find_also_related(user::Entity)
        .order_by_asc(api_quota::Column::UserId)
        .all(db)
        .await?
        .into_iter()
        .map(|(q, u)| PersonQuota {
            user_id: q.user_id,
            username: u.map(|u| u.username).unwrap_or_default(),
            quota: ov(q.per_minute, q.per_day, q.concurrent),
        })
        .collect();
    let keys = api_key::Entity::find()
        .filter(api_key::Column::RevokedAt.is_null())
        .find_also_related(user::Entity)
        .order_by_desc(api_key::Column::LastUsedAt)
        .order_by_desc(api_key::Column::Id)
        .paginate(db, MAX_KEYS_LISTED)
        .fetch_page(0)
        .await?
        .into_iter()
        .map(|(k, u)| KeyQuota {
            id: k.id,
            user_id: k.user_id,
            username: u.map(|u| u.username).unwrap_or_default(),
            name: k.name,
            prefix: k.prefix,
            created_at: k.created_at,
            last_used_at: k.last_used_at,
            quota: ov(k.per_minute, k.per_day, k.concurrent),
        })
        .collect();
    Ok(QuotaOverview {
        defaults: Overrides { per_minute: Some(m), per_day: Some(d), concurrent: Some(c) },
        people,
        keys,
    })
}

/// Sets the override of person `user_id` (all `None` removes it). `Ok(false)`: no such user.
/// The caller validates `o` first.
pub async fn set_person(db: &impl ConnectionTrait, user_id: i64, o: &Overrides) -> Result<bool, sea_orm::DbErr> {
    if user::Entity::find_by_id(user_id).one(db).await?.is_none() {
        return Ok(false);
    }
    if *o == Overrides::default() {
        api_quota::Entity::delete_by_id(user_id).exec(db).await?;
        return Ok(true);
    }
    let row = api_quota::ActiveModel {
        user_id: Set(user_id),
        per_minute: Set(col(o.per_minute)),
        per_day: Set(col(o.per_day)),
        concurrent: Set(col(o.concurrent)),
        updated_at: Set(Utc::now()),
    };
    api_quota::Entity::insert(row)
        .on_conflict(
            OnConflict::column(api_quota::Column::UserId)
                .update_columns([
                    api_quota::Column::PerMinute,
                    api_quota::Column::PerDay,
                    api_quota::Column::Concurrent,
                    api_quota::Column::UpdatedAt,
                ])
                .to_owned(),
        )
        .exec(db)
        .await?;
    Ok(true)
}

/// Sets the override of live key `key_id` (`None`: the person's value or the default).
/// `Ok(false)`: no such live key. The caller validates `o` first.
pub async fn set_key(db: &impl ConnectionTrait, key_id: i64, o: &Overrides) -> Result<bool, sea_orm::DbErr> {
    let Some(key) = api_key::Entity::find_by_id(key_id).filter(api_key::Column::RevokedAt.is_null()).one(db).await?
    else {
        return Ok(false);
    };
    let mut active: api_key::ActiveModel = key.into();
    active.per_minute = Set(col(o.per_minute));
    active.per_day = Set(col(o.per_day));
    active.concurrent = Set(col(o.concurrent));
    active.update(db).await?;
    Ok(true)
}
