//! Limits that must hold under concurrency and across nodes: the shared throttle store,
//! the guest quota given back on failure, sign-in attempts counted while in flight,
//! the registration throttle, per-address limits for signed-in people, and proxies'
//! `X-Forwarded-For` entries with ports. (Requests released together on a pooled database:
//! `tests/races.rs`; two real server processes: `tests/nodes.rs`.)
use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::ConnectInfo;
use futures::future::join_all;
use reelfind::services::throttle::Limit;
use serde_json::json;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::accounts::{login, register};
use crate::identify_support::*;
use crate::support::TestApp;

fn from(req: &mut axum::http::Request<axum::body::Body>, ip: &str) {
    req.extensions_mut().insert(ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 40000)));
}

/// An OpenAI fake that answers after `delay`, so parallel requests overlap.
async fn slow_openai(delay: Duration) -> MockServer {
    let s = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(chat_completion(&answer("Heat", 1995, "movie", 0.8)))
                .set_delay(delay),
        )
        .mount(&s)
        .await;
    s
}

async fn app_with_openai(s: &MockServer, extra: &[(&str, &str)]) -> TestApp {
    let mut env = vec![
        ("OPENAI_API_KEY".to_owned(), "k".to_owned()),
        ("OPENAI_BASE_URL".to_owned(), format!("{}/v1", s.uri())),
        ("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE".to_owned(), "100".to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    TestApp::with_env(env).await
}

#[tokio::test]
async fn the_store_takes_the_last_unit_once_refunds_and_resets() {
    let app = TestApp::new().await;
    let limit = Limit::new("test-store", 3, Duration::from_secs(60));
    let decisions = join_all((0..10).map(|_| limit.consume(&app.db, "subject"))).await;
    let allowed = decisions.iter().filter(|d| d.as_ref().unwrap().allowed).count();
    assert_eq!(allowed, 3, "exactly the limit is taken by parallel callers");
    let refused = decisions.iter().map(|d| *d.as_ref().unwrap()).find(|d| !d.allowed).unwrap();
    assert_eq!(refused.remaining, 0);
    assert!((59..=60).contains(&refused.reset_secs()), "{refused:?}");
    limit.refund(&app.db, "subject", 1).await.unwrap();
    assert!(limit.consume(&app.db, "subject").await.unwrap().allowed, "a refunded unit can be taken again");
    assert!(!limit.consume(&app.db, "subject").await.unwrap().allowed);
    assert!(limit.consume(&app.db, "other").await.unwrap().allowed, "subjects count apart");
    // Attempt counters count everything.
    let tally = join_all((0..5).map(|_| limit.hit(&app.db, "counter"))).await;
    let mut counts: Vec<u64> = tally.into_iter().map(|t| t.unwrap().count).collect();
    counts.sort();
    assert_eq!(counts, vec![1, 2, 3, 4, 5]);
    // A window that ended starts over.
    let short = Limit::new("test-short", 1, Duration::from_millis(300));
    assert!(short.consume(&app.db, "s").await.unwrap().allowed);
    assert!(!short.consume(&app.db, "s").await.unwrap().allowed);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(short.consume(&app.db, "s").await.unwrap().allowed);
}

#[tokio::test]
async fn a_failed_identification_gives_the_free_try_back() {
    let openai = slow_openai(Duration::ZERO).await;
    let app = app_with_openai(&openai, &[]).await;
    let mut broken = Upload::image(b"not really a jpeg".to_vec(), "openai").request();
    from(&mut broken, "203.0.113.21");
    let res = app.send(broken).await;
    assert!(res.status.is_client_error() && res.status != 403, "{} {}", res.status, res.text());
    let mut good = Upload::image(jpeg(220, 120), "openai").request();
    from(&mut good, "203.0.113.21");
    assert_eq!(app.send(good).await.status, 200, "the failed try was not spent");
    let mut again = Upload::image(jpeg(221, 120), "openai").request();
    from(&mut again, "203.0.113.21");
    assert_eq!(app.send(again).await.status, 403);
}

#[tokio::test]
async fn parallel_failed_logins_meet_the_throttle() {
    let app = TestApp::new().await;
    register(&app, "pat", "secret1").await;
    app.clear_cookies();
    let results = join_all((0..20).map(|_| login(&app, "pat", "wrong-guess"))).await;
    let statuses: Vec<u16> = results.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 8, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 12, "{statuses:?}");
    let blocked = results.iter().find(|r| r.status == 429).unwrap();
    let retry: u64 = blocked.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=900).contains(&retry), "{retry}");
    assert_eq!(login(&app, "pat", "secret1").await.status, 429, "even the right password waits");
}

#[tokio::test]
async fn a_right_password_does_not_spend_the_address_budget() {
    let app = TestApp::new().await;
    register(&app, "quinn", "secret1").await;
    for _ in 0..40 {
        app.clear_cookies();
        assert_eq!(login(&app, "quinn", "secret1").await.status, 200);
    }
}

#[tokio::test]
async fn registration_is_throttled_per_address() {
    let app = TestApp::new().await;
    let register_from = |name: String, ip: &'static str| {
        let mut req = axum::http::Request::post("/api/register")
            .header("content-type", "application/json")
            .body(axum::body::Body::from(
                json!({"username": name, "email": format!("{name}@example.com"), "password": "secret1"}).to_string(),
            ))
            .unwrap();
        from(&mut req, ip);
        req
    };
    let mut statuses = Vec::new();
    for i in 0..6 {
        app.clear_cookies();
        statuses.push(app.send(register_from(format!("reg{i}"), "198.51.100.50")).await.status.as_u16());
    }
    assert_eq!(statuses, vec![201, 201, 201, 201, 201, 429]);
    app.clear_cookies();
    let res = app.send(register_from("reg9".into(), "198.51.100.50")).await;
    assert_eq!(res.json()["error"], "Too many new accounts from your network. Please try again later.");
    assert!(res.header("retry-after").is_some());
    // Another address (an IPv6 /64 of its own) is not affected.
    app.clear_cookies();
    assert_eq!(app.send(register_from("reg10".into(), "2001:db8:9::1")).await.status, 201);
}

#[tokio::test]
async fn signed_in_people_share_their_address_limit() {
    let openai = slow_openai(Duration::ZERO).await;
    let app = app_with_openai(&openai, &[("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", "3")]).await;
    let mut statuses = Vec::new();
    for (who, n) in [("ann", 2), ("ben", 2)] {
        app.clear_cookies();
        register(&app, who, "secret1").await;
        for i in 0..n {
            let mut req = Upload::image(jpeg(240 + i, 100 + statuses.len() as u32), "openai").request();
            from(&mut req, "2001:db8:77:1::1");
            statuses.push(app.send(req).await.status.as_u16());
        }
    }
    assert_eq!(statuses, vec![200, 200, 200, 429], "a second free account does not reset the address's limit");
}

#[tokio::test]
async fn forwarded_addresses_with_ports_count_as_their_address() {
    let openai = slow_openai(Duration::ZERO).await;
    let app = app_with_openai(&openai, &[("REELFIND_TRUST_PROXY", "true")]).await;
    let via = |xff: &str, i: u32| {
        let mut req = Upload::image(jpeg(260 + i, 100), "openai").request();
        req.headers_mut().insert("x-forwarded-for", xff.parse().unwrap());
        req
    };
    let mut statuses = Vec::new();
    for (i, xff) in
        ["198.51.100.1, 203.0.113.30:4711", "203.0.113.30:5000", "10.0.0.1, [2001:db8:5:6::1]:443", "2001:db8:5:6::2"]
            .into_iter()
            .enumerate()
    {
        app.clear_cookies();
        statuses.push(app.send(via(xff, i as u32)).await.status.as_u16());
    }
    assert_eq!(statuses, vec![200, 403, 200, 403]);
}
