//! Account mail when the mail server is down, refuses, or is slow (30 s to greet): sign-up,
//! resend and password reset each give a clear answer within `SMTP_TIMEOUT_SECS` and leave
//! nothing half-written (no account whose link never left, no link nobody received, an
//! earlier link still working). And a required STARTTLS is really negotiated: a mail server
//! of the test's own with a self-signed certificate the app is told to trust.
use std::sync::Arc;
use std::time::Duration;

use reelfind::entities::{single_use_token as token_row, user};
use sea_orm::{ColumnTrait, EntityTrait, PaginatorTrait, QueryFilter};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;
use tokio::sync::mpsc;

use crate::support::TestApp;

/// Longer than any answer here may take: only a hang fails on it (not a speed target).
const HANG: Duration = Duration::from_secs(120);

/// How a mail server of the test's own behaves.
#[derive(Clone, Copy, Debug)]
enum Server {
    /// Nothing listens on the port: the connection is refused.
    Down,
    /// Greets with `554`: it takes no mail.
    Refusing,
    /// Accepts the connection and greets only after 30 s, then takes mail.
    Slow,
}

/// What a fake mail server saw of one message.
#[derive(Debug)]
struct Delivered {
    data: String,
    /// The message came over TLS (after STARTTLS).
    over_tls: bool,
    /// Commands the client sent before TLS started (upper-cased verbs).
    before_tls: Vec<String>,
}

/// The SMTP conversation after the greeting, over `stream` (plain or TLS). Returns how it
/// ended: `Some(plain stream)` when the client asked for STARTTLS and it was offered.
async fn converse<S: AsyncRead + AsyncWrite + Unpin>(
    stream: S,
    offer_starttls: bool,
    over_tls: bool,
    before_tls: &mut Vec<String>,
    tx: &mpsc::UnboundedSender<Delivered>,
) -> Option<S> {
    let mut lines = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        if lines.read_line(&mut line).await.unwrap_or(0) == 0 {
            return None;
        }
        let cmd = line.trim_end().to_ascii_uppercase();
        if !over_tls {
            before_tls.push(cmd.split_whitespace().next().unwrap_or("").to_owned());
        }
        let reply: &[u8] = if cmd.starts_with("EHLO") {
            if offer_starttls && !over_tls {
                b"250-fake.smtp\r\n250-8BITMIME\r\n250 STARTTLS\r\n"
            } else {
                b"250-fake.smtp\r\n250 8BITMIME\r\n"
            }
        } else if cmd == "STARTTLS" && offer_starttls && !over_tls {
            lines.get_mut().write_all(b"220 2.0.0 Ready to start TLS\r\n").await.ok()?;
            return Some(lines.into_inner());
        } else if cmd == "DATA" {
            lines.get_mut().write_all(b"354 End data with <CR><LF>.<CR><LF>\r\n").await.ok()?;
            let mut data = String::new();
            loop {
                line.clear();
                if lines.read_line(&mut line).await.unwrap_or(0) == 0 {
                    return None;
                }
                if line == ".\r\n" {
                    break;
                }
                data.push_str(&line);
            }
            tx.send(Delivered { data, over_tls, before_tls: before_tls.clone() }).ok();
            b"250 OK: queued\r\n"
        } else if cmd.starts_with("QUIT") {
            lines.get_mut().write_all(b"221 Bye\r\n").await.ok();
            return None;
        } else {
            b"250 OK\r\n"
        };
        lines.get_mut().write_all(reply).await.ok()?;
    }
}

/// A mail server on 127.0.0.1 behaving as `kind`; its port, and what it received.
async fn mail_server(kind: Server) -> (u16, mpsc::UnboundedReceiver<Delivered>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    if matches!(kind, Server::Down) {
        drop(listener);
        return (port, rx);
    }
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let tx = tx.clone();
            tokio::spawn(async move {
                match kind {
                    Server::Refusing => {
                        stream.write_all(b"554 5.3.2 This server takes no mail\r\n").await.ok();
                        return;
                    }
                    Server::Slow => tokio::time::sleep(Duration::from_secs(30)).await,
                    Server::Down => unreachable!(),
                }
                stream.write_all(b"220 fake.smtp ESMTP\r\n").await.ok();
                converse(stream, false, false, &mut Vec::new(), &tx).await;
            });
        }
    });
    (port, rx)
}

/// A mail server that offers STARTTLS (when `offer`) with a certificate for `localhost`;
/// its port, the certificate (PEM), and what it received.
async fn starttls_server(offer: bool) -> (u16, String, mpsc::UnboundedReceiver<Delivered>) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let pem = cert.cert.pem();
    let config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.cert.der().clone()],
            rustls::pki_types::PrivateKeyDer::Pkcs8(cert.signing_key.serialize_der().into()),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let (tx, acceptor) = (tx.clone(), acceptor.clone());
            tokio::spawn(async move {
                stream.write_all(b"220 fake.smtp ESMTP\r\n").await.ok();
                let mut before = Vec::new();
                let Some(plain) = converse(stream, offer, false, &mut before, &tx).await else { return };
                let Ok(tls) = acceptor.accept(plain).await else { return };
                converse(tls, offer, true, &mut before, &tx).await;
            });
        }
    });
    (port, pem, rx)
}

/// An app whose mail goes to `127.0.0.1:port` in plain SMTP, failing after 1 s.
async fn app_mailing_to(port: u16) -> TestApp {
    TestApp::with_env([
        ("SMTP_URL", format!("smtp://127.0.0.1:{port}?tls=none")),
        ("SMTP_TIMEOUT_SECS", "1".to_owned()),
    ])
    .await
}

async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(HANG, f).await.unwrap_or_else(|_| panic!("{what}: no answer after {HANG:?}: a hang"))
}

/// Waits for the mail the app handed to the background (resend, reset) to be over.
async fn background_done(app: &TestApp) {
    app.state.background.close();
    within("the background mail", app.state.background.wait()).await;
}

async fn tokens_of(app: &TestApp, user_id: i64) -> u64 {
    token_row::Entity::find().filter(token_row::Column::UserId.eq(user_id)).count(&app.db).await.unwrap()
}

#[tokio::test]
async fn sign_up_without_mail_is_refused_clearly_and_leaves_no_account() {
    for kind in [Server::Down, Server::Refusing, Server::Slow] {
        let (port, mut inbox) = mail_server(kind).await;
        let app = app_mailing_to(port).await;
        for attempt in 0..2 {
            let res = within("sign-up", app.register("mia", "secret123")).await;
            // The slow server would take the mail after 30 s: only the deadline makes this 503.
            assert_eq!(res.status, 503, "{kind:?} attempt {attempt}: {}", res.text());
            assert_eq!(res.json()["error"], reelfind::routes::api::accounts::MAIL_FAILED, "{kind:?}");
            assert_eq!(res.json()["code"], "service_unavailable", "{kind:?}");
            assert!(res.header("retry-after").is_some(), "{kind:?}");
            assert!(app.cookie(reelfind::middleware::auth::SESSION_COOKIE).is_none(), "{kind:?}: not signed in");
            // Nothing half-written: no account, no token, and the second attempt is not told
            // the name is taken.
            assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 0, "{kind:?}");
            assert_eq!(token_row::Entity::find().count(&app.db).await.unwrap(), 0, "{kind:?}");
        }
        assert!(inbox.try_recv().is_err(), "{kind:?}: no mail went out");
    }
}

#[tokio::test]
async fn resend_and_reset_without_mail_answer_as_usual_and_keep_the_earlier_link() {
    use reelfind::services::{password_reset, users, verification};
    for kind in [Server::Down, Server::Refusing, Server::Slow] {
        let (port, _inbox) = mail_server(kind).await;
        let app = app_mailing_to(port).await;
        let new = |name: &'static str, verified: bool| users::NewUser {
            username: name,
            email: if verified { "vera@example.com" } else { "una@example.com" },
            password: Some("secret123"),
            role: user::Role::User,
            email_verified: verified,
        };
        let una = users::create(&app.db, new("una", false)).await.unwrap();
        let vera = users::create(&app.db, new("vera", true)).await.unwrap();
        // The links already in their inboxes, from mails that did go out earlier.
        let verify_link = verification::issue(&app.db, una.id).await.unwrap();
        let reset_link = password_reset::issue(&app.db, vera.id).await.unwrap();

        let res =
            within("resend", app.post_json("/api/resend-verification", &json!({"email": "una@example.com"}))).await;
        assert_eq!(res.status, 200, "{kind:?}: {}", res.text());
        assert!(res.json()["message"].as_str().unwrap().starts_with("If an account with this email"), "{kind:?}");
        let res = within("reset", app.post_json("/api/forgot-password", &json!({"email": "vera@example.com"}))).await;
        assert_eq!(res.status, 200, "{kind:?}: {}", res.text());
        background_done(&app).await;

        // The failed mails left no link behind, and the earlier links still work.
        assert_eq!((tokens_of(&app, una.id).await, tokens_of(&app, vera.id).await), (1, 1), "{kind:?}");
        let res = app.get(&format!("/api/verify-email/{verify_link}")).await;
        assert_eq!(res.status, 200, "{kind:?}: the earlier verification link: {}", res.text());
        let res =
            app.post_json("/api/reset-password", &json!({"token": reset_link, "password": "a-new-secret-1"})).await;
        assert_eq!(res.status, 200, "{kind:?}: the earlier reset link: {}", res.text());
    }
}

/// An app whose mail goes to `localhost:port` with TLS required, trusting the certificate
/// `ca_pem` (written to a file the returned folder holds) or only the system's roots.
async fn app_requiring_tls(port: u16, ca_pem: Option<&str>) -> (TestApp, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut env =
        vec![("SMTP_URL", format!("smtp://localhost:{port}?tls=required")), ("SMTP_TIMEOUT_SECS", "30".to_owned())];
    if let Some(pem) = ca_pem {
        let ca = dir.path().join("mail-ca.pem");
        std::fs::write(&ca, pem).unwrap();
        env.push(("SMTP_CA_FILE", ca.display().to_string()));
    }
    (TestApp::with_env(env).await, dir)
}

#[tokio::test]
async fn a_required_starttls_is_negotiated_with_a_trusted_certificate() {
    let (port, pem, mut inbox) = starttls_server(true).await;
    let (app, _ca) = app_requiring_tls(port, Some(&pem)).await;
    let res = within("sign-up", app.register("tess", "secret123")).await;
    assert_eq!(res.status, 201, "{}", res.text());
    let mail = within("the mail", inbox.recv()).await.expect("a mail");
    assert!(mail.over_tls, "the mail was sent in the clear");
    assert_eq!(mail.before_tls, ["EHLO", "STARTTLS"], "nothing but the handshake before TLS");
    assert!(mail.data.contains("/verify-email/"), "{}", mail.data);
}

#[tokio::test]
async fn without_starttls_or_with_an_untrusted_certificate_no_mail_goes_out() {
    // The server does not offer STARTTLS: required TLS means no mail, and no account.
    let (port, pem, mut inbox) = starttls_server(false).await;
    let (app, _ca) = app_requiring_tls(port, Some(&pem)).await;
    let res = within("sign-up", app.register("tess", "secret123")).await;
    assert_eq!(res.status, 503, "{}", res.text());
    assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 0);
    assert!(inbox.try_recv().is_err(), "no mail in the clear");

    // It offers STARTTLS, but its certificate is not one the app trusts.
    let (port, _pem, mut inbox) = starttls_server(true).await;
    let (app, _ca) = app_requiring_tls(port, None).await;
    let res = within("sign-up", app.register("tess", "secret123")).await;
    assert_eq!(res.status, 503, "{}", res.text());
    assert_eq!(user::Entity::find().count(&app.db).await.unwrap(), 0);
    assert!(inbox.try_recv().is_err(), "no mail to an unverified server");
}
