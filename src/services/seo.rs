//! Search appearance: the admin's per-page title and description overrides, the default
//! social image, site-verification tags and robots rules, all kept as settings (so every
//! node sees a change within the settings cache's few seconds), and the checks the SEO tab
//! shows (length, duplicates, missing description) over pages and posts alike.
use crate::services::settings::{SettingsExt, SettingsMap};

/// A public page whose search appearance an admin may steer.
#[derive(Debug, Clone, Copy)]
pub struct SeoPage {
    /// Part of the setting keys: `seo_{key}_title`, `seo_{key}_description`.
    pub key: &'static str,
    pub path: &'static str,
    pub label: &'static str,
}

pub const PAGES: &[SeoPage] = &[
    SeoPage { key: "home", path: "/", label: "Home" },
    SeoPage { key: "about", path: "/about", label: "About" },
    SeoPage { key: "blog", path: "/blog", label: "Blog" },
    SeoPage { key: "terms", path: "/terms-of-service", label: "Terms of Service" },
    SeoPage { key: "auth", path: "/auth", label: "Sign in" },
    SeoPage { key: "history", path: "/history", label: "History" },
    SeoPage { key: "profile", path: "/profile", label: "Profile" },
    SeoPage { key: "pwa_settings", path: "/pwa-settings", label: "App settings" },
];

/// Search engines cut titles and descriptions around these lengths.
pub const TITLE_MAX: usize = 60;
pub const DESCRIPTION_MIN: usize = 50;
pub const DESCRIPTION_MAX: usize = 160;

/// Site-verification meta tags: (setting key, label, meta name).
pub const VERIFICATIONS: &[(&str, &str, &str)] = &[
    ("seo_google_verification", "Google Search Console", "google-site-verification"),
    ("seo_bing_verification", "Bing Webmaster Tools", "msvalidate.01"),
    ("seo_yandex_verification", "Yandex Webmaster", "yandex-verification"),
    ("seo_pinterest_verification", "Pinterest", "p:domain_verify"),
];

pub const DEFAULT_IMAGE_KEY: &str = "seo_default_image";
pub const ROBOTS_KEY: &str = "seo_robots";

/// The rules `/robots.txt` serves when the admin has written none.
pub const DEFAULT_ROBOTS: &str =
    "User-agent: *\nAllow: /\nDisallow: /api/\nDisallow: /admin\nDisallow: /profile\nDisallow: /history";

pub fn title_key(page: &str) -> String {
    format!("seo_{page}_title")
}
pub fn description_key(page: &str) -> String {
    format!("seo_{page}_description")
}

/// The page an exact request path is, if it is one of [`PAGES`].
pub fn page_for(path: &str) -> Option<&'static SeoPage> {
    PAGES.iter().find(|p| p.path == path)
}

/// The admin's (title, description) overrides of the page at `path`; blank means none.
pub fn overrides(settings: &SettingsMap, path: &str) -> (Option<String>, Option<String>) {
    let Some(page) = page_for(path) else { return (None, None) };
    let get = |k: String| Some(settings.text(&k).trim().to_owned()).filter(|s| !s.is_empty());
    (get(title_key(page.key)), get(description_key(page.key)))
}

/// `(meta name, content)` of every verification tag that is set.
pub fn verification_tags(settings: &SettingsMap) -> Vec<(&'static str, String)> {
    VERIFICATIONS
        .iter()
        .filter_map(|(key, _, name)| {
            Some(settings.text(key).trim().to_owned()).filter(|v| !v.is_empty()).map(|v| (*name, v))
        })
        .collect()
}

/// Whether `key` is one of the settings this module owns.
pub fn is_seo_key(key: &str) -> bool {
    key == DEFAULT_IMAGE_KEY
        || key == ROBOTS_KEY
        || VERIFICATIONS.iter().any(|(k, _, _)| *k == key)
        || PAGES.iter().any(|p| key == title_key(p.key) || key == description_key(p.key))
}

/// Checks one SEO setting and returns the value to store.
pub fn validate(key: &str, value: &str) -> Result<String, String> {
    let v = value.trim();
    if key == ROBOTS_KEY {
        return validate_robots(v);
    }
    if key == DEFAULT_IMAGE_KEY {
        let ours = v.starts_with("/media/blog/") || (v.starts_with("/assets/") && !v.contains(".."));
        let https = url::Url::parse(v).is_ok_and(|u| u.scheme() == "https");
        if !(v.is_empty() || ours || https) || v.contains('"') || v.len() > 1000 {
            return Err("The default social image must be an uploaded image or an https:// URL".into());
        }
        return Ok(v.to_owned());
    }
    if let Some((_, label, _)) = VERIFICATIONS.iter().find(|(k, _, _)| *k == key) {
        // The content the services hand out: letters, digits and a few separators.
        if v.len() > 200 || !v.chars().all(|c| c.is_ascii_alphanumeric() || "-_=.:+/".contains(c)) {
            return Err(format!(
                "{label}: paste only the code from the content=\"...\" part of the tag (letters, digits, - _ = . : + /)"
            ));
        }
        return Ok(v.to_owned());
    }
    let max = if key.ends_with("_title") { 200 } else { 400 };
    if v.chars().count() > max {
        return Err(format!("{key} must be at most {max} characters"));
    }
    if v.chars().any(char::is_control) {
        return Err(format!("{key} must be one line of plain text"));
    }
    Ok(v.to_owned())
}

/// Robots rules, one directive a line (`Field: value`), comments and blank lines allowed.
/// A `Sitemap:` line is added by the server, so it is refused here.
fn validate_robots(v: &str) -> Result<String, String> {
    if v.len() > 10_000 {
        return Err("Robots rules must be at most 10,000 characters".into());
    }
    const FIELDS: &[&str] = &["user-agent", "allow", "disallow", "crawl-delay"];
    let mut out = Vec::new();
    let mut agent_seen = false;
    for (n, line) in v.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            out.push(line.to_owned());
            continue;
        }
        let Some((field, value)) = line.split_once(':') else {
            return Err(format!("Robots rules, line {}: expected `Field: value`, like `Disallow: /private`", n + 1));
        };
        let field = field.trim().to_ascii_lowercase();
        let value = value.trim();
        if field == "sitemap" {
            return Err(format!("Robots rules, line {}: the Sitemap line is added for you", n + 1));
        }
        if !FIELDS.contains(&field.as_str()) {
            return Err(format!(
                "Robots rules, line {}: unknown field `{field}` (use User-agent, Allow, Disallow or Crawl-delay)",
                n + 1
            ));
        }
        if field == "user-agent" {
            agent_seen = true;
        } else if !agent_seen {
            return Err(format!("Robots rules, line {}: start a group with `User-agent: *` first", n + 1));
        }
        if value.chars().any(|c| c.is_control() || c.is_whitespace()) {
            return Err(format!("Robots rules, line {}: the value must not contain spaces", n + 1));
        }
        let name = match field.as_str() {
            "user-agent" => "User-agent",
            "allow" => "Allow",
            "disallow" => "Disallow",
            _ => "Crawl-delay",
        };
        out.push(format!("{name}: {value}"));
    }
    Ok(out.join("\n").trim().to_owned())
}

/// The whole `/robots.txt`.
pub fn robots_txt(settings: &SettingsMap, origin: &str) -> String {
    let rules = settings.text(ROBOTS_KEY).trim();
    let rules = if rules.is_empty() { DEFAULT_ROBOTS } else { rules };
    format!("{rules}\n\nSitemap: {origin}/sitemap.xml\n")
}

/// One row of the SEO tab: a page or a post as search engines see it.
#[derive(Debug, Clone)]
pub struct SeoRow {
    pub kind: &'static str,
    pub path: String,
    pub label: String,
    pub status: u16,
    pub title: String,
    pub description: String,
    pub noindex: bool,
    /// For a post, where to edit it.
    pub edit_url: Option<String>,
    pub warnings: Vec<String>,
}

/// Adds the length, missing and duplicate warnings to every row (noindex rows are not
/// compared: search engines do not list them).
pub fn check(rows: &mut [SeoRow]) {
    use std::collections::HashMap;
    let mut titles: HashMap<String, Vec<usize>> = HashMap::new();
    let mut descriptions: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        if r.noindex || r.status != 200 {
            continue;
        }
        if !r.title.is_empty() {
            titles.entry(r.title.to_lowercase()).or_default().push(i);
        }
        if !r.description.is_empty() {
            descriptions.entry(r.description.to_lowercase()).or_default().push(i);
        }
    }
    let others = |group: &Vec<usize>, me: usize, rows: &[SeoRow]| -> String {
        group.iter().filter(|j| **j != me).map(|j| rows[*j].path.clone()).collect::<Vec<_>>().join(", ")
    };
    let snapshot = rows.to_vec();
    for (i, r) in rows.iter_mut().enumerate() {
        if r.status != 200 {
            r.warnings.push(format!("answers {}", r.status));
        }
        let t = r.title.chars().count();
        if t == 0 {
            r.warnings.push("no title".into());
        } else if t > TITLE_MAX {
            r.warnings.push(format!("title is {t} characters (aim for {TITLE_MAX} or fewer)"));
        }
        let d = r.description.chars().count();
        if d == 0 {
            r.warnings.push("missing description".into());
        } else if d > DESCRIPTION_MAX {
            r.warnings.push(format!("description is {d} characters (aim for {DESCRIPTION_MAX} or fewer)"));
        } else if d < DESCRIPTION_MIN {
            r.warnings.push(format!("description is {d} characters (aim for {DESCRIPTION_MIN} to {DESCRIPTION_MAX})"));
        }
        if r.noindex || r.status != 200 {
            continue;
        }
        if let Some(g) = titles.get(&r.title.to_lowercase()).filter(|g| g.len() > 1) {
            r.warnings.push(format!("same title as {}", others(g, i, &snapshot)));
        }
        if let Some(g) = descriptions.get(&r.description.to_lowercase()).filter(|g| g.len() > 1) {
            r.warnings.push(format!("same description as {}", others(g, i, &snapshot)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn robots_rules_are_checked() {
        assert_eq!(validate_robots("user-agent: *\ndisallow:  /x").unwrap(), "User-agent: *\nDisallow: /x");
        assert!(validate_robots("Disallow: /x").is_err(), "needs a group");
        assert!(validate_robots("User-agent: *\nSitemap: https://e.com/s.xml").is_err());
        assert!(validate_robots("User-agent: *\nNoindex: /").is_err());
        assert!(validate_robots("User-agent: *\nDisallow /x").is_err());
        assert_eq!(validate_robots("# just a comment").unwrap(), "# just a comment");
    }

    #[test]
    fn verification_codes_are_plain() {
        assert!(validate("seo_google_verification", "abc_DEF-123=").is_ok());
        assert!(validate("seo_google_verification", "<meta name=x>").is_err());
        assert!(validate("seo_default_image", "javascript:alert(1)").is_err());
        assert!(validate("seo_default_image", "https://cdn.example/x.jpg").is_ok());
        assert!(validate("seo_home_title", "two\nlines").is_err());
        assert!(is_seo_key("seo_about_description"));
        assert!(!is_seo_key("seo_nowhere_title"));
    }

    fn row(path: &str, title: &str, description: &str) -> SeoRow {
        SeoRow {
            kind: "page",
            path: path.into(),
            label: path.into(),
            status: 200,
            title: title.into(),
            description: description.into(),
            noindex: false,
            edit_url: None,
            warnings: vec![],
        }
    }

    #[test]
    fn duplicates_and_missing_descriptions_are_flagged() {
        let d = "A description long enough to pass the minimum length check.";
        let mut rows = vec![row("/a", "Same", d), row("/b", "same", ""), row("/c", "Other", d)];
        check(&mut rows);
        assert!(rows[0].warnings.contains(&"same title as /b".to_owned()), "{:?}", rows[0].warnings);
        assert!(rows[1].warnings.contains(&"missing description".to_owned()));
        assert!(rows[2].warnings.contains(&"same description as /a".to_owned()), "{:?}", rows[2].warnings);
    }
}
