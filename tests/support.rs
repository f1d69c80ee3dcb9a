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
use tokio::sync::OnceCell;
use tower::ServiceExt;

pub const ORIGIN: &str = "http://localhost:3000";

pub struct TestApp {
    pub router: Router,
    pub state: AppState,
    pub db: DatabaseConnection,
    cookies: Mutex<HashMap<String, String>>,
    _data_dir: tempfile::TempDir,
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

/// A fresh, migrated database for one test.
pub async fn fresh_db() -> DatabaseConnection {
    match std::env::var("TEST_DATABASE_URL").ok().filter(|s| !s.is_empty()) {
        None => {
            let db = reelfind::db::connect("sqlite::memory:").await.expect("sqlite");
            reelfind::db::migrate(&db).await.expect("migrate");
            db
        }
        Some(admin_url) => {
            static CLEANED: OnceCell<()> = OnceCell::const_new();
            let admin = reelfind::db::connect(&admin_url).await.expect("postgres admin connection");
            CLEANED
                .get_or_init(|| async {
                    // Databases left by an earlier run of this binary (one binary runs at a time).
                    let rows = admin
                        .query_all_raw(sea_orm::Statement::from_string(
                            sea_orm::DatabaseBackend::Postgres,
                            "SELECT datname FROM pg_database WHERE datname LIKE 'reelfind_t_%'",
                        ))
                        .await
                        .expect("list databases");
                    for row in rows {
                        let name: String = row.try_get("", "datname").unwrap();
                        let _ =
                            admin.execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)")).await;
                    }
                })
                .await;
            let name = format!("reelfind_t_{}", uuid::Uuid::new_v4().simple());
            admin.execute_unprepared(&format!("CREATE DATABASE \"{name}\"")).await.expect("create database");
            admin.close().await.ok();
            let mut url = url::Url::parse(&admin_url).expect("TEST_DATABASE_URL");
            url.set_path(&format!("/{name}"));
            let db = reelfind::db::connect(url.as_str()).await.expect("postgres test database");
            reelfind::db::migrate(&db).await.expect("migrate");
            db
        }
    }
}

impl TestApp {
    pub async fn new() -> Self {
        Self::with_env(Vec::<(String, String)>::new()).await
    }

    /// An app configured with these extra environment variables (base URLs of fakes, keys).
    pub async fn with_env<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Self {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let data_dir = tempfile::tempdir().expect("temp dir");
        let mut env: Vec<(String, String)> = vec![
            ("REELFIND_DATA_DIR".into(), data_dir.path().display().to_string()),
            ("REELFIND_PUBLIC_URL".into(), ORIGIN.into()),
            ("REELFIND_ASSETS_DIR".into(), concat!(env!("CARGO_MANIFEST_DIR"), "/assets").into()),
        ];
        env.extend(pairs.into_iter().map(|(k, v)| (k.into(), v.into())));
        let config = Config::from_env(&Env::from_pairs(env)).expect("config");
        let db = fresh_db().await;
        let state = AppState::new(db.clone(), config).expect("state");
        let router = reelfind::app::build_router(state.clone());
        Self { router, state, db, cookies: Mutex::new(HashMap::new()), _data_dir: data_dir }
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

    pub fn clear_cookies(&self) {
        self.cookies.lock().unwrap().clear();
    }
}
