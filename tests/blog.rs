//! The blog: `GET /api/blog`, the list page with search, filters and pagination, and
//! sanitised article pages.
use chrono::{Duration, TimeZone, Utc};
use reelfind::entities::blog_post;
use sea_orm::{ActiveModelTrait, ConnectionTrait, EntityTrait, Set};

use crate::pages::json_ld;
use crate::support::TestApp;

struct NewPost<'a> {
    slug: &'a str,
    title: &'a str,
    category: &'a str,
    tags: &'a str,
    content: &'a str,
    published: bool,
    days_ago: i64,
}

impl Default for NewPost<'_> {
    fn default() -> Self {
        Self { slug: "", title: "", category: "Guides", tags: "", content: "Some words.", published: true, days_ago: 0 }
    }
}

async fn add_post(app: &TestApp, p: NewPost<'_>) {
    let at = Utc.with_ymd_and_hms(2026, 11, 20, 12, 0, 0).unwrap() - Duration::days(p.days_ago);
    blog_post::ActiveModel {
        slug: Set(p.slug.into()),
        title: Set(p.title.into()),
        summary: Set(String::new()),
        content: Set(p.content.into()),
        category: Set(p.category.into()),
        tags: Set(p.tags.into()),
        featured_image: Set(None),
        author_name: Set(None),
        published_at: Set(p.published.then_some(at)),
        created_at: Set(at),
        updated_at: Set(at),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
}

/// A blog with `n` posts "Post 1" (newest) .. "Post n", categories alternating.
async fn app_with_posts(n: usize) -> TestApp {
    let app = TestApp::new().await;
    blog_post::Entity::delete_many().exec(&app.db).await.unwrap();
    for i in 1..=n {
        let slug = format!("post-{i}");
        let title = format!("Post {i}");
        add_post(
            &app,
            NewPost {
                slug: &slug,
                title: &title,
                category: if i % 2 == 0 { "Technology" } else { "Guides" },
                tags: if i % 5 == 0 { "five,tips" } else { "tips" },
                days_ago: i as i64,
                ..Default::default()
            },
        )
        .await;
    }
    app
}

#[tokio::test]
async fn a_fresh_site_has_seeded_articles() {
    let app = TestApp::new().await;
    let res = app.get("/api/blog").await;
    assert_eq!(res.status, 200);
    let body = res.json();
    assert!(body["total"].as_u64().unwrap() >= 5, "{body}");
    let first = &body["posts"][0];
    for field in [
        "id",
        "slug",
        "title",
        "summary",
        "excerpt",
        "content",
        "category",
        "createdAt",
        "readTimeMinutes",
        "authorName",
        "author",
    ] {
        assert!(!first[field].is_null(), "post lacks {field}: {first}");
    }
    assert!(first.get("featuredImage").is_some() && first.get("imageUrl").is_some());
    assert_eq!(first["author"], "Reelfind Team");
    assert_eq!(first["authorName"], "Reelfind Team");
    // Every seeded article renders.
    for post in body["posts"].as_array().unwrap() {
        let page = app.get(&format!("/blog/{}", post["slug"].as_str().unwrap())).await;
        assert_eq!(page.status, 200, "{}", post["slug"]);
    }
}

#[tokio::test]
async fn api_paginates_by_offset_and_limit() {
    let app = app_with_posts(20).await;
    let page = |q: &'static str| {
        let app = &app;
        async move { app.get(&format!("/api/blog{q}")).await.json() }
    };
    let p1 = page("").await;
    assert_eq!(p1["total"], 20);
    assert_eq!(p1["posts"].as_array().unwrap().len(), 9, "limit defaults to 9");
    assert_eq!(p1["posts"][0]["title"], "Post 1", "newest first");
    let p3 = page("?offset=18&limit=9").await;
    let titles: Vec<&str> = p3["posts"].as_array().unwrap().iter().map(|p| p["title"].as_str().unwrap()).collect();
    assert_eq!(titles, ["Post 19", "Post 20"]);
    assert_eq!(page("?limit=1000").await["posts"].as_array().unwrap().len(), 20, "limit is capped at 50");
    assert_eq!(page("?limit=0").await["posts"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn api_filters_by_search_category_and_tag() {
    let app = app_with_posts(20).await;
    add_post(
        &app,
        NewPost {
            slug: "heist",
            title: "The Great Heist Scene",
            content: "A 100% match on a vault.",
            ..Default::default()
        },
    )
    .await;
    let search = app.get("/api/blog?search=heist").await.json();
    assert_eq!(search["total"], 1);
    assert_eq!(search["posts"][0]["slug"], "heist");
    assert_eq!(app.get("/api/blog?search=HEIST%20scene").await.json()["total"], 1, "case-insensitive");
    assert_eq!(app.get("/api/blog?search=100%25").await.json()["total"], 1, "% is literal");
    assert_eq!(app.get("/api/blog?search=%25%25%25").await.json()["total"], 0);
    assert_eq!(app.get("/api/blog?search=_").await.json()["total"], 0, "_ is literal");

    let tech = app.get("/api/blog?category=Technology").await.json();
    assert_eq!(tech["total"], 10);
    assert!(tech["posts"].as_array().unwrap().iter().all(|p| p["category"] == "Technology"));
    assert_eq!(app.get("/api/blog?category=technology").await.json()["total"], 10);

    let five = app.get("/api/blog?tag=five").await.json();
    assert_eq!(five["total"], 4);
    assert_eq!(app.get("/api/blog?tag=fiv").await.json()["total"], 0, "whole tags only");
    assert_eq!(app.get("/api/blog?category=Guides&search=Post%201").await.json()["total"], 6); // 1,11,13,15,17,19
}

#[tokio::test]
async fn read_time_author_and_excerpt() {
    let app = app_with_posts(0).await;
    let long = "word ".repeat(401);
    add_post(&app, NewPost { slug: "long", title: "Long", content: &long, ..Default::default() }).await;
    add_post(
        &app,
        NewPost { slug: "short", title: "Short", content: "Just **three** words.", days_ago: 1, ..Default::default() },
    )
    .await;
    let body = app.get("/api/blog").await.json();
    assert_eq!(body["posts"][0]["readTimeMinutes"], 3);
    assert_eq!(body["posts"][1]["readTimeMinutes"], 1);
    assert_eq!(body["posts"][1]["excerpt"], "Just three words.");
    app.state.settings.set(&app.db, "site_name", "Scenefinder").await.unwrap();
    assert_eq!(app.get("/api/blog").await.json()["posts"][0]["author"], "Scenefinder Team");
}

#[tokio::test]
async fn unpublished_posts_stay_hidden() {
    let app = app_with_posts(1).await;
    add_post(&app, NewPost { slug: "draft", title: "Draft", published: false, ..Default::default() }).await;
    assert_eq!(app.get("/api/blog").await.json()["total"], 1);
    assert_eq!(app.get("/blog/draft").await.status, 404);
    assert!(!app.get("/sitemap.xml").await.text().contains("/blog/draft"));
    assert!(app.get("/sitemap.xml").await.text().contains("/blog/post-1"));
}

#[tokio::test]
async fn list_page_paginates_in_nines_with_a_featured_first_post() {
    let app = app_with_posts(20).await;
    let p1 = app.get("/blog").await;
    assert_eq!(p1.status, 200);
    assert_eq!(p1.select_text(".featured-post h2").as_deref(), Some("Post 1"));
    assert_eq!(p1.count(".post-grid .post-card"), 8);
    assert_eq!(p1.select_all_text(".page-numbers .page-link"), ["1 (current page)", "Page 2", "Page 3"]);
    assert_eq!(p1.select_attr("a[rel=next]", "href").as_deref(), Some("/blog?page=2"));
    assert_eq!(p1.count("a[rel=prev]"), 0);
    assert_eq!(p1.select_text(".page-prev.is-disabled").as_deref(), Some("Previous"));

    let p2 = app.get("/blog?page=2").await;
    assert_eq!(p2.count(".featured-post"), 0);
    assert_eq!(p2.count(".post-card"), 9);
    assert_eq!(p2.select_text(".post-card h3").as_deref(), Some("Post 10"));
    assert_eq!(p2.select_attr("a[rel=prev]", "href").as_deref(), Some("/blog"));
    assert_eq!(p2.select_attr("a[rel=next]", "href").as_deref(), Some("/blog?page=3"));
    assert_eq!(p2.select_attr("link[rel=canonical]", "href").as_deref(), Some("http://localhost:3000/blog?page=2"));

    let p3 = app.get("/blog?page=3").await;
    assert_eq!(p3.select_all_text(".post-card h3"), ["Post 19", "Post 20"]);
    assert_eq!(p3.count("a[rel=next]"), 0);

    let beyond = app.get("/blog?page=9").await;
    assert_eq!(beyond.status, 200);
    assert!(beyond.select_text(".empty-state").unwrap().contains("No Blog Posts Found"));
    assert_eq!(app.get("/blog?page=abc").await.select_text(".featured-post h2").as_deref(), Some("Post 1"));
}

#[tokio::test]
async fn list_page_search_and_category_filter() {
    let app = app_with_posts(20).await;
    let res = app.get("/blog?category=Technology").await;
    // SPEC §2: All plus the categories present on the loaded page (only Technology here).
    let chips = res.select_all_text(".filter-bar a");
    assert_eq!(chips, ["All", "Technology"]);
    let mixed = app.get("/blog").await;
    assert_eq!(mixed.select_all_text(".filter-bar a"), ["All", "Guides", "Technology"]);
    assert_eq!(res.select_text(".filter-bar a[aria-current]").as_deref(), Some("Technology"));
    assert_eq!(res.select_text(".featured-post h2").as_deref(), Some("Post 2"));
    assert_eq!(res.count(".post-card"), 8);
    assert_eq!(res.select_attr("a[rel=next]", "href").as_deref(), Some("/blog?category=Technology&page=2"));
    assert!(res.select_text(".result-count").unwrap().starts_with("10 articles"));

    // Changing search or category starts again at page 1.
    let on_page_2 = app.get("/blog?search=Post&page=2").await;
    assert_eq!(
        on_page_2.select_attr(".filter-bar a[href*='Guides']", "href").as_deref(),
        Some("/blog?search=Post&category=Guides")
    );
    assert_eq!(on_page_2.select_attr("form.search-form", "action").as_deref(), Some("/blog"));
    assert_eq!(on_page_2.count("form.search-form input[name=page]"), 0);

    let search = app.get("/blog?search=Post+17").await;
    assert_eq!(search.select_text(".featured-post h2").as_deref(), Some("Post 17"));
    assert_eq!(search.select_all_text(".filter-bar a"), ["All", "Guides"], "Post 17 is the only one shown");
    assert_eq!(search.select_attr("input[name=search]", "value").as_deref(), Some("Post 17"));
    assert_eq!(search.select_attr("meta[name=robots]", "content").as_deref(), Some("noindex"));

    let none = app.get("/blog?search=zebra").await;
    assert_eq!(none.status, 200);
    assert_eq!(none.select_text(".empty-state h2").as_deref(), Some("No Blog Posts Found"));
    assert_eq!(none.select_attr(".empty-state a", "href").as_deref(), Some("/blog"));
    assert_eq!(none.select_text(".empty-state a").as_deref(), Some("Clear Filters"));
}

#[tokio::test]
async fn list_page_shows_an_error_state_when_the_database_fails() {
    let app = app_with_posts(1).await;
    // The redirects table refers to the posts (PostgreSQL refuses to drop a referenced table).
    app.db.execute_unprepared("DROP TABLE blog_slug_redirects").await.unwrap();
    app.db.execute_unprepared("DROP TABLE blog_posts").await.unwrap();
    let res = app.get("/blog?search=x").await;
    assert_eq!(res.status, 503);
    assert_eq!(res.select_text(".empty-state h2").as_deref(), Some("Unable to Load Blog"));
    assert_eq!(res.select_text(".empty-state a").as_deref(), Some("Try Again"));
    assert_eq!(res.select_attr(".empty-state a", "href").as_deref(), Some("/blog?search=x"));
    assert_eq!(app.get("/api/blog").await.status, 500);
}

#[tokio::test]
async fn article_markdown_is_sanitised() {
    let app = app_with_posts(0).await;
    let evil = "# Heading\n\nIntro paragraph.\n\n<script>alert('x')</script>\n\n<img src=\"x.png\" onerror=\"alert(1)\">\n\n\
                [click me](javascript:alert(2)) and <a href=\"javascript:alert(3)\" onclick=\"alert(4)\">raw</a>\n\n\
                <iframe src=\"https://evil.example\"></iframe>\n\n[fine](https://example.com/ok)";
    add_post(&app, NewPost { slug: "evil", title: "Evil Post", content: evil, ..Default::default() }).await;
    let res = app.get("/blog/evil").await;
    assert_eq!(res.status, 200);
    let doc = res.html();
    let prose = doc.select(&scraper::Selector::parse(".prose").unwrap()).next().unwrap().inner_html();
    let lower = prose.to_lowercase();
    assert!(!lower.contains("<script"), "{prose}");
    assert!(!lower.contains("onerror"), "{prose}");
    assert!(!lower.contains("onclick"), "{prose}");
    assert!(!lower.contains("javascript:"), "{prose}");
    assert!(!lower.contains("<iframe"), "{prose}");
    assert!(lower.contains("href=\"https://example.com/ok\""), "{prose}");
    assert_eq!(res.count(".prose h2"), 1, "the article's own h1 becomes h2");
    assert_eq!(res.count("h1"), 1);
    // Whole page: no script carries the post's payload.
    assert_eq!(res.count(".prose script, .prose iframe, .prose [onerror], .prose [onclick]"), 0);
    assert!(res.select_all_text("script").iter().all(|s| !s.contains("alert(")));
}

#[tokio::test]
async fn article_page_has_meta_and_article_json_ld() {
    let app = TestApp::new().await;
    let res = app.get("/blog/library-engine-finds-the-exact-second").await;
    assert_eq!(res.status, 200);
    assert_eq!(res.select_text("h1").as_deref(), Some("How the Library Engine Finds the Exact Second"));
    assert_eq!(
        res.select_attr("link[rel=canonical]", "href").as_deref(),
        Some("http://localhost:3000/blog/library-engine-finds-the-exact-second")
    );
    assert_eq!(res.select_attr("meta[property='og:type']", "content").as_deref(), Some("article"));
    let docs = json_ld(&res);
    let article = docs.iter().find(|d| d["@type"] == "Article").expect("Article JSON-LD");
    assert_eq!(article["headline"], "How the Library Engine Finds the Exact Second");
    assert_eq!(article["author"]["name"], "Reelfind Team");
    assert!(article["datePublished"].as_str().unwrap().starts_with("2026-10-20"));
    assert_eq!(article["mainEntityOfPage"]["@id"], "http://localhost:3000/blog/library-engine-finds-the-exact-second");
    assert!(docs.iter().any(|d| d["@type"] == "BreadcrumbList"));
    assert!(res.select_text(".post-meta").unwrap().contains("min read"));
    assert!(res.count(".prose h2") >= 2);
    assert!(res.count("section .post-card") >= 1, "related articles");
}

#[tokio::test]
async fn unknown_article_is_404() {
    let app = TestApp::new().await;
    let res = app.get("/blog/no-such-article").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.select_text("h1").as_deref(), Some("404 Page Not Found"));
}
