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
    /// The password is too short or too long (its own case so clients get a precise code).
    #[error("{0}")]
    WeakPassword(String),
    #[error("Username is already taken")]
    UsernameTaken,
    #[error("An account with this email already exists")]
    EmailTaken,
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
    #[error("password hashing failed")]
    Hash,
}

/// Who is asking: the account behind a session or an API key. Routes get it from the
/// request (`auth`); services take what they need of it (usually the id).
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CurrentUser {
    pub id: i64,
    pub username: String,
    pub email: String,
    pub role: user::Role,
}

impl CurrentUser {
    pub fn is_admin(&self) -> bool {
        self.role.is_admin()
    }

    /// The signed-in person's whole row, read afresh: what a request shows or changes beyond
    /// the session's summary (settings, password, profile). `None` when the account was
    /// deleted since the session was read (callers answer as to someone signed out).
    pub async fn row(&self, db: &impl ConnectionTrait) -> Result<Option<user::Model>, sea_orm::DbErr> {
        user::Entity::find_by_id(self.id).one(db).await
    }
}

impl From<&user::Model> for CurrentUser {
    fn from(u: &user::Model) -> Self {
        Self { id: u.id, username: u.username.clone(), email: u.email.clone(), role: u.role }
    }
}

pub struct NewUser<'a> {
    pub username: &'a str,
    pub email: &'a str,
    pub password: Option<&'a str>,
    pub role: user::Role,
    pub email_verified: bool,
}

pub const MIN_PASSWORD_LEN: usize = 6;

/// argon2 hashes running at once on this node: each takes 19 MiB and a core for ~20 ms, so
/// a burst of sign-ups or sign-ins queues here instead of filling the blocking pool.
static ARGON2_SLOTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(2);

/// Runs `f` (an argon2 hash or check) on the blocking pool, at most two at a time.
async fn with_argon2_slot<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Option<T> {
    let _slot = ARGON2_SLOTS.acquire().await.ok()?;
    tokio::task::spawn_blocking(f).await.ok()
}

/// Hashes a password with argon2id and a random salt (PHC string).
pub fn hash_password(password: &str) -> Result<String, CreateUserError> {
    Argon2::default().hash_password(password.as_bytes()).map(|h| h.to_string()).map_err(|_| CreateUserError::Hash)
}

/// Longest password accepted (argon2 hashes any length, but unbounded input is a cheap DoS).
pub const MAX_PASSWORD_LEN: usize = 1024;

/// The rules for a new password (SPEC: at least 6 characters), in the product's words.
pub fn check_new_password(p: &str) -> Result<(), String> {
    if p.chars().count() < MIN_PASSWORD_LEN {
        return Err("Password must be at least 6 characters long".into());
    }
    if p.len() > MAX_PASSWORD_LEN {
        return Err("Password must be at most 1024 characters long".into());
    }
    Ok(())
}

/// Hashes off the async worker threads (argon2 is deliberately slow).
pub async fn hash_password_blocking(password: &str) -> Result<String, CreateUserError> {
    let p = password.to_owned();
    with_argon2_slot(move || hash_password(&p)).await.ok_or(CreateUserError::Hash)?
}

pub fn verify_password(password: &str, phc: &str) -> bool {
    PasswordHash::new(phc).map(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok()).unwrap_or(false)
}

/// A username as names are compared: trimmed and in Unicode lower case, done here in Rust
/// and stored (`users.username_key`, uniquely indexed), never by the database's `lower()`,
/// which folds only ASCII on SQLite. "Émile" and "émile" are one name on every database.
pub fn username_key(username: &str) -> String {
    username.trim().to_lowercase()
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
        check_new_password(p).map_err(CreateUserError::WeakPassword)?;
    }
    if find_by_username(db, username).await?.is_some() {
        return Err(CreateUserError::UsernameTaken);
    }
    if email_taken(db, &email).await? {
        return Err(CreateUserError::EmailTaken);
    }
    let password_hash = match new.password {
        Some(p) => Some(hash_password_blocking(p).await?),
        None => None,
    };
    let now = Utc::now();
    let row = user::ActiveModel {
        username: Set(username.to_owned()),
        username_key: Set(username_key(username)),
        email: Set(email.clone()),
        password_hash: Set(password_hash),
        role: Set(new.role),
        email_verified: Set(new.email_verified),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    };
    match row.insert(db).await {
        Ok(u) => Ok(u),
        // Lost a race with another registration of the same name or address (the unique
        // indexes ignore case): look again to say which, as the checks above would have.
        Err(e) if matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))) => {
            Err(if email_taken(db, &email).await? {
                CreateUserError::EmailTaken
            } else {
                CreateUserError::UsernameTaken
            })
        }
        Err(e) => Err(e.into()),
    }
}

async fn email_taken(db: &impl ConnectionTrait, email: &str) -> Result<bool, sea_orm::DbErr> {
    Ok(user::Entity::find().filter(user::Column::Email.eq(email)).one(db).await?.is_some())
}

pub async fn find_by_username(
    db: &impl ConnectionTrait,
    username: &str,
) -> Result<Option<user::Model>, sea_orm::DbErr> {
    user::Entity::find().filter(user::Column::UsernameKey.eq(username_key(username))).one(db).await
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
    let ok = with_argon2_slot(move || {
        let phc = real.unwrap_or_else(|| {
            DUMMY.get_or_init(|| hash_password("reelfind-dummy-password").unwrap_or_default()).clone()
        });
        verify_password(&password, &phc)
    })
    .await
    .unwrap_or(false);
    ok && has_real
}

/// Takes the write lock on `user_id`'s row until the transaction ends (a no-op write:
/// PostgreSQL locks the row, SQLite takes its one write lock). Per-person caps and other
/// read-then-write steps run after it, so two requests of one person take turns. False when
/// the user does not exist.
pub async fn lock(txn: &impl ConnectionTrait, user_id: i64) -> Result<bool, sea_orm::DbErr> {
    use sea_orm::sea_query::Expr;
    let res = user::Entity::update_many()
        .col_expr(user::Column::UpdatedAt, Expr::col(user::Column::UpdatedAt))
        .filter(user::Column::Id.eq(user_id))
        .exec(txn)
        .await?;
    Ok(res.rows_affected == 1)
}
