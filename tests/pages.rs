use crate::support::TestApp;

#[tokio::test]
async fn home_renders_with_meta() {
    let app = TestApp::new().await;
    let res = app.get("/").await;
    assert_eq!(res.status, 200);
    assert!(res.header("content-type").unwrap().starts_with("text/html"));
    assert!(res.select_text("title").unwrap().starts_with("Reelfind"));
    assert_eq!(res.select_attr("link[rel=canonical]", "href").as_deref(), Some("http://localhost:3000/"));
    assert_eq!(
        res.select_attr("meta[name=description]", "content").as_deref(),
        Some("Instantly identify movies and TV shows.")
    );
    assert!(res.select_text("h1").is_some());
}

#[tokio::test]
async fn unknown_path_is_404_page() {
    let app = TestApp::new().await;
    let res = app.get("/no/such/page").await;
    assert_eq!(res.status, 404);
    assert_eq!(res.select_text("h1").as_deref(), Some("404 Page Not Found"));
    assert!(res.select_text("title").unwrap().starts_with("404 Page Not Found"));
}
