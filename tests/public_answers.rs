//! Public answers kept ready (`routes::public_answers`): validators and `304`s, a fresh
//! nonce in every answer, pages for someone signed in never kept, and an admin's edit on one
//! node showing on another node of the same database.
use std::time::{Duration, Instant};

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use reelfind::config::{Config, Env};
use reelfind::state::AppState;
use serde_json::json;
use tower::ServiceExt;

use crate::support::{ORIGIN, TestApp, TestResponse};

/// The addresses crawlers and shared links fetch, kept for anonymous visitors.
const PUBLIC: &[&str] = &[
    "/api/settings",
    "/",
    "/about",
    "/blog",
    "/blog/how-to-take-a-screenshot-that-gets-identified",
    "/blog?category=Guides",
    "/sitemap.xml",
    "/blog/feed.xml",
];

async fn get_with(app: &TestApp, path: &str, if_none_match: &str) -> TestResponse {
    app.send(Request::get(path).header(header::IF_NONE_MATCH, if_none_match).body(Body::empty()).unwrap()).await
}

fn nonce_of(csp: &str) -> String {
    let at = csp.find("'nonce-").expect("a nonce") + "'nonce-".len();
    csp[at..].split('\'').next().unwrap().to_owned()
}

#[tokio::test]
async fn public_answers_carry_validators_and_answer_304_when_unchanged() {
    let app = TestApp::new().await;
    for path in PUBLIC {
        let first = app.get(path).await;
        assert_eq!(first.status, 200, "{path}");
        let etag = first.header("etag").unwrap_or_else(|| panic!("{path}: no ETag"));
        let html = first.header("content-type").is_some_and(|c| c.starts_with("text/html"));
        // Pages differ in their nonce from answer to answer: the same content, not the same bytes.
        assert_eq!(etag.starts_with("W/"), html, "{path}: {etag}");
        let again = app.get(path).await;
        assert_eq!(again.header("etag").as_deref(), Some(etag.as_str()), "{path}: the ETag is stable");
        assert_eq!(again.header("cache-control"), first.header("cache-control"), "{path}");

        let not_modified = get_with(&app, path, &etag).await;
        assert_eq!(not_modified.status, StatusCode::NOT_MODIFIED, "{path}");
        assert!(not_modified.body.is_empty(), "{path}: a 304 has no body");
        assert_eq!(not_modified.header("etag").as_deref(), Some(etag.as_str()), "{path}");
        assert_eq!(not_modified.header("cache-control"), first.header("cache-control"), "{path}");
        // The browser keeps its copy with the policy that names that copy's nonce.
        assert!(not_modified.header("content-security-policy").is_none(), "{path}: no policy on a 304");

        // Weak comparison, a list, and a tag that does not match.
        let listed = get_with(&app, path, &format!("\"other\", {}", etag.trim_start_matches("W/"))).await;
        assert_eq!(listed.status, StatusCode::NOT_MODIFIED, "{path}");
        let other = get_with(&app, path, "\"something-else\"").await;
        assert_eq!(other.status, 200, "{path}");
        assert_eq!(other.body.len(), first.body.len(), "{path}");
    }

    // The cache rules the pages state stay as they were.
    let home = app.get("/").await;
    assert_eq!(home.header("cache-control").as_deref(), Some("no-cache"));
    assert!(home.headers.get_all("vary").iter().any(|v| v.to_str().unwrap().contains("cookie")));
    assert!(app.get("/sitemap.xml").await.header("cache-control").as_deref() == Some("no-cache"));

    // An edit changes the validator: the old one no longer matches.
    let etag = app.get("/about").await.header("etag").unwrap();
    app.state.settings.set(&app.db, "site_name", "Scenefinder").await.unwrap();
    let after = get_with(&app, "/about", &etag).await;
    assert_eq!(after.status, 200);
    assert_ne!(after.header("etag").unwrap(), etag);
    assert!(after.select_text("title").unwrap().contains("Scenefinder"));
}

#[tokio::test]
async fn two_answers_never_share_a_nonce() {
    let app = TestApp::new().await;
    for path in ["/", "/about", "/blog", "/blog/how-to-take-a-screenshot-that-gets-identified"] {
        let mut seen = std::collections::HashSet::new();
        let mut bodies = Vec::new();
        for _ in 0..3 {
            let res = app.get(path).await;
            let nonce = nonce_of(&res.header("content-security-policy").expect("a policy"));
            assert!(seen.insert(nonce.clone()), "{path}: nonce {nonce} given twice");
            let scripts = scraper::Selector::parse("script").unwrap();
            let doc = res.html();
            let mut count = 0;
            for s in doc.select(&scripts) {
                assert_eq!(s.value().attr("nonce"), Some(nonce.as_str()), "{path}: a script with another nonce");
                count += 1;
            }
            assert!(count > 0, "{path}");
            bodies.push(res.text().replace(&nonce, "NONCE"));
        }
        // Kept, not rebuilt: the same page each time but for its nonce.
        assert!(bodies.windows(2).all(|w| w[0] == w[1]), "{path}: the answers differ beyond their nonce");
    }
}

#[tokio::test]
async fn pages_for_someone_signed_in_are_never_kept() {
    let app = TestApp::new().await;
    let anonymous = app.get("/").await;
    assert!(anonymous.header("etag").is_some());
    let res = app.register("marta", "secret1").await;
    assert!(res.status.is_success(), "{}", res.text());
    let mine = app.get("/").await;
    assert_eq!(mine.header("cache-control").as_deref(), Some("private, no-store"));
    assert!(mine.header("etag").is_none(), "a personal page has no shared validator");
    assert!(mine.text().contains("marta"), "the page is rendered for her");
    // An ETag from the public page gets no 304 for her: her page is not that one.
    let res = get_with(&app, "/", &anonymous.header("etag").unwrap()).await;
    assert_eq!(res.status, 200);
    // Signed out again, the public page is as it was.
    app.clear_cookies();
    assert!(!app.get("/").await.text().contains("marta"));
}

/// A second node: its own state (settings, public answers, version reading) on the same database.
struct Node {
    router: axum::Router,
    _data: tempfile::TempDir,
}

impl Node {
    async fn beside(app: &TestApp) -> Self {
        let data = tempfile::tempdir().unwrap();
        let config = Config::from_env(&Env::from_pairs([
            ("REELFIND_DATA_DIR", data.path().display().to_string()),
            ("REELFIND_PUBLIC_URL", ORIGIN.to_owned()),
            ("REELFIND_ASSETS_DIR", concat!(env!("CARGO_MANIFEST_DIR"), "/assets").to_owned()),
        ]))
        .unwrap();
        let state = AppState::new(app.db.clone(), config).unwrap();
        Self { router: reelfind::app::build_router(state), _data: data }
    }

    async fn get(&self, path: &str) -> (StatusCode, String) {
        let res = self.router.clone().oneshot(Request::get(path).body(Body::empty()).unwrap()).await.unwrap();
        let status = res.status();
        (status, String::from_utf8_lossy(&res.into_body().collect().await.unwrap().to_bytes()).into_owned())
    }

    /// Asks until `check` holds; the documented bound is 1 s, this waits up to 10 s so that
    /// a loaded machine cannot fail it, and says how long it took.
    async fn until(&self, path: &str, what: &str, check: impl Fn(&str) -> bool) {
        let start = Instant::now();
        loop {
            let (status, body) = self.get(path).await;
            if status == 200 && check(&body) {
                return;
            }
            assert!(start.elapsed() < Duration::from_secs(10), "node B still shows the old {path} ({what})");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn an_admin_edit_on_one_node_shows_on_the_other() {
    let a = TestApp::new().await;
    let b = Node::beside(&a).await;
    let post = "/blog/how-to-take-a-screenshot-that-gets-identified";
    // Node B keeps the answers as they are now.
    for path in ["/api/settings", "/", "/about", "/blog", post] {
        let (status, body) = b.get(path).await;
        assert_eq!(status, 200, "{path}");
        assert!(!body.contains("Scenefinder"), "{path}");
    }
    let (_, old_article) = b.get(post).await;
    assert!(!old_article.contains("Freshly edited"));

    // An admin edits on node A: a setting and the article.
    a.admin("root").await;
    let res = a
        .send(
            Request::put("/api/admin/settings")
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(json!({"site_name": "Scenefinder"}).to_string()))
                .unwrap(),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    let list = a.get("/api/admin/blog").await.json();
    let item = list["posts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["slug"] == "how-to-take-a-screenshot-that-gets-identified")
        .expect("the seeded post")
        .clone();
    let mut full = a.get(&format!("/api/admin/blog/{}", item["id"])).await.json();
    full["title"] = json!("Freshly edited screenshots");
    let res = a
        .send(
            Request::put(format!("/api/admin/blog/{}", item["id"]))
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(full.to_string()))
                .unwrap(),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());

    // Node A shows it at once; node B within the bound.
    a.clear_cookies();
    assert_eq!(a.get("/api/settings").await.json()["site_name"], "Scenefinder");
    assert!(a.get(post).await.text().contains("Freshly edited screenshots"));
    b.until("/api/settings", "site name", |body| body.contains("\"site_name\":\"Scenefinder\"")).await;
    for path in ["/", "/about", "/blog"] {
        b.until(path, "site name", |body| body.contains("Scenefinder")).await;
    }
    b.until(post, "article title", |body| body.contains("Freshly edited screenshots")).await;
    b.until("/blog", "card title", |body| body.contains("Freshly edited screenshots")).await;
}

#[tokio::test]
async fn kept_pages_go_out_gzipped_with_a_fresh_nonce() {
    use std::io::Read as _;
    let app = TestApp::new().await;
    for path in ["/", "/blog", "/api/settings"] {
        let plain = app.get(path).await;
        let mut nonces = std::collections::HashSet::new();
        for _ in 0..2 {
            let res = app
                .send(
                    Request::get(path)
                        .header(header::ACCEPT_ENCODING, "gzip, deflate, br")
                        .body(Body::empty())
                        .unwrap(),
                )
                .await;
            assert_eq!(res.status, 200, "{path}");
            assert_eq!(res.header("content-encoding").as_deref(), Some("gzip"), "{path}");
            let vary = res
                .headers
                .get_all("vary")
                .iter()
                .map(|v| v.to_str().unwrap().to_ascii_lowercase())
                .collect::<Vec<_>>();
            assert!(vary.iter().any(|v| v.contains("accept-encoding")), "{path}: {vary:?}");
            assert!(
                res.body.len() < plain.body.len() * 3 / 4,
                "{path}: {} of {} bytes",
                res.body.len(),
                plain.body.len()
            );
            let mut text = String::new();
            flate2::read::GzDecoder::new(&res.body[..]).read_to_string(&mut text).expect("valid gzip");
            match res.header("content-security-policy") {
                // A page: its scripts carry this answer's nonce, and nothing else differs.
                Some(csp) => {
                    let nonce = nonce_of(&csp);
                    assert!(nonces.insert(nonce.clone()), "{path}: nonce given twice");
                    assert!(text.contains(&format!("nonce=\"{nonce}\"")), "{path}");
                    let theirs = nonce_of(&plain.header("content-security-policy").unwrap());
                    assert_eq!(text.replace(&nonce, "N"), plain.text().replace(&theirs, "N"), "{path}");
                }
                None => assert_eq!(text, plain.text(), "{path}"),
            }
            // Revalidated with its own tag.
            let etag = res.header("etag").unwrap();
            let again = app
                .send(
                    Request::get(path)
                        .header(header::ACCEPT_ENCODING, "gzip")
                        .header(header::IF_NONE_MATCH, &etag)
                        .body(Body::empty())
                        .unwrap(),
                )
                .await;
            assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{path}");
        }
        // Other encodings are still the compression layer's.
        let br = app.send(Request::get(path).header(header::ACCEPT_ENCODING, "br").body(Body::empty()).unwrap()).await;
        assert_eq!(br.header("content-encoding").as_deref(), Some("br"), "{path}");
    }
}

#[tokio::test]
async fn json_the_same_for_everyone_is_kept_for_signed_in_people_too() {
    let app = TestApp::new().await;
    let anonymous = app.get("/api/settings").await;
    let etag = anonymous.header("etag").expect("a validator");
    let res = app.register("marta", "secret1").await;
    assert!(res.status.is_success(), "{}", res.text());
    // Her islands ask for the settings on every page: the kept answer, no session work.
    let mine = app.get("/api/settings").await;
    assert_eq!(mine.status, 200);
    assert_eq!(mine.header("etag").as_deref(), Some(etag.as_str()));
    assert_eq!(mine.body, anonymous.body);
    assert_eq!(get_with(&app, "/api/settings", &etag).await.status, StatusCode::NOT_MODIFIED);
    // Her page is still hers.
    assert!(app.get("/").await.header("etag").is_none());
    // An admin's edit shows at once on this node, for her as for anyone.
    app.state.settings.set(&app.db, "site_name", "Scenefinder").await.unwrap();
    let after = app.get("/api/settings").await;
    assert_ne!(after.header("etag").as_deref(), Some(etag.as_str()));
    assert_eq!(after.json()["site_name"], "Scenefinder");
}
