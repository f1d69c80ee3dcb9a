//! Blog posts as visitors see them: listing with search and filters, single articles,
//! the feed and sitemap entries, read time and sanitised Markdown rendering.
//!
//! A post is public when `published_at <= now`, decided by every query at the moment it
//! runs: a scheduled post appears in the list, the article page, the feed and the sitemap
//! together, on every node, without a job. Authoring lives in `blog_admin`.
use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use sea_orm::sea_query::{Expr, ExprTrait, Func, LikeExpr};
use sea_orm::{
    ColumnTrait, Condition, ConnectionTrait, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, QuerySelect,
};

use crate::entities::blog_post;

/// Posts per page of the list (SPEC section 9).
pub const PAGE_SIZE: u64 = 9;
/// Upper bound of `limit` in `GET /api/blog`.
pub const MAX_LIMIT: u64 = 50;
const WORDS_PER_MINUTE: usize = 200;

/// Filters of a list request. Blank strings count as "no filter".
#[derive(Debug, Clone, Default)]
pub struct ListQuery {
    pub offset: u64,
    pub limit: u64,
    pub tag: Option<String>,
    pub category: Option<String>,
    pub search: Option<String>,
}

impl ListQuery {
    fn clean(s: &Option<String>) -> Option<String> {
        s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
    }
}

/// Posts visitors may see right now: published, with a publication time that has come.
pub fn visible() -> Condition {
    Condition::all()
        .add(blog_post::Column::PublishedAt.is_not_null())
        .add(blog_post::Column::PublishedAt.lte(chrono::Utc::now()))
}

/// One page of published posts, newest first, and how many match in total.
pub async fn list(db: &impl ConnectionTrait, q: &ListQuery) -> Result<(Vec<blog_post::Model>, u64), sea_orm::DbErr> {
    let mut cond = visible();
    if let Some(category) = ListQuery::clean(&q.category) {
        cond = cond.add(lower(blog_post::Column::Category).eq(category.to_lowercase()));
    }
    if let Some(tag) = ListQuery::clean(&q.tag) {
        // Tags are stored comma-separated: match a whole item, not a substring of one.
        let t = escape_like(&tag.to_lowercase());
        let col = || lower(blog_post::Column::Tags);
        cond = cond.add(
            Condition::any()
                .add(col().like(LikeExpr::new(t.clone()).escape('\\')))
                .add(col().like(LikeExpr::new(format!("{t},%")).escape('\\')))
                .add(col().like(LikeExpr::new(format!("%,{t}")).escape('\\')))
                .add(col().like(LikeExpr::new(format!("%,{t},%")).escape('\\'))),
        );
    }
    if let Some(search) = ListQuery::clean(&q.search) {
        let pattern = format!("%{}%", escape_like(&search.to_lowercase()));
        let like = |c: blog_post::Column| lower(c).like(LikeExpr::new(pattern.clone()).escape('\\'));
        cond = cond.add(
            Condition::any()
                .add(like(blog_post::Column::Title))
                .add(like(blog_post::Column::Summary))
                .add(like(blog_post::Column::Content))
                .add(like(blog_post::Column::Category))
                .add(like(blog_post::Column::Tags)),
        );
    }
    let select = blog_post::Entity::find().filter(cond);
    let total = select.clone().count(db).await?;
    let limit = q.limit.clamp(1, MAX_LIMIT);
    let posts = select
        .order_by_desc(blog_post::Column::PublishedAt)
        .order_by_desc(blog_post::Column::Id)
        .offset(crate::db::sql_offset(q.offset))
        .limit(limit)
        .all(db)
        .await?;
    Ok((posts, total))
}

/// A published post by slug.
pub async fn find_published(db: &impl ConnectionTrait, slug: &str) -> Result<Option<blog_post::Model>, sea_orm::DbErr> {
    blog_post::Entity::find().filter(blog_post::Column::Slug.eq(slug)).filter(visible()).one(db).await
}

/// The current slug of the published post that used to live at `slug`, for a 301.
pub async fn redirect_for(db: &impl ConnectionTrait, slug: &str) -> Result<Option<String>, sea_orm::DbErr> {
    use crate::entities::blog_slug_redirect;
    let Some(r) = blog_slug_redirect::Entity::find_by_id(slug.to_owned()).one(db).await? else { return Ok(None) };
    Ok(blog_post::Entity::find_by_id(r.post_id).filter(visible()).one(db).await?.map(|p| p.slug))
}

/// Up to `n` other published posts, the same category first, then the newest.
pub async fn related(
    db: &impl ConnectionTrait,
    post: &blog_post::Model,
    n: u64,
) -> Result<Vec<blog_post::Model>, sea_orm::DbErr> {
    let others = || {
        blog_post::Entity::find()
            .filter(visible())
            .filter(blog_post::Column::Id.ne(post.id))
            .order_by_desc(blog_post::Column::PublishedAt)
    };
    let mut out = others().filter(blog_post::Column::Category.eq(post.category.clone())).limit(n).all(db).await?;
    if (out.len() as u64) < n {
        let more = others()
            .filter(blog_post::Column::Category.ne(post.category.clone()))
            .limit(n - out.len() as u64)
            .all(db)
            .await?;
        out.extend(more);
    }
    Ok(out)
}

/// When a post last changed as visitors see it: its last save, or its publication when a
/// scheduled post went live after it was saved.
pub fn last_modified(p: &blog_post::Model) -> chrono::DateTime<chrono::Utc> {
    p.published_at.map_or(p.updated_at, |at| Ord::max(at, p.updated_at))
}

/// Slug and last change of every published, indexable post, for the sitemap.
pub async fn sitemap_entries(
    db: &impl ConnectionTrait,
) -> Result<Vec<(String, chrono::DateTime<chrono::Utc>)>, sea_orm::DbErr> {
    Ok(blog_post::Entity::find()
        .filter(visible())
        .filter(blog_post::Column::Noindex.eq(false))
        .order_by_desc(blog_post::Column::PublishedAt)
        .all(db)
        .await?
        .iter()
        .map(|p| (p.slug.clone(), last_modified(p)))
        .collect())
}

/// The newest `n` published posts, for the feed.
pub async fn feed_entries(db: &impl ConnectionTrait, n: u64) -> Result<Vec<blog_post::Model>, sea_orm::DbErr> {
    blog_post::Entity::find()
        .filter(visible())
        .order_by_desc(blog_post::Column::PublishedAt)
        .order_by_desc(blog_post::Column::Id)
        .limit(n)
        .all(db)
        .await
}

fn lower(c: blog_post::Column) -> Expr {
    Expr::from(Func::lower(Expr::col((blog_post::Entity, c))))
}

/// Escapes `%`, `_` and the escape character itself for a LIKE pattern.
pub fn escape_like(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Minutes to read `markdown` at 200 words a minute, rounded up, at least 1.
pub fn read_time_minutes(markdown: &str) -> u32 {
    let words = markdown.split_whitespace().filter(|w| w.chars().any(char::is_alphanumeric)).count();
    words.div_ceil(WORDS_PER_MINUTE).max(1) as u32
}

/// Plain text of `markdown`, for excerpts and descriptions.
pub fn plain_text(markdown: &str) -> String {
    let mut out = String::new();
    for ev in Parser::new(markdown) {
        match ev {
            Event::Text(t) | Event::Code(t) => out.push_str(&t),
            Event::SoftBreak | Event::HardBreak | Event::End(_) => out.push(' '),
            _ => {}
        }
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first `max` characters of `text`, cut at a word boundary, with an ellipsis when cut.
pub fn truncate_words(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let cut: String = text.chars().take(max).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!("{}…", cut.trim_end_matches(|c: char| c.is_ascii_punctuation() || c.is_whitespace()))
}

/// How a post appears in search results: `<title>` and meta description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostMeta {
    pub title: String,
    pub description: String,
}

/// The admin's overrides when set, else "{title} | {site}" and the summary (or the start of
/// the article) cut at 160 characters. The article page and the SEO checks both use this.
pub fn post_meta(post: &blog_post::Model, site_name: &str) -> PostMeta {
    let nonblank = |s: &Option<String>| s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
    PostMeta {
        title: nonblank(&post.meta_title).unwrap_or_else(|| format!("{} | {site_name}", post.title)),
        description: nonblank(&post.meta_description).unwrap_or_else(|| truncate_words(&excerpt(post), 160)),
    }
}

/// The summary when there is one, else the start of the article.
pub fn excerpt(post: &blog_post::Model) -> String {
    let s = post.summary.trim();
    if s.is_empty() { truncate_words(&plain_text(&post.content), 180) } else { s.to_owned() }
}

/// Renders Markdown to HTML that is safe to embed: raw HTML, scripts, event handlers and
/// `javascript:` URLs are removed by ammonia. Level-1 headings become level 2, because
/// the article page owns the only `<h1>`.
pub fn render_markdown(markdown: &str) -> String {
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let events = Parser::new_ext(markdown, opts).map(|ev| match ev {
        Event::Start(Tag::Heading { level: HeadingLevel::H1, id, classes, attrs }) => {
            Event::Start(Tag::Heading { level: HeadingLevel::H2, id, classes, attrs })
        }
        Event::End(TagEnd::Heading(HeadingLevel::H1)) => Event::End(TagEnd::Heading(HeadingLevel::H2)),
        other => other,
    });
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events);
    ammonia::Builder::default().link_rel(Some("noopener noreferrer nofollow")).clean(&html).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_time_rounds_up_with_a_minimum_of_one() {
        assert_eq!(read_time_minutes(""), 1);
        assert_eq!(read_time_minutes(&"word ".repeat(200)), 1);
        assert_eq!(read_time_minutes(&"word ".repeat(201)), 2);
        assert_eq!(read_time_minutes(&"word ".repeat(1000)), 5);
    }

    #[test]
    fn markdown_is_sanitised() {
        let html = render_markdown(
            "# Title\n\n<script>alert(1)</script>\n\n<img src=x onerror=\"alert(2)\">\n\n[click](javascript:alert(3)) [ok](https://example.com)",
        );
        assert!(!html.contains("<script"), "{html}");
        assert!(!html.contains("onerror"), "{html}");
        assert!(!html.contains("javascript:"), "{html}");
        assert!(html.contains("<h2>Title</h2>"), "{html}");
        assert!(html.contains("href=\"https://example.com\""), "{html}");
    }

    #[test]
    fn like_patterns_are_escaped() {
        assert_eq!(escape_like("100%_a\\b"), "100\\%\\_a\\\\b");
    }

    #[test]
    fn truncation_keeps_whole_words() {
        assert_eq!(truncate_words("short", 10), "short");
        assert_eq!(truncate_words("one two three four", 10), "one two…");
    }
}
