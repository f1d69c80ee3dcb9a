//! Content-Security-Policy on every page (scripts only with the page's nonce, no inline
//! handlers anywhere) and HSTS behind https.
use crate::accounts::register;
use crate::support::TestApp;

const PAGES: &[&str] = &[
    "/",
    "/auth",
    "/blog",
    "/about",
    "/history",
    "/profile",
    "/account",
    "/pwa-settings",
    "/forgot-password",
    "/reset-password/not-a-token",
    "/terms-of-service",
    "/test",
    "/admin",
    "/shared/AAAAAAAAAAAAAAAAAAAAAA",
    "/no-such-page",
];

fn nonce_of(csp: &str) -> String {
    let at = csp.find("'nonce-").expect("a nonce") + "'nonce-".len();
    csp[at..].split('\'').next().unwrap().to_owned()
}

#[tokio::test]
async fn every_page_runs_only_scripts_with_its_nonce() {
    let app = TestApp::new().await;
    register(&app, "csp", "secret1").await;
    let mut nonces = std::collections::HashSet::new();
    for path in PAGES {
        let res = app.get(path).await;
        if res.status.is_redirection() {
            continue;
        }
        let csp = res.header("content-security-policy").unwrap_or_else(|| panic!("{path}: no CSP"));
        assert!(csp.contains("'strict-dynamic'") && csp.contains("object-src 'none'"), "{path}: {csp}");
        let nonce = nonce_of(&csp);
        assert!(nonces.insert(nonce.clone()), "{path}: a nonce is never reused");
        let doc = res.html();
        let scripts = scraper::Selector::parse("script").unwrap();
        let mut count = 0;
        for s in doc.select(&scripts) {
            count += 1;
            assert_eq!(s.value().attr("nonce"), Some(nonce.as_str()), "{path}: a script without the nonce");
        }
        assert!(count > 0, "{path}: the page has its theme script");
        // No inline event handlers or javascript: URLs, which no nonce can allow.
        let all = scraper::Selector::parse("*").unwrap();
        for el in doc.select(&all) {
            for (name, value) in el.value().attrs() {
                assert!(!name.starts_with("on"), "{path}: <{} {name}=...>", el.value().name());
                assert!(!value.trim_start().to_ascii_lowercase().starts_with("javascript:"), "{path}: {name}={value}");
            }
        }
    }
    // JSON answers need no page policy; no HSTS over plain http.
    let api = app.get("/api/settings").await;
    assert!(api.header("strict-transport-security").is_none());
}

#[tokio::test]
async fn https_sites_send_hsts_and_upgrade_requests() {
    let app = TestApp::with_env([("REELFIND_PUBLIC_URL", "https://reelfind.example")]).await;
    for path in ["/", "/api/settings"] {
        let res = app.get(path).await;
        assert_eq!(res.header("strict-transport-security").as_deref(), Some("max-age=31536000"), "{path}");
    }
    assert!(app.get("/").await.header("content-security-policy").unwrap().contains("upgrade-insecure-requests"));
}

/// A page with a person's name in it is never kept by a shared cache (nor by the browser
/// after they leave); a signed-out visitor's page may be stored but is asked for again.
#[tokio::test]
async fn pages_that_name_a_person_are_never_cached_by_shared_caches() {
    let app = TestApp::new().await;
    let html_pages =
        |res: &crate::support::TestResponse| res.header("content-type").is_some_and(|ct| ct.starts_with("text/html"));
    for path in PAGES {
        let res = app.get(path).await;
        if !html_pages(&res) {
            continue;
        }
        assert_eq!(res.header("cache-control").as_deref(), Some("no-cache"), "{path} signed out");
        assert!(res.header("vary").is_some_and(|v| v.to_ascii_lowercase().contains("cookie")), "{path}: Vary");
    }

    app.register("cachewatcher", "secret1").await;
    let mut checked = 0;
    for path in PAGES {
        let res = app.get(path).await;
        if !html_pages(&res) {
            continue;
        }
        checked += 1;
        assert!(res.text().contains("cachewatcher"), "{path}: the page names the person");
        assert_eq!(res.header("cache-control").as_deref(), Some("private, no-store"), "{path} signed in");
        assert!(res.header("vary").is_some_and(|v| v.to_ascii_lowercase().contains("cookie")), "{path}: Vary");
    }
    assert!(checked >= 10, "only {checked} pages answered HTML");
}
