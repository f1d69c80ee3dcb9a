//! Every setting the site keeps in its `settings` table, in one table ([`SETTINGS`]): the key,
//! its default, the label and kind of its field on the admin dashboard, and the rule a new
//! value must pass. The defaults under every read ([`super::SettingsStore::all`]), the
//! dashboard's forms, the check of a write
//! ([`validate_setting`](crate::services::admin::validate_setting)) and the typed reads
//! ([`super::SettingsExt`]) all come from here, so a setting is added in one place.
//!
//! Settings other modules own keep their rules there: engine keys and model overrides
//! (`{engine}_api_key`, `{engine}_model`), the search appearance (`services::seo`) and the
//! analytics tag (`services::analytics_tag`, whose three keys and defaults are listed here).
use crate::services::{analytics, api_quota, engine_names};

/// The input a setting is edited with on the dashboard (an HTML input `type`, or a textarea).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Text,
    Textarea,
    Number,
    Url,
    Email,
}

impl Field {
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Text => "text",
            Field::Textarea => "textarea",
            Field::Number => "number",
            Field::Url => "url",
            Field::Email => "email",
        }
    }
}

/// Where the dashboard's settings form shows a setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// The site and uploads fieldset.
    Site,
    /// The developer API's fieldset.
    Api,
    /// A control of its own (the engines' checkboxes, the analytics tag's form) or none.
    Own,
}

/// What a value must be. Each rule trims the value first and says what is wrong in words.
#[derive(Clone, Copy, Debug)]
pub enum Rule {
    /// A whole number in `min..=max`: "{what} must be a whole number{unit} between ...".
    Whole { min: i64, max: i64, what: &'static str, unit: &'static str },
    /// Comma-separated file extensions (`jpg,png,mp4`), kept lower-case without dots.
    Extensions,
    /// One of `words` (lower-cased): "{what} must be one of: ...".
    OneOf { words: &'static [&'static str], what: &'static str },
    /// Comma-separated words, each one of `words`: "Unknown {what}: ...".
    SomeOf { words: &'static [&'static str], what: &'static str },
    /// true or false (on/off and 1/0 too; empty is false).
    Flag { what: &'static str },
    /// Empty or an http(s) URL.
    HttpUrl,
    /// Empty, a path on this site (`/terms-of-service`) or an http(s) URL.
    PathOrUrl,
    /// Empty or an email address.
    Email { what: &'static str },
    /// Web origins allowed to call the API with a key (see `services::api_keys::clean_origins`).
    Origins,
    /// A two-letter country code, kept upper-case.
    Country { what: &'static str },
    /// Text of at most 1000 characters with no control characters but line breaks.
    Text,
}

/// One setting: see the module's documentation.
#[derive(Clone, Copy, Debug)]
pub struct Setting {
    pub key: &'static str,
    pub default: &'static str,
    pub label: &'static str,
    pub field: Field,
    pub form: Form,
    pub rule: Rule,
}

impl Setting {
    /// The value to store for `value`, or why it cannot be.
    pub fn check(&self, value: &str) -> Result<String, String> {
        let v = value.trim();
        let key = self.key;
        let list = |v: &str| -> Vec<String> {
            v.split(',')
                .map(|s| s.trim().trim_start_matches('.').to_ascii_lowercase())
                .filter(|s| !s.is_empty())
                .collect()
        };
        let http_url = |v: &str| url::Url::parse(v).is_ok_and(|u| matches!(u.scheme(), "http" | "https"));
        Ok(match self.rule {
            Rule::Whole { min, max, what, unit } => match v.parse::<i64>() {
                Ok(n) if (min..=max).contains(&n) => n.to_string(),
                _ => return Err(format!("{what} must be a whole number{unit} between {min} and {max}")),
            },
            Rule::Extensions => {
                let types = list(v);
                if types.is_empty()
                    || types.iter().any(|t| t.len() > 10 || !t.chars().all(|c| c.is_ascii_alphanumeric()))
                {
                    return Err(
                        "Allowed file types must be a comma-separated list of extensions like jpg,png,mp4".into()
                    );
                }
                types.join(",")
            }
            Rule::OneOf { words, what } => {
                let m = v.to_ascii_lowercase();
                if !words.contains(&m.as_str()) {
                    return Err(format!("{what} must be one of: {}", words.join(", ")));
                }
                m
            }
            Rule::SomeOf { words, what } => {
                let chosen = list(v);
                if let Some(bad) = chosen.iter().find(|e| !words.contains(&e.as_str())) {
                    return Err(format!("Unknown {what}: {bad}"));
                }
                chosen.join(",")
            }
            Rule::Flag { what } => match v {
                "true" | "on" | "1" => "true".into(),
                "false" | "off" | "0" | "" => "false".into(),
                _ => return Err(format!("{what} must be true or false")),
            },
            Rule::HttpUrl => {
                if !v.is_empty() && !http_url(v) {
                    return Err(format!("{key} must be an http(s) URL"));
                }
                v.to_owned()
            }
            Rule::PathOrUrl => {
                if !(v.is_empty() || (v.starts_with('/') && !v.starts_with("//")) || http_url(v)) {
                    return Err(format!("{key} must be a path like /terms-of-service or an http(s) URL"));
                }
                v.to_owned()
            }
            Rule::Email { what } => {
                if !v.is_empty() && (!v.contains('@') || v.len() > 254 || v.contains(char::is_whitespace)) {
                    return Err(format!("{what} must be an email address"));
                }
                v.to_owned()
            }
            Rule::Origins => crate::services::api_keys::clean_origins(v)?,
            Rule::Country { what } => {
                if !(v.len() == 2 && v.chars().all(|c| c.is_ascii_alphabetic())) {
                    return Err(format!("{what} must be a two-letter country code"));
                }
                v.to_ascii_uppercase()
            }
            Rule::Text => {
                if v.chars().count() > 1000 {
                    return Err(format!("{key} must be at most 1000 characters"));
                }
                if v.chars().any(|c| c.is_control() && c != '\n' && c != '\r') {
                    return Err(format!("{key} contains characters that are not allowed"));
                }
                v.to_owned()
            }
        })
    }

    /// The whole number `stored` holds when it passes this setting's rule, else the default's.
    pub fn whole(&self, stored: Option<&str>) -> i64 {
        let read = |v: &str| self.check(v).ok().and_then(|v| v.parse().ok());
        stored.and_then(read).or_else(|| read(self.default)).unwrap_or_default()
    }
}

/// The setting named `key`, if the table has it.
pub fn setting(key: &str) -> Option<&'static Setting> {
    SETTINGS.iter().find(|s| s.key == key)
}

const fn text(key: &'static str, default: &'static str) -> Setting {
    Setting { key, default, label: key, field: Field::Text, form: Form::Own, rule: Rule::Text }
}

const fn site(key: &'static str, default: &'static str, label: &'static str, field: Field, rule: Rule) -> Setting {
    Setting { key, default, label, field, form: Form::Site, rule }
}

const fn api(key: &'static str, default: &'static str, label: &'static str, rule: Rule) -> Setting {
    let field = if matches!(rule, Rule::Whole { .. }) { Field::Number } else { Field::Text };
    Setting { key, default, label, field, form: Form::Api, rule }
}

/// The largest upload in MB (SPEC section 3): the one limit the upload forms state and the
/// server enforces.
pub const MAX_FILE_SIZE: Setting = site(
    "max_file_size",
    "10",
    "Maximum file size (MB)",
    Field::Number,
    Rule::Whole { min: 1, max: 2048, what: "Maximum file size", unit: " of MB" },
);

/// Every setting, in the order the dashboard's forms show theirs.
pub const SETTINGS: &[Setting] = &[
    MAX_FILE_SIZE,
    site(
        "allowed_file_types",
        "jpg,jpeg,png,webp,mp4,mov",
        "Allowed file types (comma-separated)",
        Field::Text,
        Rule::Extensions,
    ),
    site("site_name", "Reelfind", "Site name", Field::Text, Rule::Text),
    site(
        "site_description",
        "Instantly identify movies and TV shows.",
        "Site description",
        Field::Textarea,
        Rule::Text,
    ),
    site("site_tagline", "Name that scene in seconds", "Tagline", Field::Text, Rule::Text),
    site(
        "hero_description",
        "Drop in a screenshot or a short clip and get the movie or TV show it comes from, with the cast, the trailer and where to watch it tonight.",
        "Hero description",
        Field::Textarea,
        Rule::Text,
    ),
    site("company_name", "Reelfind", "Company name", Field::Text, Rule::Text),
    // Empty means "derive from the public URL": {host} and support@{host}.
    site("company_url", "", "Company URL", Field::Url, Rule::HttpUrl),
    site("contact_email", "", "Contact email", Field::Email, Rule::Email { what: "Contact email" }),
    site("support_hours", "Monday - Friday: 9:00 AM - 5:00 PM EST", "Support hours", Field::Text, Rule::Text),
    site("response_time", "Within 24 hours", "Response time", Field::Text, Rule::Text),
    site("terms_url", "/terms-of-service", "Terms of Service URL", Field::Text, Rule::PathOrUrl),
    site("github_url", "https://github.com", "GitHub URL", Field::Url, Rule::HttpUrl),
    site("twitter_url", "https://twitter.com", "Twitter URL", Field::Url, Rule::HttpUrl),
    site("linkedin_url", "https://www.linkedin.com", "LinkedIn URL", Field::Url, Rule::HttpUrl),
    // The developer API (services::api_quota): the default quota of keyed requests, and the
    // origins whose pages may call the API with a key (CORS), comma-separated; empty: none.
    api(
        "api_quota_per_minute",
        "30",
        "Requests per minute (default per person)",
        Rule::Whole { min: 1, max: api_quota::MAX_PER_MINUTE as i64, what: "API requests per minute", unit: "" },
    ),
    api(
        "api_quota_per_day",
        "1000",
        "Requests per day (default per person)",
        Rule::Whole { min: 1, max: api_quota::MAX_PER_DAY as i64, what: "API requests per day", unit: "" },
    ),
    api(
        "api_quota_concurrent",
        "2",
        "Requests at once (default per person)",
        Rule::Whole { min: 1, max: api_quota::MAX_CONCURRENT as i64, what: "Concurrent API requests", unit: "" },
    ),
    api("api_cors_origins", "", "Web origins allowed to call the API with a key (comma-separated)", Rule::Origins),
    Setting {
        rule: Rule::OneOf { words: &engine_names::MODES, what: "Primary AI model" },
        ..text("ai_primary_model", "auto")
    },
    Setting {
        rule: Rule::SomeOf { words: &engine_names::ENGINES, what: "engine" },
        ..text("allowed_engines", "google,openai,xai,anthropic,ensemble,library")
    },
    Setting { rule: Rule::Flag { what: "Require email verification" }, ..text("require_email_verification", "false") },
    Setting { rule: Rule::Country { what: "TMDB region" }, ..text("tmdb_region", "US") },
    // Days analytics events are kept; the Insight tab shows at most 90.
    Setting {
        rule: Rule::Whole {
            min: *analytics::RETENTION_RANGE.start(),
            max: *analytics::RETENTION_RANGE.end(),
            what: "Analytics retention",
            unit: " of days",
        },
        ..text("analytics_retention_days", "90")
    },
    // The third-party analytics tag (services::analytics_tag checks the three together): none
    // by default.
    text("analytics_tag_provider", ""),
    text("analytics_tag_id", ""),
    text("analytics_tag_host", ""),
    // The engines' names and descriptions on the upload form.
    text("auto_name", "Auto (recommended)"),
    text("auto_desc", "Picks the best engine available right now."),
    text("google_name", "Google Gemini"),
    text("google_desc", "Fast multimodal model, strong on recent releases and native audio."),
    text("openai_name", "OpenAI GPT"),
    text("openai_desc", "Careful visual reasoning over faces, sets and on-screen text."),
    text("xai_name", "xAI Grok"),
    text("xai_desc", "Broad pop-culture knowledge with quick answers."),
    text("anthropic_name", "Anthropic Claude"),
    text("anthropic_desc", "Thorough scene analysis that explains its reasoning."),
    text("ensemble_name", "Ensemble"),
    text("ensemble_desc", "Asks every available engine at once and lets them vote."),
    text("library_name", "Library"),
    text("library_desc", "Matches your own indexed videos to the exact second, offline."),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_is_listed_once_and_every_default_passes_its_own_rule() {
        for (i, s) in SETTINGS.iter().enumerate() {
            assert!(SETTINGS[..i].iter().all(|o| o.key != s.key), "{} listed twice", s.key);
            assert_eq!(s.check(s.default).as_deref(), Ok(s.default), "{}", s.key);
        }
    }

    #[test]
    fn a_whole_number_is_read_by_its_rule_and_falls_back_to_the_default() {
        assert_eq!(MAX_FILE_SIZE.whole(Some(" 25 ")), 25);
        assert_eq!(MAX_FILE_SIZE.whole(Some("0")), 10);
        assert_eq!(MAX_FILE_SIZE.whole(Some("lots")), 10);
        assert_eq!(MAX_FILE_SIZE.whole(None), 10);
        assert_eq!(
            MAX_FILE_SIZE.check("4096").unwrap_err(),
            "Maximum file size must be a whole number of MB between 1 and 2048"
        );
    }
}
