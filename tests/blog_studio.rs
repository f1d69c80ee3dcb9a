//! The blog studio: authoring through `/api/admin/blog`, what visitors, the feed and the
//! sitemap see of each state, slugs and redirects, safe concurrent edits, pictures, and the
//! Search appearance tab.
use axum::body::Body;
use axum::http::{Request, header};
use chrono::{Duration, Utc};
use reelfind::entities::blog_post;
use sea_orm::{ActiveModelTrait, EntityTrait, Set};
use serde_json::{Value, json};

use crate::accounts::register;
use crate::admin::make_admin;
use crate::pages::json_ld;
use crate::support::{TestApp, TestResponse};

async fn send_json(app: &TestApp, method: &str, path: &str, body: &Value) -> TestResponse {
    app.send(
        Request::builder()
            .method(method)
            .uri(path)
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap(),
    )
    .await
}

fn post_body(title: &str, status: &str) -> Value {
    json!({
        "title": title,
        "summary": format!("What {title} is about, in one sentence long enough for a description."),
        "content": "## Intro\n\nSome **bold** words about scenes.\n\n<script>alert(1)</script>",
        "category": "Guides",
        "tags": ["tips", "screens"],
        "status": status,
    })
}

/// Creates a post as the signed-in admin; the created post.
async fn create(app: &TestApp, body: Value) -> Value {
    let res = send_json(app, "POST", "/api/admin/blog", &body).await;
    assert_eq!(res.status, 201, "{}", res.text());
    res.json()
}

async fn save(app: &TestApp, post: &Value, changes: Value) -> TestResponse {
    let mut body = post.clone();
    for (k, v) in changes.as_object().unwrap() {
        body[k] = v.clone();
    }
    send_json(app, "PUT", &format!("/api/admin/blog/{}", post["id"]), &body).await
}

/// What visitors get: the article status, and whether the list, API, feed and sitemap name it.
async fn public_view(app: &TestApp, slug: &str) -> (u16, bool, bool, bool, bool) {
    let page = app.get(&format!("/blog/{slug}")).await.status.as_u16();
    let path = format!("/blog/{slug}");
    let list = app
        .get("/blog")
        .await
        .html()
        .select(&scraper::Selector::parse("a").unwrap())
        .any(|a| a.value().attr("href") == Some(path.as_str()));
    let api = app.get("/api/blog?limit=50").await.json()["posts"].as_array().unwrap().iter().any(|p| p["slug"] == slug);
    let feed =
        app.get("/blog/feed.xml").await.text().contains(&format!("<link>http://localhost:3000/blog/{slug}</link>"));
    let sitemap = app.get("/sitemap.xml").await.text().contains(&format!("/blog/{slug}</loc>"));
    (page, list, api, feed, sitemap)
}

#[tokio::test]
async fn studio_apis_refuse_non_admins() {
    let app = TestApp::new().await;
    let calls: &[(&str, &str)] = &[
        ("GET", "/api/admin/blog"),
        ("POST", "/api/admin/blog"),
        ("GET", "/api/admin/blog/1"),
        ("PUT", "/api/admin/blog/1"),
        ("DELETE", "/api/admin/blog/1"),
        ("POST", "/api/admin/blog/preview"),
        ("POST", "/api/admin/blog/images"),
        ("GET", "/api/admin/testimonials"),
        ("PATCH", "/api/admin/testimonials/1"),
        ("DELETE", "/api/admin/testimonials/1"),
    ];
    let pages: &[(&str, &str)] = &[
        ("GET", "/admin/blog"),
        ("GET", "/admin/blog/new"),
        ("GET", "/admin/blog/1"),
        ("GET", "/admin/blog/1/preview"),
        ("GET", "/admin/seo"),
        ("POST", "/admin/seo"),
        ("POST", "/admin/seo/image"),
        ("GET", "/admin/testimonials"),
    ];
    for signed_in in [false, true] {
        if signed_in {
            register(&app, "visitor", "secret1").await;
        }
        for (m, p) in calls {
            let res = send_json(&app, m, p, &json!({})).await;
            assert_eq!(res.status, if signed_in { 403 } else { 401 }, "{m} {p}");
        }
        for (m, p) in pages {
            let res = send_json(&app, m, p, &json!({})).await;
            assert_eq!(res.status, 303, "{m} {p}");
            assert_eq!(res.header("location").as_deref(), Some("/admin"), "{m} {p}");
        }
    }
    assert_eq!(app.get("/api/blog").await.json()["total"], 6, "only the seeded posts");
}

#[tokio::test]
async fn a_draft_stays_private_until_published() {
    let app = TestApp::new().await;
    make_admin(&app, "editor").await;
    let draft = create(&app, post_body("Scene Hunting 101", "draft")).await;
    assert_eq!(draft["slug"], "scene-hunting-101", "made from the title");
    assert_eq!(draft["status"], "draft");
    assert_eq!(draft["version"], 1);
    assert_eq!(draft["readTimeMinutes"], 1);
    assert_eq!(public_view(&app, "scene-hunting-101").await, (404, false, false, false, false));

    // The admin previews it exactly as it will render, sanitised, never indexed or cached.
    let preview = app.get(&format!("/admin/blog/{}/preview", draft["id"])).await;
    assert_eq!(preview.status, 200);
    assert!(preview.select_text(".preview-banner").unwrap().starts_with("Preview of a draft"));
    assert_eq!(preview.select_text("h1").as_deref(), Some("Scene Hunting 101"));
    assert_eq!(preview.select_attr("meta[name=robots]", "content").as_deref(), Some("noindex"));
    assert_eq!(preview.header("cache-control").as_deref(), Some("private, no-store"));
    assert!(!preview.text().contains("<script>alert(1)"));
    let live =
        send_json(&app, "POST", "/api/admin/blog/preview", &json!({"content": "# Hi\n\n<img src=x onerror=alert(1)>"}))
            .await
            .json();
    assert_eq!(live["html"], "<h2>Hi</h2>\n<img src=\"x\">", "the article page's own sanitiser");

    let res = save(&app, &draft, json!({"status": "published"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let published = res.json();
    assert_eq!(published["status"], "published");
    assert_eq!(published["version"], 2);
    assert_eq!(public_view(&app, "scene-hunting-101").await, (200, true, true, true, true));
    let sitemap = app.get("/sitemap.xml").await.text();
    let today = Utc::now().format("%Y-%m-%d").to_string();
    assert!(sitemap.contains(&format!("/blog/scene-hunting-101</loc><lastmod>{today}")), "{sitemap}");
    let feed = app.get("/blog/feed.xml").await;
    assert_eq!(feed.header("content-type").as_deref(), Some("application/rss+xml; charset=utf-8"));
    assert!(feed.text().contains("<title>Scene Hunting 101</title>"));
    assert!(feed.text().contains("&lt;strong&gt;bold&lt;/strong&gt;"), "the full article, escaped");

    // Unpublish: gone again everywhere; delete: the address answers 404.
    let res = save(&app, &published, json!({"status": "draft"})).await;
    assert_eq!(res.status, 200);
    assert_eq!(public_view(&app, "scene-hunting-101").await, (404, false, false, false, false));
    assert_eq!(app.delete(&format!("/api/admin/blog/{}", draft["id"])).await.status, 204);
    assert_eq!(app.get(&format!("/api/admin/blog/{}", draft["id"])).await.status, 404);
    app.clear_cookies();
    let res = app.get(&format!("/admin/blog/{}/preview", draft["id"])).await;
    assert_eq!(res.status, 303);
}

#[tokio::test]
async fn a_scheduled_post_appears_at_its_time_without_a_restart() {
    let app = TestApp::new().await;
    make_admin(&app, "editor").await;
    let at = Utc::now() + Duration::hours(1);
    let mut body = post_body("Coming Soon", "scheduled");
    body["publishAt"] = json!(at.to_rfc3339());
    let post = create(&app, body).await;
    assert_eq!(post["status"], "scheduled");
    assert_eq!(public_view(&app, "coming-soon").await, (404, false, false, false, false));
    let list = app.get("/api/admin/blog?status=scheduled").await.json();
    assert_eq!(list["posts"][0]["slug"], "coming-soon");
    assert_eq!(list["counts"]["scheduled"], 1);

    // The clock reaches the publication time (moved in the database: no job, no restart).
    let mut row: blog_post::ActiveModel =
        blog_post::Entity::find_by_id(post["id"].as_i64().unwrap()).one(&app.db).await.unwrap().unwrap().into();
    row.published_at = Set(Some(Utc::now() - Duration::seconds(1)));
    row.update(&app.db).await.unwrap();
    assert_eq!(public_view(&app, "coming-soon").await, (200, true, true, true, true));
    let item = &app.get("/api/admin/blog").await.json()["posts"][0];
    assert_eq!(item["status"], "published");

    let mut past = post_body("Too Late", "scheduled");
    past["publishAt"] = json!((Utc::now() - Duration::minutes(5)).to_rfc3339());
    let res = send_json(&app, "POST", "/api/admin/blog", &past).await;
    assert_eq!(res.status, 400);
    assert!(res.json()["error"].as_str().unwrap().contains("has passed"));
}

#[tokio::test]
async fn slugs_are_unique_and_a_renamed_post_answers_301() {
    let app = TestApp::new().await;
    make_admin(&app, "editor").await;
    let first = create(&app, post_body("Same Title", "published")).await;
    let second = create(&app, post_body("Same Title", "draft")).await;
    assert_eq!(second["slug"], "same-title-2");
    let mut typed = post_body("Other", "draft");
    typed["slug"] = json!("same-title");
    let res = send_json(&app, "POST", "/api/admin/blog", &typed).await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.json()["error"],
        "The address /blog/same-title is already used by \u{201c}Same Title\u{201d}. Choose another slug."
    );
    typed["slug"] = json!("Bad Slug!");
    assert_eq!(send_json(&app, "POST", "/api/admin/blog", &typed).await.status, 400);

    // Retitling keeps the address; a typed new slug moves it and the old one redirects.
    let res = save(&app, &first, json!({"title": "A Better Title"})).await;
    let first = res.json();
    assert_eq!(first["slug"], "same-title");
    let res = save(&app, &first, json!({"slug": "a-better-title"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let old = app.get("/blog/same-title").await;
    assert_eq!(old.status, 301);
    assert_eq!(old.header("location").as_deref(), Some("/blog/a-better-title"));
    assert_eq!(app.get("/blog/a-better-title").await.status, 200);

    // A draft's old slug was never public: no redirect is kept for it.
    let res = save(&app, &second, json!({"slug": "second-take"})).await;
    assert_eq!(res.status, 200);
    assert_eq!(app.get("/blog/same-title-2").await.status, 404);

    // A new post may take the old address; it wins over the redirect.
    let mut reuse = post_body("Reuse", "published");
    reuse["slug"] = json!("same-title");
    create(&app, reuse).await;
    assert_eq!(app.get("/blog/same-title").await.status, 200);
}

#[tokio::test]
async fn a_stale_save_is_refused_with_who_changed_it() {
    let app = TestApp::new().await;
    make_admin(&app, "ada").await;
    let loaded = create(&app, post_body("Shared Draft", "draft")).await;
    // Ada saves from one tab...
    let res = save(&app, &loaded, json!({"content": "Ada's version"})).await;
    assert_eq!(res.status, 200);
    // ...Grace, another admin, saves what she loaded before.
    app.clear_cookies();
    make_admin(&app, "grace").await;
    let res = save(&app, &loaded, json!({"content": "Grace's version"})).await;
    assert_eq!(res.status, 409);
    let body = res.json();
    let msg = body["error"].as_str().unwrap();
    assert!(msg.starts_with("This post was changed by ada on "), "{msg}");
    assert!(msg.contains("your save was not applied"), "{msg}");
    assert_eq!(body["currentVersion"], 2);
    let now = app.get(&format!("/api/admin/blog/{}", loaded["id"])).await.json();
    assert_eq!(now["content"], "Ada's version", "nothing was overwritten");
    // Without a version a save is refused too.
    let mut no_version = now.clone();
    no_version.as_object_mut().unwrap().remove("version");
    assert_eq!(send_json(&app, "PUT", &format!("/api/admin/blog/{}", now["id"]), &no_version).await.status, 400);
    // With the current version it goes through, and the post says who saved it.
    let res = save(&app, &now, json!({"content": "Grace's merged version"})).await;
    assert_eq!(res.json()["updatedBy"], "grace");
}

#[tokio::test]
async fn list_filters_by_status_search_and_category() {
    let app = TestApp::new().await;
    make_admin(&app, "editor").await;
    create(&app, post_body("Alpha Draft", "draft")).await;
    let mut news = post_body("Beta News", "published");
    news["category"] = json!("News");
    create(&app, news).await;
    let drafts = app.get("/api/admin/blog?status=draft").await.json();
    assert_eq!(drafts["total"], 1);
    assert_eq!(drafts["posts"][0]["title"], "Alpha Draft");
    assert_eq!(app.get("/api/admin/blog?search=beta").await.json()["posts"][0]["title"], "Beta News");
    assert_eq!(app.get("/api/admin/blog?category=News").await.json()["total"], 1);
    assert_eq!(app.get("/api/admin/blog?status=bogus").await.status, 400);
    let page = app.get("/admin/blog?status=draft").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_all_text(".blog-table tbody td:first-child a"), vec!["Alpha Draft"]);
    assert_eq!(page.select_text(".blog-table .post-state").as_deref(), Some("draft"));
    let editor = app.get("/admin/blog/new").await;
    assert_eq!(editor.select_attr("[data-island=BlogEditor]", "data-island"), Some("BlogEditor".into()));
}

#[tokio::test]
async fn per_post_seo_reaches_the_page_the_sitemap_and_json_ld() {
    let app = TestApp::new().await;
    make_admin(&app, "editor").await;
    let mut body = post_body("Plain Title", "published");
    body["metaTitle"] = json!("Custom Search Title");
    body["metaDescription"] = json!("A description written for search results.");
    body["authorName"] = json!("Ada Lovelace");
    create(&app, body).await;
    app.clear_cookies();
    let page = app.get("/blog/plain-title").await;
    assert_eq!(page.select_text("title").as_deref(), Some("Custom Search Title"));
    assert_eq!(
        page.select_attr("meta[name=description]", "content").as_deref(),
        Some("A description written for search results.")
    );
    assert_eq!(page.count("meta[name=robots]"), 0);
    let article = json_ld(&page).into_iter().find(|d| d["@type"] == "Article").expect("Article JSON-LD");
    assert_eq!(article["headline"], "Plain Title");
    assert_eq!(article["author"], json!({"@type": "Person", "name": "Ada Lovelace"}));
    assert_eq!(article["description"], "A description written for search results.");
    assert_eq!(article["articleSection"], "Guides");
    assert_eq!(article["keywords"], "tips, screens");
    assert_eq!(article["mainEntityOfPage"]["@id"], "http://localhost:3000/blog/plain-title");
    assert!(article["datePublished"].as_str().unwrap().starts_with(&Utc::now().format("%Y-%m-%d").to_string()));

    make_admin(&app, "editor2").await;
    let post = app.get("/api/admin/blog?search=plain").await.json()["posts"][0]["id"].clone();
    let full = app.get(&format!("/api/admin/blog/{post}")).await.json();
    assert_eq!(save(&app, &full, json!({"noindex": true})).await.status, 200);
    app.clear_cookies();
    let page = app.get("/blog/plain-title").await;
    assert_eq!(page.select_attr("meta[name=robots]", "content").as_deref(), Some("noindex"));
    assert!(!app.get("/sitemap.xml").await.text().contains("/blog/plain-title"), "noindex posts leave the sitemap");
    assert!(app.get("/blog/feed.xml").await.text().contains("/blog/plain-title"), "but stay in the feed");
}

/// A JPEG with an EXIF block: orientation 6 (turn 90° clockwise) and a text that must not survive.
fn jpeg_with_exif(w: u32, h: u32) -> Vec<u8> {
    let img = image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x % 256) as u8, (y % 256) as u8, 128]));
    let mut plain = Vec::new();
    image::DynamicImage::ImageRgb8(img)
        .write_to(&mut std::io::Cursor::new(&mut plain), image::ImageFormat::Jpeg)
        .unwrap();
    let secret = b"SecretCamera GPS 51.50N 0.12W\0";
    let mut tiff = b"MM\0\x2a\0\0\0\x08".to_vec();
    tiff.extend_from_slice(&[0, 2]); // two entries
    tiff.extend_from_slice(&[0x01, 0x0E, 0, 2]); // ImageDescription, ASCII
    tiff.extend_from_slice(&(secret.len() as u32).to_be_bytes());
    tiff.extend_from_slice(&38u32.to_be_bytes()); // offset of the text
    tiff.extend_from_slice(&[0x01, 0x12, 0, 3, 0, 0, 0, 1, 0, 6, 0, 0]); // Orientation = 6
    tiff.extend_from_slice(&[0, 0, 0, 0]); // no next IFD
    tiff.extend_from_slice(secret);
    let mut app1 = b"Exif\0\0".to_vec();
    app1.extend_from_slice(&tiff);
    let mut out = vec![0xFF, 0xD8, 0xFF, 0xE1];
    out.extend_from_slice(&((app1.len() + 2) as u16).to_be_bytes());
    out.extend_from_slice(&app1);
    out.extend_from_slice(&plain[2..]);
    out
}

async fn upload(app: &TestApp, path: &str, bytes: &[u8], filename: &str) -> TestResponse {
    let boundary = "XyZboundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"{filename}\"\r\nContent-Type: image/jpeg\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    app.send(
        Request::post(path)
            .header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={boundary}"))
            .body(Body::from(body))
            .unwrap(),
    )
    .await
}

fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

#[tokio::test]
async fn pictures_are_re_encoded_without_metadata_and_served_with_sizes() {
    let app = TestApp::new().await;
    make_admin(&app, "editor").await;
    let original = jpeg_with_exif(1000, 600);
    assert!(original.windows(12).any(|w| w == b"SecretCamera"));
    let res = upload(&app, "/api/admin/blog/images", &original, "holiday.jpg").await;
    assert_eq!(res.status, 201, "{}", res.text());
    let img = res.json();
    // Turned upright by its orientation: 1000x600 landscape becomes 600x1000 portrait.
    assert_eq!((img["width"].as_u64(), img["height"].as_u64()), (Some(600), Some(1000)));
    assert_eq!(img["widths"], json!([400, 600]));
    let url = img["url"].as_str().unwrap().to_owned();
    assert!(url.starts_with("/media/blog/") && url.ends_with("-600.jpg"), "{url}");
    assert!(img["srcset"].as_str().unwrap().contains("-400.jpg 400w"));

    let dir = app.data_dir().join("media/blog");
    let files = files_in(&dir);
    assert_eq!(files.len(), 2, "{files:?}");
    for f in &files {
        let bytes = std::fs::read(dir.join(f)).unwrap();
        assert!(!bytes.windows(4).any(|w| w == b"Exif"), "{f} keeps EXIF");
        assert!(!bytes.windows(12).any(|w| w == b"SecretCamera"), "{f} keeps the camera text");
        assert_eq!(image::guess_format(&bytes).unwrap(), image::ImageFormat::Jpeg);
    }
    let served = app.get(&url).await;
    assert_eq!(served.status, 200);
    assert_eq!(served.header("content-type").as_deref(), Some("image/jpeg"));
    assert_eq!(served.header("cache-control").as_deref(), Some("public, max-age=31536000, immutable"));
    assert_eq!(app.get("/media/blog/..%2Fsecret.key").await.status, 404);

    // A post with it: the card and the article carry srcset, width and height.
    let mut body = post_body("With Picture", "published");
    body["featuredImage"] = json!(url);
    create(&app, body).await;
    let article = app.get("/blog/with-picture").await;
    assert_eq!(article.select_attr(".article-image", "width").as_deref(), Some("600"));
    assert_eq!(article.select_attr(".article-image", "height").as_deref(), Some("1000"));
    assert!(article.select_attr(".article-image", "srcset").unwrap().contains("400w"));
    assert_eq!(
        article.select_attr("meta[property='og:image']", "content"),
        Some(format!("http://localhost:3000{url}"))
    );
    let list = app.get("/blog").await;
    assert!(list.select_attr(".featured-post img", "sizes").is_some());

    // Refused: not an image (whatever its name), damaged, too big, too small. Nothing is left behind.
    let res = upload(&app, "/api/admin/blog/images", b"#!/bin/sh\nrm -rf /\n", "photo.jpg").await;
    assert_eq!(res.status, 422);
    assert_eq!(res.json()["error"], "File type not supported. Please upload a JPEG, PNG, WebP or GIF image.");
    let res = upload(&app, "/api/admin/blog/images", &original[..original.len() / 3], "cut.jpg").await;
    assert_eq!(res.status, 422, "{}", res.text());
    let res = upload(&app, "/api/admin/blog/images", &vec![0xFFu8; 11 * 1024 * 1024], "huge.jpg").await;
    assert_eq!(res.status, 413);
    let res = upload(&app, "/api/admin/blog/images", &jpeg_with_exif(100, 80), "tiny.jpg").await;
    assert_eq!(res.status, 422);
    assert_eq!(files_in(&dir), files, "failed uploads leave no file");
    // A post cannot point its picture at something that is not an image URL.
    let mut bad = post_body("Bad Picture", "draft");
    bad["featuredImage"] = json!("javascript:alert(1)");
    assert_eq!(send_json(&app, "POST", "/api/admin/blog", &bad).await.status, 400);
}

async fn post_form(app: &TestApp, path: &str, body: &str) -> TestResponse {
    app.send(
        Request::post(path)
            .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
            .body(Body::from(body.to_owned()))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn search_appearance_overrides_change_the_rendered_pages() {
    let app = TestApp::new().await;
    let before = app.get("/about").await;
    let own_title = before.select_text("title").unwrap();
    make_admin(&app, "editor").await;
    let res = post_form(
        &app,
        "/admin/seo",
        "seo_about_title=About+Us+%E2%80%94+Scene+Finder&seo_about_description=Who+we+are+and+how+the+scene+finder+works.&seo_google_verification=abc123_XYZ&seo_robots=User-agent%3A+*%0ADisallow%3A+%2Fprivate",
    )
    .await;
    assert_eq!(res.status, 303, "{}", res.text());
    app.clear_cookies();
    let about = app.get("/about").await;
    assert_eq!(about.select_text("title").as_deref(), Some("About Us — Scene Finder"));
    assert_eq!(
        about.select_attr("meta[name=description]", "content").as_deref(),
        Some("Who we are and how the scene finder works.")
    );
    assert_eq!(
        about.select_attr("meta[property='og:description']", "content").as_deref(),
        Some("Who we are and how the scene finder works.")
    );
    assert_ne!(own_title, "About Us — Scene Finder");
    let home = app.get("/").await;
    assert_eq!(home.select_attr("meta[name=google-site-verification]", "content").as_deref(), Some("abc123_XYZ"));
    assert_eq!(about.count("meta[name=google-site-verification]"), 0);
    let robots = app.get("/robots.txt").await.text();
    assert_eq!(robots, "User-agent: *\nDisallow: /private\n\nSitemap: http://localhost:3000/sitemap.xml\n");

    // Clearing a field falls back to the page's own text; bad input is refused whole.
    make_admin(&app, "editor2").await;
    assert_eq!(post_form(&app, "/admin/seo", "seo_about_title=").await.status, 303);
    assert_eq!(app.get("/about").await.select_text("title"), Some(own_title));
    let res = post_form(&app, "/admin/seo", "seo_home_title=Changed&seo_robots=Disallow%3A+%2F").await;
    assert_eq!(res.status, 400);
    assert!(res.select_text(".admin-error").unwrap().contains("User-agent"));
    assert_ne!(app.get("/").await.select_text("title").as_deref(), Some("Changed"));

    // The checks cover posts: two posts with one title are flagged as duplicates.
    for _ in 0..2 {
        let mut b = post_body("Twin", "published");
        b["metaTitle"] = json!("Twin Title");
        create(&app, b).await;
    }
    let page = app.get("/admin/seo").await;
    assert_eq!(page.status, 200);
    let text = page.text();
    assert!(text.contains("same title as /blog/twin-2"), "duplicate post titles are flagged");
    assert!(page.select_all_text(".seo-table td:first-child").iter().any(|t| t == "/blog/twin"));
}

/// The Search appearance tab reads each page's metadata from the page's own table
/// (`views::page_meta`), not by rendering it: what it lists must be what a visitor gets.
#[tokio::test]
async fn the_seo_tab_lists_what_each_public_page_serves() {
    let app = TestApp::new().await;
    app.admin("editor").await;
    assert_eq!(post_form(&app, "/admin/seo", "seo_terms_description=Our+rules+in+plain+words.").await.status, 303);
    let tab = app.get("/admin/seo").await;
    assert_eq!(tab.status, 200);
    let doc = tab.html();
    let row_sel = scraper::Selector::parse(".seo-table tbody tr").unwrap();
    let td = scraper::Selector::parse("td").unwrap();
    let rows: Vec<Vec<String>> = doc
        .select(&row_sel)
        .map(|r| r.select(&td).map(|c| c.text().collect::<String>().trim().to_owned()).collect())
        .filter(|cells: &Vec<String>| cells[1].starts_with("page"))
        .collect();
    assert_eq!(rows.len(), 8, "{rows:?}");
    app.clear_cookies();
    for cells in rows {
        let page = app.get(&cells[0]).await;
        assert_eq!(page.status, 200, "{}", cells[0]);
        assert_eq!(page.select_text("title").as_deref(), Some(cells[2].as_str()), "title of {}", cells[0]);
        assert_eq!(
            page.select_attr("meta[name=description]", "content").as_deref(),
            Some(cells[3].as_str()),
            "description of {}",
            cells[0]
        );
        let noindex = page.select_attr("meta[name=robots]", "content").is_some_and(|c| c.contains("noindex"));
        assert_eq!(cells[1].contains("noindex"), noindex, "noindex of {}", cells[0]);
    }
    assert_eq!(
        app.get("/terms-of-service").await.select_attr("meta[name=description]", "content").as_deref(),
        Some("Our rules in plain words.")
    );
}
