//! The admin's view of the Library: the JSON API and the dashboard tab that list indexed
//! videos and correct their title, year, show, season and episode.
use axum::body::Body;
use axum::http::{Request, header};
use reelfind::library::Quiet;
use serde_json::{Value, json};

use crate::accounts::register;
use crate::admin::make_admin;
use crate::library::{demo_clip, ffmpeg, library_folder};
use crate::support::{TestApp, TestResponse};

async fn patch_json(app: &TestApp, path: &str, body: &Value, origin: Option<&str>) -> TestResponse {
    let mut req = Request::patch(path).header(header::CONTENT_TYPE, "application/json");
    if let Some(o) = origin {
        req = req.header(header::ORIGIN, o);
    }
    app.send(req.body(Body::from(body.to_string())).unwrap()).await
}

async fn post_form(app: &TestApp, path: &str, body: &str, origin: Option<&str>) -> TestResponse {
    let mut req = Request::post(path).header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    if let Some(o) = origin {
        req = req.header(header::ORIGIN, o);
    }
    app.send(req.body(Body::from(body.to_owned())).unwrap()).await
}

/// An app with the demo clip indexed; returns the folder (kept alive) and the video's id.
async fn app_with_library() -> (TestApp, tempfile::TempDir, u32) {
    let app = TestApp::new().await;
    let folder = library_folder();
    let report = app.state.library.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!(report.added, 1, "{report:?}");
    let id = app.state.library.list()[0].id;
    (app, folder, id)
}

#[tokio::test]
async fn guests_and_non_admins_cannot_see_or_edit_the_library() {
    let (app, _folder, id) = app_with_library().await;
    let edit = format!("/api/admin/library/{id}");
    let page_post = format!("/admin/library/{id}");
    assert_eq!(app.get("/api/admin/library").await.status, 401);
    assert_eq!(patch_json(&app, &edit, &json!({"title": "X"}), None).await.status, 401);
    for res in [app.get("/admin/library").await, post_form(&app, &page_post, "title=X", None).await] {
        assert_eq!(res.status, 303);
        assert_eq!(res.header("location").as_deref(), Some("/admin"));
    }
    register(&app, "user1", "secret1").await;
    let res = app.get("/api/admin/library").await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["error"], "Admin access required");
    assert_eq!(patch_json(&app, &edit, &json!({"title": "X"}), None).await.status, 403);
    let res = post_form(&app, &page_post, "title=X", None).await;
    assert_eq!((res.status.as_u16(), res.header("location").as_deref()), (303, Some("/admin")));
    assert_eq!(app.state.library.get(id).unwrap().meta.title, "Big Buck Bunny");
}

#[tokio::test]
async fn admin_lists_and_patches_a_video_and_the_edit_survives_reindexing() {
    let (app, folder, id) = app_with_library().await;
    make_admin(&app, "root").await;
    let list = app.get("/api/admin/library").await;
    assert_eq!(list.status, 200, "{}", list.text());
    let list = list.json();
    assert_eq!(list["videos"].as_array().unwrap().len(), 1);
    let v = &list["videos"][0];
    assert_eq!(
        (v["id"].as_u64(), v["title"].as_str(), v["year"].as_i64()),
        (Some(id as u64), Some("Big Buck Bunny"), Some(2008))
    );
    assert_eq!(
        (v["file"].as_str(), v["source"].as_str(), v["mediaType"].as_str()),
        (Some("big-buck-bunny.mp4"), Some("nfo"), Some("movie"))
    );
    assert!(v["audioLandmarks"].as_u64().unwrap() > 0);
    assert!(list["indexBytes"].as_u64().unwrap() > 0 && list["audioBytes"].as_u64().unwrap() > 0);
    let backend = if crate::support::library_on_milvus().is_some() { "milvus" } else { "local" };
    assert_eq!(list["indexBackend"], backend);
    assert_eq!(list["indexEntries"].as_u64(), Some(app.state.library.frame_count()));
    assert!(app.state.library.frame_count() > 0);

    // A partial edit: the fields named change, the others stay.
    let path = format!("/api/admin/library/{id}");
    let res = patch_json(&app, &path, &json!({"show": "Blender Shorts", "season": 1, "episode": 3}), None).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let r = res.json();
    assert_eq!(
        (r["title"].as_str(), r["year"].as_i64(), r["show"].as_str()),
        (Some("Big Buck Bunny"), Some(2008), Some("Blender Shorts"))
    );
    assert_eq!((r["season"].as_u64(), r["episode"].as_u64(), r["mediaType"].as_str()), (Some(1), Some(3), Some("tv")));
    assert_eq!(r["source"], "admin");
    // null clears.
    let r = patch_json(&app, &path, &json!({"title": "Bunny", "year": null}), None).await.json();
    assert_eq!((r["title"].as_str(), r["year"].is_null()), (Some("Bunny"), true));

    // Bad values are refused in words, and nothing changes.
    for (body, msg) in [
        (json!({"title": ""}), "Title cannot be empty."),
        (json!({"title": null}), "title must be a string."),
        (json!({"year": 99}), "Year must be between 1870 and 2100."),
        (json!({"season": -1}), "season must be a whole number or null."),
        (json!({"season": null}), "An episode needs a season."),
        (json!({"rating": 5}), "Unknown field: rating"),
    ] {
        let res = patch_json(&app, &path, &body, None).await;
        assert_eq!(res.status, 400, "{body}");
        assert_eq!(res.json()["error"], msg, "{body}");
    }
    let res = patch_json(&app, "/api/admin/library/9999", &json!({"title": "X"}), None).await;
    assert_eq!(res.status, 404);
    assert_eq!(res.json()["error"], "No such video in the library.");
    // Another origin is refused before anything is read.
    let res = patch_json(&app, &path, &json!({"title": "Evil"}), Some("https://evil.example")).await;
    assert_eq!(res.status, 403);
    assert_eq!(app.state.library.get(id).unwrap().meta.title, "Bunny");

    // The file changes and is indexed again: the admin's edit stays.
    let file = folder.path().join("big-buck-bunny.mp4");
    ffmpeg(&["-ss", "1", "-i", demo_clip().to_str().unwrap(), "-t", "3", file.to_str().unwrap()]);
    let report = app.state.library.add_paths(&[folder.path().to_path_buf()], &mut Quiet);
    assert_eq!(report.reindexed, 1, "{report:?}");
    let v = &app.get("/api/admin/library").await.json()["videos"][0];
    assert_ne!(v["id"].as_u64(), Some(id as u64));
    assert_eq!(
        (v["title"].as_str(), v["show"].as_str(), v["episode"].as_u64()),
        (Some("Bunny"), Some("Blender Shorts"), Some(3))
    );
}

#[tokio::test]
async fn the_dashboard_library_tab_lists_videos_and_its_form_saves() {
    let (app, _folder, id) = app_with_library().await;
    make_admin(&app, "root").await;
    let res = app.get("/admin/library").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.select_text(".admin-tabs a[aria-current=page]").as_deref(), Some("Library"));
    assert_eq!(res.count(".library-table tbody tr"), 1);
    assert!(res.select_text(".library-table tbody td").unwrap().contains("Big Buck Bunny"));
    let backend = if crate::support::library_on_milvus().is_some() { "milvus" } else { "local" };
    let entries = format!("index: {backend}, {} entries", app.state.library.frame_count());
    assert!(res.text().contains(&entries), "the tab names the index: {entries}");
    let edit_link = res.select_attr(".library-table tbody a", "href").unwrap();
    assert_eq!(edit_link, format!("/admin/library?edit={id}#edit"));

    let res = app.get(&format!("/admin/library?edit={id}")).await;
    assert_eq!(res.status, 200);
    let action = format!("/admin/library/{id}");
    assert_eq!(res.select_attr("form.library-edit", "action").as_deref(), Some(action.as_str()));
    assert_eq!(res.select_attr("#title", "value").as_deref(), Some("Big Buck Bunny"));
    assert_eq!(res.select_attr("#year", "value").as_deref(), Some("2008"));
    for field in ["title", "year", "show", "season", "episode"] {
        assert_eq!(res.count(&format!("label[for={field}]")), 1, "{field} has a label");
    }

    let res =
        post_form(&app, &action, "title=Big+Buck+Bunny+%28director%27s+cut%29&year=2008&show=&season=&episode=", None)
            .await;
    assert_eq!(res.status, 303, "{}", res.text());
    assert_eq!(res.header("location"), Some(format!("/admin/library?saved={id}")));
    let page = app.get(&format!("/admin/library?saved={id}")).await;
    assert!(page.select_text(".admin-notice").unwrap().contains("Big Buck Bunny (director's cut)"));
    let meta = app.state.library.get(id).unwrap().meta;
    assert_eq!(
        (meta.title.as_str(), meta.year, meta.source.as_str()),
        ("Big Buck Bunny (director's cut)", Some(2008), "admin")
    );

    // A refused value comes back with the error and what was typed.
    let res = post_form(&app, &action, "title=Bunny&year=soon&show=&season=&episode=", None).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.select_text(".admin-error").as_deref(), Some("Year must be a whole number."));
    assert_eq!(res.select_attr("#year", "value").as_deref(), Some("soon"));
    assert_eq!(app.state.library.get(id).unwrap().meta.title, "Big Buck Bunny (director's cut)");
    // A form posted from another site is refused.
    let res = post_form(&app, &action, "title=Evil&year=&show=&season=&episode=", Some("https://evil.example")).await;
    assert_eq!(res.status, 403);
    assert_eq!(app.get("/admin/library?edit=9999").await.status, 404);
}
