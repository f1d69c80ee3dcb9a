//! Google sign-in: authorization code flow with PKCE and state (oauth2 crate), then the
//! OpenID userinfo endpoint. The pending flow lives in `oauth_states` (hash of the state,
//! PKCE verifier, 10-minute expiry); the browser holds the state itself in a cookie, so a
//! callback only completes in the browser that started it.
use std::future::Future;
use std::pin::Pin;

use anyhow::{Context, anyhow, bail};
use chrono::{Duration, Utc};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthType, AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, EndpointNotSet, EndpointSet, HttpRequest,
    HttpResponse, PkceCodeChallenge, PkceCodeVerifier, RedirectUrl, Scope, TokenResponse, TokenUrl,
};
use sea_orm::{ActiveModelTrait, ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter, Set};
use serde::Deserialize;

use crate::config::Config;
use crate::entities::{oauth_state, user};
use crate::services::sessions::hash_token;
use crate::services::users::{self, CreateUserError, NewUser};

/// A started sign-in must come back within this time.
pub const STATE_TTL: Duration = Duration::minutes(10);
/// Cookie holding the `state` of the sign-in this browser started.
pub const STATE_COOKIE: &str = "reelfind_oauth_state";

type GoogleClient = BasicClient<EndpointSet, EndpointNotSet, EndpointNotSet, EndpointNotSet, EndpointSet>;

fn client(config: &Config) -> anyhow::Result<GoogleClient> {
    let a = &config.accounts;
    let (Some(id), Some(secret)) = (&a.google_client_id, &a.google_client_secret) else {
        bail!("Google sign-in is not configured");
    };
    Ok(BasicClient::new(ClientId::new(id.clone()))
        .set_client_secret(ClientSecret::new(secret.expose().to_owned()))
        .set_auth_uri(AuthUrl::from_url(a.google_auth_url.clone()))
        .set_token_uri(TokenUrl::from_url(a.google_token_url.clone()))
        .set_redirect_uri(RedirectUrl::new(config.absolute("/api/auth/google/callback"))?)
        // Google documents client_id/client_secret in the form body.
        .set_auth_type(AuthType::RequestBody))
}

/// Starts a sign-in: stores the verifier, returns (URL to send the browser to, state for the cookie).
pub async fn start(db: &impl ConnectionTrait, config: &Config) -> anyhow::Result<(String, String)> {
    let client = client(config)?;
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("openid".into()))
        .add_scope(Scope::new("email".into()))
        .add_scope(Scope::new("profile".into()))
        .set_pkce_challenge(challenge)
        .url();
    let now = Utc::now();
    // Abandoned sign-ins are swept here rather than by a timer.
    oauth_state::Entity::delete_many().filter(oauth_state::Column::ExpiresAt.lte(now)).exec(db).await?;
    oauth_state::ActiveModel {
        id: Set(hash_token(state.secret())),
        pkce_verifier: Set(verifier.secret().clone()),
        created_at: Set(now),
        expires_at: Set(now + STATE_TTL),
    }
    .insert(db)
    .await?;
    Ok((url.to_string(), state.secret().clone()))
}

/// What Google's userinfo endpoint says about the person.
#[derive(Debug, Deserialize)]
pub struct GoogleProfile {
    pub sub: String,
    pub email: Option<String>,
    #[serde(default, deserialize_with = "bool_or_string")]
    pub email_verified: bool,
    pub name: Option<String>,
    pub picture: Option<String>,
}

fn bool_or_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum B {
        Bool(bool),
        Text(String),
    }
    Ok(match Option::<B>::deserialize(d)? {
        Some(B::Bool(b)) => b,
        Some(B::Text(t)) => t == "true",
        None => false,
    })
}

/// Finishes a sign-in: checks the state against the browser's cookie, redeems the code with
/// the PKCE verifier, reads the profile, and returns the user to sign in.
pub async fn finish(
    db: &sea_orm::DatabaseConnection,
    config: &Config,
    cookie_state: Option<&str>,
    state: &str,
    code: &str,
) -> anyhow::Result<user::Model> {
    use subtle::ConstantTimeEq;
    let cookie_state = cookie_state.context("no sign-in was started in this browser")?;
    if state.is_empty() || !bool::from(cookie_state.as_bytes().ct_eq(state.as_bytes())) {
        bail!("state does not match this browser's sign-in");
    }
    let row = oauth_state::Entity::find_by_id(hash_token(state)).one(db).await?.context("unknown or used state")?;
    // Single use: of two callbacks racing with one state, only the one that deletes it goes on.
    if oauth_state::Entity::delete_by_id(row.id.clone()).exec(db).await?.rows_affected != 1 {
        bail!("unknown or used state");
    }
    if row.expires_at <= Utc::now() {
        bail!("sign-in took too long");
    }
    let client = client(config)?;
    let http = reqwest::Client::builder()
        // No redirects on the token endpoint (SSRF), per the oauth2 crate's advice.
        .redirect(reqwest::redirect::Policy::none())
        .timeout(std::time::Duration::from_secs(15))
        .build()?;
    let adapter = Adapter(http.clone());
    let token = client
        .exchange_code(AuthorizationCode::new(code.to_owned()))
        .set_pkce_verifier(PkceCodeVerifier::new(row.pkce_verifier))
        .request_async(&adapter)
        .await
        .map_err(|e| anyhow!("token exchange failed: {}", crate::config::redact(&e.to_string())))?;
    let res = http
        .get(config.accounts.google_userinfo_url.clone())
        .bearer_auth(token.access_token().secret())
        .send()
        .await
        .context("userinfo request failed")?;
    if !res.status().is_success() {
        bail!("userinfo answered {}", res.status());
    }
    let profile: GoogleProfile = res.json().await.context("userinfo was not the expected JSON")?;
    sign_in_or_create(db, profile).await
}

/// oauth2 5 is built for reqwest 0.12; this sends its `http` requests with reqwest 0.13.
struct Adapter(reqwest::Client);

impl<'c> oauth2::AsyncHttpClient<'c> for Adapter {
    type Error = reqwest::Error;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, reqwest::Error>> + Send + 'c>>;
    fn call(&'c self, request: HttpRequest) -> Self::Future {
        send(self.0.clone(), request)
    }
}

fn send(
    http: reqwest::Client,
    req: HttpRequest,
) -> Pin<Box<dyn Future<Output = Result<HttpResponse, reqwest::Error>> + Send>> {
    Box::pin(async move {
        let (parts, body) = req.into_parts();
        let res = http.request(parts.method, parts.uri.to_string()).headers(parts.headers).body(body).send().await?;
        let mut out = oauth2::http::Response::builder().status(res.status());
        if let Some(h) = out.headers_mut() {
            *h = res.headers().clone();
        }
        let bytes = res.bytes().await?.to_vec();
        Ok(out.body(bytes).unwrap_or_default())
    })
}

/// The account for a verified Google identity: by Google id, else by email (linking it),
/// else a new account with a unique username made from the name or email. Linking (the
/// Google id, dropping an unproven password and its sessions) and creating (the account and
/// its Google details) each happen in one transaction.
pub async fn sign_in_or_create(db: &sea_orm::DatabaseConnection, p: GoogleProfile) -> anyhow::Result<user::Model> {
    let email = p.email.as_deref().map(|e| e.trim().to_ascii_lowercase()).filter(|e| e.contains('@'));
    let Some(email) = email.filter(|_| p.email_verified) else {
        bail!("Google did not vouch for an email address");
    };
    let txn = crate::db::begin_write(db).await?;
    let u = link_or_create(&txn, p, email).await?;
    txn.commit().await?;
    Ok(u)
}

async fn link_or_create(db: &impl ConnectionTrait, p: GoogleProfile, email: String) -> anyhow::Result<user::Model> {
    if let Some(u) = user::Entity::find().filter(user::Column::GoogleSub.eq(&p.sub)).one(db).await? {
        return Ok(u);
    }
    if let Some(u) = users::find_by_email(db, &email).await? {
        let mut active: user::ActiveModel = u.clone().into();
        active.google_sub = Set(Some(p.sub.clone()));
        if !u.email_verified {
            // Someone registered this address without proving it; its owner has now proved
            // it. Drop that password, those sessions, API keys and push subscriptions so the
            // earlier registrant is locked out.
            active.password_hash = Set(None);
            let revoked = crate::services::credentials::revoke_all(db, u.id, None).await?;
            tracing::info!(
                user_id = u.id,
                sessions = revoked.sessions,
                api_keys = revoked.api_keys,
                push_devices = revoked.push_devices,
                "Google sign-in took over an unverified registration"
            );
        }
        active.email_verified = Set(true);
        if u.profile_picture.is_none() {
            active.profile_picture = Set(p.picture.clone());
        }
        active.updated_at = Set(Utc::now());
        return Ok(active.update(db).await?);
    }
    let base = username_base(p.name.as_deref(), &email);
    for n in 0..50u32 {
        let candidate = match n {
            0 => base.clone(),
            1..=9 => format!("{base}{}", n + 1),
            _ => format!("{base}{}", rand::random_range(100..100_000)),
        };
        let created = users::create(
            db,
            NewUser {
                username: &candidate,
                email: &email,
                password: None,
                role: crate::entities::user::Role::User,
                email_verified: true,
            },
        )
        .await;
        match created {
            Ok(u) => {
                let mut active: user::ActiveModel = u.into();
                active.google_sub = Set(Some(p.sub.clone()));
                active.display_name = Set(p.name.clone().map(|n| n.chars().take(50).collect()));
                active.profile_picture = Set(p.picture.clone());
                return Ok(active.update(db).await?);
            }
            Err(CreateUserError::UsernameTaken) => continue,
            Err(e) => return Err(anyhow!("could not create the account: {e}")),
        }
    }
    bail!("no free username for {base}")
}

/// Letters, digits, dots, dashes and underscores from the name (or the email's local part).
pub fn username_base(name: Option<&str>, email: &str) -> String {
    let clean = |s: &str| -> String {
        s.chars()
            .filter_map(|c| {
                if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                    Some(c.to_ascii_lowercase())
                } else if c.is_whitespace() {
                    Some('.')
                } else {
                    None
                }
            })
            .collect::<String>()
            .trim_matches('.')
            .chars()
            .take(30)
            .collect()
    };
    let from_name = name.map(clean).unwrap_or_default();
    let base = if from_name.len() >= 3 { from_name } else { clean(email.split('@').next().unwrap_or("")) };
    if base.len() >= 3 { base } else { "user".into() }
}

#[cfg(test)]
mod tests {
    use super::username_base;

    #[test]
    fn usernames_from_names_and_emails() {
        assert_eq!(username_base(Some("Ada Lovelace"), "ada@example.com"), "ada.lovelace");
        assert_eq!(username_base(Some("李"), "li.wei@example.com"), "li.wei");
        assert_eq!(username_base(None, "x@example.com"), "user");
    }
}
