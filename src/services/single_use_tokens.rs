//! Mailed single-use links (email verification, password reset): a random token, stored only
//! as its sha256 with its purpose, valid until it expires, used up by the first request that
//! presents it. Issuing a new one for a person ends their earlier ones of the same purpose.
use chrono::{Duration, Utc};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, DatabaseTransaction, EntityTrait, QueryFilter,
    Set,
};

use crate::entities::single_use_token as token_row;
use crate::services::sessions::{hash_token, new_token};

/// What a token is for; one never opens the other's door.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Purpose {
    VerifyEmail,
    ResetPassword,
}

impl Purpose {
    /// The `purpose` column's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Purpose::VerifyEmail => "verify_email",
            Purpose::ResetPassword => "reset_password",
        }
    }
}

/// Why a token was not accepted.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// Unknown, already used, or of another purpose.
    #[error("invalid or already used token")]
    Invalid,
    #[error("expired token")]
    Expired,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// A new token for `user_id` valid for `ttl`; that person's earlier tokens of this purpose
/// stop working (one transaction).
pub async fn issue(
    db: &DatabaseConnection,
    user_id: i64,
    purpose: Purpose,
    ttl: Duration,
) -> Result<String, sea_orm::DbErr> {
    let txn = crate::db::begin_write(db).await?;
    forget(&txn, user_id, purpose).await?;
    let token = new_token();
    let now = Utc::now();
    token_row::ActiveModel {
        user_id: Set(user_id),
        purpose: Set(purpose.as_str().to_owned()),
        token_hash: Set(hash_token(&token)),
        created_at: Set(now),
        expires_at: Set(now + ttl),
        ..Default::default()
    }
    .insert(&txn)
    .await?;
    txn.commit().await?;
    Ok(token)
}

/// Issues a token for `user_id` and has `send` mail it; only once the mail is out do that
/// person's earlier tokens of this purpose stop working. When the mail fails, the new token
/// is deleted again and the earlier ones keep working: nothing is left that nobody received,
/// and a link already in the person's inbox is not killed by a mail that never came.
pub async fn issue_mailed<F, Fut>(
    db: &DatabaseConnection,
    user_id: i64,
    purpose: Purpose,
    ttl: Duration,
    send: F,
) -> anyhow::Result<()>
where
    F: FnOnce(String) -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<()>>,
{
    let token = new_token();
    let now = Utc::now();
    let row = token_row::ActiveModel {
        user_id: Set(user_id),
        purpose: Set(purpose.as_str().to_owned()),
        token_hash: Set(hash_token(&token)),
        created_at: Set(now),
        expires_at: Set(now + ttl),
        ..Default::default()
    }
    .insert(db)
    .await?;
    if let Err(e) = send(token).await {
        token_row::Entity::delete_by_id(row.id).exec(db).await?;
        return Err(e);
    }
    token_row::Entity::delete_many()
        .filter(token_row::Column::UserId.eq(user_id))
        .filter(token_row::Column::Purpose.eq(purpose.as_str()))
        .filter(token_row::Column::Id.ne(row.id))
        .exec(db)
        .await?;
    Ok(())
}

/// Refuses what cannot be a token (empty, or longer than any we make) without asking the database.
pub fn check_shape(token: &str) -> Result<(), TokenError> {
    let token = token.trim();
    if token.is_empty() || token.len() > 128 { Err(TokenError::Invalid) } else { Ok(()) }
}

async fn find(db: &impl ConnectionTrait, purpose: Purpose, token: &str) -> Result<token_row::Model, TokenError> {
    check_shape(token)?;
    let token = token.trim();
    token_row::Entity::find()
        .filter(token_row::Column::TokenHash.eq(hash_token(token)))
        .filter(token_row::Column::Purpose.eq(purpose.as_str()))
        .one(db)
        .await?
        .ok_or(TokenError::Invalid)
}

/// Whether `token` would work now, without using it; the person it is for.
pub async fn check(db: &impl ConnectionTrait, purpose: Purpose, token: &str) -> Result<i64, TokenError> {
    let row = find(db, purpose, token).await?;
    if row.expires_at <= Utc::now() { Err(TokenError::Expired) } else { Ok(row.user_id) }
}

/// Uses `token` up. On success, returns the person it is for and the write transaction
/// (begun with [`crate::db::begin_write`]) in which it was deleted: the caller makes its
/// changes there and commits, so that the token is used exactly when they happen. Of two
/// requests with one token, only the one that deleted the row goes on. An expired token is
/// deleted (committed here) and refused.
pub async fn consume(
    db: &DatabaseConnection,
    purpose: Purpose,
    token: &str,
) -> Result<(DatabaseTransaction, i64), TokenError> {
    let txn = crate::db::begin_write(db).await?;
    let row = find(&txn, purpose, token).await?;
    if token_row::Entity::delete_by_id(row.id).exec(&txn).await?.rows_affected != 1 {
        return Err(TokenError::Invalid);
    }
    if row.expires_at <= Utc::now() {
        txn.commit().await?;
        return Err(TokenError::Expired);
    }
    Ok((txn, row.user_id))
}

/// Ends every token of `user_id` for `purpose`.
pub async fn forget(db: &impl ConnectionTrait, user_id: i64, purpose: Purpose) -> Result<u64, sea_orm::DbErr> {
    Ok(token_row::Entity::delete_many()
        .filter(token_row::Column::UserId.eq(user_id))
        .filter(token_row::Column::Purpose.eq(purpose.as_str()))
        .exec(db)
        .await?
        .rows_affected)
}

/// Ends every token of `user_id`, whatever its purpose (the account is going).
pub async fn forget_all(db: &impl ConnectionTrait, user_id: i64) -> Result<u64, sea_orm::DbErr> {
    Ok(token_row::Entity::delete_many().filter(token_row::Column::UserId.eq(user_id)).exec(db).await?.rows_affected)
}

/// How many tokens of `purpose` there are, and how many of them have expired (admin integrity view).
pub async fn count(db: &impl ConnectionTrait, purpose: Purpose) -> Result<(u64, u64), sea_orm::DbErr> {
    use sea_orm::PaginatorTrait;
    let of = || token_row::Entity::find().filter(token_row::Column::Purpose.eq(purpose.as_str()));
    let all = of().count(db).await?;
    let expired = of().filter(token_row::Column::ExpiresAt.lte(Utc::now())).count(db).await?;
    Ok((all, expired))
}

/// Deletes the expired tokens of `purpose`.
pub async fn purge_expired(db: &impl ConnectionTrait, purpose: Purpose) -> Result<u64, sea_orm::DbErr> {
    Ok(token_row::Entity::delete_many()
        .filter(token_row::Column::Purpose.eq(purpose.as_str()))
        .filter(token_row::Column::ExpiresAt.lte(Utc::now()))
        .exec(db)
        .await?
        .rows_affected)
}
