//! The test harness itself: what it promises every other test.
use sea_orm::ConnectionTrait;

use crate::support::{TestApp, pg_url};

/// Each PostgreSQL test database is dropped with its app, so a run leaves none behind
/// (they used to pile up at about 8 MB each until a three-hour sweep).
#[tokio::test]
async fn a_test_database_is_dropped_with_its_app() {
    let Some(admin_url) = pg_url() else {
        eprintln!("skipped a_test_database_is_dropped_with_its_app: set TEST_DATABASE_URL to run it");
        return;
    };
    let app = TestApp::new().await;
    let name: String = app
        .db
        .query_one_raw(sea_orm::Statement::from_string(
            sea_orm::DatabaseBackend::Postgres,
            "SELECT current_database() AS name",
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get("", "name")
        .unwrap();
    assert!(name.starts_with("reelfind_t_"), "{name}");
    let exists = |name: String| {
        let admin_url = admin_url.clone();
        async move {
            let admin = reelfind::db::connect(&admin_url).await.unwrap();
            let rows = admin
                .query_all_raw(sea_orm::Statement::from_sql_and_values(
                    sea_orm::DatabaseBackend::Postgres,
                    "SELECT 1 FROM pg_database WHERE datname = $1",
                    [name.into()],
                ))
                .await
                .unwrap();
            admin.close().await.ok();
            !rows.is_empty()
        }
    };
    assert!(exists(name.clone()).await, "the app's database exists while the app does");
    drop(app);
    assert!(!exists(name.clone()).await, "{name} is still there after its app was dropped");
}
