//! Several nodes, one database: migrations under a lock, and (with `TEST_DATABASE_URL`)
//! two real server processes that must behave as one service.
use crate::support::{empty_pg_database, pg_url};

#[tokio::test]
async fn two_nodes_migrating_a_fresh_database_at_once_both_succeed() {
    // `_keep` holds the database (dropped at the end) or the SQLite file's folder.
    let (url, _keep): (String, Box<dyn std::any::Any>) = match pg_url() {
        Some(admin) => {
            let pg = empty_pg_database(&admin).await;
            (pg.url.clone(), Box::new(pg))
        }
        None => {
            let dir = tempfile::tempdir().unwrap();
            (format!("sqlite://{}?mode=rwc", dir.path().join("shared.db").display()), Box::new(dir))
        }
    };
    let a = reelfind::db::connect(&url).await.unwrap();
    let b = reelfind::db::connect(&url).await.unwrap();
    let (ra, rb) = tokio::join!(reelfind::db::migrate(&a), reelfind::db::migrate(&b));
    ra.expect("node A migrated");
    rb.expect("node B migrated");
    // And again, as a restart would.
    reelfind::db::migrate(&a).await.unwrap();
    use sea_orm::{EntityTrait, PaginatorTrait};
    assert_eq!(reelfind::entities::rate_limit::Entity::find().count(&b).await.unwrap(), 0);
}

/// Two real server processes on one fresh PostgreSQL database behind a (pretend) proxy:
/// they must behave as one service. Runs in CI's PostgreSQL pass; on SQLite it says it was
/// skipped (several nodes need a shared database server).
#[tokio::test]
async fn two_nodes_on_one_postgresql_behave_as_one_service() {
    use serde_json::json;

    use crate::library::{demo_clip, ffmpeg, library_folder};
    use crate::server::{Client, Server};

    let Some(admin) = pg_url() else {
        eprintln!("skipped two_nodes_on_one_postgresql_behave_as_one_service: set TEST_DATABASE_URL to run it");
        return;
    };
    let database = empty_pg_database(&admin).await;
    let database_url = database.url.clone();
    let dir = tempfile::tempdir().unwrap();
    // One library folder both nodes see (as on a shared volume), indexed beforehand.
    let library_dir = dir.path().join("library");
    let folder = library_folder();
    let report = reelfind::library::LibraryIndex::open(&library_dir)
        .unwrap()
        .add_paths(&[folder.path().to_path_buf()], &mut reelfind::library::Quiet);
    assert_eq!(report.added, 1, "{report:?}");
    let still = dir.path().join("still.jpg");
    ffmpeg(&[
        "-ss",
        "2.6",
        "-i",
        demo_clip().to_str().unwrap(),
        "-frames:v",
        "1",
        "-q:v",
        "3",
        still.to_str().unwrap(),
    ]);
    let still = std::fs::read(&still).unwrap();

    let env = |node: &str| {
        vec![
            ("DATABASE_URL", database_url.clone()),
            ("REELFIND_SECRET_KEY", "a-shared-secret-key-for-both-nodes-0123456789".to_owned()),
            ("REELFIND_DATA_DIR", dir.path().join(node).display().to_string()),
            ("REELFIND_LIBRARY_DIR", library_dir.display().to_string()),
            ("REELFIND_TRUST_PROXY", "true".to_owned()),
        ]
    };
    // Both start (and migrate the empty database) at once.
    let (env_a, env_b) = (env("a"), env("b"));
    let (mut a, mut b) =
        tokio::join!(Server::start("node-a", dir.path(), &env_a), Server::start("node-b", dir.path(), &env_b));

    // Failed sign-ins from one address split across both nodes are throttled as one (the
    // pair of account and address is the bucket that refuses; see account_limits).
    let mut on_a = Client::new(&a.origin);
    let (status, body) = on_a
        .post_json("/api/register", &json!({"username": "nora", "email": "nora@example.com", "password": "secret1"}))
        .await;
    assert_eq!(status, 201, "{body}");
    let mut statuses = Vec::new();
    for i in 0..10 {
        let node = if i % 2 == 0 { &a } else { &b };
        let mut c = Client::new(&node.origin);
        let url = node.url("/api/login");
        let req = reqwest::Client::new()
            .post(url)
            .header("x-forwarded-for", "198.51.100.10")
            .json(&json!({"username": "nora", "password": "wrong-guess"}));
        statuses.push(c.send(req).await.0);
    }
    assert_eq!(statuses, vec![401, 401, 401, 401, 401, 401, 401, 401, 429, 429], "one count across both nodes");

    // A guest's cookie from node A is honoured by node B (same key, same quota), and the
    // preview link A made opens on B.
    let mut guest = Client::new(&a.origin);
    let form = |bytes: Vec<u8>| {
        reqwest::multipart::Form::new()
            .text("mode", "library")
            .text("useAudioAnalysis", "false")
            .text("useEnhancedAnalysis", "true")
            .part("file", reqwest::multipart::Part::bytes(bytes).file_name("still.jpg").mime_str("image/jpeg").unwrap())
    };
    let req = reqwest::Client::new()
        .post(a.url("/api/identify"))
        .header("x-forwarded-for", "203.0.113.50")
        .multipart(form(still.clone()));
    let (status, _, body) = guest.send(req).await;
    assert_eq!(status, 200, "{body}");
    assert!(guest.cookies.contains_key("rf_guest"), "node A gave the guest a cookie");
    let result: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(result["title"], "Big Buck Bunny");
    let preview = result["previewUrl"].as_str().expect("a preview link").to_owned();

    let mut same_guest_on_b = guest.to(&b.origin);
    let req = reqwest::Client::new()
        .post(b.url("/api/identify"))
        // Another address: only the cookie can tell node B this guest has used the free try.
        .header("x-forwarded-for", "203.0.113.51")
        .multipart(form(still.clone()));
    let (status, _, body) = same_guest_on_b.send(req).await;
    assert_eq!(status, 403, "node B knows the guest from node A's cookie: {body}");
    assert_eq!(serde_json::from_str::<serde_json::Value>(&body).unwrap()["requiresAuth"], true);

    let (status, content_type, jpeg) = Client::new(&b.origin).get_bytes(&preview).await;
    assert_eq!(status, 200, "node B serves node A's preview link");
    assert_eq!(content_type.as_deref(), Some("image/jpeg"));
    assert_eq!(&jpeg[..2], &[0xFF, 0xD8]);

    a.stop();
    b.stop();
}
