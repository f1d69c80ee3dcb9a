//! `TestApp`: the real router, driven in-process, with a cookie jar like a browser's.
#![allow(dead_code)]
use std::collections::HashMap;
use std::sync::Mutex;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use reelfind::config::{Config, Env};
use reelfind::state::AppState;
use sea_orm::{ConnectionTrait, DatabaseConnection};
use tower::ServiceExt;

pub const ORIGIN: &str = "http://localhost:3000";

pub struct TestApp {
    pub router: Router,
    pub state: AppState,
    pub db: DatabaseConnection,
    cookies: Mutex<HashMap<String, String>>,
    _data_dir: tempfile::TempDir,
    /// Last, so the app's own handles on the database go first.
    _test_db: TestDb,
}

pub struct TestResponse {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: bytes::Bytes,
}

impl TestResponse {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    pub fn html(&self) -> scraper::Html {
        scraper::Html::parse_document(&self.text())
    }
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers.get(name).and_then(|v| v.to_str().ok()).map(str::to_owned)
    }
    /// Text of the first element matching `css`, whitespace collapsed.
    pub fn select_text(&self, css: &str) -> Option<String> {
        let doc = self.html();
        let sel = scraper::Selector::parse(css).expect("bad selector");
        doc.select(&sel)
            .next()
            .map(|e| e.text().collect::<Vec<_>>().join(" ").split_whitespace().collect::<Vec<_>>().join(" "))
    }
    pub fn select_all_text(&self, css: &str) -> Vec<String> {
        let doc = self.html();
        let sel = scraper::Selector::parse(css).expect("bad selector");
        doc.select(&sel)
            .map(|e| e.text().collect::<Vec<_>>().join(" ").split_whitespace().collect::<Vec<_>>().join(" "))
            .collect()
    }
    pub fn select_attr(&self, css: &str, attr: &str) -> Option<String> {
        let doc = self.html();
        let sel = scraper::Selector::parse(css).expect("bad selector");
        doc.select(&sel).next().and_then(|e| e.value().attr(attr)).map(str::to_owned)
    }
    pub fn count(&self, css: &str) -> usize {
        let doc = self.html();
        let sel = scraper::Selector::parse(css).expect("bad selector");
        doc.select(&sel).count()
    }
}

/// A database for one test: SQLite in memory, or a PostgreSQL database of its own that is
/// dropped when this is dropped (the test's end, passed or failed). Derefs to the connection.
pub struct TestDb {
    pub conn: DatabaseConnection,
    _pg: Option<PgDatabase>,
}

impl std::ops::Deref for TestDb {
    type Target = DatabaseConnection;
    fn deref(&self) -> &DatabaseConnection {
        &self.conn
    }
}

/// A fresh, migrated database for one test. On PostgreSQL it is a copy of a template the
/// run migrates once ([`migrated_pg_database`]): a copy takes a fraction of the time that
/// running every migration again takes, and the suite makes hundreds.
pub async fn fresh_db() -> TestDb {
    if let Some(admin_url) = pg_url() {
        let pg = migrated_pg_database(&admin_url).await;
        let conn = reelfind::db::connect(&pg.url).await.expect("postgres test database");
        return TestDb { conn, _pg: Some(pg) };
    }
    let db = empty_db().await;
    reelfind::db::migrate(&db.conn).await.expect("migrate");
    db
}

/// A new PostgreSQL database with every migration applied: `CREATE DATABASE ... TEMPLATE`
/// of one the test process migrated the first time it was asked. Nobody stays connected to
/// the template (PostgreSQL refuses to copy a database in use); it carries the run's time in
/// its name like every test database, so the sweep in [`empty_pg_database`] removes it.
pub async fn migrated_pg_database(admin_url: &str) -> PgDatabase {
    static TEMPLATE: tokio::sync::OnceCell<String> = tokio::sync::OnceCell::const_new();
    let template = TEMPLATE
        .get_or_init(|| async {
            let pg = empty_pg_database(admin_url).await;
            let conn = reelfind::db::connect(&pg.url).await.expect("postgres template database");
            reelfind::db::migrate(&conn).await.expect("migrate the template");
            conn.close().await.expect("close the template's connections");
            // Kept for the whole run: the guard would drop it.
            let name = pg.name.clone();
            std::mem::forget(pg);
            name
        })
        .await;
    let admin = reelfind::db::connect(admin_url).await.expect("postgres admin connection");
    let db = create_pg_database(&admin, admin_url, Some(template)).await;
    admin.close().await.ok();
    db
}

/// Where a test's database lives (see [`DbKind::for_races`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbKind {
    /// SQLite in memory with its one connection: fast, but requests take turns at the
    /// database, so a race between two of them cannot show.
    Memory,
    /// A SQLite file in the app's data folder, opened as production opens it
    /// (`reelfind::db::connect`: a pool of 8, WAL, a busy timeout): requests really overlap.
    File,
    /// A PostgreSQL database of its own (`TEST_DATABASE_URL`).
    Postgres,
}

impl DbKind {
    /// What tests of parallel limits run on: in memory and on a file when the suite runs on
    /// SQLite, PostgreSQL when it runs there.
    pub fn for_races() -> Vec<DbKind> {
        if pg_url().is_some() { vec![DbKind::Postgres] } else { vec![DbKind::Memory, DbKind::File] }
    }
}

/// A fresh, migrated database of `kind` (a file goes into `dir`).
async fn fresh_db_on(kind: DbKind, dir: &std::path::Path) -> TestDb {
    match kind {
        DbKind::File => {
            let url = format!("sqlite://{}?mode=rwc", dir.join("reelfind.db").display());
            let conn = reelfind::db::connect(&url).await.expect("sqlite file");
            reelfind::db::migrate(&conn).await.expect("migrate");
            TestDb { conn, _pg: None }
        }
        DbKind::Memory => {
            assert!(pg_url().is_none(), "an in-memory database was asked for on a PostgreSQL run");
            fresh_db().await
        }
        DbKind::Postgres => {
            assert!(pg_url().is_some(), "PostgreSQL needs TEST_DATABASE_URL");
            fresh_db().await
        }
    }
}

/// A fresh database with no tables yet (for tests of the migrations themselves).
pub async fn empty_db() -> TestDb {
    match pg_url() {
        None => TestDb { conn: reelfind::db::connect("sqlite::memory:").await.expect("sqlite"), _pg: None },
        Some(admin_url) => {
            let pg = empty_pg_database(&admin_url).await;
            let conn = reelfind::db::connect(&pg.url).await.expect("postgres test database");
            TestDb { conn, _pg: Some(pg) }
        }
    }
}

/// A database migrated up to, not including, the migration `name`, holding one user `ada`
/// (raw SQL: the entities describe the newest schema, not that one); returns it and ada's id.
pub async fn db_before_migration(name: &str) -> (TestDb, i64) {
    use migration::{Migrator, MigratorTrait};
    use sea_orm::ConnectionTrait;

    let test_db = empty_db().await;
    let db = &test_db.conn;
    let before = Migrator::migrations().iter().position(|m| m.name() == name).expect("the migration");
    Migrator::up(db, Some(before as u32)).await.unwrap();
    db.execute_unprepared(
        "INSERT INTO users (username, email, role, email_verified, created_at, updated_at) \
         VALUES ('ada', 'ada@example.com', 'user', false, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP)",
    )
    .await
    .unwrap();
    let ada: i64 = db
        .query_one_raw(sea_orm::Statement::from_string(db.get_database_backend(), "SELECT id FROM users"))
        .await
        .unwrap()
        .unwrap()
        .try_get("", "id")
        .unwrap();
    (test_db, ada)
}

/// A PostgreSQL database made for one test (`reelfind_t_{unix seconds}_{uuid}`), dropped
/// with `FORCE` (which ends the sessions still open on it) when this is dropped. Each is
/// about 8 MB once migrated; a run makes hundreds.
pub struct PgDatabase {
    pub url: String,
    name: String,
    admin_url: String,
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        let (admin_url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop cannot await, and the test's own runtime may be the current-thread one that
        // is running this very drop: a short-lived thread with its own runtime does the work.
        let dropped = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async {
                let admin = reelfind::db::connect(&admin_url).await.map_err(|e| e.to_string())?;
                let res = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")).await;
                admin.close().await.ok();
                res.map(|_| ()).map_err(|e| e.to_string())
            })
        })
        .join();
        if let Ok(Err(e)) = dropped {
            // Not a test failure: the sweep in `empty_pg_database` removes it within hours.
            eprintln!("could not drop test database {}: {e}", self.name);
        }
    }
}

/// A new, empty PostgreSQL database on the server of `admin_url`, dropped when the returned
/// guard is. Its name carries its creation time (`reelfind_t_{unix seconds}_{uuid}`) for the
/// sweep of databases left by runs that died (killed before their drops ran): the server may
/// be shared by several test runs at once, so the sweep drops only databases older than
/// three hours, never one a running test may still use.
pub async fn empty_pg_database(admin_url: &str) -> PgDatabase {
    static CLEANED: tokio::sync::OnceCell<()> = tokio::sync::OnceCell::const_new();
    let admin = reelfind::db::connect(admin_url).await.expect("postgres admin connection");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    CLEANED
        .get_or_init(|| async {
            let rows = admin
                .query_all_raw(sea_orm::Statement::from_string(
                    sea_orm::DatabaseBackend::Postgres,
                    "SELECT datname FROM pg_database WHERE datname LIKE 'reelfind\\_t\\_%'",
                ))
                .await
                .expect("list databases");
            for row in rows {
                let name: String = row.try_get("", "datname").unwrap();
                let created = name.split('_').nth(2).and_then(|t| t.parse::<u64>().ok());
                if created.is_some_and(|t| t + 3 * 3600 < now) {
                    let _ = admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")).await;
                }
            }
        })
        .await;
    let db = create_pg_database(&admin, admin_url, None).await;
    admin.close().await.ok();
    db
}

/// A new database on the server `admin` is connected to (a copy of `template`, else empty).
async fn create_pg_database(admin: &DatabaseConnection, admin_url: &str, template: Option<&str>) -> PgDatabase {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let name = format!("reelfind_t_{now}_{}", uuid::Uuid::new_v4().simple());
    let copy = template.map(|t| format!(" TEMPLATE \"{t}\"")).unwrap_or_default();
    admin.execute_unprepared(&format!("CREATE DATABASE \"{name}\"{copy}")).await.expect("create database");
    let mut url = url::Url::parse(admin_url).expect("TEST_DATABASE_URL");
    url.set_path(&format!("/{name}"));
    PgDatabase { url: url.to_string(), name, admin_url: admin_url.to_owned() }
}

/// `TEST_DATABASE_URL`, when set.
pub fn pg_url() -> Option<String> {
    std::env::var("TEST_DATABASE_URL").ok().filter(|s| !s.is_empty())
}

impl TestApp {
    pub async fn new() -> Self {
        Self::with_env(Vec::<(String, String)>::new()).await
    }

    /// An app configured with these extra environment variables (base URLs of fakes, keys).
    pub async fn with_env<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let kind = if pg_url().is_some() { DbKind::Postgres } else { DbKind::Memory };
        Self::with_env_on(kind, pairs).await
    }

    /// [`TestApp::with_env`] on a database of `kind`.
    pub async fn with_env_on<K: Into<String>, V: Into<String>>(
        kind: DbKind,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut env: Vec<(String, String)> = vec![
            ("REELFIND_DATA_DIR".into(), data_dir.path().display().to_string()),
            ("REELFIND_PUBLIC_URL".into(), ORIGIN.into()),
            ("REELFIND_ASSETS_DIR".into(), concat!(env!("CARGO_MANIFEST_DIR"), "/assets").into()),
            // Tests write to the database directly (as another node or the CLI would) and read
            // at once: this node reads the content version on every request, not every 500 ms.
            ("REELFIND_CONTENT_CHECK_MS".into(), "0".into()),
        ];
        env.extend(pairs.into_iter().map(|(k, v)| (k.into(), v.into())));
        if let Some(url) = library_on_milvus()
            && !env.iter().any(|(k, _)| k == "REELFIND_LIBRARY_INDEX")
        {
            env.push(("REELFIND_LIBRARY_INDEX".into(), url));
        }
        let test_db = fresh_db_on(kind, data_dir.path()).await;
        // With the hashes in Milvus the Library's catalog lives in the database, and connects
        // to it by the configuration's name (as does a migration there): name the database
        // the app is given (a PostgreSQL one then wants the key every node shares).
        let on_milvus = library_on_milvus().is_some()
            || env.iter().any(|(k, v)| k == "REELFIND_LIBRARY_INDEX" && v.starts_with("milvus:"));
        if on_milvus && !env.iter().any(|(k, _)| k == "DATABASE_URL") {
            let url = match (&test_db._pg, kind) {
                (Some(pg), _) => pg.url.clone(),
                (None, DbKind::File) => format!("sqlite://{}?mode=rwc", data_dir.path().join("reelfind.db").display()),
                (None, _) => "sqlite::memory:".to_owned(),
            };
            if test_db._pg.is_some() && !env.iter().any(|(k, _)| k == "REELFIND_SECRET_KEY") {
                env.push(("REELFIND_SECRET_KEY".into(), "a-test-secret-key-shared-by-every-node-0123456789".into()));
            }
            env.push(("DATABASE_URL".into(), url));
        }
        let config = Config::from_env(&Env::from_pairs(env)).expect("config");
        let db = test_db.conn.clone();
        let state = AppState::new(db.clone(), config).expect("state");
        let router = reelfind::app::build_router(state.clone());
        Self { router, state, db, cookies: Mutex::new(HashMap::new()), _data_dir: data_dir, _test_db: test_db }
    }

    pub fn data_dir(&self) -> &std::path::Path {
        self._data_dir.path()
    }

    /// Sends a request as a browser on our own origin would: with our cookies, and with an
    /// Origin header on unsafe methods.
    pub async fn send(&self, mut req: Request<Body>) -> TestResponse {
        if !req.headers().contains_key(header::COOKIE) {
            let jar = self.cookies.lock().unwrap();
            if !jar.is_empty() {
                let cookie = jar.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("; ");
                req.headers_mut().insert(header::COOKIE, cookie.parse().unwrap());
            }
        }
        if !matches!(*req.method(), Method::GET | Method::HEAD) && !req.headers().contains_key(header::ORIGIN) {
            req.headers_mut().insert(header::ORIGIN, ORIGIN.parse().unwrap());
        }
        let res = self.router.clone().oneshot(req).await.expect("router is infallible");
        let status = res.status();
        let headers = res.headers().clone();
        {
            let mut jar = self.cookies.lock().unwrap();
            for v in headers.get_all(header::SET_COOKIE) {
                let v = v.to_str().unwrap_or("");
                let pair = v.split(';').next().unwrap_or("");
                if let Some((k, val)) = pair.split_once('=') {
                    let expired = v.to_ascii_lowercase().contains("max-age=0") || val.is_empty();
                    if expired {
                        jar.remove(k.trim());
                    } else {
                        jar.insert(k.trim().to_owned(), val.to_owned());
                    }
                }
            }
        }
        let body = res.into_body().collect().await.expect("body").to_bytes();
        TestResponse { status, headers, body }
    }

    pub async fn get(&self, path: &str) -> TestResponse {
        self.send(Request::get(path).body(Body::empty()).unwrap()).await
    }

    pub async fn post_json(&self, path: &str, body: &serde_json::Value) -> TestResponse {
        self.send(
            Request::post(path)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
        )
        .await
    }

    pub async fn delete(&self, path: &str) -> TestResponse {
        self.send(Request::delete(path).body(Body::empty()).unwrap()).await
    }

    pub fn cookie(&self, name: &str) -> Option<String> {
        self.cookies.lock().unwrap().get(name).cloned()
    }

    /// Puts a cookie in the jar, as if the server had set it.
    pub fn set_cookie(&self, name: &str, value: &str) {
        self.cookies.lock().unwrap().insert(name.to_owned(), value.to_owned());
    }

    pub fn clear_cookies(&self) {
        self.cookies.lock().unwrap().clear();
    }
}

/// What [`TestApp::at_once`] saw.
pub struct Race {
    /// The answers, in the order of the requests.
    pub responses: Vec<TestResponse>,
    /// The most requests that were inside the router at one moment.
    pub peak: usize,
}

impl Race {
    pub fn statuses(&self) -> Vec<u16> {
        self.responses.iter().map(|r| r.status.as_u16()).collect()
    }
    /// How many answers had `status`.
    pub fn count(&self, status: u16) -> usize {
        self.responses.iter().filter(|r| r.status == status).count()
    }
}

impl TestApp {
    /// Sends every request at once: each on a task of its own, all released together, straight
    /// to the router (the jar is not used: a request carries its own cookie, see
    /// [`Person::sends`]; unsafe methods get our Origin). On a multi-thread runtime and a
    /// database with a pool ([`DbKind::File`], PostgreSQL) the requests really overlap; the
    /// answer says how many were inside the router at once.
    pub async fn at_once(&self, reqs: Vec<Request<Body>>) -> Race {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicUsize, Ordering};
        let inside = Arc::new(AtomicUsize::new(0));
        let peak = Arc::new(AtomicUsize::new(0));
        let (i, p) = (inside.clone(), peak.clone());
        let router = self.router.clone().layer(axum::middleware::from_fn(
            move |req: Request<Body>, next: axum::middleware::Next| {
                let (inside, peak) = (i.clone(), p.clone());
                async move {
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    peak.fetch_max(now, Ordering::SeqCst);
                    let res = next.run(req).await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    res
                }
            },
        ));
        let start = Arc::new(tokio::sync::Barrier::new(reqs.len()));
        let tasks: Vec<_> = reqs
            .into_iter()
            .map(|mut req| {
                if !matches!(*req.method(), Method::GET | Method::HEAD) && !req.headers().contains_key(header::ORIGIN) {
                    req.headers_mut().insert(header::ORIGIN, ORIGIN.parse().unwrap());
                }
                let (router, start) = (router.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    let res = router.oneshot(req).await.expect("router is infallible");
                    let (status, headers) = (res.status(), res.headers().clone());
                    let body = res.into_body().collect().await.expect("body").to_bytes();
                    TestResponse { status, headers, body }
                })
            })
            .collect();
        let mut responses = Vec::new();
        for t in tasks {
            responses.push(t.await.expect("a request task panicked"));
        }
        Race { responses, peak: peak.load(Ordering::SeqCst) }
    }
}

/// Someone with an account and a session of their own (see [`TestApp::person`]).
#[derive(Clone, Debug)]
pub struct Person {
    pub id: i64,
    pub username: String,
    pub session: String,
}

impl Person {
    /// The session token of this person's browser.
    pub fn session(&self) -> String {
        self.session.clone()
    }

    /// `req` as sent from this person's browser (their session cookie), for
    /// [`TestApp::at_once`].
    pub fn sends(&self, mut req: Request<Body>) -> Request<Body> {
        let cookie = format!("{}={}", reelfind::middleware::auth::SESSION_COOKIE, self.session);
        req.headers_mut().insert(header::COOKIE, cookie.parse().unwrap());
        req
    }
}

/// What people do, as tests say it: `app.register("ada", "secret1")`, `app.admin("root")`.
/// Each goes through the same routes a browser uses, and the session lands in the jar.
impl TestApp {
    /// Signs up through `POST /api/register` with the email `{username}@example.com`.
    pub async fn register(&self, username: &str, password: &str) -> TestResponse {
        self.post_json(
            "/api/register",
            &serde_json::json!({ "username": username, "email": format!("{username}@example.com"), "password": password }),
        )
        .await
    }

    /// Signs in through `POST /api/login`.
    pub async fn sign_in(&self, username: &str, password: &str) -> TestResponse {
        self.post_json("/api/login", &serde_json::json!({ "username": username, "password": password })).await
    }

    /// Creates the verified administrator `username` (password `admin-pass`; there is no
    /// public way to become one) and signs in as them.
    pub async fn admin(&self, username: &str) {
        reelfind::services::users::create(
            &self.db,
            reelfind::services::users::NewUser {
                username,
                email: &format!("{username}@example.com"),
                password: Some("admin-pass"),
                role: reelfind::entities::user::Role::Admin,
                email_verified: true,
            },
        )
        .await
        .unwrap();
        let res = self.sign_in(username, "admin-pass").await;
        assert_eq!(res.status, 200, "admin sign-in: {}", res.text());
    }

    /// Signs up `username` (password `secret123`) through the sign-up route, as a person
    /// would, and keeps their session aside (the jar is left as it was), so a test can act
    /// as several people: see [`TestApp::send_as`].
    pub async fn person(&self, username: &str) -> Person {
        let before = self.cookie(reelfind::middleware::auth::SESSION_COOKIE);
        let res = self.register(username, "secret123").await;
        assert!(res.status.is_success(), "sign-up of {username}: {}", res.text());
        let session = self.cookie(reelfind::middleware::auth::SESSION_COOKIE).expect("a sign-up signs in");
        self.put_session(before);
        let id = res.json()["id"].as_i64().expect("the new account's id");
        Person { id, username: username.to_owned(), session }
    }

    /// The person signed in in the jar right now (after [`TestApp::admin`], say) as a [`Person`].
    pub fn person_from_jar(&self, username: &str, id: i64) -> Person {
        let session = self.cookie(reelfind::middleware::auth::SESSION_COOKIE).expect("a session in the jar");
        Person { id, username: username.to_owned(), session }
    }

    /// Sends `req` from `person`'s browser (their session cookie), or signed out (`None`);
    /// the jar's own session is back in place afterwards.
    pub async fn send_as(&self, person: Option<&Person>, req: Request<Body>) -> TestResponse {
        let before = self.cookie(reelfind::middleware::auth::SESSION_COOKIE);
        self.put_session(person.map(|p| p.session.clone()));
        let res = self.send(req).await;
        self.put_session(before);
        res
    }

    fn put_session(&self, session: Option<String>) {
        let mut jar = self.cookies.lock().unwrap();
        match session {
            Some(s) => jar.insert(reelfind::middleware::auth::SESSION_COOKIE.to_owned(), s),
            None => jar.remove(reelfind::middleware::auth::SESSION_COOKIE),
        };
    }

    /// Sends an identification (`POST /api/identify`, multipart, as the uploader does).
    pub async fn upload(&self, upload: &crate::identify_support::Upload<'_>) -> TestResponse {
        self.send(upload.request()).await
    }
}

/// The Library's Milvus pass: with `TEST_LIBRARY_INDEX=milvus` every [`TestApp`] keeps its
/// Library's hashes in a collection of its own on the test run's Milvus server
/// (`reelfind::library::milvus::testing::shared`) instead of segment files: the address a new
/// app gets, `None` on the usual passes. CI runs the Library's tests once more this way.
pub fn library_on_milvus() -> Option<String> {
    use reelfind::library::milvus::testing;
    if std::env::var("TEST_LIBRARY_INDEX").is_ok_and(|v| v == "milvus") {
        let addr = testing::shared().expect("TEST_LIBRARY_INDEX=milvus needs Milvus: `bash .ci/setup --test`");
        // A call may take 30 s, not the default 5: the pass runs beside a release build and
        // four test threads, and what it checks is the answers; the fault tests set their own.
        Some(format!("milvus://{addr}/{}?timeout=30", testing::unique_name("pass")))
    } else {
        None
    }
}
