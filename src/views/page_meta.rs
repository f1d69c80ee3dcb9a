//! What each public page says about itself to search engines and link previews: its
//! title, description and whether it may be indexed. The pages and the Search appearance
//! tab both read it from here, so the tab shows what a page serves without rendering it.
use super::Site;

/// The public pages an admin may steer (`services::seo::PAGES`, by key).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Page {
    Home,
    About,
    Blog,
    Terms,
    Auth,
    History,
    Profile,
    PwaSettings,
}

impl Page {
    pub const ALL: &'static [Page] = &[
        Self::Home,
        Self::About,
        Self::Blog,
        Self::Terms,
        Self::Auth,
        Self::History,
        Self::Profile,
        Self::PwaSettings,
    ];

    /// The key of the page in `services::seo::PAGES` (and in its setting keys).
    pub fn key(self) -> &'static str {
        match self {
            Self::Home => "home",
            Self::About => "about",
            Self::Blog => "blog",
            Self::Terms => "terms",
            Self::Auth => "auth",
            Self::History => "history",
            Self::Profile => "profile",
            Self::PwaSettings => "pwa_settings",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|p| p.key() == key)
    }
}

/// A page's own search appearance, before the admin's overrides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageMeta {
    /// The page's title; the layout appends ` | {site name}` unless `full_title` is set.
    pub title: String,
    pub full_title: bool,
    pub description: String,
    /// Private or thin pages (sign-in, profile, history) stay out of search results.
    pub noindex: bool,
}

impl PageMeta {
    fn new(title: impl Into<String>, description: impl Into<String>) -> Self {
        Self { title: title.into(), full_title: false, description: description.into(), noindex: false }
    }

    fn noindex(self) -> Self {
        Self { noindex: true, ..self }
    }

    /// The text of the page's `<title>` element.
    pub fn document_title(&self, site_name: &str) -> String {
        document_title(&self.title, self.full_title, site_name)
    }
}

/// `{title} | {site name}`, or the title alone when it is already whole.
pub fn document_title(title: &str, full_title: bool, site_name: &str) -> String {
    if full_title { title.to_owned() } else { format!("{title} | {site_name}") }
}

/// The title, description and indexing of `page` on `site`.
pub fn page_meta(page: Page, site: &Site) -> PageMeta {
    let name = &site.name;
    match page {
        Page::Home => PageMeta {
            title: if site.tagline.is_empty() { name.clone() } else { format!("{name} - {}", site.tagline) },
            full_title: true,
            description: site.description.clone(),
            noindex: false,
        },
        Page::About => PageMeta::new(
            format!("About {name}"),
            format!(
                "How {name} identifies movies and TV shows from a screenshot or clip: the AI engines, the features, privacy and tutorials."
            ),
        ),
        Page::Blog => PageMeta::new(
            "Blog",
            format!(
                "Guides, tips and behind-the-scenes articles from {name}: better screenshots, how the AI engines work, privacy and more."
            ),
        ),
        Page::Terms => PageMeta::new(
            "Terms of Service",
            format!("The terms for using {name}: uploads, accounts, reviews, acceptable use and privacy."),
        ),
        Page::Auth => PageMeta::new("Sign In or Sign Up", "Sign in to Reelfind or create a free account.").noindex(),
        Page::History => PageMeta::new(
            "Identification History",
            "Every movie and TV show you have identified, searchable and sortable.",
        )
        .noindex(),
        Page::Profile => PageMeta::new("Profile", "Your Reelfind profile and settings.").noindex(),
        Page::PwaSettings => PageMeta::new(
            "App & Notification Settings",
            format!("Install {name} on your phone or desktop and choose which notifications you receive."),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::services::seo;

    #[test]
    fn every_seo_page_has_its_metadata_and_no_other() {
        let keys: Vec<&str> = seo::PAGES.iter().map(|p| p.key).collect();
        let ours: Vec<&str> = Page::ALL.iter().map(|p| p.key()).collect();
        assert_eq!(keys, ours);
        for key in keys {
            assert_eq!(Page::from_key(key).map(Page::key), Some(key));
        }
    }
}
