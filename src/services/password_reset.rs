//! Forgotten passwords: a mailed link with a random single-use token (stored hashed), valid
//! for [`TOKEN_TTL`]. Using it sets the new password, marks the email verified (whoever
//! opened the mail owns the address), ends every session of the account and every other
//! reset link, all in one transaction.
use chrono::{Duration, Utc};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DatabaseConnection, EntityTrait, Set};

use crate::entities::user;
use crate::services::mail::{Mail, escape_html, link_mail_html};
use crate::services::single_use_tokens::{self as tokens, Purpose, TokenError};
use crate::services::users;

pub const TOKEN_TTL: Duration = Duration::hours(1);

#[derive(Debug, thiserror::Error)]
pub enum ResetError {
    #[error("This password reset link is invalid or has already been used. Please request a new one.")]
    Invalid,
    #[error("This password reset link has expired. Please request a new one.")]
    Expired,
    #[error("{0}")]
    WeakPassword(String),
    #[error("password hashing failed")]
    Hash,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

impl From<TokenError> for ResetError {
    fn from(e: TokenError) -> Self {
        match e {
            TokenError::Invalid => ResetError::Invalid,
            TokenError::Expired => ResetError::Expired,
            TokenError::Db(e) => ResetError::Db(e),
        }
    }
}

/// A new reset token for `user_id`; earlier ones stop working.
pub async fn issue(db: &DatabaseConnection, user_id: i64) -> Result<String, sea_orm::DbErr> {
    tokens::issue(db, user_id, Purpose::ResetPassword, TOKEN_TTL).await
}

/// Mails `to` a new reset link; earlier links stop working only once it is sent (see
/// [`tokens::issue_mailed`]).
pub async fn send_link(
    db: &DatabaseConnection,
    mailer: &crate::services::mail::Mailer,
    site_name: &str,
    origin: &str,
    to: &user::Model,
) -> anyhow::Result<()> {
    tokens::issue_mailed(db, to.id, Purpose::ResetPassword, TOKEN_TTL, |token| {
        mailer.send(mail(site_name, origin, to, &token))
    })
    .await
}

/// Whether `token` would work now (the page shows the form, or says why not), without using it.
pub async fn check(db: &impl ConnectionTrait, token: &str) -> Result<(), ResetError> {
    tokens::check(db, Purpose::ResetPassword, token).await?;
    Ok(())
}

/// Uses `token` to set `new_password`; every session, API key and push subscription of the
/// account ends with it. Returns the account and what ended.
pub async fn reset(
    db: &DatabaseConnection,
    token: &str,
    new_password: &str,
) -> Result<(user::Model, crate::services::credentials::Revoked), ResetError> {
    // A malformed token is refused before the password is looked at or hashed.
    tokens::check_shape(token)?;
    users::check_new_password(new_password).map_err(ResetError::WeakPassword)?;
    // Hash before the transaction: argon2 takes a while and holds no lock.
    let hash = users::hash_password_blocking(new_password).await.map_err(|_| ResetError::Hash)?;
    let (txn, user_id) = tokens::consume(db, Purpose::ResetPassword, token).await?;
    let u = user::Entity::find_by_id(user_id).one(&txn).await?.ok_or(ResetError::Invalid)?;
    let mut active: user::ActiveModel = u.into();
    active.password_hash = Set(Some(hash));
    active.email_verified = Set(true);
    active.updated_at = Set(Utc::now());
    let u = active.update(&txn).await?;
    tokens::forget(&txn, u.id, Purpose::ResetPassword).await?;
    let revoked = crate::services::credentials::revoke_all(&txn, u.id, None).await?;
    txn.commit().await?;
    Ok((u, revoked))
}

/// The reset mail, plain and HTML, with the link `{origin}/reset-password/{token}`.
pub fn mail(site_name: &str, origin: &str, to: &user::Model, token: &str) -> Mail {
    let link = format!("{origin}/reset-password/{token}");
    let site = escape_html(site_name);
    Mail {
        to: to.email.clone(),
        subject: format!("Reset your {site_name} password"),
        text: format!(
            "Hi {username},\n\nSomeone (hopefully you) asked to reset the password of your {site_name} account. \
             To choose a new password, open this link:\n\n{link}\n\n\
             The link works once and expires in 1 hour. If you did not ask for this, ignore this email: \
             your password stays as it is.\n",
            username = to.username
        ),
        html: link_mail_html(
            &to.username,
            &format!("<p>Someone (hopefully you) asked to reset the password of your {site} account.</p>"),
            &link,
            "Choose a new password",
            "The link works once and expires in 1 hour. If you did not ask for this, ignore this email: \
             your password stays as it is.",
        ),
    }
}
