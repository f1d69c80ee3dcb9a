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

/// Mails `to` a new verification link; earlier links stop working only once it is sent
/// (see [`tokens::issue_mailed`]).
pub async fn send_link(
    db: &sea_orm::DatabaseConnection,
    mailer: &crate::services::mail::Mailer,
    site_name: &str,
    origin: &str,
    to: &user::Model,
) -> anyhow::Result<()> {
    tokens::issue_mailed(db, to.id, Purpose::VerifyEmail, TOKEN_TTL, |token| {
        mailer.send(mail(site_name, origin, to, &token))
    })
    .await
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

/// The mail to the owner of an address someone tried to register again. The sign-up answer
/// is the same as for a new address (so nobody learns which addresses have accounts); this
/// mail tells the one person who may know.
pub fn already_registered_mail(site_name: &str, origin: &str, to: &user::Model) -> Mail {
    let sign_in = format!("{origin}/auth");
    let reset = format!("{origin}/forgot-password");
    let site = escape_html(site_name);
    let name = escape_html(&to.username);
    Mail {
        to: to.email.clone(),
        subject: format!("You already have a {site_name} account"),
        text: format!(
            "Hi {username},\n\nSomeone (hopefully you) just tried to create a {site_name} account with this email \
             address. It already has an account, with the username {username}. Sign in here:\n\n{sign_in}\n\n\
             Forgot your password? Choose a new one here:\n\n{reset}\n\n\
             If it was not you, ignore this email: nothing was changed.\n",
            username = to.username
        ),
        html: link_mail_html(
            &name,
            &format!(
                "<p>Someone (hopefully you) just tried to create a {site} account with this email address. It \
                 already has an account, with the username <strong>{name}</strong>. Forgot your password? \
                 <a href=\"{reset}\">Choose a new one</a>.</p>"
            ),
            &sign_in,
            "Sign in",
            "If it was not you, ignore this email: nothing was changed.",
        ),
    }
}

/// Whether a new account must verify its email before signing in: always when real mail
/// goes out (SMTP configured), otherwise as the admin setting `require_email_verification` says.
pub fn required(smtp_configured: bool, settings: &crate::services::settings::SettingsMap) -> bool {
    use crate::services::settings::SettingsExt;
    smtp_configured || settings.flag("require_email_verification")
}
