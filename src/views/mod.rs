//! What every page shares: the site text from settings, the signed-in user, SEO meta,
//! structured data and the asset URLs. Page structs embed a [`PageCtx`] as `ctx` and the
//! base layout (`templates/base.html`) reads it.
pub mod assets;
pub mod page_meta;

use axum::extract::{FromRef, FromRequestParts};
use axum::http::request::Parts;
use serde::Serialize;
use ts_rs::TS;

use crate::error::AppError;
use crate::middleware::auth::MaybeUser;
use crate::services::seo;
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::services::users::CurrentUser;
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
    /// The admin's search-appearance overrides of this page (Search appearance tab); they
    /// win over whatever the handler set. A page that varies (a filtered list) clears them.
    pub title_override: Option<String>,
    pub description_override: Option<String>,
    /// Site-verification `<meta name content>` pairs (home page only).
    pub verification: Vec<(&'static str, String)>,
}

/// An island mount: `<div data-island="{name}" data-props="{props}">`.
#[derive(Debug, Clone)]
pub struct Island {
    pub name: &'static str,
    pub props: String,
}

impl Island {
    /// The props must derive [`TS`] as well as `Serialize`: the island imports their type
    /// from `islands/src/generated/`, generated from the Rust type (and listed in
    /// `routes::island_types`), so the two sides cannot drift apart.
    pub fn new(name: &'static str, props: &(impl Serialize + TS)) -> Self {
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
    /// The admin studio's stylesheet; only `/admin` templates link it.
    pub studio_css_href: String,
    pub runtime_src: Option<String>,
    /// The nonce every `<script>` of this page carries (see `csp`).
    pub csp_nonce: String,
    /// The third-party analytics tag the admin chose, as JSON for the runtime
    /// (`services::analytics_tag`); `None` when there is none.
    pub analytics_tag: Option<String>,
}

impl PageCtx {
    pub fn build(state: &AppState, settings: &SettingsMap, user: Option<CurrentUser>, path: &str) -> Self {
        let site = Site::from_settings(settings, &state.config.origin());
        let (title_override, description_override) = seo::overrides(settings, path);
        let default_image = settings.text(seo::DEFAULT_IMAGE_KEY).trim();
        let og_image = (!default_image.is_empty()).then(|| {
            if default_image.starts_with('/') {
                format!("{}{default_image}", site.origin)
            } else {
                default_image.to_owned()
            }
        });
        let meta = Meta {
            title: site.name.clone(),
            full_title: true,
            description: site.description.clone(),
            canonical: state.config.absolute(path),
            og_type: "website",
            og_image,
            noindex: false,
            title_override,
            description_override,
            verification: if path == "/" { seo::verification_tags(settings) } else { Vec::new() },
        };
        Self {
            site,
            user,
            path: path.to_owned(),
            meta,
            json_ld: Vec::new(),
            csp_nonce: String::new(),
            css_href: state.assets.url("app.css").unwrap_or("/assets/css/app.css").to_owned(),
            studio_css_href: state.assets.url("studio.css").unwrap_or("/assets/css/studio.css").to_owned(),
            runtime_src: state.assets.url("runtime.js").map(str::to_owned),
            analytics_tag: crate::services::analytics_tag::AnalyticsTag::from_settings(settings)
                .and_then(|t| serde_json::to_string(&t.for_page()).ok()),
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

    /// Sets the title, description and indexing of one of the pages in [`page_meta`].
    pub fn with_page_meta(mut self, page: page_meta::Page) -> Self {
        let m = page_meta::page_meta(page, &self.site);
        self.meta.title = m.title;
        self.meta.full_title = m.full_title;
        self.meta.description = m.description;
        self.meta.noindex |= m.noindex;
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

    /// The text of the `<title>` element: the admin's override, else the page's own.
    pub fn document_title(&self) -> String {
        if let Some(t) = &self.meta.title_override {
            return t.clone();
        }
        page_meta::document_title(&self.meta.title, self.meta.full_title, &self.site.name)
    }

    /// The meta description: the admin's override, else the page's own.
    pub fn description(&self) -> &str {
        self.meta.description_override.as_deref().unwrap_or(&self.meta.description)
    }

    /// Drops the admin's overrides (for variants of a page: filtered lists, later pages).
    pub fn without_overrides(mut self) -> Self {
        self.meta.title_override = None;
        self.meta.description_override = None;
        self
    }

    pub fn is_active(&self, prefix: &str) -> bool {
        if prefix == "/" {
            self.path == "/"
        } else {
            self.path == prefix || self.path.starts_with(&format!("{prefix}/"))
        }
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
        let mut ctx = PageCtx::build(&state, &settings, user, parts.uri.path());
        if let Some(n) = parts.extensions.get::<crate::middleware::csp::CspNonce>() {
            ctx.csp_nonce = n.0.clone();
        }
        Ok(ctx)
    }
}
