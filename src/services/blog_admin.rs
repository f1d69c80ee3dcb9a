//! Writing the blog: drafts, scheduled and published posts, slugs, safe concurrent edits.
//!
//! * Slugs are made from the title (ASCII, lower case, hyphens) unless the admin types one;
//!   a made slug gets `-2`, `-3`... when taken, a typed one that is taken is refused.
//! * Renaming a published post keeps its old address: `/blog/{old}` answers 301.
//! * Every save names the version it started from; the database updates only that version
//!   (`UPDATE .. WHERE id = ? AND version = ?`), so of two admins saving the same version
//!   the second learns who changed the post and when, and nothing is overwritten.
use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, ExprTrait, Func, LikeExpr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder,
    QuerySelect, Set, TransactionSession, TransactionTrait,
};
use serde::{Deserialize, Serialize};

use crate::entities::{blog_post, blog_slug_redirect, user};
use crate::services::blog;

pub const MAX_TITLE: usize = 200;
pub const MAX_SLUG: usize = 160;
pub const MAX_SUMMARY: usize = 500;
pub const MAX_CONTENT: usize = 200_000;
pub const MAX_CATEGORY: usize = 64;
pub const MAX_TAGS: usize = 20;
pub const MAX_TAG: usize = 40;
pub const MAX_AUTHOR: usize = 100;
pub const MAX_META_TITLE: usize = 200;
pub const MAX_META_DESCRIPTION: usize = 400;
/// What search engines show before cutting (hints, not limits).
pub const TITLE_HINT: usize = 60;
pub const DESCRIPTION_HINT: usize = 160;

/// Where a post stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
pub enum PostStatus {
    Draft,
    Scheduled,
    Published,
}

impl PostStatus {
    pub fn of(p: &blog_post::Model, now: DateTime<Utc>) -> Self {
        match p.published_at {
            None => Self::Draft,
            Some(at) if at > now => Self::Scheduled,
            Some(_) => Self::Published,
        }
    }
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "draft" => Some(Self::Draft),
            "scheduled" => Some(Self::Scheduled),
            "published" => Some(Self::Published),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Draft => "draft",
            Self::Scheduled => "scheduled",
            Self::Published => "published",
        }
    }
}

/// A post as the studio edits it.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema, ts_rs::TS)]
#[serde(rename_all = "camelCase")]
pub struct AdminPost {
    pub id: i64,
    pub slug: String,
    pub title: String,
    pub summary: String,
    pub content: String,
    pub category: String,
    pub tags: Vec<String>,
    pub author_name: String,
    pub featured_image: Option<String>,
    pub meta_title: String,
    pub meta_description: String,
    pub social_image: Option<String>,
    pub noindex: bool,
    pub status: PostStatus,
    pub published_at: Option<DateTime<Utc>>,
    pub read_time_minutes: u32,
    pub version: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Who saved last (username), when known.
    pub updated_by: Option<String>,
    /// Where visitors read it (once published).
    pub url: String,
}

impl AdminPost {
    pub fn from_model(p: blog_post::Model, updated_by: Option<String>) -> Self {
        let status = PostStatus::of(&p, Utc::now());
        Self {
            id: p.id,
            url: format!("/blog/{}", p.slug),
            read_time_minutes: blog::read_time_minutes(&p.content),
            tags: split_tags(&p.tags),
            slug: p.slug,
            title: p.title,
            summary: p.summary,
            content: p.content,
            category: p.category,
            author_name: p.author_name.unwrap_or_default(),
            featured_image: p.featured_image,
            meta_title: p.meta_title.unwrap_or_default(),
            meta_description: p.meta_description.unwrap_or_default(),
            social_image: p.social_image,
            noindex: p.noindex,
            status,
            published_at: p.published_at,
            version: p.version,
            created_at: p.created_at,
            updated_at: p.updated_at,
            updated_by,
        }
    }
}

pub fn split_tags(tags: &str) -> Vec<String> {
    tags.split(',').map(str::trim).filter(|t| !t.is_empty()).map(str::to_owned).collect()
}

/// What the editor sends on create and save.
#[derive(Debug, Clone, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", default)]
pub struct PostInput {
    /// The version the editor loaded; required when saving an existing post.
    pub version: Option<i32>,
    pub title: String,
    /// Blank: made from the title.
    pub slug: String,
    pub summary: String,
    pub content: String,
    pub category: String,
    pub tags: Vec<String>,
    pub author_name: String,
    pub featured_image: Option<String>,
    pub meta_title: String,
    pub meta_description: String,
    pub social_image: Option<String>,
    pub noindex: bool,
    /// `draft`, `scheduled` (with `publishAt` in the future) or `published`.
    pub status: String,
    pub publish_at: Option<DateTime<Utc>>,
}

#[derive(Debug, thiserror::Error)]
pub enum BlogAdminError {
    #[error("{0}")]
    Invalid(String),
    #[error("Post not found")]
    NotFound,
    /// A stale save: someone saved a newer version since the editor loaded it.
    #[error(
        "This post was changed by {by} on {at} after you opened it, so your save was not applied. Copy your changes, reload the post and apply them again."
    )]
    Stale { by: String, at: String, current_version: i32 },
    #[error(transparent)]
    Db(#[from] sea_orm::DbErr),
}

fn invalid(msg: impl Into<String>) -> BlogAdminError {
    BlogAdminError::Invalid(msg.into())
}

/// `slug` as the URL part: ASCII letters, digits and single hyphens, at most 160 characters.
pub fn slugify(text: &str) -> String {
    let s = slug::slugify(text);
    let mut cut: String = s.chars().take(MAX_SLUG).collect();
    while cut.ends_with('-') {
        cut.pop();
    }
    cut
}

fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= MAX_SLUG
        && s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
        && !s.contains("--")
}

/// An image the studio may point at: one of ours (`/media/blog/...`) or an absolute https URL.
fn check_image(field: &str, v: Option<String>) -> Result<Option<String>, BlogAdminError> {
    let Some(v) = v.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()) else { return Ok(None) };
    let ours = v.starts_with("/media/blog/") && !v.contains("..") && v.len() <= 200;
    let https = url::Url::parse(&v).is_ok_and(|u| u.scheme() == "https") && v.len() <= 1000 && !v.contains('"');
    if ours || https {
        Ok(Some(v))
    } else {
        Err(invalid(format!("{field} must be an uploaded image or an https:// URL")))
    }
}

fn bounded(field: &str, v: &str, max: usize) -> Result<String, BlogAdminError> {
    let v = v.trim();
    if v.chars().count() > max {
        return Err(invalid(format!("{field} must be at most {max} characters")));
    }
    if v.chars().any(|c| c.is_control() && c != '\n' && c != '\r' && c != '\t') {
        return Err(invalid(format!("{field} contains characters that are not allowed")));
    }
    Ok(v.to_owned())
}

/// The checked fields of a post, ready to store.
struct Clean {
    title: String,
    slug: Option<String>,
    summary: String,
    content: String,
    category: String,
    tags: String,
    author_name: Option<String>,
    featured_image: Option<String>,
    meta_title: Option<String>,
    meta_description: Option<String>,
    social_image: Option<String>,
    noindex: bool,
    status: PostStatus,
    publish_at: Option<DateTime<Utc>>,
}

fn clean(input: PostInput, now: DateTime<Utc>) -> Result<Clean, BlogAdminError> {
    let title = bounded("Title", &input.title, MAX_TITLE)?;
    if title.is_empty() {
        return Err(invalid("Title required - Please give the post a title"));
    }
    let slug = input.slug.trim().to_owned();
    let slug = if slug.is_empty() {
        None
    } else if is_slug(&slug) {
        Some(slug)
    } else {
        return Err(invalid(
            "Slug may use lower-case letters, digits and single hyphens (like my-first-post), at most 160 characters",
        ));
    };
    let content = input.content.replace("\r\n", "\n");
    if content.len() > MAX_CONTENT {
        return Err(invalid(format!("The article is too long (at most {} KB of text)", MAX_CONTENT / 1000)));
    }
    let category = bounded("Category", &input.category, MAX_CATEGORY)?;
    let mut tags: Vec<String> = Vec::new();
    for t in &input.tags {
        let t = bounded("A tag", &t.replace(',', " "), MAX_TAG)?;
        if !t.is_empty() && !tags.iter().any(|x| x.eq_ignore_ascii_case(&t)) {
            tags.push(t);
        }
    }
    if tags.len() > MAX_TAGS {
        return Err(invalid(format!("At most {MAX_TAGS} tags")));
    }
    let status = PostStatus::parse(if input.status.trim().is_empty() { "draft" } else { &input.status })
        .ok_or_else(|| invalid("Status must be draft, scheduled or published"))?;
    let publish_at = match status {
        PostStatus::Scheduled => match input.publish_at {
            Some(at) if at > now => Some(at),
            Some(_) => return Err(invalid("The scheduled time has passed - pick a time in the future or publish now")),
            None => return Err(invalid("Pick the date and time to publish at")),
        },
        _ => None,
    };
    let opt = |s: String| Some(s).filter(|s| !s.is_empty());
    Ok(Clean {
        title,
        slug,
        summary: bounded("Summary", &input.summary, MAX_SUMMARY)?,
        content,
        category: if category.is_empty() { "General".into() } else { category },
        tags: tags.join(","),
        author_name: opt(bounded("Author", &input.author_name, MAX_AUTHOR)?),
        featured_image: check_image("Featured image", input.featured_image)?,
        meta_title: opt(bounded("Meta title", &input.meta_title, MAX_META_TITLE)?),
        meta_description: opt(bounded("Meta description", &input.meta_description, MAX_META_DESCRIPTION)?),
        social_image: check_image("Social image", input.social_image)?,
        noindex: input.noindex,
        status,
        publish_at,
    })
}

/// The slug to store: the typed one if free, else one made from the title, made unique.
async fn choose_slug(
    db: &impl ConnectionTrait,
    typed: Option<&str>,
    title: &str,
    own_id: Option<i64>,
) -> Result<String, BlogAdminError> {
    let taken_by = |slug: String| async move {
        let mut q = blog_post::Entity::find().filter(blog_post::Column::Slug.eq(slug));
        if let Some(id) = own_id {
            q = q.filter(blog_post::Column::Id.ne(id));
        }
        q.one(db).await
    };
    if let Some(slug) = typed {
        if let Some(other) = taken_by(slug.to_owned()).await? {
            return Err(invalid(format!(
                "The address /blog/{slug} is already used by \u{201c}{}\u{201d}. Choose another slug.",
                other.title
            )));
        }
        return Ok(slug.to_owned());
    }
    let base = match slugify(title) {
        s if s.is_empty() => "post".to_owned(),
        s => s,
    };
    for n in 1..1000 {
        let candidate = if n == 1 {
            base.clone()
        } else {
            let suffix = format!("-{n}");
            format!("{}{suffix}", base.chars().take(MAX_SLUG - suffix.len()).collect::<String>().trim_end_matches('-'))
        };
        if taken_by(candidate.clone()).await?.is_none() {
            return Ok(candidate);
        }
    }
    Err(invalid("Could not make a free slug from this title; please type one"))
}

/// A live post at `slug` wins over an old address that pointed elsewhere.
async fn release_redirect(db: &impl ConnectionTrait, slug: &str) -> Result<(), sea_orm::DbErr> {
    blog_slug_redirect::Entity::delete_by_id(slug.to_owned()).exec(db).await?;
    Ok(())
}

fn publication(c: &Clean, before: Option<DateTime<Utc>>, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    match c.status {
        PostStatus::Draft => None,
        PostStatus::Scheduled => c.publish_at,
        // Publishing again keeps the first publication date; a scheduled post published
        // early goes out now.
        PostStatus::Published => Some(before.filter(|at| *at <= now).unwrap_or(now)),
    }
}

/// The username behind a user id, for "changed by".
pub async fn username(db: &impl ConnectionTrait, id: Option<i64>) -> Result<Option<String>, sea_orm::DbErr> {
    let Some(id) = id else { return Ok(None) };
    Ok(user::Entity::find_by_id(id).one(db).await?.map(|u| u.username))
}

pub async fn get(db: &impl ConnectionTrait, id: i64) -> Result<AdminPost, BlogAdminError> {
    let p = blog_post::Entity::find_by_id(id).one(db).await?.ok_or(BlogAdminError::NotFound)?;
    let by = username(db, p.updated_by).await?;
    Ok(AdminPost::from_model(p, by))
}

/// Creates a post by `admin_id`.
pub async fn create(
    db: &(impl ConnectionTrait + TransactionTrait),
    admin_id: i64,
    input: PostInput,
) -> Result<AdminPost, BlogAdminError> {
    let now = Utc::now();
    let c = clean(input, now)?;
    let txn = crate::db::begin_write(db).await?;
    let slug = choose_slug(&txn, c.slug.as_deref(), &c.title, None).await?;
    release_redirect(&txn, &slug).await?;
    let row = blog_post::ActiveModel {
        published_at: Set(publication(&c, None, now)),
        slug: Set(slug),
        title: Set(c.title),
        summary: Set(c.summary),
        content: Set(c.content),
        category: Set(c.category),
        tags: Set(c.tags),
        featured_image: Set(c.featured_image),
        author_name: Set(c.author_name),
        version: Set(1),
        meta_title: Set(c.meta_title),
        meta_description: Set(c.meta_description),
        social_image: Set(c.social_image),
        noindex: Set(c.noindex),
        created_by: Set(Some(admin_id)),
        updated_by: Set(Some(admin_id)),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&txn)
    .await
    .map_err(slug_race)?;
    crate::services::content_version::bump(&txn).await?;
    txn.commit().await?;
    get(db, row.id).await
}

/// Two saves racing for one free slug: the unique index refuses the second.
fn slug_race(e: sea_orm::DbErr) -> BlogAdminError {
    if matches!(e.sql_err(), Some(sea_orm::SqlErr::UniqueConstraintViolation(_))) {
        invalid("That slug was just taken by another post. Choose another slug.")
    } else {
        e.into()
    }
}

/// Saves `input` over version `input.version` of post `id`.
pub async fn update(
    db: &(impl ConnectionTrait + TransactionTrait),
    id: i64,
    admin_id: i64,
    input: PostInput,
) -> Result<AdminPost, BlogAdminError> {
    let now = Utc::now();
    let version = input.version.ok_or_else(|| invalid("version is required: send the version you loaded"))?;
    let c = clean(input, now)?;
    let txn = crate::db::begin_write(db).await?;
    let before = blog_post::Entity::find_by_id(id).one(&txn).await?.ok_or(BlogAdminError::NotFound)?;
    if before.version != version {
        return Err(stale(&txn, &before).await?);
    }
    // An existing post keeps its slug unless one is typed: retitling must not move it.
    let typed = c.slug.clone().unwrap_or_else(|| before.slug.clone());
    let slug = choose_slug(&txn, Some(&typed), &c.title, Some(id)).await?;
    let published_at = publication(&c, before.published_at, now);
    let res = blog_post::Entity::update_many()
        .col_expr(blog_post::Column::Slug, Expr::value(slug.clone()))
        .col_expr(blog_post::Column::Title, Expr::value(c.title))
        .col_expr(blog_post::Column::Summary, Expr::value(c.summary))
        .col_expr(blog_post::Column::Content, Expr::value(c.content))
        .col_expr(blog_post::Column::Category, Expr::value(c.category))
        .col_expr(blog_post::Column::Tags, Expr::value(c.tags))
        .col_expr(blog_post::Column::FeaturedImage, Expr::value(c.featured_image))
        .col_expr(blog_post::Column::AuthorName, Expr::value(c.author_name))
        .col_expr(blog_post::Column::MetaTitle, Expr::value(c.meta_title))
        .col_expr(blog_post::Column::MetaDescription, Expr::value(c.meta_description))
        .col_expr(blog_post::Column::SocialImage, Expr::value(c.social_image))
        .col_expr(blog_post::Column::Noindex, Expr::value(c.noindex))
        .col_expr(blog_post::Column::PublishedAt, Expr::value(published_at))
        .col_expr(blog_post::Column::UpdatedBy, Expr::value(admin_id))
        .col_expr(blog_post::Column::UpdatedAt, Expr::value(now))
        .col_expr(blog_post::Column::Version, Expr::col(blog_post::Column::Version).add(1))
        .filter(blog_post::Column::Id.eq(id))
        .filter(blog_post::Column::Version.eq(version))
        .exec(&txn)
        .await
        .map_err(slug_race)?;
    if res.rows_affected == 0 {
        // Another node saved between our read and our write.
        let current = blog_post::Entity::find_by_id(id).one(&txn).await?.ok_or(BlogAdminError::NotFound)?;
        return Err(stale(&txn, &current).await?);
    }
    if slug != before.slug {
        release_redirect(&txn, &slug).await?;
        // Only an address visitors could have seen needs to keep working.
        if PostStatus::of(&before, now) == PostStatus::Published {
            blog_slug_redirect::Entity::insert(blog_slug_redirect::ActiveModel {
                slug: Set(before.slug.clone()),
                post_id: Set(id),
                created_at: Set(now),
            })
            .on_conflict(
                OnConflict::column(blog_slug_redirect::Column::Slug)
                    .update_columns([blog_slug_redirect::Column::PostId, blog_slug_redirect::Column::CreatedAt])
                    .to_owned(),
            )
            .exec(&txn)
            .await?;
        }
    }
    crate::services::content_version::bump(&txn).await?;
    txn.commit().await?;
    get(db, id).await
}

async fn stale(db: &impl ConnectionTrait, current: &blog_post::Model) -> Result<BlogAdminError, sea_orm::DbErr> {
    let by = username(db, current.updated_by).await?.unwrap_or_else(|| "another admin".into());
    Ok(BlogAdminError::Stale {
        by,
        at: current.updated_at.format("%Y-%m-%d at %H:%M UTC").to_string(),
        current_version: current.version,
    })
}

pub async fn delete(db: &impl ConnectionTrait, id: i64) -> Result<(), BlogAdminError> {
    let res = blog_post::Entity::delete_by_id(id).exec(db).await?;
    if res.rows_affected == 0 {
        return Err(BlogAdminError::NotFound);
    }
    crate::services::content_version::bump(db).await?;
    Ok(())
}

/// Filters of the studio's post list.
#[derive(Debug, Clone, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(default)]
pub struct AdminListQuery {
    /// `draft`, `scheduled`, `published`; blank or `all` for every post.
    pub status: Option<String>,
    pub search: Option<String>,
    pub category: Option<String>,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct AdminListItem {
    pub id: i64,
    pub slug: String,
    pub title: String,
    pub category: String,
    pub status: PostStatus,
    pub published_at: Option<DateTime<Utc>>,
    pub updated_at: DateTime<Utc>,
    pub read_time_minutes: u32,
    pub noindex: bool,
    pub url: String,
}

#[derive(Debug, Clone, Serialize, Default, utoipa::ToSchema)]
pub struct StatusCounts {
    pub draft: u64,
    pub scheduled: u64,
    pub published: u64,
}

#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct AdminList {
    pub posts: Vec<AdminListItem>,
    pub total: u64,
    pub counts: StatusCounts,
    pub categories: Vec<String>,
}

fn status_condition(s: PostStatus, now: DateTime<Utc>) -> Condition {
    match s {
        PostStatus::Draft => Condition::all().add(blog_post::Column::PublishedAt.is_null()),
        PostStatus::Scheduled => Condition::all().add(blog_post::Column::PublishedAt.gt(now)),
        PostStatus::Published => Condition::all().add(blog_post::Column::PublishedAt.lte(now)),
    }
}

/// Every post the filters match (drafts first in "all", then newest change first).
pub async fn list(db: &impl ConnectionTrait, q: &AdminListQuery) -> Result<AdminList, BlogAdminError> {
    let now = Utc::now();
    let mut cond = Condition::all();
    match q.status.as_deref().map(str::trim).filter(|s| !s.is_empty() && *s != "all") {
        None => {}
        Some(s) => {
            let s = PostStatus::parse(s).ok_or_else(|| invalid("Status must be draft, scheduled or published"))?;
            cond = cond.add(status_condition(s, now));
        }
    }
    if let Some(c) = q.category.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        cond = cond.add(blog_post::Column::Category.eq(c));
    }
    if let Some(search) = q.search.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        let pattern = format!("%{}%", blog::escape_like(&search.to_lowercase()));
        let like = |c: blog_post::Column| {
            Expr::expr(Func::lower(Expr::col((blog_post::Entity, c)))).like(LikeExpr::new(pattern.clone()).escape('\\'))
        };
        cond = cond.add(
            Condition::any()
                .add(like(blog_post::Column::Title))
                .add(like(blog_post::Column::Slug))
                .add(like(blog_post::Column::Summary))
                .add(like(blog_post::Column::Tags)),
        );
    }
    let select = blog_post::Entity::find().filter(cond);
    let total = select.clone().count(db).await?;
    let rows = select
        .order_by_desc(blog_post::Column::UpdatedAt)
        .order_by_desc(blog_post::Column::Id)
        .offset(crate::db::sql_offset(q.offset.unwrap_or(0)))
        .limit(q.limit.unwrap_or(50).clamp(1, 200))
        .all(db)
        .await?;
    let count = |s| blog_post::Entity::find().filter(status_condition(s, now)).count(db);
    let counts = StatusCounts {
        draft: count(PostStatus::Draft).await?,
        scheduled: count(PostStatus::Scheduled).await?,
        published: count(PostStatus::Published).await?,
    };
    let mut categories: Vec<String> = blog_post::Entity::find()
        .select_only()
        .column(blog_post::Column::Category)
        .distinct()
        .into_tuple::<String>()
        .all(db)
        .await?;
    categories.sort_by_key(|c| c.to_lowercase());
    let posts = rows
        .into_iter()
        .map(|p| AdminListItem {
            status: PostStatus::of(&p, now),
            read_time_minutes: blog::read_time_minutes(&p.content),
            url: format!("/blog/{}", p.slug),
            id: p.id,
            slug: p.slug,
            title: p.title,
            category: p.category,
            published_at: p.published_at,
            updated_at: p.updated_at,
            noindex: p.noindex,
        })
        .collect();
    Ok(AdminList { posts, total, counts, categories })
}

/// The editor's live preview: the same Markdown rendering and sanitiser as the article page.
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Preview {
    pub html: String,
    pub read_time_minutes: u32,
    pub words: usize,
}

pub fn preview(markdown: &str) -> Preview {
    Preview {
        html: blog::render_markdown(markdown),
        read_time_minutes: blog::read_time_minutes(markdown),
        words: markdown.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_made_from_titles() {
        assert_eq!(slugify("Hello, World!"), "hello-world");
        assert_eq!(slugify("  Crème brûlée à Paris  "), "creme-brulee-a-paris");
        assert_eq!(slugify("!!!"), "");
        assert!(slugify(&"word ".repeat(100)).len() <= MAX_SLUG);
        assert!(is_slug("my-first-post"));
        for bad in ["", "Caps", "two--hyphens", "-lead", "trail-", "sp ace", "ünï"] {
            assert!(!is_slug(bad), "{bad}");
        }
    }

    #[test]
    fn scheduling_needs_a_future_time() {
        let now = Utc::now();
        let input = |status: &str, at: Option<DateTime<Utc>>| PostInput {
            title: "T".into(),
            status: status.into(),
            publish_at: at,
            ..Default::default()
        };
        assert!(clean(input("scheduled", None), now).is_err());
        assert!(clean(input("scheduled", Some(now - chrono::Duration::minutes(1))), now).is_err());
        assert!(clean(input("scheduled", Some(now + chrono::Duration::hours(1))), now).is_ok());
        assert!(clean(input("live", None), now).is_err());
        assert!(clean(PostInput { title: "  ".into(), ..Default::default() }, now).is_err());
    }
}
