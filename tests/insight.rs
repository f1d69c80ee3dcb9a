//! The admin's Insight tab: `GET /api/admin/insight`, `/admin/insight`, the analytics events
//! behind them (no IP addresses, bounded retention applied without a restart).
use axum::body::Body;
use axum::http::{Request, header};
use chrono::{Duration, Utc};
use reelfind::entities::analytics_event;
use reelfind::services::analytics::{self, NewEvent};
use sea_orm::EntityTrait;
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::accounts::register;
use crate::admin::make_admin;
use crate::identify_support::*;
use crate::support::TestApp;

async fn app_with_openai(openai: &MockServer) -> TestApp {
    TestApp::with_env([
        ("OPENAI_API_KEY".to_string(), "k".to_string()),
        ("OPENAI_BASE_URL".into(), format!("{}/v1", openai.uri())),
    ])
    .await
}

async fn page_view(app: &TestApp, path: &str, referrer: &str) {
    let res = app
        .post_json(
            "/api/analytics/track",
            &json!({"action": "page_view", "resourceType": "page",
                "metadata": {"path": path, "title": "A page", "referrer": referrer, "userAgent": "test"}}),
        )
        .await;
    assert_eq!(res.status, 204, "{}", res.text());
}

fn engine<'a>(data: &'a Value, id: &str) -> &'a Value {
    data["engines"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["engine"] == id)
        .unwrap_or_else(|| panic!("no {id} in {data}"))
}

#[tokio::test]
async fn the_insight_api_is_for_admins_only() {
    let app = TestApp::new().await;
    assert_eq!(app.get("/api/admin/insight").await.status, 401);
    let page = app.get("/admin/insight").await;
    assert_eq!(page.status, 303, "signed-out visitors are sent to the admin sign-in");
    assert_eq!(page.header("location").as_deref(), Some("/admin"));
    assert!(register(&app, "plainuser", "secret123").await.status.is_success());
    assert_eq!(app.get("/api/admin/insight").await.status, 403);
    assert_eq!(app.get("/admin/insight").await.header("location").as_deref(), Some("/admin"));
    let form = app
        .send(
            Request::post("/admin/insight/retention")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("retention_days=1"))
                .unwrap(),
        )
        .await;
    assert_eq!(form.header("location").as_deref(), Some("/admin"), "a non-admin cannot change the retention");
    make_admin(&app, "boss").await;
    let res = app.get("/api/admin/insight?days=7").await;
    assert_eq!(res.status, 200, "{}", res.text());
    let data = res.json();
    assert_eq!(data["days"], 7);
    assert_eq!(data["daily"].as_array().unwrap().len(), 7, "one entry per day, today included");
    assert_eq!(data["retentionDays"], 90);
    assert_eq!(app.get("/api/admin/insight?days=365").await.json()["days"], 30, "other periods fall back to 30 days");
}

#[tokio::test]
async fn identifications_page_views_and_sign_ups_are_counted() {
    let openai = openai_fake(&answer("The Matrix", 1999, "movie", 0.9)).await;
    let app = app_with_openai(&openai).await;

    // A guest identifies, is stopped at the free limit, then creates an account.
    let res = upload(&app, Upload::image(jpeg(320, 200), "openai")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let again = upload(&app, Upload::image(jpeg(330, 200), "openai")).await;
    assert_eq!(again.status, 403);
    page_view(&app, "/auth", "https://www.google.com/search?q=what+movie").await;
    assert!(register(&app, "newbie", "secret123").await.status.is_success());
    // A signed-in identification, and one whose engine fails.
    assert_eq!(upload(&app, Upload::image(jpeg(340, 200), "openai")).await.status, 200);
    openai.reset().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .mount(&openai)
        .await;
    let failed = upload(&app, Upload::image(jpeg(350, 200), "openai")).await;
    assert!(failed.status.is_server_error(), "{}", failed.status);

    for (p, r) in
        [("/", ""), ("/", "https://news.example.org/story"), ("/blog?page=2", ""), ("/shared/AbCdEf0123456789xyzW", "")]
    {
        page_view(&app, p, r).await;
    }

    make_admin(&app, "boss").await;
    let data = app.get("/api/admin/insight?days=30").await.json();
    assert_eq!(data["totals"]["pageViews"], 5, "{data}");
    assert_eq!(data["totals"]["identified"], 2, "{data}");
    assert_eq!(data["totals"]["notIdentified"], 1, "{data}");
    assert_eq!(data["totals"]["refused"], 1, "the guest limit is a refusal: {data}");
    let today = data["daily"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(today["day"], Utc::now().format("%Y-%m-%d").to_string());
    assert_eq!(today["pageViews"], 5);
    assert_eq!(today["identified"], 2);
    assert_eq!(today["notIdentified"], 1);

    let e = engine(&data, "openai");
    assert_eq!(e["runs"], 3, "{e}");
    assert_eq!(e["identified"], 2);
    assert_eq!(e["failed"], 1);
    assert!((e["successRate"].as_f64().unwrap() - 2.0 / 3.0).abs() < 1e-9);
    assert!(e["p95Ms"].as_u64().unwrap() >= e["medianMs"].as_u64().unwrap());

    let c = &data["conversion"];
    assert_eq!(c["guestIdentifications"], 1, "{c}");
    assert_eq!(c["guestLimitReached"], 1);
    assert_eq!(c["signUps"], 1);
    assert_eq!(c["signUpsAfterGuest"], 1);
    assert_eq!(c["rate"], 1.0);

    assert_eq!(data["topTitles"], json!([{"label": "The Matrix (1999)", "count": 2}]));
    assert_eq!(
        data["topPages"],
        json!([{"label": "/", "count": 2}, {"label": "/auth", "count": 1}, {"label": "/blog", "count": 1},
            {"label": "/shared/{id}", "count": 1}])
    );
    assert_eq!(
        data["topReferrers"],
        json!([{"label": "google.com", "count": 1}, {"label": "news.example.org", "count": 1}])
    );
    assert_eq!(data["directPageViews"], 3);

    // The page shows the totals and hands the same figures to the chart island.
    let page = app.get("/admin/insight?days=30").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.select_text(".insight-totals div:first-child dd").as_deref(), Some("5"));
    let props: Value = serde_json::from_str(&page.select_attr("[data-island=Insight]", "data-props").unwrap()).unwrap();
    assert_eq!(props["data"], data);
    assert_eq!(
        page.select_attr(".insight-periods [aria-current=page]", "href").as_deref(),
        Some("/admin/insight?days=30")
    );
    assert!(page.select_all_text(".admin-tabs a").iter().any(|t| t == "Insight"));
}

#[tokio::test]
async fn stored_events_hold_no_ip_address() {
    let app = TestApp::new().await;
    let res = app
        .post_json(
            "/api/analytics/track",
            &json!({"action": "page_view", "resourceType": "page", "resourceId": "10.1.2.3",
                "metadata": {"path": "/users/203.0.113.9?ip=198.51.100.7", "referrer": "http://192.0.2.44/x",
                    "ip": "203.0.113.9", "clientAddress": "2001:db8::1", "userAgent": "agent 198.51.100.7",
                    "title": "from 2001:db8:85a3::8a2e:370:7334"}}),
        )
        .await;
    assert_eq!(res.status, 204);
    let rows = analytics_event::Entity::find().all(&app.db).await.unwrap();
    assert_eq!(rows.len(), 1);
    let stored = format!("{:?}", rows[0]);
    for ip in ["203.0.113.9", "198.51.100.7", "192.0.2.44", "10.1.2.3", "2001:db8"] {
        assert!(!stored.contains(ip), "{ip} was stored: {stored}");
    }
    assert_eq!(rows[0].path.as_deref(), Some("/users/[ip]"));
    assert_eq!(rows[0].referrer, None);
    let forged = app.post_json("/api/analytics/track", &json!({"action": "identify", "metadata": {}})).await;
    assert_eq!(forged.status, 400, "identification events come from the server only");
}

#[tokio::test]
async fn the_retention_setting_deletes_old_events_at_once() {
    let app = TestApp::new().await;
    for days_ago in [200, 40, 10, 0] {
        let e = NewEvent { action: "page_view".into(), path: Some(format!("/d{days_ago}")), ..Default::default() };
        analytics::record_at(&app.db, e, Utc::now() - Duration::days(days_ago)).await.unwrap();
    }
    make_admin(&app, "boss").await;
    let post = |body: &'static str| {
        app.send(
            Request::post("/admin/insight/retention")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(body))
                .unwrap(),
        )
    };
    let bad = post("retention_days=0&days=7").await;
    assert_eq!(bad.status, 400);
    assert!(bad.select_text(".admin-error").unwrap().contains("between 1 and 3650"));
    assert_eq!(analytics_event::Entity::find().all(&app.db).await.unwrap().len(), 4, "nothing deleted");

    let ok = post("retention_days=30&days=7").await;
    assert_eq!(ok.status, 303);
    assert_eq!(ok.header("location").as_deref(), Some("/admin/insight?days=7&saved=2"));
    let left: Vec<_> =
        analytics_event::Entity::find().all(&app.db).await.unwrap().into_iter().map(|e| e.path).collect();
    assert_eq!(left, vec![Some("/d10".to_string()), Some("/d0".to_string())]);
    let page = app.get("/admin/insight?days=7&saved=2").await;
    assert!(page.select_text(".admin-notice").unwrap().contains("2 older events were deleted"));
    assert_eq!(page.select_attr("#retention_days", "value").as_deref(), Some("30"));
    assert_eq!(app.get("/api/admin/insight").await.json()["retentionDays"], 30);

    // The periodic sweep reads the same setting.
    assert_eq!(analytics::sweep(&app.db, 5).await.unwrap(), 1);
    // The JSON settings API validates the value too.
    let put =
        crate::profiles::put_json(&app, "/api/admin/settings", &json!({"analytics_retention_days": "forever"})).await;
    assert_eq!(put.status, 400);
}
