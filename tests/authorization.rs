//! Who may call what, read from the OpenAPI document rather than from a list kept by hand:
//! every operation under `/api/admin/` (and every admin page the router serves) is called
//! as a guest, as a signed-in person who is not an administrator, and with API keys (a
//! person's and an administrator's), and must refuse each of them; the same calls made by
//! the administrator succeed, so a refusal is the guard's and not a malformed request.
//! Likewise every operation that names one person's thing (a path id, or an id or endpoint
//! in the body) is called by a second person, and the owner's things are unchanged after.
//! A new operation is covered the day it is documented: the test fails until it knows how
//! to call it.
use std::collections::BTreeMap;

use axum::body::Body;
use axum::http::{Method, Request, header};
use reelfind::library::Quiet;
use serde_json::{Value, json};

use crate::api_keys::{keyed, new_key};
use crate::identify_support::jpeg;
use crate::library::library_folder;
use crate::support::{Person, TestApp, TestResponse};

/// One documented operation: method, path template (`/api/admin/blog/{id}`) and its object.
struct Operation {
    method: Method,
    path: String,
    op: Value,
}

impl Operation {
    fn name(&self) -> String {
        format!("{} {}", self.method, self.path)
    }
}

async fn operations(app: &TestApp) -> Vec<Operation> {
    let res = app.get("/api/openapi.json").await;
    assert_eq!(res.status, 200);
    let doc = res.json();
    let mut out = Vec::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (m, op) in item.as_object().unwrap() {
            let Ok(method) = Method::from_bytes(m.to_uppercase().as_bytes()) else { continue };
            if matches!(method, Method::GET | Method::POST | Method::PUT | Method::PATCH | Method::DELETE) {
                out.push(Operation { method, path: path.clone(), op: op.clone() });
            }
        }
    }
    assert!(out.len() >= 50, "only {} operations documented", out.len());
    out
}

/// What a call sends besides its method and path.
#[derive(Clone)]
enum Payload {
    None,
    Json(Value),
    Form(String),
    /// A multipart body with one JPEG in the field `file`.
    Image,
}

const BOUNDARY: &str = "reelfind-authorization-test";

fn request(method: &Method, path: &str, payload: &Payload) -> Request<Body> {
    let b = Request::builder().method(method.clone()).uri(path);
    match payload {
        Payload::None => b.body(Body::empty()),
        Payload::Json(v) => b.header(header::CONTENT_TYPE, "application/json").body(Body::from(v.to_string())),
        Payload::Form(f) => {
            b.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded").body(Body::from(f.clone()))
        }
        Payload::Image => {
            let mut body = format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"still.jpg\"\r\nContent-Type: image/jpeg\r\n\r\n"
            )
            .into_bytes();
            body.extend(jpeg(320, 180));
            body.extend(format!("\r\n--{BOUNDARY}--\r\n").bytes());
            b.header(header::CONTENT_TYPE, format!("multipart/form-data; boundary={BOUNDARY}")).body(Body::from(body))
        }
    }
    .unwrap()
}

/// Who is calling.
enum Caller<'a> {
    Guest,
    Person(&'a Person),
    Key(&'a str),
}

async fn call(app: &TestApp, who: &Caller<'_>, method: &Method, path: &str, payload: &Payload) -> TestResponse {
    let req = request(method, path, payload);
    match who {
        Caller::Guest => app.send_as(None, req).await,
        Caller::Person(p) => app.send_as(Some(p), req).await,
        Caller::Key(k) => keyed(app, k, req).await,
    }
}

/// The things an administrator can act on, made before the calls, by their kind.
struct Fixtures {
    post: i64,
    video: u32,
    testimonial: i64,
    person: i64,
    key: i64,
    memory: i64,
}

impl Fixtures {
    /// `path` with its `{id}` replaced by the id of the thing that kind of path acts on.
    fn concrete(&self, path: &str) -> String {
        if !path.contains('{') {
            return path.to_owned();
        }
        let id = [
            ("/admin/blog/", self.post.to_string()),
            ("/admin/library/", self.video.to_string()),
            ("/admin/testimonials/", self.testimonial.to_string()),
            ("/admin/users/", self.person.to_string()),
            ("/admin/api-keys/", self.key.to_string()),
            ("/admin/corrections/", self.memory.to_string()),
        ]
        .into_iter()
        .find(|(kind, _)| path.contains(kind))
        .map(|(_, id)| id)
        .unwrap_or_else(|| panic!("{path}: the test does not know what its id names; add the kind to Fixtures"));
        let concrete = regex::Regex::new(r"\{[^}]+\}").unwrap().replace_all(path, id.as_str()).into_owned();
        assert!(!concrete.contains('{'), "{path}");
        concrete
    }
}

/// A body the administrator's call is accepted with, for each admin operation that takes
/// one. An operation missing here fails the test: say how it is called.
fn admin_payload(op: &Operation, post_version: i64) -> Payload {
    let name = op.name();
    let takes_body = op.op.get("requestBody").is_some();
    let payload = match name.as_str() {
        "PUT /api/admin/api-keys/{id}/quota" | "PUT /api/admin/users/{id}/api-quota" => {
            Payload::Json(json!({"perMinute": 7, "perDay": null, "concurrent": 1}))
        }
        "POST /api/admin/blog" => {
            Payload::Json(json!({"title": "Made by the guard test", "content": "Body", "status": "draft"}))
        }
        "PUT /api/admin/blog/{id}" => Payload::Json(
            json!({"version": post_version, "title": "Changed by the guard test", "content": "Changed", "status": "draft"}),
        ),
        "POST /api/admin/blog/images" => Payload::Image,
        "POST /api/admin/blog/preview" => Payload::Json(json!({"content": "# Preview"})),
        "PATCH /api/admin/library/{id}" => Payload::Json(json!({"title": "Renamed by the guard test"})),
        "PUT /api/admin/settings" => Payload::Json(json!({"site_name": "Renamed by the guard test"})),
        "PATCH /api/admin/testimonials/{id}" => Payload::Json(json!({"status": "featured"})),
        "POST /api/admin/corrections/{id}" => {
            Payload::Json(json!({"action": "reject", "tmdbId": 949, "type": "movie"}))
        }
        _ if takes_body => panic!("{name} takes a body: add the one an administrator sends to admin_payload"),
        _ => Payload::None,
    };
    assert_eq!(takes_body, !matches!(payload, Payload::None), "{name}: the document and admin_payload disagree");
    payload
}

/// Every admin page route the router serves, read from the page modules' source (pages are
/// not in the OpenAPI document): `(method, path template)`, the open login page `/admin` left out.
fn admin_pages() -> Vec<(Method, String)> {
    let route = regex::Regex::new(r#"\.route\(\s*"(/admin[^"]*)",\s*((?:[a-z_]+\([^()]*(?:\([^()]*\))?[^()]*\)\.?)+)"#)
        .unwrap();
    let verb = regex::Regex::new(r"(?:^|\.)(get|post|put|patch|delete)\(").unwrap();
    let mut out = Vec::new();
    let mut stack = vec![std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/routes")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let src = std::fs::read_to_string(&path).unwrap();
            for c in route.captures_iter(&src) {
                if &c[1] == "/admin" {
                    continue;
                }
                let methods: Vec<_> = verb.captures_iter(&c[2]).map(|v| v[1].to_uppercase()).collect();
                assert!(!methods.is_empty(), "{}: no method read from {}", path.display(), &c[0]);
                for m in methods {
                    out.push((Method::from_bytes(m.as_bytes()).unwrap(), c[1].to_owned()));
                }
            }
        }
    }
    out.sort_by(|a, b| (a.1.as_str(), a.0.as_str()).cmp(&(b.1.as_str(), b.0.as_str())));
    out
}

/// What every admin read says, as the administrator sees it (to show refused calls changed nothing).
async fn admin_view(app: &TestApp, admin: &Person, reads: &[String]) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    for path in reads {
        let res = call(app, &Caller::Person(admin), &Method::GET, path, &Payload::None).await;
        assert_eq!(res.status, 200, "{path} as the administrator: {}", res.text());
        let mut v = res.json();
        forget_use(&mut v);
        out.insert(path.clone(), v);
    }
    out
}

/// Drops `lastUsedAt`: a refused call with a key still counts as the key's use.
fn forget_use(v: &mut Value) {
    match v {
        Value::Object(m) => {
            m.remove("lastUsedAt");
            m.values_mut().for_each(forget_use);
        }
        Value::Array(a) => a.iter_mut().for_each(forget_use),
        _ => {}
    }
}

/// A remembered answer (the answer memory), as the pipeline stores one.
async fn remembered_answer(app: &TestApp) -> i64 {
    use reelfind::entities::remembered_answer;
    use sea_orm::{ActiveModelTrait, Set};
    let now = chrono::Utc::now();
    remembered_answer::ActiveModel {
        tmdb_id: Set(603),
        media_type: Set("movie".into()),
        season: Set(None),
        episode: Set(None),
        title: Set("The Matrix".into()),
        year: Set(Some("1999".into())),
        engine: Set("openai".into()),
        confidence: Set(0.9),
        media_kind: Set("image".into()),
        supporters: Set(0),
        support_weight: Set(0.0),
        doubt_weight: Set(0.0),
        standing: Set(true),
        pinned: Set(false),
        previous_title: Set(None),
        corrected_at: Set(None),
        created_at: Set(now),
        updated_at: Set(now),
        ..Default::default()
    }
    .insert(&app.db)
    .await
    .unwrap()
    .id
}

/// An identification of `owner` stored as the pipeline stores one (not shared).
async fn stored_identification(app: &TestApp, owner: &Person, title: &str) -> String {
    use reelfind::entities::identification;
    use sea_orm::{ActiveModelTrait, Set};
    let id = reelfind::identify::store::new_id();
    identification::ActiveModel {
        id: Set(id.clone()),
        user_id: Set(Some(owner.id)),
        title: Set(title.into()),
        year: Set(Some("1999".into())),
        media_type: Set("movie".into()),
        poster_url: Set(None),
        confidence: Set(0.9),
        rating: Set(Some(8.1)),
        engine: Set("openai".into()),
        mode: Set("auto".into()),
        content_hash: Set("0".repeat(64)),
        result: Set(json!({"identificationId": id, "title": title, "year": "1999", "type": "movie"}).to_string()),
        total_ms: Set(900),
        created_at: Set(chrono::Utc::now()),
        shared: Set(false),
        memory_id: Set(None),
    }
    .insert(&app.db)
    .await
    .unwrap();
    id
}

/// An administrator (signed in through the login route) as a [`Person`] of the test.
async fn admin_person(app: &TestApp, username: &str) -> Person {
    let before = app.cookie(reelfind::middleware::auth::SESSION_COOKIE);
    app.clear_cookies();
    app.admin(username).await;
    let me = app.get("/api/user").await.json();
    let person = app.person_from_jar(username, me["id"].as_i64().unwrap());
    app.clear_cookies();
    if let Some(s) = before {
        app.set_cookie(reelfind::middleware::auth::SESSION_COOKIE, &s);
    }
    person
}

#[tokio::test]
async fn every_admin_operation_refuses_guests_people_and_keys() {
    let app = TestApp::new().await;
    let admin = admin_person(&app, "root").await;
    let olivia = app.person("olivia").await;

    // What the administrator can act on: a post, a library video, a review, a person, a key.
    let folder = library_folder();
    let report = app.state.library.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!(report.added, 1, "{report:?}");
    let video = app.state.library.list()[0].id;
    let res = call(
        &app,
        &Caller::Person(&admin),
        &Method::POST,
        "/api/admin/blog",
        &Payload::Json(json!({"title": "The guarded post", "content": "Text", "status": "draft"})),
    )
    .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let (post, post_version) = (res.json()["id"].as_i64().unwrap(), res.json()["version"].as_i64().unwrap());
    let seen = stored_identification(&app, &olivia, "The Matrix").await;
    let res = call(
        &app,
        &Caller::Person(&olivia),
        &Method::POST,
        "/api/testimonials",
        &Payload::Json(json!({"rating": 5, "review": "Found it in seconds.", "identificationId": seen})),
    )
    .await;
    assert_eq!(res.status, 201, "{}", res.text());
    let testimonial = res.json()["id"].as_i64().unwrap();
    let (person_key_id, person_key) = {
        app.set_cookie(reelfind::middleware::auth::SESSION_COOKIE, &olivia.session());
        let k = new_key(&app, "olivia's script").await;
        app.clear_cookies();
        k
    };
    let admin_key = {
        app.set_cookie(reelfind::middleware::auth::SESSION_COOKIE, &admin.session());
        let (_, k) = new_key(&app, "root's script").await;
        app.clear_cookies();
        k
    };
    let memory = remembered_answer(&app).await;
    let fx = Fixtures { post, video, testimonial, person: olivia.id, key: person_key_id, memory };

    let all = operations(&app).await;
    let admin_ops: Vec<&Operation> = all.iter().filter(|o| o.path.starts_with("/api/admin/")).collect();
    for o in &all {
        let tagged = o.op["tags"].as_array().is_some_and(|t| t.iter().any(|t| t == "admin"));
        assert_eq!(
            tagged,
            o.path.starts_with("/api/admin/"),
            "{}: the admin tag and the admin path go together",
            o.name()
        );
    }
    assert!(admin_ops.len() >= 20, "only {} admin operations documented", admin_ops.len());
    let reads: Vec<String> =
        admin_ops.iter().filter(|o| o.method == Method::GET).map(|o| fx.concrete(&o.path)).collect();
    let before = admin_view(&app, &admin, &reads).await;

    // The refusals, operation by operation.
    let callers = [
        ("a guest", Caller::Guest, 401),
        ("a signed-in person", Caller::Person(&olivia), 403),
        ("a person's API key", Caller::Key(&person_key), 403),
        ("an administrator's API key", Caller::Key(&admin_key), 403),
    ];
    let mut refused = 0;
    for o in &admin_ops {
        let path = fx.concrete(&o.path);
        let payload = admin_payload(o, post_version);
        for (who, caller, status) in &callers {
            let res = call(&app, caller, &o.method, &path, &payload).await;
            assert_eq!(res.status, *status, "{} by {who}: {}", o.name(), res.text());
            let code = res.json()["code"].as_str().unwrap_or_default().to_owned();
            assert!(!code.is_empty(), "{} by {who}: no error code: {}", o.name(), res.text());
            refused += 1;
        }
    }
    let pages = admin_pages();
    assert!(pages.len() >= 15, "only {} admin pages found in src/routes: {pages:?}", pages.len());
    for (method, template) in &pages {
        let path = fx.concrete(template);
        let payload =
            if *method == Method::GET { Payload::None } else { Payload::Form("title=x&status=featured".into()) };
        for (who, caller, _) in &callers {
            let res = call(&app, caller, method, &path, &payload).await;
            match caller {
                // A page sends browsers to the admin login.
                Caller::Guest | Caller::Person(_) => {
                    assert_eq!(res.status, 303, "{method} {template} by {who}: {}", res.text());
                    assert_eq!(res.header("location").as_deref(), Some("/admin"), "{method} {template} by {who}");
                }
                Caller::Key(_) => assert_eq!(res.status, 403, "{method} {template} by {who}: {}", res.text()),
            }
            refused += 1;
        }
    }
    let after = admin_view(&app, &admin, &reads).await;
    for (path, seen) in &before {
        assert_eq!(&after[path], seen, "a refused call changed what {path} says");
    }

    // The same calls by the administrator are accepted: the refusals above were the guard's.
    // Reads first, deletions last.
    let rank = |m: &Method| {
        [Method::GET, Method::POST, Method::PUT, Method::PATCH, Method::DELETE].iter().position(|x| x == m)
    };
    let mut ordered = admin_ops.clone();
    ordered.sort_by_key(|o| rank(&o.method));
    for o in ordered {
        let res =
            call(&app, &Caller::Person(&admin), &o.method, &fx.concrete(&o.path), &admin_payload(o, post_version))
                .await;
        assert!(res.status.is_success(), "{} by the administrator: {} {}", o.name(), res.status, res.text());
    }
    eprintln!("{refused} refused calls over {} admin operations and {} admin pages", admin_ops.len(), pages.len());
}

/// How a second person is pointed at the owner's thing in one operation.
#[derive(Clone)]
struct Target {
    path: String,
    payload: Payload,
}

#[tokio::test]
async fn every_operation_on_a_persons_things_refuses_a_second_person() {
    let app =
        TestApp::with_env([("REELFIND_PUSH_ALLOW_HTTP", "true"), ("REELFIND_OUTBOUND_ALLOW_PRIVATE", "true")]).await;
    let olivia = app.person("olivia").await;
    let mallory = app.person("mallory").await;

    // Olivia's things: an identification, a collection item, a key, a push device, another session.
    let seen = stored_identification(&app, &olivia, "The Matrix").await;
    let as_olivia = |method: Method, path: &str, payload: Payload| {
        let req = request(&method, path, &payload);
        app.send_as(Some(&olivia), req)
    };
    let res = as_olivia(
        Method::POST,
        "/api/collections/items",
        Payload::Json(json!({"title": "The Matrix", "year": "1999", "tmdbId": 603})),
    )
    .await;
    assert!(res.status.is_success(), "{}", res.text());
    let item = res.json()["id"].as_i64().expect("the item's id");
    app.set_cookie(reelfind::middleware::auth::SESSION_COOKIE, &olivia.session());
    let (key_id, key) = new_key(&app, "olivia's script").await;
    app.clear_cookies();
    let endpoint = "https://push.example/device/olivia";
    let res = as_olivia(
        Method::POST,
        "/api/notifications/subscribe",
        Payload::Json(json!({"subscription": {
            "endpoint": endpoint,
            "keys": {
                "p256dh": "BLMbF9ffKBiWQLCKvTHb6LO8Nb6dcUh6TItC455vu2kElga6PQvUmaFyCdykxY2nOSSL3yKgfbmFLRTUaGv4yV8",
                "auth": "xS03Fi5ErfTNH_l9WHE9Ig"
            }
        }})),
    )
    .await;
    assert_eq!(res.status, 200, "{}", res.text());
    app.clear_cookies();
    assert_eq!(app.sign_in("olivia", "secret123").await.status, 200, "olivia on a second device");
    app.clear_cookies();
    let sessions = as_olivia(Method::GET, "/api/account/sessions", Payload::None).await.json();
    let other_session = sessions
        .as_array()
        .expect("sessions")
        .iter()
        .find(|s| s["current"] != true)
        .and_then(|s| s["id"].as_str())
        .expect("olivia's other session")
        .to_owned();

    // Each documented operation that names a person's thing, and how it names Olivia's.
    let targets: BTreeMap<&str, Target> = [
        ("DELETE /api/account/sessions/{id}", format!("/api/account/sessions/{other_session}"), Payload::None),
        (
            "POST /api/account/sessions/{id}/revoke",
            format!("/api/account/sessions/{other_session}/revoke"),
            Payload::None,
        ),
        ("DELETE /api/collections/items/{id}", format!("/api/collections/items/{item}"), Payload::None),
        ("GET /api/identification/{id}", format!("/api/identification/{seen}"), Payload::None),
        (
            "PUT /api/identification/{id}/sharing",
            format!("/api/identification/{seen}/sharing"),
            Payload::Json(json!({"shared": true})),
        ),
        ("DELETE /api/keys/{id}", format!("/api/keys/{key_id}"), Payload::None),
        (
            "POST /api/identification/{id}/feedback",
            format!("/api/identification/{seen}/feedback"),
            Payload::Json(json!({"verdict": "wrong"})),
        ),
        (
            "POST /api/testimonials",
            "/api/testimonials".into(),
            Payload::Json(json!({"rating": 1, "review": "Not my scene.", "identificationId": seen})),
        ),
        (
            "POST /api/notifications/unsubscribe",
            "/api/notifications/unsubscribe".into(),
            Payload::Json(json!({"endpoint": endpoint})),
        ),
        ("GET /api/notifications/status", format!("/api/notifications/status?endpoint={endpoint}"), Payload::None),
    ]
    .into_iter()
    .map(|(k, path, payload)| (k, Target { path, payload }))
    .collect();

    // The document decides which operations those are: a path parameter, or a body field
    // naming an identification or a push device, outside the admin and public-token routes.
    let names_a_thing = |o: &Operation| {
        let public_token = o.path.starts_with("/api/verify-email/") || o.path.starts_with("/api/library/preview/");
        let in_path = o.path.contains('{');
        let schema = o.op["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str().unwrap_or_default();
        let in_body = ["NewTestimonial", "UnsubscribeBody"].iter().any(|s| schema.ends_with(s));
        let in_query = o.op["parameters"].as_array().is_some_and(|ps| ps.iter().any(|p| p["name"] == "endpoint"));
        !o.path.starts_with("/api/admin/") && !public_token && (in_path || in_body || in_query)
    };
    let all = operations(&app).await;
    let mut checked = 0;
    for o in all.iter().filter(|o| names_a_thing(o)) {
        let name = o.name();
        let t = targets
            .get(name.as_str())
            .unwrap_or_else(|| panic!("{name} names a person's thing: add to the targets how"));
        let res = app.send_as(Some(&mallory), request(&o.method, &t.path, &t.payload)).await;
        match name.as_str() {
            // Olivia's device is not Mallory's: as if it were not there.
            "GET /api/notifications/status" => {
                assert_eq!(res.status, 200, "{name}: {}", res.text());
                assert_eq!(res.json()["isSubscribed"], false, "{name}: {}", res.text());
                assert_eq!(res.json()["subscriptionCount"], 0, "{name}: {}", res.text());
            }
            "POST /api/notifications/unsubscribe" => {
                assert!(res.status.is_success() || res.status == 404, "{name}: {} {}", res.status, res.text());
            }
            _ => assert!(
                matches!(res.status.as_u16(), 403 | 404),
                "{name} by another person: {} {}",
                res.status,
                res.text()
            ),
        }
        checked += 1;
        // Mallory's API key reaches no further where keys are allowed.
        if reelfind::middleware::api_keys::keyed_route(&o.method, &t.path) {
            app.set_cookie(reelfind::middleware::auth::SESSION_COOKIE, &mallory.session());
            let (_, mallory_key) = new_key(&app, &format!("mallory {checked}")).await;
            app.clear_cookies();
            let res = keyed(&app, &mallory_key, request(&o.method, &t.path, &t.payload)).await;
            assert_eq!(res.status, 404, "{name} with another person's key: {}", res.text());
        }
    }
    assert_eq!(checked, targets.len(), "a target no documented operation uses: {:?}", targets.keys());

    // Olivia's things are all as they were.
    let res = as_olivia(Method::GET, &format!("/api/identification/{seen}"), Payload::None).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let shared = app.send_as(None, request(&Method::GET, &format!("/api/identification/{seen}"), &Payload::None)).await;
    assert_eq!(shared.status, 404, "still not shared: {}", shared.text());
    let items = as_olivia(Method::GET, "/api/collections/items", Payload::None).await.json();
    assert_eq!(items.to_string().matches("The Matrix").count(), 1, "{items}");
    assert_eq!(keyed(&app, &key, crate::api_keys::get("/api/history")).await.status, 200, "the key still works");
    let sessions = as_olivia(Method::GET, "/api/account/sessions", Payload::None).await.json();
    assert_eq!(sessions.as_array().unwrap().len(), 2, "{sessions}");
    let status = as_olivia(Method::GET, "/api/notifications/status", Payload::None).await.json();
    assert_eq!(status["subscriptionCount"], 1, "{status}");
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(
        reelfind::entities::testimonial::Entity::find().count(&app.db).await.unwrap(),
        0,
        "no review of hers by him"
    );
}
