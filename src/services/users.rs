//! Creating users and checking passwords (argon2id).
use argon2::Argon2;
use argon2::password_hash::phc::PasswordHash;
use argon2::password_hash::{PasswordHasher, PasswordVerifier};
use chrono::Utc;
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};

use crate::entities::user;

#[derive(Debug, thiserror::Error)]
pub enum CreateUserError {
    #[error("{0}")]
    Invalid(String),
    #[error("Username is already taken")]
    UsernameTaken,
    #[error("An account with this email already exists")]
    EmailTaken,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
    #[error("password hashing failed")]
    Hash,
}

pub struct NewUser<'a> {
    pub username: &'a str,
    pub email: &'a str,
    pub password: Option<&'a str>,
    pub role: &'a str,
    pub email_verified: bool,
}

pub const MIN_PASSWORD_LEN: usize = 6;

/// Hashes a password with argon2id and a random salt (PHC string).
pub fn hash_password(password: &str) -> Result<String, CreateUserError> {
    Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|_| CreateUserError::Hash)
}

/// Longest password accepted (argon2 hashes any length, but unbounded input is a cheap DoS).
pub const MAX_PASSWORD_LEN: usize = 1024;

pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).map(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok()).unwrap_or(false)
}

/// Validates and inserts a user. Username and email are compared case-insensitively.
pub async fn create(db: &impl ConnectionTrait, new: NewUser<'_>) -> Result<user::Model, CreateUserError> {
    let username = new.username.trim();
    let email = new.email.trim().to_ascii_lowercase();
    if username.is_empty() || email.is_empty() {
        return Err(CreateUserError::Invalid("Please fill in all required fields".into()));
    }
    if username.chars().count() > 64 || !username.chars().all(|c| c.is_alphanumeric() || "_.-".contains(c)) {
        return Err(CreateUserError::Invalid(
            "Username may use letters, digits, dots, dashes and underscores (at most 64)".into(),
        ));
    }
    if !email.contains('@') || email.len() > 254 {
        return Err(CreateUserError::Invalid("Please enter a valid email address".into()));
    }
    if let Some(p) = new.password {
        if p.chars().count() < MIN_PASSWORD_LEN {
            return Err(CreateUserError::Invalid("Password must be at least 6 characters long".into()));
        }
        if p.len() > MAX_PASSWORD_LEN {
            return Err(CreateUserError::Invalid("Password must be at most 1024 characters long".into()));
        }
    }
    if find_by_username(db, username).await?.is_some() {
        return Err(CreateUserError::UsernameTaken);
    }
    if user::Entity::find().filter(user::Column::Email.eq(&email)).one(db).await?.is_some() {
        return Err(CreateUserError::EmailTaken);
    }
    let password_hash = match new.password {
        // argon2 is deliberately slow: keep it off the async worker threads.
        Some(p) => {
            let p = p.to_owned();
            Some(tokio::task::spawn_blocking(move || hash_password(&p)).await.map_err(|_| CreateUserError::Hash)??)
        }
        None => None,
    };
    let now = Utc::now();
    let row = user::ActiveModel {
        username: Set(username.to_owned()),
        email: Set(email),
        password_hash: Set(password_hash),
        role: Set(new.role.to_owned()),
        email_verified: Set(new.email_verified),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    Ok(row.insert(db).await?)
}

pub async fn find_by_username(
    db: &impl ConnectionTrait,
    username: &str,
) -> Result<Option<user::Model>, sea_orm::DbErr> {
    use sea_orm::sea_query::{Expr, ExprTrait, Func};
    user::Entity::find()
        .filter(
            Expr::expr(Func::lower(Expr::col(user::Column::Username))).eq(Expr::val(username.trim().to_lowercase())),
        )
        .one(db)
        .await
}

pub async fn find_by_email(db: &impl ConnectionTrait, email: &str) -> Result<Option<user::Model>, sea_orm::DbErr> {
    user::Entity::find().filter(user::Column::Email.eq(email.trim().to_ascii_lowercase())).one(db).await
}

/// The account a sign-in name points at: a username, or an email address.
pub async fn find_for_login(db: &impl ConnectionTrait, name: &str) -> Result<Option<user::Model>, sea_orm::DbErr> {
    match find_by_username(db, name).await? {
        Some(u) => Ok(Some(u)),
        None if name.contains('@') => find_by_email(db, name).await,
        None => Ok(None),
    }
}

/// Checks a password off the async threads. Accounts without a password (Google-only) and
/// unknown users are checked against a fixed dummy hash, so every refusal costs the same time.
pub async fn check_password(password: &str, user: Option<&user::Model>) -> bool {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let real = user.and_then(|u| u.password_hash.clone());
    let has_real = real.is_some();
    let password = password.to_owned();
    let ok = tokio::task::spawn_blocking(move || {
        let phc = real.unwrap_or_else(|| {
            DUMMY.get_or_init(|| hash_password("reelfind-dummy-password").unwrap_or_default()).clone()
        });
        verify_password(&password, &phc)
    })
    .await
    .unwrap_or(false);
    ok && has_real
}
