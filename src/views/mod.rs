//! What every page shares: the site text from settings, the signed-in user, SEO meta,
//! structured data and the asset URLs. Page structs embed a [`PageCtx`] as `ctx` and the
//! base layout (`templates/base.html`) reads it.
pub mod assets;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use serde::Serialize;

use crate::auth::{CurrentUser, MaybeUser};
use crate::error::AppError;
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::state::AppState;

/// Site-wide text and links, every value from settings (SPEC section 1).
#[derive(Debug, Clone)]
pub struct Site {
    pub name: String,
    pub description: String,
    pub tagline: String,
    pub hero_description: String,
    pub company_name: String,
    pub company_url: String,
    pub contact_email: String,
    pub github_url: String,
    pub twitter_url: String,
    pub linkedin_url: String,
    pub support_hours: String,
    pub response_time: String,
    pub terms_url: String,
    /// Public origin, e.g. `http://localhost:3000`.
    pub origin: String,
}

impl Site {
    pub fn from_settings(s: &SettingsMap, origin: &str) -> Self {
        let host = url::Url::parse(origin)
            .ok()
            .and_then(|u| u.host_str().map(str::to_owned))
            .unwrap_or_else(|| "localhost".into());
        let or = |key: &str, fallback: String| {
            let v = s.text(key).trim();
            if v.is_empty() { fallback } else { v.to_owned() }
        };
        Self {
            name: or("site_name", "Reelfind".into()),
            description: or("site_description", "Instantly identify movies and TV shows.".into()),
            tagline: s.text("site_tagline").to_owned(),
            hero_description: s.text("hero_description").to_owned(),
            company_name: or("company_name", "Reelfind".into()),
            company_url: or("company_url", origin.to_owned()),
            contact_email: or("contact_email", format!("support@{host}")),
            github_url: s.text("github_url").to_owned(),
            twitter_url: s.text("twitter_url").to_owned(),
            linkedin_url: s.text("linkedin_url").to_owned(),
            support_hours: s.text("support_hours").to_owned(),
            response_time: s.text("response_time").to_owned(),
            terms_url: or("terms_url", "/terms-of-service".into()),
            origin: origin.to_owned(),
        }
    }
}

/// SEO and social meta of one page.
#[derive(Debug, Clone, Default)]
pub struct Meta {
    /// The page's own title; the layout appends ` | {site name}` unless `full_title` is set.
    pub title: String,
    pub full_title: bool,
    pub description: String,
    /// Absolute canonical URL.
    pub canonical: String,
    pub og_type: &'static str,
    pub og_image: Option<String>,
    /// Keep private or thin pages (auth, profile, admin) out of search results.
    pub noindex: bool,
}

/// An island mount: `<div data-island="{name}" data-props="{props}">`.
#[derive(Debug, Clone)]
pub struct Island {
    pub name: &'static str,
    pub props: String,
}

impl Island {
    pub fn new(name: &'static str, props: &impl Serialize) -> Self {
        Self { name, props: serde_json::to_string(props).unwrap_or_else(|_| "{}".into()) }
    }
}

#[derive(Debug, Clone)]
pub struct PageCtx {
    pub site: Site,
    pub user: Option<CurrentUser>,
    /// Request path, for the active nav link.
    pub path: String,
    pub meta: Meta,
    /// JSON-LD documents, already serialised and made safe for a `<script>` element.
    pub json_ld: Vec<String>,
    pub css_href: String,
    pub runtime_src: Option<String>,
}

impl PageCtx {
    pub fn build(state: &AppState, settings: &SettingsMap, user: Option<CurrentUser>, path: &str) -> Self {
        let site = Site::from_settings(settings, &state.config.origin());
        let meta = Meta {
            title: site.name.clone(),
            full_title: true,
            description: site.description.clone(),
            canonical: state.config.absolute(path),
            og_type: "website",
            og_image: None,
            noindex: false,
        };
        Self {
            site,
            user,
            path: path.to_owned(),
            meta,
            json_ld: Vec::new(),
            css_href: state.assets.url("app.css").unwrap_or("/assets/css/app.css").to_owned(),
            runtime_src: state.assets.url("runtime.js").map(str::to_owned),
        }
    }

    /// Sets the page title and description.
    pub fn titled(mut self, title: impl Into<String>, description: impl Into<String>) -> Self {
        self.meta.title = title.into();
        self.meta.full_title = false;
        let d = description.into();
        if !d.is_empty() {
            self.meta.description = d;
        }
        self
    }

    pub fn noindex(mut self) -> Self {
        self.meta.noindex = true;
        self
    }

    pub fn with_json_ld(mut self, doc: &serde_json::Value) -> Self {
        self.json_ld.push(json_for_script(doc));
        self
    }

    /// The text of the `<title>` element.
    pub fn document_title(&self) -> String {
        if self.meta.full_title { self.meta.title.clone() } else { format!("{} | {}", self.meta.title, self.site.name) }
    }

    pub fn is_active(&self, prefix: &str) -> bool {
        if prefix == "/" {
            self.path == "/"
        } else {
            self.path == prefix || self.path.starts_with(&format!("{prefix}/"))
        }
    }

    /// Props for the header island: who is signed in and where we are.
    pub fn header_props(&self) -> Island {
        #[derive(Serialize)]
        struct HeaderProps<'a> {
            user: Option<&'a CurrentUser>,
            path: &'a str,
        }
        Island::new("Header", &HeaderProps { user: self.user.as_ref(), path: &self.path })
    }
}

/// Serialises JSON so that it cannot close the `<script>` element it sits in.
pub fn json_for_script(value: &serde_json::Value) -> String {
    serde_json::to_string(value)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

impl<S> FromRequestParts<S> for PageCtx
where
    S: Send + Sync,
    AppState: FromRef<S>,
{
    type Rejection = AppError;
    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, Self::Rejection> {
        let state = AppState::from_ref(s);
        let MaybeUser(user) = MaybeUser::from_request_parts(parts, s).await.unwrap_or(MaybeUser(None));
        let settings = state.settings().await?;
        Ok(PageCtx::build(&state, &settings, user, parts.uri.path()))
    }
}
