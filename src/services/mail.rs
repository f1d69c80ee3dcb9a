//! Outgoing mail: SMTP through lettre when `SMTP_URL` is set, otherwise `.eml` files in
//! `{data_dir}/outbox/` (the operator finds the path in the log).
use std::path::PathBuf;

use anyhow::Context;
use lettre::message::{Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use url::Url;

use crate::config::Config;

pub enum Mailer {
    /// `deadline`: the most one mail may take (`SMTP_TIMEOUT_SECS`), so that a slow or
    /// silent mail server fails the mail instead of holding the request.
    Smtp {
        transport: AsyncSmtpTransport<Tokio1Executor>,
        from: Mailbox,
        deadline: std::time::Duration,
    },
    Outbox {
        dir: PathBuf,
        from: Mailbox,
    },
}

/// One message in both a plain-text and an HTML version.
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub text: String,
    pub html: String,
}

/// `s` made safe to put in HTML text or a quoted attribute.
pub fn escape_html(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// The HTML body of a mail that carries one single-use link: a greeting, the reason (HTML,
/// already escaped), a button to `link`, the link written out, and a grey closing line.
pub fn link_mail_html(name: &str, reason_html: &str, link: &str, button: &str, footer: &str) -> String {
    format!(
        "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">\
         <p>Hi {name},</p>{reason_html}\
         <p><a href=\"{link}\" style=\"display:inline-block;padding:10px 18px;background:#4f46e5;color:#fff;\
         border-radius:6px;text-decoration:none\">{button}</a></p>\
         <p>Or open this link: <a href=\"{link}\">{link}</a></p>\
         <p style=\"color:#666\">{footer}</p></body></html>",
        name = escape_html(name)
    )
}

impl Mailer {
    pub fn from_config(config: &Config) -> anyhow::Result<Self> {
        let from: Mailbox = config.accounts.mail_from.parse().context("MAIL_FROM")?;
        Ok(match &config.accounts.smtp_url {
            Some(url) => {
                let url = lettre_url(url.expose()).context("SMTP_URL")?;
                let deadline = config.accounts.smtp_timeout;
                let mut builder =
                    AsyncSmtpTransport::<Tokio1Executor>::from_url(&url).context("SMTP_URL")?.timeout(Some(deadline));
                if let Some(file) = &config.accounts.smtp_ca_file {
                    builder = builder.tls(tls_trusting(&url, file)?);
                }
                Self::Smtp { transport: builder.build(), from, deadline }
            }
            None => Self::Outbox { dir: config.data_dir.join("outbox"), from },
        })
    }

    /// Mail really leaves the machine.
    pub fn is_smtp(&self) -> bool {
        matches!(self, Self::Smtp { .. })
    }

    pub async fn send(&self, mail: Mail) -> anyhow::Result<()> {
        let from = match self {
            Self::Smtp { from, .. } | Self::Outbox { from, .. } => from.clone(),
        };
        let to: Mailbox = mail.to.parse().with_context(|| format!("bad recipient address {}", mail.to))?;
        let message = Message::builder()
            .from(from)
            .to(to)
            .subject(mail.subject)
            .multipart(MultiPart::alternative_plain_html(mail.text, mail.html))?;
        match self {
            Self::Smtp { transport, deadline, .. } => {
                match tokio::time::timeout(*deadline, transport.send(message)).await {
                    Ok(sent) => sent.context("SMTP delivery failed")?,
                    Err(_) => anyhow::bail!(
                        "SMTP delivery failed: the mail server did not accept the mail within {} s (SMTP_TIMEOUT_SECS)",
                        deadline.as_secs()
                    ),
                };
                tracing::info!("mail sent by SMTP");
            }
            Self::Outbox { dir, .. } => {
                tokio::fs::create_dir_all(dir).await.with_context(|| format!("cannot create {}", dir.display()))?;
                let name = format!(
                    "{}-{}.eml",
                    chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ"),
                    uuid::Uuid::new_v4().simple()
                );
                let path = dir.join(name);
                tokio::fs::write(&path, message.formatted())
                    .await
                    .with_context(|| format!("cannot write {}", path.display()))?;
                tracing::info!(path = %path.display(), "mail written to the outbox (no SMTP_URL set)");
            }
        }
        Ok(())
    }
}

/// The TLS of `url` (as [`lettre_url`] wrote it) trusting the PEM certificates in `file`
/// besides the public roots: `smtps` implicit TLS, `tls=required` or `tls=opportunistic`
/// STARTTLS; a plain URL stays plain.
fn tls_trusting(url: &str, file: &std::path::Path) -> anyhow::Result<lettre::transport::smtp::client::Tls> {
    use lettre::transport::smtp::client::{Certificate, Tls, TlsParameters};
    let parsed = Url::parse(url)?;
    let host = parsed.host_str().context("SMTP_URL has no host")?.trim_matches(['[', ']']).to_owned();
    let pem = std::fs::read(file).with_context(|| format!("SMTP_CA_FILE: cannot read {}", file.display()))?;
    let cert = Certificate::from_pem(&pem)
        .with_context(|| format!("SMTP_CA_FILE: no PEM certificate in {}", file.display()))?;
    let params = TlsParameters::builder(host).add_root_certificate(cert).build_rustls().context("SMTP_CA_FILE")?;
    let mode = parsed.query_pairs().find(|(k, _)| k == "tls").map(|(_, v)| v.into_owned());
    Ok(match (parsed.scheme(), mode.as_deref()) {
        ("smtps", _) => Tls::Wrapper(params),
        (_, Some("required")) => Tls::Required(params),
        (_, Some("opportunistic")) => Tls::Opportunistic(params),
        _ => Tls::None,
    })
}

/// Turns our `SMTP_URL` rules into lettre's: `smtp://` means STARTTLS required unless the
/// host is local or `?tls=none` says plain; `smtps://` is implicit TLS.
pub fn lettre_url(raw: &str) -> anyhow::Result<String> {
    let mut url = Url::parse(raw)?;
    let tls = url.query_pairs().find(|(k, _)| k == "tls").map(|(_, v)| v.into_owned());
    if url.scheme() == "smtp" {
        let local = matches!(url.host_str(), Some("localhost" | "127.0.0.1" | "[::1]" | "::1"));
        let mode = match tls.as_deref() {
            Some("none") => None,
            Some(m @ ("required" | "opportunistic")) => Some(m.to_owned()),
            Some(other) => anyhow::bail!("unknown tls={other}; use required, opportunistic or none"),
            None if local => None,
            None => Some("required".to_owned()),
        };
        let others: Vec<(String, String)> =
            url.query_pairs().filter(|(k, _)| k != "tls").map(|(k, v)| (k.into_owned(), v.into_owned())).collect();
        url.set_query(None);
        {
            let mut q = url.query_pairs_mut();
            for (k, v) in &others {
                q.append_pair(k, v);
            }
            if let Some(m) = mode {
                q.append_pair("tls", &m);
            }
        }
        if url.query() == Some("") {
            url.set_query(None);
        }
    }
    Ok(url.to_string())
}

#[cfg(test)]
mod tests {
    /// The verification mail's HTML, byte for byte as it was before the two link mails shared
    /// one layout (a name and a site with markup are escaped).
    #[test]
    fn the_verification_mail_keeps_its_html() {
        let to = crate::entities::user::Model {
            id: 1,
            username: "<Ada>".into(),
            email: "ada@example.com".into(),
            password_hash: None,
            role: crate::entities::user::Role::User,
            email_verified: false,
            display_name: None,
            bio: None,
            profile_picture: None,
            default_ai_model: None,
            google_sub: None,
            created_at: chrono::Utc::now(),
            updated_at: chrono::Utc::now(),
            username_key: "<ada>".into(),
        };
        let m = crate::services::verification::mail("R&F", "https://r.example", &to, "tok");
        assert_eq!(
            m.html,
            "<!doctype html><html><body style=\"font-family:sans-serif;line-height:1.5\">\
             <p>Hi &lt;Ada&gt;,</p><p>Welcome to R&amp;F! Please confirm your email address:</p>\
             <p><a href=\"https://r.example/verify-email/tok\" style=\"display:inline-block;padding:10px 18px;\
             background:#4f46e5;color:#fff;border-radius:6px;text-decoration:none\">Verify my email</a></p>\
             <p>Or open this link: <a href=\"https://r.example/verify-email/tok\">https://r.example/verify-email/tok</a></p>\
             <p style=\"color:#666\">The link works once and expires in 24 hours. If you did not create an account, \
             ignore this email.</p></body></html>"
        );
    }

    use super::lettre_url;

    #[test]
    fn tls_is_chosen_by_scheme_host_and_query() {
        assert_eq!(
            lettre_url("smtp://u:p@mail.example.com:587").unwrap(),
            "smtp://u:p@mail.example.com:587?tls=required"
        );
        assert_eq!(lettre_url("smtp://127.0.0.1:2525").unwrap(), "smtp://127.0.0.1:2525");
        assert_eq!(lettre_url("smtp://relay.lan:25?tls=none").unwrap(), "smtp://relay.lan:25");
        assert_eq!(lettre_url("smtps://u:p@mail.example.com").unwrap(), "smtps://u:p@mail.example.com");
        assert!(lettre_url("smtp://x:25?tls=maybe").is_err());
    }
}
