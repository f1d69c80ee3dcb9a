//! `/`: the hero with the uploader, the marketing sections, testimonials and the FAQ.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::json;
use ts_rs::TS;

use super::{engines, faq_json_ld, human_list};
use crate::error::AppResult;
use crate::identify::engine::Mode;
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::services::testimonials::{self, TestimonialView};
use crate::state::AppState;
use crate::views::page_meta::Page;
use crate::views::{Island, PageCtx, Site};

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(home))
}

#[derive(Debug, Clone, Serialize)]
pub struct Faq {
    pub question: String,
    pub answer: String,
}

impl Faq {
    fn new(question: impl Into<String>, answer: impl Into<String>) -> Self {
        Self { question: question.into(), answer: answer.into() }
    }
}

/// Props of the uploader island (`islands/src/islands/Uploader`).
#[derive(Debug, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UploaderProps {
    /// The enforced upload limit in MB (setting `max_file_size`).
    pub max_file_size_mb: u64,
    /// Accepted extensions, lower case without dots (setting `allowed_file_types`).
    pub allowed_file_types: Vec<String>,
    /// `?id=` of a shared identification to load, if any.
    pub shared_id: Option<String>,
    pub signed_in: bool,
    /// `GET /api/settings` and `GET /api/models` as they were when the page was rendered:
    /// the island starts from them (no refetch, no change of layout when it takes over
    /// the server-rendered form) and refreshes them on the usual schedule.
    pub initial_settings: std::collections::BTreeMap<String, String>,
    pub initial_models: crate::routes::api::site::ModelsResponse,
}

/// One engine of the server-rendered "Choose AI Engine" step, exactly as the island shows
/// it (islands/src/identify/engines.ts: names, descriptions, which are offered, the default).
pub struct EngineChoice {
    pub id: &'static str,
    pub name: String,
    pub description: String,
    pub checked: bool,
}

/// The uploader's first view, rendered on the server so the page needs no JavaScript until
/// the visitor acts (the island takes over on the first file chosen or dropped, or engine
/// changed; see `data-island-load="interaction"` in islands/src/runtime.ts).
pub struct UploaderView {
    pub accept: String,
    pub hint: String,
    pub engines: Vec<EngineChoice>,
    /// Names of the engines this server has no key or index for.
    pub not_configured: Vec<String>,
    pub none_available: bool,
}

fn fallback_engine_name(id: &str) -> &'static str {
    match id {
        "auto" => "Auto",
        "google" => "Google Gemini",
        "openai" => "OpenAI GPT",
        "xai" => "xAI Grok",
        "anthropic" => "Anthropic Claude",
        "ensemble" => "Ensemble",
        _ => "Library",
    }
}

pub fn uploader_view(
    settings: &SettingsMap,
    models: &crate::routes::api::site::ModelsResponse,
    user_default: Option<&str>,
) -> UploaderView {
    let a = &models.available;
    let available = |id: &str| match id {
        "google" => a.google,
        "openai" => a.openai,
        "xai" => a.xai,
        "anthropic" => a.anthropic,
        "ensemble" => a.ensemble,
        "library" => a.library,
        _ => false,
    };
    let any = Mode::ENGINE_NAMES.iter().any(|id| available(id));
    let usable = |id: Option<&str>| id.map(|s| s.trim().to_ascii_lowercase()).filter(|s| s != "auto" && available(s));
    let default = usable(Some(settings.text("ai_primary_model")))
        .or_else(|| usable(user_default))
        .or_else(|| usable(Some(&models.recommended)))
        .unwrap_or_else(|| "auto".into());
    let name = |id: &str| {
        let v = settings.text(&format!("{id}_name"));
        if v.is_empty() { fallback_engine_name(id).to_owned() } else { v.to_owned() }
    };
    let description = |id: &str| {
        let v = settings.text(&format!("{id}_desc"));
        if v.is_empty() && id == "auto" {
            "Picks the best engine available right now.".to_owned()
        } else {
            v.to_owned()
        }
    };
    let mut engines = Vec::new();
    let mut not_configured = Vec::new();
    for id in std::iter::once("auto").chain(Mode::ENGINE_NAMES) {
        let on = if id == "auto" { any } else { available(id) };
        if !on && id != "auto" {
            not_configured.push(name(id));
        }
        if on || id == default {
            engines.push(EngineChoice { id, name: name(id), description: description(id), checked: id == default });
        }
    }
    let types = settings.allowed_file_types();
    UploaderView {
        accept: types.iter().map(|t| format!(".{t}")).collect::<Vec<_>>().join(","),
        hint: format!(
            "{} up to {}MB",
            types.iter().map(|t| t.to_ascii_uppercase()).collect::<Vec<_>>().join(", "),
            settings.max_file_size_mb()
        ),
        engines,
        not_configured,
        none_available: !any,
    }
}

/// Props of the recent-identifications island.
#[derive(Debug, Serialize, TS)]
pub struct RecentIdentificationsProps {
    pub limit: u8,
}

#[derive(Debug, Deserialize)]
pub struct HomeParams {
    pub id: Option<String>,
}

pub struct Stat {
    pub value: &'static str,
    pub label: &'static str,
}

/// Marketing figures of the stats strip (SPEC section 1: copy only).
pub const STATS: &[Stat] = &[
    Stat { value: "95%+", label: "Accuracy" },
    Stat { value: "1M+", label: "Movies identified" },
    Stat { value: "5 Sec", label: "Average results" },
    Stat { value: "100%", label: "Secure and private" },
];

#[derive(Template, WebTemplate)]
#[template(path = "home/index.html")]
pub struct HomePage {
    pub ctx: PageCtx,
    pub uploader: Island,
    pub uploader_view: UploaderView,
    /// How the uploader island loads: on interaction, or at once for a shared result.
    pub uploader_load: &'static str,
    pub recent: Island,
    pub max_file_size_mb: u64,
    pub file_types: String,
    pub stats: &'static [Stat],
    pub testimonials: Vec<TestimonialView>,
    pub testimonials_failed: bool,
    pub faq: Vec<Faq>,
}

/// The ten questions of the home page. One list feeds the visible accordion and the
/// FAQPage JSON-LD, so they cannot drift apart.
pub fn home_faq(site: &Site, settings: &SettingsMap) -> Vec<Faq> {
    let name = &site.name;
    let max = settings.max_file_size_mb();
    let types = human_list(&settings.allowed_file_types());
    let engine_names: Vec<String> =
        engines(settings).into_iter().filter(|e| e.key != "library" && e.key != "ensemble").map(|e| e.name).collect();
    let engine_list = match engine_names.len() {
        0 => String::new(),
        n => format!("{} and {}", engine_names[..n - 1].join(", "), engine_names[n - 1]),
    };
    vec![
        Faq::new(
            format!("How does {name} identify a movie or TV show?"),
            format!(
                "You upload a screenshot or a short clip. {name} sends it to AI vision engines that recognise actors, places, \
                 sets and on-screen text, then checks their answer against a movie and TV catalogue. You get the title with \
                 its year, cast, trailer and where to watch it, plus a match percentage that tells you how sure we are."
            ),
        ),
        Faq::new(
            "What files can I upload?",
            format!(
                "One image or video at a time, in these formats: {types}. The maximum file size is {max} MB, a limit set by \
                 the site's administrator and checked on every upload. For a video, a clip of five to fifteen seconds is plenty."
            ),
        ),
        Faq::new(
            "How long does an identification take?",
            "Most screenshots come back in about five seconds. When an engine is busy, allow up to a minute for an image. \
             Clips take one to two minutes, and two to four minutes with audio analysis on. The processing screen shows \
             each step while you wait.",
        ),
        Faq::new(
            format!("Is {name} free to use?"),
            "Your first identification needs no account at all. After that, create a free account to keep identifying \
             without limits, with your history saved.",
        ),
        Faq::new(
            "What happens to the files I upload?",
            "Your file is used for one identification and then deleted from our servers, whether the identification \
             succeeded or not. If you are signed in we keep the result (title, details, match percentage) in your history, \
             never the file itself, and you can clear that history at any time.",
        ),
        Faq::new(
            "How accurate are the results?",
            "On a clear frame from a well-known film or series, the engines are right more than 95% of the time. Every \
             result shows its match percentage: a high number means the engines and the catalogue agree, a lower one means \
             you should check the poster and the cast before trusting it.",
        ),
        Faq::new(
            "Which AI engines do you use?",
            format!(
                "Vision models from three leading AI providers and more: {engine_list}. Auto picks the best engine available \
                 right now, and Ensemble asks every available engine at once and lets them vote. A site can also index its \
                 own videos with the offline Library engine, which finds the exact second of a scene."
            ),
        ),
        Faq::new(
            "Can it identify TV episodes as well as movies?",
            "Yes. Series are recognised just like films, and the result tells you whether it is a movie or a TV show. When \
             the site has indexed the video in its library, the Library engine can even name the exact episode and timestamp.",
        ),
        Faq::new(
            "Where can I watch what I found?",
            "The result shows where to stream the title with a subscription, where to rent it and where to buy it, with \
             direct links to each service, plus the trailer when there is one.",
        ),
        Faq::new(
            "What do I get with an account?",
            "Unlimited identifications, a searchable history of everything you have identified, collections, reviews, \
             shareable results, notifications about new features and the option to install the app on your phone or desktop.",
        ),
    ]
}

async fn home(State(state): State<AppState>, ctx: PageCtx, Query(q): Query<HomeParams>) -> AppResult<HomePage> {
    let settings = state.settings().await?;
    let site = ctx.site.clone();
    let ctx = ctx.with_page_meta(Page::Home);
    let faq = home_faq(&site, &settings);
    let (testimonials, testimonials_failed) =
        match testimonials::featured(&state.db, testimonials::DEFAULT_FEATURED).await {
            Ok(t) => (t, false),
            Err(e) => {
                tracing::error!(error = %e, "featured testimonials could not be loaded");
                (Vec::new(), true)
            }
        };
    let same_as: Vec<&str> = [&site.github_url, &site.twitter_url, &site.linkedin_url]
        .into_iter()
        .map(|s| s.trim())
        .filter(|s| s.starts_with("http"))
        .collect();
    let ctx = ctx
        .with_json_ld(&json!({
            "@context": "https://schema.org",
            "@type": "WebSite",
            "name": site.name,
            "url": format!("{}/", site.origin),
            "description": site.description,
            "potentialAction": {
                "@type": "SearchAction",
                "target": { "@type": "EntryPoint", "urlTemplate": format!("{}/blog?search={{search_term_string}}", site.origin) },
                "query-input": "required name=search_term_string",
            },
        }))
        .with_json_ld(&json!({
            "@context": "https://schema.org",
            "@type": "Organization",
            "name": site.company_name,
            "url": site.company_url,
            "email": site.contact_email,
            "sameAs": same_as,
        }))
        .with_json_ld(&faq_json_ld(&faq));
    let shared_id = q.id.map(|s| s.trim().to_owned()).filter(|s| !s.is_empty() && s.len() <= 128);
    let models = crate::routes::api::site::availability(&state, &settings);
    let user_default = match &ctx.user {
        Some(u) => u.row(&state.db).await?.and_then(|u| u.default_ai_model),
        None => None,
    };
    let uploader_view = uploader_view(&settings, &models, user_default.as_deref());
    let uploader_load = if shared_id.is_some() { "eager" } else { "interaction" };
    let uploader = Island::new(
        "Uploader",
        &UploaderProps {
            max_file_size_mb: settings.max_file_size_mb(),
            allowed_file_types: settings.allowed_file_types(),
            shared_id,
            signed_in: ctx.user.is_some(),
            initial_settings: crate::routes::api::site::public_settings(&settings),
            initial_models: models,
        },
    );
    Ok(HomePage {
        uploader,
        uploader_view,
        uploader_load,
        recent: Island::new("RecentIdentifications", &RecentIdentificationsProps { limit: 3 }),
        max_file_size_mb: settings.max_file_size_mb(),
        file_types: human_list(&settings.allowed_file_types()),
        stats: STATS,
        testimonials,
        testimonials_failed,
        faq,
        ctx,
    })
}
