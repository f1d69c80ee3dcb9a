//! The public pages: status, title, description, canonical, headings, footer, FAQ, JSON-LD.
use axum::body::Body;
use axum::http::Request;
use serde_json::Value;

use crate::support::{ORIGIN, TestApp, TestResponse};

/// The JSON-LD documents of a page, parsed.
pub fn json_ld(res: &TestResponse) -> Vec<Value> {
    let doc = res.html();
    let sel = scraper::Selector::parse(r#"script[type="application/ld+json"]"#).unwrap();
    doc.select(&sel)
        .map(|s| {
            let text: String = s.text().collect();
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON-LD does not parse ({e}): {text}"))
        })
        .collect()
}

fn ld_of_type<'a>(docs: &'a [Value], ty: &str) -> Option<&'a Value> {
    docs.iter().find(|d| d["@type"] == ty)
}

/// Checks what every page must have; returns the response for more checks.
async fn assert_page(app: &TestApp, path: &str, title_starts: &str, h1: &str) -> TestResponse {
    let res = app.get(path).await;
    assert_eq!(res.status, 200, "{path}");
    assert!(res.header("content-type").unwrap().starts_with("text/html"), "{path}");
    let title = res.select_text("title").unwrap();
    assert!(title.starts_with(title_starts), "{path}: title {title:?}");
    assert!(title.contains("Reelfind"), "{path}: title {title:?} names the site");
    let description = res.select_attr("meta[name=description]", "content").unwrap();
    assert!(description.len() > 20, "{path}: description {description:?}");
    let canonical = res.select_attr("link[rel=canonical]", "href").unwrap();
    assert_eq!(canonical, format!("{ORIGIN}{}", path.split('?').next().unwrap()), "{path}");
    assert_eq!(res.select_attr("meta[property='og:url']", "content").as_deref(), Some(canonical.as_str()));
    assert_eq!(res.select_attr("meta[property='og:title']", "content").as_deref(), Some(title.as_str()));
    assert_eq!(res.count("h1"), 1, "{path}: exactly one h1");
    assert_eq!(res.select_text("h1").as_deref(), Some(h1), "{path}");
    // Layout: skip links, header nav, footer.
    assert_eq!(res.select_attr("a.skip-link[href='#main']", "href").as_deref(), Some("#main"));
    assert!(res.count("a.skip-link[href='#site-nav']") == 1);
    assert!(res.count("main#main") == 1);
    res
}

#[tokio::test]
async fn every_public_page_has_title_description_canonical_and_heading() {
    let app = TestApp::new().await;
    assert_page(&app, "/", "Reelfind", "Identify Any Movie or TV Show").await;
    assert_page(&app, "/about", "About Reelfind", "About Reelfind").await;
    assert_page(&app, "/blog", "Blog", "The Reelfind Blog").await;
    assert_page(&app, "/terms-of-service", "Terms of Service", "Terms of Service").await;
    assert_page(&app, "/test", "Production Test", "Production Test").await;
    assert_page(&app, "/pwa-settings", "App & Notification Settings", "App & Notification Settings").await;
    assert_page(&app, "/history", "Identification History", "Sign in to view history").await;
    assert_page(
        &app,
        "/blog/how-ai-engines-identify-a-scene",
        "How the AI Engines Identify a Scene",
        "How the AI Engines Identify a Scene",
    )
    .await;
}

#[tokio::test]
async fn home_has_every_section() {
    let app = TestApp::new().await;
    let res = app.get("/").await;
    let h2s = res.select_all_text("h2");
    for heading in [
        "Recent Identifications",
        "How to Identify Any Scene",
        "What Our Users Say",
        "Try Reelfind Free",
        "Frequently Asked Questions",
    ] {
        assert!(h2s.iter().any(|h| h == heading), "missing section {heading:?} in {h2s:?}");
    }
    let stats = res.select_all_text(".stats-strip .stat");
    assert_eq!(stats, ["Accuracy 95%+", "Movies identified 1M+", "Average results 5 Sec", "Secure and private 100%"]);
    assert_eq!(res.count(".steps > li"), 3);
    assert_eq!(res.select_attr("#how-it-works a.btn", "href").as_deref(), Some("#identify"));
    assert_eq!(res.count("#identify"), 1);
    // Island mounts with a useful fallback.
    let props: Value = serde_json::from_str(&res.select_attr("[data-island=Uploader]", "data-props").unwrap()).unwrap();
    assert_eq!(props["maxFileSizeMb"], 10);
    assert_eq!(props["allowedFileTypes"], serde_json::json!(["jpg", "jpeg", "png", "webp", "mp4", "mov"]));
    assert!(res.select_text("[data-island=Uploader]").unwrap().contains("needs JavaScript"));
    let recent: Value =
        serde_json::from_str(&res.select_attr("[data-island=RecentIdentifications]", "data-props").unwrap()).unwrap();
    assert_eq!(recent["limit"], 3);
    // No testimonials yet: an honest empty state, never invented reviews.
    assert_eq!(res.count("#testimonials .testimonial"), 0);
    assert!(res.select_text("#testimonials .empty-state").unwrap().contains("No reviews yet"));
    // FAQ links to /about.
    assert_eq!(res.count("#faq a[href='/about']"), 1);
}

#[tokio::test]
async fn shared_id_reaches_the_uploader() {
    let app = TestApp::new().await;
    let res = app.get("/?id=abc123").await;
    let props: Value = serde_json::from_str(&res.select_attr("[data-island=Uploader]", "data-props").unwrap()).unwrap();
    assert_eq!(props["sharedId"], "abc123");
    assert_eq!(res.select_attr("link[rel=canonical]", "href").as_deref(), Some("http://localhost:3000/"));
}

#[tokio::test]
async fn faq_has_ten_entries_matching_its_json_ld() {
    let app = TestApp::new().await;
    let res = app.get("/").await;
    assert_eq!(res.count("details.faq-item[name=faq]"), 10);
    let questions = res.select_all_text("details.faq-item[name=faq] summary");
    let answers = res.select_all_text("details.faq-item[name=faq] .faq-answer");
    let docs = json_ld(&res);
    let faq = ld_of_type(&docs, "FAQPage").expect("FAQPage JSON-LD");
    let entities = faq["mainEntity"].as_array().unwrap();
    assert_eq!(entities.len(), 10);
    for (i, e) in entities.iter().enumerate() {
        assert_eq!(e["@type"], "Question");
        assert_eq!(e["name"].as_str().unwrap(), questions[i]);
        let answer: String =
            e["acceptedAnswer"]["text"].as_str().unwrap().split_whitespace().collect::<Vec<_>>().join(" ");
        assert_eq!(answer, answers[i]);
    }
    let website = ld_of_type(&docs, "WebSite").expect("WebSite JSON-LD");
    assert_eq!(website["name"], "Reelfind");
    assert_eq!(website["url"], "http://localhost:3000/");
    let org = ld_of_type(&docs, "Organization").expect("Organization JSON-LD");
    assert_eq!(org["name"], "Reelfind");
    assert_eq!(org["email"], "support@localhost");
}

#[tokio::test]
async fn file_limits_in_copy_follow_the_setting() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "max_file_size", "25").await.unwrap();
    app.state.settings.set(&app.db, "allowed_file_types", "jpg,png").await.unwrap();
    let res = app.get("/").await;
    let props: Value = serde_json::from_str(&res.select_attr("[data-island=Uploader]", "data-props").unwrap()).unwrap();
    assert_eq!(props["maxFileSizeMb"], 25);
    let faq = res.select_all_text(".faq-answer").join(" ");
    assert!(faq.contains("25 MB"), "{faq}");
    assert!(faq.contains("JPG and PNG"), "{faq}");
    assert!(!faq.contains("10 MB"), "{faq}");
    let about = app.get("/about").await.select_all_text(".faq-answer").join(" ");
    assert!(about.contains("25 MB"), "{about}");
    let terms = app.get("/terms-of-service").await.text();
    assert!(terms.contains("no larger than 25 MB"));
}

#[tokio::test]
async fn footer_shows_links_and_contact_from_settings() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "github_url", "https://github.com/reelfind-test").await.unwrap();
    app.state.settings.set(&app.db, "terms_url", "https://legal.example/terms").await.unwrap();
    app.state.settings.set(&app.db, "contact_email", "help@reelfind.example").await.unwrap();
    app.state.settings.set(&app.db, "support_hours", "Every day: 8-20 CET").await.unwrap();
    app.state.settings.set(&app.db, "response_time", "Within 2 hours").await.unwrap();
    let res = app.get("/about").await;
    let links: Vec<String> = {
        let doc = res.html();
        let sel = scraper::Selector::parse(".site-footer a").unwrap();
        doc.select(&sel).filter_map(|a| a.value().attr("href").map(str::to_owned)).collect()
    };
    for href in ["/", "/blog", "/about", "https://legal.example/terms", "https://github.com/reelfind-test"] {
        assert!(links.iter().any(|l| l == href), "footer lacks {href}: {links:?}");
    }
    assert!(links.iter().any(|l| l == "https://twitter.com"), "{links:?}");
    assert!(links.iter().any(|l| l == "https://www.linkedin.com"), "{links:?}");
    assert_eq!(
        res.select_attr(".site-footer a[aria-label=GitHub]", "href").as_deref(),
        Some("https://github.com/reelfind-test")
    );
    let footer = res.select_text(".site-footer").unwrap();
    assert!(footer.contains("help@reelfind.example"));
    assert!(footer.contains("Every day: 8-20 CET"));
    assert!(footer.contains("Within 2 hours"));
    assert!(footer.contains("Terms of Service"));
}

#[tokio::test]
async fn about_lists_engines_and_filters_tutorials_without_js() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "google_name", "Gemini Vision").await.unwrap();
    app.state.settings.set(&app.db, "google_desc", "Sees everything twice.").await.unwrap();
    let res = app.get("/about").await;
    let engines = res.select_all_text(".engine-card h3");
    assert_eq!(engines.len(), 6, "{engines:?}");
    assert!(engines.contains(&"Gemini Vision".to_string()));
    assert!(res.select_text(".engine-google").unwrap().contains("Sees everything twice."));
    let chips = res.select_all_text("#tutorials .filter-bar a");
    assert_eq!(chips, ["All", "Getting Started", "AI Engines", "Pro Tips", "Features", "Mobile", "Developers"]);
    assert_eq!(res.count(".tutorial-card"), 6);
    assert_eq!(res.select_text("#tutorials .filter-bar a[aria-current]").as_deref(), Some("All"));
    let difficulties = res.select_all_text(".tutorial-card .badge:last-child");
    assert!(difficulties.iter().all(|d| ["Beginner", "Intermediate", "Advanced"].contains(&d.as_str())));
    for h in ["The AI Engines", "Tutorials", "Related Pages", "See It for Yourself"] {
        assert!(res.select_all_text("h2").iter().any(|x| x == h), "missing {h}");
    }
    assert!(res.count(".cta-band a[href='/']") >= 1);
    assert!(res.count(".faq-item") >= 5);

    let filtered = app.get("/about?category=ai-engines").await;
    assert_eq!(filtered.status, 200);
    assert_eq!(filtered.count(".tutorial-card"), 1);
    assert_eq!(filtered.select_text(".tutorial-card h3").as_deref(), Some("Choosing the Right AI Engine"));
    assert_eq!(filtered.select_text("#tutorials .filter-bar a[aria-current]").as_deref(), Some("AI Engines"));
    assert_eq!(filtered.select_attr("link[rel=canonical]", "href").as_deref(), Some("http://localhost:3000/about"));
    for cat in ["getting-started", "pro-tips", "features", "mobile", "developers"] {
        assert_eq!(app.get(&format!("/about?category={cat}")).await.count(".tutorial-card"), 1, "{cat}");
    }
    assert_eq!(app.get("/about?category=nonsense").await.count(".tutorial-card"), 6);
}

#[tokio::test]
async fn history_shell_depends_on_the_signed_in_user() {
    let app = TestApp::new().await;
    let res = app.get("/history").await;
    assert_eq!(res.select_text("h1").as_deref(), Some("Sign in to view history"));
    assert!(res.count("a[href='/auth']") >= 1);
    assert_eq!(res.select_text(".signed-out a[href='/auth']").as_deref(), Some("Sign in"));
    assert_eq!(res.select_text(".signed-out a[href='/']").as_deref(), Some("Back to home"));
    assert_eq!(res.count("[data-island=History]"), 0);
    assert_eq!(res.select_attr("meta[name=robots]", "content").as_deref(), Some("noindex"));

    let ada = app.person("ada").await;
    let res = app.send_as(Some(&ada), Request::get("/history").body(Body::empty()).unwrap()).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.count("[data-island=History]"), 1);
    assert_eq!(res.count("[data-island=History] .skeleton-card"), 8);
    assert_eq!(res.select_text("h1").as_deref(), Some("Identification History"));
}

#[tokio::test]
async fn island_shells_mount_with_a_no_js_note() {
    let app = TestApp::new().await;
    let test = app.get("/test").await;
    assert!(test.select_text("[data-island=TestPage]").unwrap().contains("JavaScript"));
    let pwa = app.get("/pwa-settings").await;
    assert!(pwa.select_text("[data-island=PwaSettings]").unwrap().contains("JavaScript"));
}

#[tokio::test]
async fn unknown_path_is_404_page() {
    let app = TestApp::new().await;
    let res = app.get("/no/such/page").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.select_text("h1").as_deref(), Some("404 Page Not Found"));
    assert!(res.select_text("title").unwrap().starts_with("404 Page Not Found"));
    assert!(res.select_text(".hint").unwrap().contains("/no/such/page"));
    assert_eq!(res.select_text("main a.btn-primary").as_deref(), Some("Go to Home"));
    assert_eq!(res.select_attr("meta[name=robots]", "content").as_deref(), Some("noindex"));
}

#[tokio::test]
async fn robots_and_sitemap_use_the_public_url() {
    let app = TestApp::new().await;
    let robots = app.get("/robots.txt").await;
    assert_eq!(robots.status, 200);
    assert!(robots.header("content-type").unwrap().starts_with("text/plain"));
    let text = robots.text();
    for line in
        ["User-agent: *", "Allow: /", "Disallow: /api/", "Disallow: /admin", "Disallow: /profile", "Disallow: /history"]
    {
        assert!(text.lines().any(|l| l == line), "robots.txt lacks {line:?}:\n{text}");
    }
    assert!(text.contains("Sitemap: http://localhost:3000/sitemap.xml"));

    let sitemap = app.get("/sitemap.xml").await;
    assert_eq!(sitemap.status, 200);
    assert!(sitemap.header("content-type").unwrap().starts_with("application/xml"));
    let xml = sitemap.text();
    for loc in ["/", "/about", "/blog", "/terms-of-service", "/blog/how-ai-engines-identify-a-scene"] {
        assert!(xml.contains(&format!("<loc>http://localhost:3000{loc}</loc>")), "sitemap lacks {loc}:\n{xml}");
    }
    assert!(xml.contains("<lastmod>2026-10-13</lastmod>"), "{xml}");
}

/// One way to mount an island: the `island` macro of `templates/macros.html`, which takes
/// the name and props from the page's `Island`. A hand-written mount elsewhere fails here.
#[test]
fn every_island_mount_goes_through_the_macro() {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "html") {
                out.push(p);
            }
        }
    }
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates");
    let mut files = Vec::new();
    walk(&root, &mut files);
    let mut mounts = 0;
    let mut by_hand = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        mounts += text.matches("{% call m::island(").count();
        if f.ends_with("macros.html") {
            continue;
        }
        if text.contains("data-island=") {
            by_hand.push(f.display().to_string());
        }
    }
    assert!(by_hand.is_empty(), "island mounts written by hand: {by_hand:?}");
    assert!(mounts >= 11, "the pages mount their islands through the macro ({mounts} found)");
}
