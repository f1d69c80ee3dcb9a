//! What an attacker could do to the service with a body, a slow client or a stale
//! credential (issue 37): each test fails on the build before the fix.
use std::net::SocketAddr;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, header};
use futures::StreamExt;
use futures::stream::FuturesUnordered;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::identify_support::*;
use crate::server::Server;
use crate::support::TestApp;

fn from(req: &mut Request<Body>, ip: &str) {
    req.extensions_mut().insert(ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 40000)));
}

/// The peak resident memory of a process so far, in KB (`VmHWM`).
fn peak_rss_kb(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// Sends `POST /api/identify` with a multipart content type and a chunked body: `head`, then
/// filler without a boundary, until `total` bytes went out or the server stopped reading.
/// Returns the bytes sent and the status the server answered, if it could be read.
async fn stream_unending_form(origin: &str, head: &[u8], total: u64) -> (u64, Option<u16>) {
    let addr = origin.trim_start_matches("http://");
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut rd, mut wr) = stream.into_split();
    let reader = tokio::spawn(async move {
        let mut buf = Vec::new();
        let _ = tokio::time::timeout(Duration::from_secs(120), rd.read_to_end(&mut buf)).await;
        let text = String::from_utf8_lossy(&buf).into_owned();
        text.split(' ').nth(1).and_then(|s| s.parse::<u16>().ok())
    });
    let request_head = format!(
        "POST /api/identify HTTP/1.1\r\nHost: {addr}\r\nContent-Type: multipart/form-data; boundary=never-sent\r\n\
         Transfer-Encoding: chunked\r\n\r\n"
    );
    let mut sent = 0u64;
    let filler = vec![b'a'; 64 * 1024];
    let write = async {
        wr.write_all(request_head.as_bytes()).await?;
        wr.write_all(format!("{:x}\r\n", head.len()).as_bytes()).await?;
        wr.write_all(head).await?;
        wr.write_all(b"\r\n").await?;
        while sent < total {
            wr.write_all(format!("{:x}\r\n", filler.len()).as_bytes()).await?;
            wr.write_all(&filler).await?;
            wr.write_all(b"\r\n").await?;
            sent += filler.len() as u64;
        }
        wr.write_all(b"0\r\n\r\n").await?;
        std::io::Result::Ok(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(120), write).await;
    drop(wr);
    (sent, reader.await.unwrap())
}

const MB: u64 = 1 << 20;

#[tokio::test]
async fn bodies_that_never_reach_their_boundary_do_not_grow_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("REELFIND_DATA_DIR", dir.path().display().to_string()),
        ("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", "1000".to_owned()),
    ];
    let server = Server::start("boundaryless", dir.path(), &env).await;
    let before = peak_rss_kb(server.pid());
    // No boundary at all, then a part whose headers never end: 256 MB offered each time.
    let (sent, status) = stream_unending_form(&server.origin, b"", 256 * MB).await;
    assert!(sent < 64 * MB, "the server kept reading: {sent} bytes");
    assert!(matches!(status, Some(400) | None), "{status:?}");
    let head = b"--never-sent\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nX-Pad: ";
    let (sent, _) = stream_unending_form(&server.origin, head, 256 * MB).await;
    assert!(sent < 64 * MB, "the server kept reading: {sent} bytes");
    let grown_mb = (peak_rss_kb(server.pid()) - before) / 1024;
    assert!(grown_mb < 64, "the server grew by {grown_mb} MB");
    // And it still answers.
    let res = reqwest::get(server.url("/api/settings")).await.unwrap();
    assert_eq!(res.status(), 200);
}

#[tokio::test]
async fn a_refused_upload_is_read_away_raw_and_bounded() {
    let dir = tempfile::tempdir().unwrap();
    // One identification a minute per address: the second is refused (429) before it is read.
    let env = [
        ("REELFIND_DATA_DIR", dir.path().display().to_string()),
        ("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE", "1".to_owned()),
    ];
    let server = Server::start("refused", dir.path(), &env).await;
    let (_, first) = stream_unending_form(&server.origin, b"", MB).await;
    assert!(matches!(first, Some(400) | None), "{first:?}");
    let before = peak_rss_kb(server.pid());
    let (sent, _) = stream_unending_form(&server.origin, b"", 256 * MB).await;
    assert!(sent < 64 * MB, "the refusal kept reading: {sent} bytes");
    let grown_mb = (peak_rss_kb(server.pid()) - before) / 1024;
    assert!(grown_mb < 16, "the refusal grew the server by {grown_mb} MB");
    // A small refused upload is read away whole, so its sender reads the answer.
    let (_, status) = stream_unending_form(&server.origin, b"", 2 * MB).await;
    assert_eq!(status, Some(429));
}

/// A form whose `file` part starts and then never sends another byte.
fn stalled_upload(ip: &str) -> Request<Body> {
    let head = "------stall\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\n\
                Content-Type: image/jpeg\r\n\r\n\u{ff}";
    let body = futures::stream::once(async move { Ok::<_, std::io::Error>(bytes::Bytes::from(head.as_bytes())) })
        .chain(futures::stream::pending());
    let mut req = Request::post("/api/identify")
        .header(header::CONTENT_TYPE, "multipart/form-data; boundary=----stall")
        .body(Body::from_stream(body))
        .unwrap();
    from(&mut req, ip);
    req
}

async fn app_with_openai(extra: &[(&str, &str)]) -> (TestApp, wiremock::MockServer) {
    let openai = openai_fake(&answer("Heat", 1995, "movie", 0.8)).await;
    let mut env = vec![
        ("OPENAI_API_KEY".to_owned(), "k".to_owned()),
        ("OPENAI_BASE_URL".to_owned(), format!("{}/v1", openai.uri())),
        ("REELFIND_IDENTIFY_PER_ADDRESS_PER_MINUTE".to_owned(), "100".to_owned()),
    ];
    env.extend(extra.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
    (TestApp::with_env(env).await, openai)
}

/// Waits (a hang guard, not a timing) until `n` uploads are being read.
async fn until_reading(app: &TestApp, n: usize) {
    for _ in 0..2000 {
        if app.state.admission.uploads_reading() >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("only {} uploads being read", app.state.admission.uploads_reading());
}

#[tokio::test]
async fn slow_uploads_hold_no_place_of_the_media_work() {
    // Room for two identifications in all (one running, one queued).
    let (app, _openai) = app_with_openai(&[("REELFIND_MEDIA_JOBS", "1"), ("REELFIND_MEDIA_QUEUE", "1")]).await;
    let mut trickles: FuturesUnordered<_> =
        (1..=10).map(|i| app.send(stalled_upload(&format!("198.51.100.{i}")))).collect();
    let visitor = async {
        until_reading(&app, 10).await;
        let mut req = Upload::image(jpeg(640, 480), "openai").request();
        from(&mut req, "203.0.113.7");
        app.send(req).await
    };
    tokio::pin!(visitor);
    let res = tokio::select! {
        res = &mut visitor => res,
        Some(r) = trickles.next() => panic!("a stalled upload ended: {} {}", r.status, r.text()),
    };
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["title"], "Heat");
    assert_eq!(app.state.admission.uploads_reading(), 10);
    assert_eq!(app.state.admission.inflight(), 0);
}

#[tokio::test]
async fn one_address_may_send_only_a_few_uploads_at_once() {
    let (app, _openai) = app_with_openai(&[("REELFIND_IDENTIFY_PER_MINUTE", "100")]).await;
    // Signed in (a guest has one try per address): the same person, from one address.
    let me = app.person("sender").await;
    let signed_in = |mut req: Request<Body>| {
        let cookie = format!("{}={}", reelfind::middleware::auth::SESSION_COOKIE, me.session);
        req.headers_mut().insert(header::COOKIE, cookie.parse().unwrap());
        req
    };
    let mut trickles: FuturesUnordered<_> =
        (0..4).map(|_| app.send(signed_in(stalled_upload("198.51.100.1")))).collect();
    let fifth = async {
        until_reading(&app, 4).await;
        app.send(signed_in(stalled_upload("198.51.100.1"))).await
    };
    tokio::pin!(fifth);
    let res = tokio::select! {
        res = &mut fifth => res,
        Some(r) = trickles.next() => panic!("a stalled upload ended: {} {}", r.status, r.text()),
    };
    assert_eq!(res.status, 429, "{}", res.text());
    assert!(res.json()["error"].as_str().unwrap().starts_with("Too many requests."), "{}", res.text());
    let retry: u64 = res.header("retry-after").expect("Retry-After").parse().unwrap();
    assert!(retry >= 1);
    // Another address is not held back by it.
    let mut req = Upload::image(jpeg(320, 240), "openai").request();
    from(&mut req, "198.51.100.2");
    let res = app.send(signed_in(req)).await;
    assert_eq!(res.status, 200, "{}", res.text());
}

/// A push subscription of `user_id`, as a browser would have left it.
async fn subscribed_device(app: &TestApp, user_id: i64) {
    use sea_orm::{ActiveModelTrait, Set};
    reelfind::entities::push_subscription::ActiveModel {
        user_id: Set(user_id),
        endpoint: Set(format!("https://push.example/{user_id}")),
        p256dh: Set("BKey".into()),
        auth: Set("auth".into()),
        device_info: Set(None),
        created_at: Set(chrono::Utc::now()),
        last_success_at: Set(None),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap();
}

async fn push_devices(app: &TestApp, user_id: i64) -> u64 {
    use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
    reelfind::entities::push_subscription::Entity::find()
        .filter(reelfind::entities::push_subscription::Column::UserId.eq(user_id))
        .count(&app.db)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_password_change_revokes_the_keys_made_before_it() {
    let app = TestApp::new().await;
    let res = crate::accounts::register(&app, "owner", "first-secret").await;
    let id = res.json()["id"].as_i64().unwrap();
    // A key made from the (stolen) session reads the owner's history.
    let (_, key) = crate::api_keys::new_key(&app, "made by an intruder").await;
    subscribed_device(&app, id).await;
    assert_eq!(crate::api_keys::keyed(&app, &key, crate::api_keys::get("/api/history")).await.status, 200);
    let res = app
        .post_json(
            "/api/account/password",
            &serde_json::json!({"currentPassword": "first-secret", "newPassword": "second-secret"}),
        )
        .await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["revokedApiKeys"], 1);
    assert_eq!(res.json()["removedPushDevices"], 1);
    let message = res.json()["message"].as_str().unwrap().to_owned();
    assert!(message.contains("1 API key was revoked"), "{message}");
    assert_eq!(crate::api_keys::keyed(&app, &key, crate::api_keys::get("/api/history")).await.status, 401);
    assert_eq!(push_devices(&app, id).await, 0);
    // The person's own browser stays signed in and can make a new key.
    assert!(!crate::api_keys::new_key(&app, "mine").await.1.is_empty());
}

#[tokio::test]
async fn a_password_reset_revokes_every_key() {
    let app = TestApp::new().await;
    let res = crate::accounts::register(&app, "resetter", "first-secret").await;
    let id = res.json()["id"].as_i64().unwrap();
    let (_, key) = crate::api_keys::new_key(&app, "old").await;
    subscribed_device(&app, id).await;
    app.clear_cookies();
    let token = reelfind::services::password_reset::issue(&app.db, id).await.unwrap();
    let res =
        app.post_json("/api/reset-password", &serde_json::json!({"token": token, "password": "second-secret"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["revokedApiKeys"], 1);
    assert_eq!(res.json()["removedPushDevices"], 1);
    assert!(res.json()["message"].as_str().unwrap().contains("1 API key was revoked"));
    assert_eq!(crate::api_keys::keyed(&app, &key, crate::api_keys::get("/api/history")).await.status, 401);
    assert_eq!(push_devices(&app, id).await, 0);
}

/// `req` sent from `person`'s browser, outside the shared jar (safe in parallel).
fn as_person(person: &crate::support::Person, mut req: Request<Body>) -> Request<Body> {
    let cookie = format!("{}={}", reelfind::middleware::auth::SESSION_COOKIE, person.session);
    req.headers_mut().insert(header::COOKIE, cookie.parse().unwrap());
    req
}

fn review(body: serde_json::Value) -> Request<Body> {
    Request::post("/api/testimonials")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

async fn reviews_in_db(app: &TestApp) -> u64 {
    use sea_orm::{EntityTrait, PaginatorTrait};
    reelfind::entities::testimonial::Entity::find().count(&app.db).await.unwrap()
}

#[tokio::test]
async fn forty_parallel_reviews_give_exactly_the_daily_ten() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let posts = (0..40).map(|i| {
        app.send(as_person(&ada, review(serde_json::json!({"rating": 5, "review": format!("Review number {i}")}))))
    });
    let results = futures::future::join_all(posts).await;
    let statuses: Vec<u16> = results.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 10, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 30, "{statuses:?}");
    assert_eq!(reviews_in_db(&app).await, 10);
}

#[tokio::test]
async fn parallel_reviews_of_one_identification_give_exactly_one() {
    let app = TestApp::new().await;
    let ada = app.person("ada").await;
    let id = crate::testimonials::add_identification(&app, Some(&ada), "The Matrix").await;
    let posts = (0..8).map(|i| {
        app.send(as_person(
            &ada,
            review(serde_json::json!({"rating": 5, "review": format!("Take {i}"), "identificationId": id})),
        ))
    });
    let statuses: Vec<u16> = futures::future::join_all(posts).await.iter().map(|r| r.status.as_u16()).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 409).count(), 7, "{statuses:?}");
    assert_eq!(reviews_in_db(&app).await, 1);
}

fn sign_in_from(ip: &str, username: &str, password: &str) -> Request<Body> {
    let mut req = Request::post("/api/login")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::json!({"username": username, "password": password}).to_string()))
        .unwrap();
    from(&mut req, ip);
    req
}

#[tokio::test]
async fn guesses_from_elsewhere_never_lock_the_owner_out() {
    let app = TestApp::new().await;
    app.register("vera", "vera-secret").await;
    app.clear_cookies();
    // An attacker hammers the account from one address until that address is refused, and
    // goes on after it is.
    let mut statuses = Vec::new();
    for _ in 0..40 {
        let res = app.send(sign_in_from("203.0.113.66", "vera", "guess-guess")).await;
        statuses.push(res.status.as_u16());
        app.clear_cookies();
    }
    assert_eq!(statuses.iter().filter(|s| **s == 401).count(), 8, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|s| **s == 429).count(), 32, "{statuses:?}");
    // The owner, at home, signs in at once.
    let res = app.send(sign_in_from("198.51.100.20", "vera", "vera-secret")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    app.clear_cookies();
    // The attacker's address stays refused, even with the right password.
    assert_eq!(app.send(sign_in_from("203.0.113.66", "vera", "vera-secret")).await.status, 429);
}

#[tokio::test]
async fn names_fold_by_unicode_on_every_database() {
    let app = TestApp::new().await;
    let res = app.register("Émile", "emile-secret").await;
    assert_eq!(res.status, 201, "{}", res.text());
    app.clear_cookies();
    // Signs in by the name in any case.
    assert_eq!(app.sign_in("émile", "emile-secret").await.status, 200);
    app.clear_cookies();
    assert_eq!(app.sign_in("ÉMILE", "emile-secret").await.status, 200);
    app.clear_cookies();
    // And nobody else may take the name in another case.
    let res = app
        .post_json(
            "/api/register",
            &serde_json::json!({"username": "émile", "email": "other@example.com", "password": "other-secret"}),
        )
        .await;
    assert_eq!(res.status, 409, "{}", res.text());
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(reelfind::entities::user::Entity::find().count(&app.db).await.unwrap(), 1);
}

#[tokio::test]
async fn a_reused_answer_carries_nothing_of_the_other_person() {
    let (app, openai) = app_with_openai(&[]).await;
    let ada = app.person("ada").await;
    let bob = app.person("bob").await;
    let file = jpeg(300, 200);
    let first = app.send(as_person(&ada, Upload::image(file.clone(), "openai").request())).await;
    assert_eq!(first.status, 200, "{}", first.text());
    assert!(!first.json()["reasons"].as_array().unwrap().is_empty(), "ada's own answer has the engine's reasons");
    // Bob sends the same bytes: the engine is not paid again...
    let second = app.send(as_person(&bob, Upload::image(file.clone(), "openai").request())).await;
    assert_eq!(second.status, 200, "{}", second.text());
    assert_eq!(openai.received_requests().await.unwrap().len(), 1);
    let b = second.json();
    // ...and he gets the title and its facts as his own answer, nothing of Ada's.
    assert_eq!(b["title"], "Heat");
    assert_eq!(b["cached"], false, "nothing tells him someone identified this file");
    assert_eq!(b["reasons"], serde_json::json!([]));
    assert_eq!(b["engineVotes"], serde_json::json!([]));
    assert!(b["audioAnalysisResults"].is_null());
    assert_ne!(b["identificationId"], first.json()["identificationId"]);
    assert_eq!(b["isOwner"], true);
    // Ada's own second upload is her whole earlier answer.
    let again = app.send(as_person(&ada, Upload::image(file, "openai").request())).await;
    assert_eq!(again.json()["cached"], true);
    assert_eq!(again.json()["reasons"], first.json()["reasons"]);
    assert_eq!(openai.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn with_verification_on_a_taken_address_is_answered_like_a_new_one() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "require_email_verification", "true").await.unwrap();
    let register = |username: &str, email: &str| {
        let body = serde_json::json!({"username": username, "email": email, "password": "a-long-secret"});
        let req = Request::post("/api/register")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(body.to_string()))
            .unwrap();
        app.send(req)
    };
    let new = register("alpha", "alpha@example.com").await;
    assert_eq!(new.status, 201, "{}", new.text());
    let taken = register("beta", "Alpha@example.com").await;
    // The same answer a new address gets, field for field.
    assert_eq!(taken.status, 201, "{}", taken.text());
    let (a, b) = (new.json(), taken.json());
    assert_eq!(a.as_object().unwrap().keys().collect::<Vec<_>>(), b.as_object().unwrap().keys().collect::<Vec<_>>());
    assert_eq!(b["emailVerificationRequired"], true);
    assert_eq!(b["username"], "beta");
    assert!(taken.header("set-cookie").is_none_or(|c| !c.contains(reelfind::middleware::auth::SESSION_COOKIE)));
    // Nobody new exists; the address's owner was told.
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(reelfind::entities::user::Entity::find().count(&app.db).await.unwrap(), 1);
    let mails = crate::accounts_mail::outbox_files(&app);
    assert_eq!(mails.len(), 2, "the verification mail, then the notice");
    assert!(mails.iter().any(|m| m.contains("already have") && m.contains("alpha@example.com")), "{mails:?}");
    // A taken username is still said: usernames are public.
    assert_eq!(register("alpha", "someone@example.com").await.status, 409);
}

#[tokio::test]
async fn every_other_body_is_bounded_too() {
    let app = TestApp::new().await;
    let big = "x".repeat(3 << 20);
    // JSON, a plain form, and a keyed request's body: 413 in our error shape, not read whole.
    let json = Request::post("/api/login")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(serde_json::json!({"username": big, "password": "p"}).to_string()))
        .unwrap();
    let res = app.send(json).await;
    assert_eq!(res.status, 413, "{}", res.text());
    assert!(res.json()["error"].as_str().is_some());
    let form = Request::post("/api/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(format!("username={big}&password=p")))
        .unwrap();
    assert_eq!(app.send(form).await.status, 413);
    let keyed = Request::post("/api/testimonials")
        .header(header::AUTHORIZATION, "Bearer rf_unknownkey")
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from(big.clone()))
        .unwrap();
    assert_eq!(app.send(keyed).await.status, 401, "an unknown key is refused before its body is read");
}
