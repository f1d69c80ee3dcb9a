//! The third-party analytics tag (SPEC section 7, services::analytics_tag): none by default
//! (no tag on the page, the policy opens no other host); chosen in the studio, it is named on
//! every page for the runtime, the Content-Security-Policy opens exactly its hosts, and the
//! privacy section of the terms says which service it is.
use serde_json::{Value, json};

use crate::admin::post_form;
use crate::profiles::put_json;
use crate::support::{TestApp, TestResponse};

fn directive(res: &TestResponse, name: &str) -> String {
    let csp = res.header("content-security-policy").expect("a CSP");
    csp.split(';').map(str::trim).find(|d| d.starts_with(name)).unwrap_or_default().to_owned()
}

fn tag_of(res: &TestResponse) -> Option<Value> {
    res.select_attr("meta[name=reelfind-analytics]", "content").map(|c| serde_json::from_str(&c).unwrap())
}

/// The studio's settings form with the analytics fields (and the engines left as they are).
async fn save_tag(app: &TestApp, provider: &str, id: &str, host: &str) -> TestResponse {
    let body = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs([("allowed_engines", "google"), ("allowed_engines", "library"), ("ai_primary_model", "auto")])
        .extend_pairs([("analytics_tag_provider", provider), ("analytics_tag_id", id), ("analytics_tag_host", host)])
        .finish();
    post_form(app, "/admin/settings", &body).await
}

#[tokio::test]
async fn none_by_default_no_tag_and_no_other_host() {
    let app = TestApp::new().await;
    for path in ["/", "/blog", "/terms-of-service"] {
        let res = app.get(path).await;
        assert_eq!(tag_of(&res), None, "{path}");
        assert_eq!(directive(&res, "connect-src"), "connect-src 'self'", "{path}");
        assert_eq!(
            directive(&res, "script-src"),
            format!("script-src 'nonce-{}' 'strict-dynamic' 'self'", nonce(&res))
        );
    }
    let terms = app.get("/terms-of-service").await;
    assert_eq!(
        terms.select_text("[data-testid=analytics-tag-privacy]").as_deref(),
        Some("No third-party analytics or advertising scripts run on this site.")
    );
}

fn nonce(res: &TestResponse) -> String {
    let csp = res.header("content-security-policy").unwrap();
    let at = csp.find("'nonce-").unwrap() + "'nonce-".len();
    csp[at..].split('\'').next().unwrap().to_owned()
}

#[tokio::test]
async fn ga4_chosen_in_the_studio_is_on_every_page_with_its_hosts_allowed() {
    let app = TestApp::new().await;
    app.admin("root").await;
    let res = save_tag(&app, "ga4", "G-TEST123", "").await;
    assert_eq!(res.status, 303, "{}", res.text());
    let dashboard = app.get("/admin/dashboard").await;
    assert!(dashboard.select_text("[data-testid=analytics-tag-status]").unwrap().starts_with(
        "Google Analytics 4 is loaded on every page from https://www.googletagmanager.com/gtag/js?id=G-TEST123"
    ));

    app.clear_cookies();
    let home = app.get("/").await;
    assert_eq!(
        tag_of(&home),
        Some(
            json!({"provider": "ga4", "id": "G-TEST123", "src": "https://www.googletagmanager.com/gtag/js?id=G-TEST123"})
        )
    );
    assert!(directive(&home, "script-src").ends_with("'self' https://www.googletagmanager.com"));
    assert_eq!(
        directive(&home, "connect-src"),
        "connect-src 'self' https://www.googletagmanager.com https://*.google-analytics.com https://*.analytics.google.com"
    );
    let terms = app.get("/terms-of-service").await;
    assert!(
        terms.select_text("[data-testid=analytics-tag-privacy]").unwrap().starts_with("We also use Google Analytics 4")
    );

    // Back to none: gone from the pages and the policy.
    app.admin("root2").await;
    assert_eq!(save_tag(&app, "", "", "").await.status, 303);
    app.clear_cookies();
    let home = app.get("/").await;
    assert_eq!(tag_of(&home), None);
    assert_eq!(directive(&home, "connect-src"), "connect-src 'self'");
}

#[tokio::test]
async fn matomo_needs_its_host_and_opens_only_that_host() {
    let app = TestApp::new().await;
    app.admin("root").await;
    let res = save_tag(&app, "matomo", "4", "").await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("Matomo needs the address of your Matomo"), "{}", res.text());
    let res = save_tag(&app, "ga4", "4", "").await;
    assert_eq!(res.status, 400);
    assert!(res.text().contains("G-ABC123XYZ"));
    assert_eq!(tag_of(&app.get("/").await), None, "nothing saved");

    assert_eq!(save_tag(&app, "matomo", "4", "https://stats.example.org/matomo").await.status, 303);
    let home = app.get("/blog").await;
    assert_eq!(
        tag_of(&home),
        Some(json!({
            "provider": "matomo", "id": "4",
            "src": "https://stats.example.org/matomo/matomo.js",
            "endpoint": "https://stats.example.org/matomo/matomo.php"
        }))
    );
    assert_eq!(directive(&home, "connect-src"), "connect-src 'self' https://stats.example.org");

    // The JSON API keeps the three consistent too.
    let res = put_json(&app, "/api/admin/settings", &json!({"analytics_tag_host": ""})).await;
    assert_eq!(res.status, 400, "Matomo without a host");
    let res =
        put_json(&app, "/api/admin/settings", &json!({"analytics_tag_host": "https://x.example/ 'unsafe-inline'"}))
            .await;
    assert_eq!(res.status, 400);
    let res = put_json(&app, "/api/admin/settings", &json!({"analytics_tag_provider": "plausible", "analytics_tag_id": "reelfind.example", "analytics_tag_host": ""})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(tag_of(&app.get("/").await).unwrap()["src"], "https://plausible.io/js/script.manual.js");
}
