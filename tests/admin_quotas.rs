//! The dashboard's API quota overrides (issue 14): an administrator sets, edits and removes
//! a person's or a key's quota with plain forms, sees them listed, and is told in words what
//! is wrong with a refused form (nothing is changed then).
use axum::body::Body;
use axum::http::{Request, header};
use serde_json::Value;

use crate::admin::post_form;
use crate::api_keys::{get, keyed, new_key};
use crate::support::TestApp;

const SAVED: &str = "/admin/dashboard?quota=saved#api-quotas";

async fn overview(app: &TestApp) -> Value {
    let res = app.get("/api/admin/api-quotas").await;
    assert_eq!(res.status, 200, "{}", res.text());
    res.json()
}

#[tokio::test]
async fn the_admin_sets_edits_and_removes_overrides_from_the_dashboard() {
    let app = TestApp::new().await;
    app.register("alice", "secret1").await;
    let (key_id, key) = new_key(&app, "cron job").await;
    app.clear_cookies();
    app.admin("root").await;

    let page = app.get("/admin/dashboard").await;
    assert_eq!(page.status, 200);
    assert_eq!(page.count("#api-quotas"), 1);
    assert!(page.text().contains("The defaults are 30 requests a minute, 1000 a day and 2 at once"));
    assert!(page.text().contains("None: everyone has the defaults."));
    assert!(page.text().contains("None: every key counts with its person."));
    let option = page.select_text(&format!("#quota-key option[value='{key_id}']")).unwrap();
    assert_eq!(option, format!("alice: cron job ({}…)", &key[..11]));
    for id in ["quota-username", "quota-person-minute", "quota-person-day", "quota-person-at-once", "quota-key"] {
        assert_eq!(page.count(&format!("label[for={id}]")), 1, "{id} has a label");
    }

    // A person's override: an empty box keeps the default; the username's case does not matter.
    let res = post_form(&app, "/admin/api-quotas/person", "username=ALICE&per_minute=100&per_day=&concurrent=3").await;
    assert_eq!(res.status, 303, "{}", res.text());
    assert_eq!(res.header("location").as_deref(), Some(SAVED));
    let people = overview(&app).await["people"].clone();
    assert_eq!(people.as_array().unwrap().len(), 1);
    assert_eq!(people[0]["username"], "alice");
    assert_eq!(
        (people[0]["perMinute"].clone(), people[0]["perDay"].clone(), people[0]["concurrent"].clone()),
        (100.into(), Value::Null, 3.into())
    );
    let page = app.get(SAVED).await;
    assert_eq!(page.select_text(".admin-notice").as_deref(), Some("API quota override saved."));
    let row = page.select_all_text("table[aria-label='People with an API quota override'] tbody tr > *");
    assert_eq!(&row[..4], ["alice", "100", "default", "3"]);
    // Its Edit link fills the form.
    let edit = page.select_attr("a[aria-label='Edit the override of alice']", "href").unwrap();
    let page = app.get(&edit).await;
    assert_eq!(page.select_attr("#quota-username", "value").as_deref(), Some("alice"));
    assert_eq!(page.select_attr("#quota-person-minute", "value").as_deref(), Some("100"));
    assert_eq!(page.select_attr("#quota-person-day", "value").as_deref(), Some(""));

    // Refused forms say why, keep what was typed, and change nothing.
    let res = post_form(&app, "/admin/api-quotas/person", "username=alice&per_minute=0&per_day=5&concurrent=").await;
    assert_eq!(res.status, 400);
    assert_eq!(
        res.select_text(".admin-error").as_deref(),
        Some("Requests per minute must be a whole number between 1 and 100000, or empty for the default")
    );
    assert_eq!(res.select_attr("#quota-person-minute", "value").as_deref(), Some("0"));
    assert_eq!(res.select_attr("#quota-username", "value").as_deref(), Some("alice"));
    let res = post_form(&app, "/admin/api-quotas/person", "username=alice&per_day=2.5").await;
    assert_eq!(res.status, 400);
    assert!(res.select_text(".admin-error").unwrap().starts_with("Requests per day must be a whole number"));
    let res = post_form(&app, "/admin/api-quotas/person", "username=nobody&per_minute=5").await;
    assert_eq!(res.status, 400);
    assert_eq!(res.select_text(".admin-error").as_deref(), Some("There is no user named “nobody”"));
    let res = post_form(&app, "/admin/api-quotas/person", "username=&per_minute=5").await;
    assert_eq!(res.status, 400);
    assert!(res.select_text(".admin-error").unwrap().starts_with("Enter the username"));
    assert_eq!(overview(&app).await["people"][0]["perMinute"], 100);

    // A key's own value: counted on its own, shown in the key's headers.
    let res =
        post_form(&app, "/admin/api-quotas/key", &format!("key_id={key_id}&per_minute=5&per_day=&concurrent=")).await;
    assert_eq!(res.status, 303, "{}", res.text());
    assert_eq!(res.header("location").as_deref(), Some(SAVED));
    let res = keyed(&app, &key, get("/api/history")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.header("ratelimit-limit").as_deref(), Some("5"));
    let page = app.get("/admin/dashboard").await;
    let row = page.select_all_text("table[aria-label='API keys with their own quota'] tbody tr > *");
    assert_eq!(&row[1..5], ["alice", "5", "default", "default"]);
    let page = app.get(&format!("/admin/dashboard?edit_key={key_id}")).await;
    assert_eq!(page.select_attr("#quota-key option[selected]", "value"), Some(key_id.to_string()));
    assert_eq!(page.select_attr("#quota-key-minute", "value").as_deref(), Some("5"));
    let res = post_form(&app, "/admin/api-quotas/key", "key_id=99999&per_minute=5").await;
    assert_eq!(res.status, 400);
    assert!(res.select_text(".admin-error").unwrap().starts_with("Choose one of the live keys"));
    let res = post_form(&app, "/admin/api-quotas/key", "key_id=abc&per_minute=5").await;
    assert_eq!(res.status, 400);

    // Remove (the row's button sends the id with empty boxes): back to the person's value.
    let res = post_form(&app, "/admin/api-quotas/key", &format!("key_id={key_id}")).await;
    assert_eq!(res.status, 303);
    let keys = overview(&app).await["keys"].clone();
    assert_eq!(keys[0]["perMinute"], Value::Null);
    assert_eq!(keyed(&app, &key, get("/api/history")).await.header("ratelimit-limit").as_deref(), Some("100"));
    let res = post_form(&app, "/admin/api-quotas/person", "username=alice").await;
    assert_eq!(res.status, 303);
    assert_eq!(overview(&app).await["people"], serde_json::json!([]));
    assert_eq!(keyed(&app, &key, get("/api/history")).await.header("ratelimit-limit").as_deref(), Some("30"));
    let page = app.get("/admin/dashboard").await;
    assert!(page.text().contains("None: everyone has the defaults."));
}

#[tokio::test]
async fn only_an_administrator_on_our_origin_changes_overrides() {
    let app = TestApp::new().await;
    app.register("mallory", "secret1").await;
    for path in ["/admin/api-quotas/person", "/admin/api-quotas/key"] {
        let res = post_form(&app, path, "username=mallory&key_id=1&per_minute=100000").await;
        assert_eq!(res.status, 303, "{path}");
        assert_eq!(res.header("location").as_deref(), Some("/admin"));
    }
    app.clear_cookies();
    app.admin("root").await;
    let res = app
        .send(
            Request::post("/admin/api-quotas/person")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .header(header::ORIGIN, "https://evil.example")
                .body(Body::from("username=mallory&per_minute=100000"))
                .unwrap(),
        )
        .await;
    assert_eq!(res.status, 403);
    assert_eq!(overview(&app).await["people"], serde_json::json!([]));
}
