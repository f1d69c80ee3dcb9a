//! Email verification: random single-use tokens, stored hashed, valid for 24 hours.
use chrono::{Duration, Utc};
use sea_orm::{ActiveModelTrait, EntityTrait, Set};

use crate::entities::user;
use crate::services::mail::{Mail, escape_html, link_mail_html};
use crate::services::single_use_tokens::{self as tokens, Purpose, TokenError};

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

impl From<TokenError> for VerifyError {
    fn from(e: TokenError) -> Self {
        match e {
            TokenError::Invalid => VerifyError::Invalid,
            TokenError::Expired => VerifyError::Expired,
            TokenError::Db(e) => VerifyError::Db(e),
        }
    }
}

/// A new token for `user_id`; earlier tokens of that user stop working (one transaction).
pub async fn issue(db: &sea_orm::DatabaseConnection, user_id: i64) -> Result<String, sea_orm::DbErr> {
    tokens::issue(db, user_id, Purpose::VerifyEmail, TOKEN_TTL).await
}

/// Marks the token's user verified and uses the token up, in one transaction.
pub async fn verify(db: &sea_orm::DatabaseConnection, token: &str) -> Result<user::Model, VerifyError> {
    let (txn, user_id) = tokens::consume(db, Purpose::VerifyEmail, token).await?;
    let u = user::Entity::find_by_id(user_id).one(&txn).await?.ok_or(VerifyError::Invalid)?;
    let mut active: user::ActiveModel = u.into();
    active.email_verified = Set(true);
    active.updated_at = Set(Utc::now());
    let u = active.update(&txn).await?;
    tokens::forget(&txn, u.id, Purpose::VerifyEmail).await?;
    txn.commit().await?;
    Ok(u)
}

/// The verification mail, plain and HTML, with the link `{origin}/verify-email/{token}`.
pub fn mail(site_name: &str, origin: &str, to: &user::Model, token: &str) -> Mail {
    let link = format!("{origin}/verify-email/{token}");
    let site = escape_html(site_name);
    Mail {
        to: to.email.clone(),
        subject: format!("Verify your email for {site_name}"),
        text: format!(
            "Hi {username},\n\nWelcome to {site_name}! Please confirm your email address by opening this link:\n\n{link}\n\n\
             The link works once and expires in 24 hours. If you did not create an account, ignore this email.\n",
            username = to.username
        ),
        html: link_mail_html(
            &to.username,
            &format!("<p>Welcome to {site}! Please confirm your email address:</p>"),
            &link,
            "Verify my email",
            "The link works once and expires in 24 hours. If you did not create an account, ignore this email.",
        ),
    }
}

/// Whether a new account must verify its email before signing in: always when real mail
/// goes out (SMTP configured), otherwise as the admin setting `require_email_verification` says.
pub fn required(smtp_configured: bool, settings: &crate::services::settings::SettingsMap) -> bool {
    use crate::services::settings::SettingsExt;
    smtp_configured || settings.flag("require_email_verification")
}
