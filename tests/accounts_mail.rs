//! Email verification over a real SMTP conversation, and the outbox without SMTP.
use std::time::Duration;

use reelfind::entities::single_use_token as token_row;
use sea_orm::{ActiveModelTrait, EntityTrait, PaginatorTrait, Set};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::accounts::{login, register};
use crate::support::TestApp;

/// One message as the SMTP server received it.
#[derive(Debug)]
pub struct Received {
    pub mail_from: String,
    pub rcpt_to: Vec<String>,
    pub data: String,
}

/// A small SMTP server on 127.0.0.1: enough of RFC 5321 for lettre (greeting, EHLO/HELO,
/// MAIL, RCPT, DATA with dot-unstuffing, RSET, NOOP, QUIT). Returns its port and the
/// messages it accepts.
pub async fn fake_smtp() -> (u16, mpsc::UnboundedReceiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read);
                write.write_all(b"220 fake.smtp ESMTP ready\r\n").await.ok();
                let (mut from, mut rcpt) = (String::new(), Vec::new());
                let mut line = String::new();
                loop {
                    line.clear();
                    if lines.read_line(&mut line).await.unwrap_or(0) == 0 {
                        break;
                    }
                    let cmd = line.trim_end().to_owned();
                    let upper = cmd.to_ascii_uppercase();
                    let reply: &[u8] = if upper.starts_with("EHLO") {
                        b"250-fake.smtp greets you\r\n250-8BITMIME\r\n250 SMTPUTF8\r\n"
                    } else if upper.starts_with("HELO") || upper.starts_with("NOOP") {
                        b"250 OK\r\n"
                    } else if upper.starts_with("RSET") {
                        from.clear();
                        rcpt.clear();
                        b"250 OK\r\n"
                    } else if upper.starts_with("MAIL FROM:") {
                        from = cmd[10..].trim().to_owned();
                        b"250 OK\r\n"
                    } else if upper.starts_with("RCPT TO:") {
                        rcpt.push(cmd[8..].trim().to_owned());
                        b"250 OK\r\n"
                    } else if upper == "DATA" {
                        write.write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n").await.ok();
                        let mut data = String::new();
                        loop {
                            line.clear();
                            if lines.read_line(&mut line).await.unwrap_or(0) == 0 {
                                return;
                            }
                            if line == ".\r\n" || line == ".\n" {
                                break;
                            }
                            data.push_str(line.strip_prefix('.').filter(|_| line.starts_with("..")).unwrap_or(&line));
                        }
                        tx.send(Received { mail_from: from.clone(), rcpt_to: std::mem::take(&mut rcpt), data }).ok();
                        b"250 OK: queued\r\n"
                    } else if upper.starts_with("QUIT") {
                        write.write_all(b"221 Bye\r\n").await.ok();
                        break;
                    } else {
                        b"502 Command not implemented\r\n"
                    };
                    write.write_all(reply).await.ok();
                }
            });
        }
    });
    (port, rx)
}

/// The token of the `/verify-email/{token}` link in a raw message (quoted-printable soft
/// line breaks undone).
pub fn link_token(raw: &str) -> String {
    let joined = raw.replace("=\r\n", "").replace("=\n", "");
    let at = joined.find("/verify-email/").expect("a verification link") + "/verify-email/".len();
    joined[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').collect()
}

#[tokio::test]
async fn registration_mails_a_link_over_smtp_and_the_link_verifies() {
    let (port, mut inbox) = fake_smtp().await;
    let app = TestApp::with_env([
        ("SMTP_URL", format!("smtp://127.0.0.1:{port}")),
        ("MAIL_FROM", "Reelfind <accounts@reelfind.test>".to_owned()),
    ])
    .await;
    // SMTP configured: verification is required even though the setting says false.
    let res = register(&app, "mia", "secret1").await;
    assert_eq!(res.status, 201, "{}", res.text());
    assert_eq!(res.json(), json!({"emailVerificationRequired": true, "email": "mia@example.com", "username": "mia"}));
    assert!(app.cookie("reelfind_session").is_none());

    let mail = tokio::time::timeout(Duration::from_secs(10), inbox.recv()).await.expect("mail in time").unwrap();
    assert_eq!(mail.mail_from, "<accounts@reelfind.test>");
    assert_eq!(mail.rcpt_to, vec!["<mia@example.com>".to_owned()]);
    assert!(mail.data.contains("Subject: Verify your email for Reelfind"), "{}", mail.data);
    assert!(mail.data.contains("text/plain") && mail.data.contains("text/html"));
    assert!(mail.data.contains("http://localhost:3000/verify-email/"));
    let token = link_token(&mail.data);
    assert!(token.len() >= 43, "{token}");

    let res = login(&app, "mia", "secret1").await;
    assert_eq!(res.status, 403);
    assert_eq!(res.json()["emailVerificationRequired"], true);

    let res = app.get(&format!("/api/verify-email/{token}")).await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.json()["message"].as_str().unwrap().contains("verified"));
    let again = app.get(&format!("/api/verify-email/{token}")).await;
    assert_eq!(again.status, 400, "single use");
    assert!(again.json()["error"].is_string());

    let res = login(&app, "mia", "secret1").await;
    assert_eq!(res.status, 200, "{}", res.text());
    assert_eq!(res.json()["emailVerified"], true);
    assert_eq!(app.get("/api/user").await.json()["username"], "mia");
}

pub fn outbox_files(app: &TestApp) -> Vec<String> {
    let dir = app.data_dir().join("outbox");
    let mut files: Vec<_> =
        std::fs::read_dir(&dir).map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect()).unwrap_or_default();
    files.sort();
    files.iter().map(|p| std::fs::read_to_string(p).unwrap()).collect()
}

#[tokio::test]
async fn without_smtp_mail_goes_to_the_outbox_and_resend_has_a_cooldown() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "require_email_verification", "true").await.unwrap();
    register(&app, "noah", "secret1").await;
    let mails = outbox_files(&app);
    assert_eq!(mails.len(), 1);
    let first = link_token(&mails[0]);

    // Registration does not start the resend cooldown.
    let res = app.post_json("/api/resend-verification", &json!({"email": "NOAH@example.com"})).await;
    assert_eq!(res.status, 200, "{}", res.text());
    let answer = res.json();
    // The mail is sent in the background.
    for _ in 0..50 {
        if outbox_files(&app).len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mails = outbox_files(&app);
    assert_eq!(mails.len(), 2);
    let second = link_token(&mails[1]);
    assert_ne!(first, second);

    let res = app.post_json("/api/resend-verification", &json!({"email": "noah@example.com"})).await;
    assert_eq!(res.status, 429);
    assert!(res.json()["error"].as_str().unwrap().starts_with("Please wait"));

    // An address without an account gets the same answer, and the same cooldown.
    let res = app.post_json("/api/resend-verification", &json!({"email": "ghost@example.com"})).await;
    assert_eq!(res.status, 200);
    assert_eq!(res.json(), answer);
    assert_eq!(app.post_json("/api/resend-verification", &json!({"email": "ghost@example.com"})).await.status, 429);
    let res = app.post_json("/api/resend-verification", &json!({"email": ""})).await;
    assert_eq!(res.status, 400);

    // The older link stopped working when the new one was issued.
    assert_eq!(app.get(&format!("/api/verify-email/{first}")).await.status, 400);
    assert_eq!(app.get(&format!("/api/verify-email/{second}")).await.status, 200);
    assert_eq!(login(&app, "noah", "secret1").await.status, 200);
}

#[tokio::test]
async fn expired_and_unknown_links_are_refused() {
    let app = TestApp::new().await;
    app.state.settings.set(&app.db, "require_email_verification", "true").await.unwrap();
    register(&app, "olga", "secret1").await;
    let token = link_token(&outbox_files(&app)[0]);
    let row = token_row::Entity::find().one(&app.db).await.unwrap().unwrap();
    assert_ne!(row.token_hash, token, "stored hashed");
    let mut active: token_row::ActiveModel = row.into();
    active.expires_at = Set(chrono::Utc::now() - chrono::Duration::seconds(1));
    active.update(&app.db).await.unwrap();
    let res = app.get(&format!("/api/verify-email/{token}")).await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "This verification link has expired. Please request a new one.");
    assert_eq!(token_row::Entity::find().count(&app.db).await.unwrap(), 0);
    let res = app.get("/api/verify-email/not-a-real-token").await;
    assert_eq!(res.status, 400);
    assert_eq!(res.json()["error"], "Invalid or already used verification link");
    assert_eq!(login(&app, "olga", "secret1").await.status, 403);
}
