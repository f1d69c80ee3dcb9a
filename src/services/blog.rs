//! Blog posts: listing with search and filters, single articles, read time and
//! sanitised Markdown rendering.
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

/// One page of published posts, newest first, and how many match in total.
pub async fn list(db: &impl ConnectionTrait, q: &ListQuery) -> Result<(Vec<blog_post::Model>, u64), sea_orm::DbErr> {
    let mut cond = Condition::all().add(blog_post::Column::Published.eq(true));
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
        .order_by_desc(blog_post::Column::CreatedAt)
        .order_by_desc(blog_post::Column::Id)
        .offset(q.offset)
        .limit(limit)
        .all(db)
        .await?;
    Ok((posts, total))
}

/// Every category that has a published post, alphabetically.
pub async fn categories(db: &impl ConnectionTrait) -> Result<Vec<String>, sea_orm::DbErr> {
    let mut cats: Vec<String> = blog_post::Entity::find()
        .select_only()
        .column(blog_post::Column::Category)
        .distinct()
        .filter(blog_post::Column::Published.eq(true))
        .into_tuple::<String>()
        .all(db)
        .await?
        .into_iter()
        .filter(|c| !c.trim().is_empty())
        .collect();
    cats.sort_by_key(|c| c.to_lowercase());
    cats.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    Ok(cats)
}

/// A published post by slug.
pub async fn find_published(db: &impl ConnectionTrait, slug: &str) -> Result<Option<blog_post::Model>, sea_orm::DbErr> {
    blog_post::Entity::find()
        .filter(blog_post::Column::Slug.eq(slug))
        .filter(blog_post::Column::Published.eq(true))
        .one(db)
        .await
}

/// Up to `n` other published posts, the same category first, then the newest.
pub async fn related(
    db: &impl ConnectionTrait,
    post: &blog_post::Model,
    n: u64,
) -> Result<Vec<blog_post::Model>, sea_orm::DbErr> {
    let others = || {
        blog_post::Entity::find()
            .filter(blog_post::Column::Published.eq(true))
            .filter(blog_post::Column::Id.ne(post.id))
            .order_by_desc(blog_post::Column::CreatedAt)
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

/// Slug and last change of every published post, for the sitemap.
pub async fn sitemap_entries(
    db: &impl ConnectionTrait,
) -> Result<Vec<(String, chrono::DateTime<chrono::Utc>)>, sea_orm::DbErr> {
    blog_post::Entity::find()
        .select_only()
        .column(blog_post::Column::Slug)
        .column(blog_post::Column::UpdatedAt)
        .filter(blog_post::Column::Published.eq(true))
        .order_by_desc(blog_post::Column::CreatedAt)
        .into_tuple()
        .all(db)
        .await
}

fn lower(c: blog_post::Column) -> Expr {
    Expr::from(Func::lower(Expr::col((blog_post::Entity, c))))
}

/// Escapes `%`, `_` and the escape character itself for a LIKE pattern.
fn escape_like(s: &str) -> String {
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
