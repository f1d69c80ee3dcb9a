//! Email verification: random single-use tokens, stored hashed, valid for 24 hours.
use chrono::{Duration, Utc};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use crate::entities::{email_verification_token as token_row, user};
use crate::services::mail::Mail;
use crate::services::sessions::{hash_token, new_token};

pub const TOKEN_TTL: Duration = Duration::hours(24);

#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("Invalid or already used verification link")]
    Invalid,
    #[error("This verification link has expired. Please request a new one.")]
    Expired,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

/// A new token for `user_id`; earlier tokens of that user stop working.
pub async fn issue(db: &impl ConnectionTrait, user_id: i64) -> Result<String, sea_orm::DbErr> {
    token_row::Entity::delete_many().filter(token_row::Column::UserId.eq(user_id)).exec(db).await?;
    let token = new_token();
    let now = Utc::now();
    token_row::ActiveModel {
        user_id: Set(user_id),
        token_hash: Set(hash_token(&token)),
        created_at: Set(now),
        expires_at: Set(now + TOKEN_TTL),
        ..Default::default()
    }
    .insert(db)
    .await?;
    Ok(token)
}

/// Marks the token's user verified and uses the token up.
pub async fn verify(db: &impl ConnectionTrait, token: &str) -> Result<user::Model, VerifyError> {
    let token = token.trim();
    if token.is_empty() || token.len() > 128 {
        return Err(VerifyError::Invalid);
    }
    let row = token_row::Entity::find()
        .filter(token_row::Column::TokenHash.eq(hash_token(token)))
        .one(db)
        .await?
        .ok_or(VerifyError::Invalid)?;
    // Single use: the row goes whatever happens next.
    token_row::Entity::delete_by_id(row.id).exec(db).await?;
    if row.expires_at <= Utc::now() {
        return Err(VerifyError::Expired);
    }
    let u = user::Entity::find_by_id(row.user_id).one(db).await?.ok_or(VerifyError::Invalid)?;
    let mut active: user::ActiveModel = u.into();
    active.email_verified = Set(true);
    active.updated_at = Set(Utc::now());
    let u = active.update(db).await?;
    token_row::Entity::delete_many().filter(token_row::Column::UserId.eq(u.id)).exec(db).await?;
    Ok(u)
}

/// The verification mail, plain and HTML, with the link `{origin}/verify-email/{token}`.
pub fn mail(site_name: &str, origin: &str, to: &user::Model, token: &str) -> Mail {
    let link = format!("{origin}/verify-email/{token}");
    let name = escape(&to.username);
    let site = escape(site_name);
    Mail {
        to: to.email.clone(),
        subject: format!("Verify your email for {site_name}"),
        text: format!(
            "Hi {username},\n\nWelcome to {site_name}! Please confirm your email address by opening this link:\n\n{link}\n\n\
             The link works once and expires in 24 hours. If you did not create an account, ignore this email.\n",
            username = to.username
        ),
        html: format!(
            "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">\
             <p>Hi {name},</p><p>Welcome to {site}! Please confirm your email address:</p>\
             <p><a href=\"{link}\" style=\"display:inline-block;padding:10px 18px;background:#4f46e5;color:#fff;\
             border-radius:6px;text-decoration:none\">Verify my email</a></p>\
             <p>Or open this link: <a href=\"{link}\">{link}</a></p>\
             <p style=\"color:#666\">The link works once and expires in 24 hours. If you did not create an account, \
             ignore this email.</p></body></html>"
        ),
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Whether a new account must verify its email before signing in: always when real mail
/// goes out (SMTP configured), otherwise as the admin setting `require_email_verification` says.
pub fn required(smtp_configured: bool, settings: &crate::services::settings::SettingsMap) -> bool {
    use crate::services::settings::SettingsExt;
    smtp_configured || settings.flag("require_email_verification")
}
