//! The third-party analytics tag (SPEC section 7): Google Analytics 4, Plausible or Matomo,
//! chosen by an administrator in the studio; none by default.
//!
//! Three settings describe it: `analytics_tag_provider` (`""`, `ga4`, `plausible`, `matomo`),
//! `analytics_tag_id` (a GA4 measurement id `G-…`, the site's domain as Plausible knows it,
//! Matomo's numeric site id) and `analytics_tag_host` (where the provider's script is served:
//! empty for GA4's and Plausible's own hosts, required for a Matomo instance; a self-hosted
//! Plausible or a proxy may be named too). A page carries the tag (a `<meta>` the runtime
//! reads) only when all of it is valid, and the Content-Security-Policy of that page is widened
//! for exactly the hosts it names ([`AnalyticsTag::script_hosts`], [`AnalyticsTag::connect_hosts`]).
//!
//! What the browser does with it (islands/src/lib/analyticsTag.ts): nothing when the visitor
//! asks not to be tracked (Global Privacy Control or Do Not Track); otherwise the script with
//! anonymised IP, no advertising features and no automatic page view, then one page-path
//! event per page view, a page-load-time event, and an exception event from the error
//! boundary. No cookies: GA4 runs with consent mode's storage denied, Matomo with cookies
//! disabled, Plausible uses none.
use serde::Serialize;
use url::Url;

use crate::services::settings::SettingsMap;

pub const PROVIDER_KEY: &str = "analytics_tag_provider";
pub const ID_KEY: &str = "analytics_tag_id";
pub const HOST_KEY: &str = "analytics_tag_host";

pub const GA4_HOST: &str = "https://www.googletagmanager.com";
/// Where gtag.js sends its hits (regional hosts included).
pub const GA4_COLLECT_HOSTS: &[&str] = &["https://*.google-analytics.com", "https://*.analytics.google.com"];
pub const PLAUSIBLE_HOST: &str = "https://plausible.io";

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Provider {
    Ga4,
    Plausible,
    Matomo,
}

impl Provider {
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "ga4" => Some(Self::Ga4),
            "plausible" => Some(Self::Plausible),
            "matomo" => Some(Self::Matomo),
            _ => None,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Self::Ga4 => "Google Analytics 4",
            Self::Plausible => "Plausible",
            Self::Matomo => "Matomo",
        }
    }
}

/// A configured, valid tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalyticsTag {
    pub provider: Provider,
    pub id: String,
    /// The script's base: an origin, or for Matomo an origin with a path ending in `/`.
    pub host: Url,
}

/// What the page tells the runtime (JSON in `<meta name="reelfind-analytics">`).
#[derive(Debug, Serialize)]
pub struct TagForPage<'a> {
    pub provider: Provider,
    pub id: &'a str,
    /// The script to load.
    pub src: String,
    /// Where Matomo's tracker answers (`matomo.php`); absent for the others.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
}

impl AnalyticsTag {
    /// The tag the settings describe, or `None` (none chosen, or something invalid: the
    /// studio refuses invalid values, so that only happens with a hand-edited table).
    pub fn from_settings(settings: &SettingsMap) -> Option<Self> {
        let get = |k: &str| settings.get(k).map(|s| s.trim()).unwrap_or("");
        let provider = Provider::parse(get(PROVIDER_KEY))?;
        let id = get(ID_KEY);
        validate_id(provider, id).ok()?;
        let host = resolve_host(provider, get(HOST_KEY)).ok()?;
        Some(Self { provider, id: id.to_owned(), host })
    }

    fn base(&self) -> String {
        let s = self.host.as_str();
        s.strip_suffix('/').unwrap_or(s).to_owned()
    }

    /// The script URL.
    pub fn script_src(&self) -> String {
        let base = self.base();
        match self.provider {
            Provider::Ga4 => {
                let id: String = url::form_urlencoded::byte_serialize(self.id.as_bytes()).collect();
                format!("{base}/gtag/js?id={id}")
            }
            // The "manual" script sends no page view by itself; we send one per page with its path.
            Provider::Plausible => format!("{base}/js/script.manual.js"),
            Provider::Matomo => format!("{base}/matomo.js"),
        }
    }

    pub fn for_page(&self) -> TagForPage<'_> {
        TagForPage {
            provider: self.provider,
            id: &self.id,
            src: self.script_src(),
            endpoint: (self.provider == Provider::Matomo).then(|| format!("{}/matomo.php", self.base())),
        }
    }

    /// The origin scripts come from (for `script-src`).
    pub fn script_hosts(&self) -> Vec<String> {
        vec![self.host.origin().ascii_serialization()]
    }

    /// Where the tag sends its events (for `connect-src`): its own host, and for GA4 also
    /// Google's collection hosts.
    pub fn connect_hosts(&self) -> Vec<String> {
        let mut hosts = vec![self.host.origin().ascii_serialization()];
        if self.provider == Provider::Ga4 {
            hosts.extend(GA4_COLLECT_HOSTS.iter().map(|h| (*h).to_owned()));
        }
        hosts
    }
}

/// Checks one of the three settings as the studio saves it; returns the value to store.
pub fn validate(key: &str, value: &str) -> Result<String, String> {
    let v = value.trim();
    match key {
        PROVIDER_KEY => match v.to_ascii_lowercase().as_str() {
            "" | "none" => Ok(String::new()),
            p if Provider::parse(p).is_some() => Ok(p.to_owned()),
            _ => Err("Analytics tag provider must be none, ga4, plausible or matomo".into()),
        },
        ID_KEY => {
            if v.len() > 100 || !v.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')) {
                return Err(
                    "Analytics tag id must be a measurement id, a domain or a site number (letters, digits, - . _)"
                        .into(),
                );
            }
            Ok(v.to_owned())
        }
        HOST_KEY => {
            if v.is_empty() {
                return Ok(String::new());
            }
            parse_host(v).map(|u| u.to_string())
        }
        _ => Err(format!("Unknown setting: {key}")),
    }
}

/// Checks the three together (the studio's form): a provider needs an id of its shape, and
/// Matomo a host. `Ok(None)` when no provider is chosen.
pub fn validate_together(provider: &str, id: &str, host: &str) -> Result<Option<AnalyticsTag>, String> {
    let Some(provider) = Provider::parse(provider) else {
        return Ok(None);
    };
    validate_id(provider, id.trim())?;
    let host = resolve_host(provider, host.trim())?;
    Ok(Some(AnalyticsTag { provider, id: id.trim().to_owned(), host }))
}

fn validate_id(provider: Provider, id: &str) -> Result<(), String> {
    let ok = match provider {
        Provider::Ga4 => {
            id.len() > 2
                && id.len() <= 24
                && id.starts_with("G-")
                && id[2..].chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        }
        Provider::Plausible => {
            !id.is_empty()
                && id.len() <= 100
                && id.contains('.')
                && id.split('.').all(|l| !l.is_empty() && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'))
        }
        Provider::Matomo => !id.is_empty() && id.len() <= 9 && id.chars().all(|c| c.is_ascii_digit()),
    };
    if ok {
        return Ok(());
    }
    Err(match provider {
        Provider::Ga4 => "A Google Analytics 4 measurement id looks like G-ABC123XYZ".into(),
        Provider::Plausible => "A Plausible site id is the site's domain, like example.com".into(),
        Provider::Matomo => "A Matomo site id is a number, like 1".into(),
    })
}

fn resolve_host(provider: Provider, host: &str) -> Result<Url, String> {
    if host.is_empty() {
        return match provider {
            Provider::Ga4 => Ok(Url::parse(GA4_HOST).expect("constant URL")),
            Provider::Plausible => Ok(Url::parse(PLAUSIBLE_HOST).expect("constant URL")),
            Provider::Matomo => Err("Matomo needs the address of your Matomo, like https://matomo.example.com/".into()),
        };
    }
    parse_host(host)
}

/// An http(s) address without credentials, query or fragment, with a path ending in `/`.
fn parse_host(v: &str) -> Result<Url, String> {
    let bad = || "Analytics tag host must be an http(s) address like https://matomo.example.com/".to_owned();
    let mut u = Url::parse(v).map_err(|_| bad())?;
    if !matches!(u.scheme(), "http" | "https")
        || u.host_str().is_none()
        || !u.username().is_empty()
        || u.password().is_some()
        || u.query().is_some()
        || u.fragment().is_some()
        || v.contains(['"', '\'', ' ', ';'])
    {
        return Err(bad());
    }
    if !u.path().ends_with('/') {
        let p = format!("{}/", u.path());
        u.set_path(&p);
    }
    Ok(u)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(provider: &str, id: &str, host: &str) -> SettingsMap {
        [(PROVIDER_KEY, provider), (ID_KEY, id), (HOST_KEY, host)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    #[test]
    fn none_by_default_and_when_incomplete() {
        assert_eq!(AnalyticsTag::from_settings(&SettingsMap::new()), None);
        assert_eq!(AnalyticsTag::from_settings(&settings("", "G-ABC123", "")), None);
        assert_eq!(AnalyticsTag::from_settings(&settings("ga4", "", "")), None);
        assert_eq!(AnalyticsTag::from_settings(&settings("ga4", "UA-1234-1", "")), None, "Universal Analytics is gone");
        assert_eq!(AnalyticsTag::from_settings(&settings("matomo", "3", "")), None, "Matomo needs its host");
    }

    #[test]
    fn ga4_loads_gtag_and_opens_only_google_hosts() {
        let tag = AnalyticsTag::from_settings(&settings("ga4", "G-ABC123XYZ", "")).unwrap();
        assert_eq!(tag.script_src(), "https://www.googletagmanager.com/gtag/js?id=G-ABC123XYZ");
        assert_eq!(tag.script_hosts(), ["https://www.googletagmanager.com"]);
        assert_eq!(
            tag.connect_hosts(),
            ["https://www.googletagmanager.com", "https://*.google-analytics.com", "https://*.analytics.google.com"]
        );
    }

    #[test]
    fn plausible_and_matomo_use_their_host() {
        let p = AnalyticsTag::from_settings(&settings("plausible", "reelfind.example", "")).unwrap();
        assert_eq!(p.script_src(), "https://plausible.io/js/script.manual.js");
        assert_eq!(p.connect_hosts(), ["https://plausible.io"]);
        let m = AnalyticsTag::from_settings(&settings("matomo", "7", "https://stats.example.org/matomo")).unwrap();
        assert_eq!(m.script_src(), "https://stats.example.org/matomo/matomo.js");
        assert_eq!(m.for_page().endpoint.as_deref(), Some("https://stats.example.org/matomo/matomo.php"));
        assert_eq!(m.script_hosts(), ["https://stats.example.org"]);
    }

    #[test]
    fn the_studio_refuses_what_would_break_the_page_or_the_policy() {
        assert_eq!(validate(PROVIDER_KEY, "None").unwrap(), "");
        assert_eq!(validate(PROVIDER_KEY, "GA4").unwrap(), "ga4");
        assert!(validate(PROVIDER_KEY, "segment").is_err());
        assert!(validate(ID_KEY, "G-1\"><script>").is_err());
        for host in [
            "javascript:alert(1)",
            "https://a.example/x?y=1",
            "https://u:p@a.example/",
            "https://a.example/ 'unsafe-inline'",
        ] {
            assert!(validate(HOST_KEY, host).is_err(), "{host}");
        }
        assert_eq!(validate(HOST_KEY, "https://stats.example.org/m").unwrap(), "https://stats.example.org/m/");
        assert!(validate_together("matomo", "x", "https://stats.example.org/").is_err());
        assert!(validate_together("plausible", "localhost", "").is_err());
        assert_eq!(validate_together("", "anything", "").unwrap(), None);
    }
}
