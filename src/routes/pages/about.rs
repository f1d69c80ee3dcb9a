//! `/about`: what Reelfind is, its engines, features, FAQ and the tutorial library.
use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{EngineInfo, Faq, engines, human_list};
use crate::error::AppResult;
use crate::services::settings::{SettingsExt, SettingsMap};
use crate::state::AppState;
use crate::views::page_meta::Page;
use crate::views::{PageCtx, Site};

pub fn router() -> Router<AppState> {
    Router::new().route("/about", get(about))
}

/// A static tutorial card (SPEC section 3).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Tutorial {
    pub id: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub duration: &'static str,
    /// Beginner, Intermediate or Advanced.
    pub difficulty: &'static str,
    /// Slug of one of [`TUTORIAL_CATEGORIES`].
    pub category: &'static str,
    /// Icon shown as the card's thumbnail.
    pub thumbnail: &'static str,
    /// Where the tutorial lives: a written guide on this site.
    pub video_url: &'static str,
    pub views: u32,
    pub topics: &'static [&'static str],
}

impl Tutorial {
    pub fn category_label(&self) -> &'static str {
        TUTORIAL_CATEGORIES.iter().find(|(slug, _)| *slug == self.category).map(|(_, l)| *l).unwrap_or("")
    }
    pub fn difficulty_class(&self) -> String {
        self.difficulty.to_ascii_lowercase()
    }
}

/// (slug, label) of the tutorial filter, in display order. "all" shows every card.
pub const TUTORIAL_CATEGORIES: &[(&str, &str)] = &[
    ("all", "All"),
    ("getting-started", "Getting Started"),
    ("ai-engines", "AI Engines"),
    ("pro-tips", "Pro Tips"),
    ("features", "Features"),
    ("mobile", "Mobile"),
    ("developers", "Developers"),
];

pub const TUTORIALS: &[Tutorial] = &[
    Tutorial {
        id: "first-identification",
        title: "Your First Identification",
        description: "Upload a screenshot, pick an engine and read the result: title, match percentage, cast and where to watch.",
        duration: "3 min",
        difficulty: "Beginner",
        category: "getting-started",
        thumbnail: "play",
        video_url: "/blog/how-to-take-a-screenshot-that-gets-identified",
        views: 0,
        topics: &["Uploading", "Choosing an engine", "Reading results"],
    },
    Tutorial {
        id: "choosing-an-engine",
        title: "Choosing the Right AI Engine",
        description: "What Auto, the individual engines and Ensemble voting are good at, and when a slower answer is worth it.",
        duration: "5 min",
        difficulty: "Intermediate",
        category: "ai-engines",
        thumbnail: "spark",
        video_url: "/blog/how-ai-engines-identify-a-scene",
        views: 0,
        topics: &["Auto mode", "Ensemble", "Confidence scores"],
    },
    Tutorial {
        id: "perfect-screenshot",
        title: "Screenshots That Always Match",
        description: "Pause on a face, keep the player controls out of the frame and upload the original file.",
        duration: "4 min",
        difficulty: "Beginner",
        category: "pro-tips",
        thumbnail: "target",
        video_url: "/blog/how-to-take-a-screenshot-that-gets-identified",
        views: 0,
        topics: &["Framing", "Image quality", "File size"],
    },
    Tutorial {
        id: "clips-and-audio",
        title: "Clips, Audio Analysis and Sharing",
        description: "When a short clip beats a still frame, how audio analysis helps, and how to share a result with friends.",
        duration: "6 min",
        difficulty: "Intermediate",
        category: "features",
        thumbnail: "film",
        video_url: "/blog/screenshot-or-clip-what-to-upload",
        views: 0,
        topics: &["Video clips", "Audio analysis", "Sharing"],
    },
    Tutorial {
        id: "install-on-your-phone",
        title: "Install the App on Your Phone",
        description: "Add the site to your home screen, turn on notifications and identify straight from your camera roll.",
        duration: "3 min",
        difficulty: "Beginner",
        category: "mobile",
        thumbnail: "phone",
        video_url: "/pwa-settings",
        views: 0,
        topics: &["Install", "Notifications", "Camera roll"],
    },
    Tutorial {
        id: "library-engine",
        title: "Index Your Own Library",
        description: "Self-hosting? Index your video files so the offline Library engine can name the exact episode and second.",
        duration: "8 min",
        difficulty: "Advanced",
        category: "developers",
        thumbnail: "code",
        video_url: "/blog/library-engine-finds-the-exact-second",
        views: 0,
        topics: &["Self-hosting", "Fingerprints", "Command line"],
    },
];

pub struct Feature {
    pub icon: &'static str,
    pub title: &'static str,
    pub text: &'static str,
}

const FEATURES: &[Feature] = &[
    Feature {
        icon: "film",
        title: "Screenshots and clips",
        text: "Upload a still frame or a short video. Clips can include audio analysis for dialogue and music.",
    },
    Feature {
        icon: "tv",
        title: "Where to watch",
        text: "Streaming, rental and purchase options with direct links, plus the trailer and the full cast.",
    },
    Feature {
        icon: "target",
        title: "Honest confidence",
        text: "Every result carries a match percentage, so you know when to double-check the poster.",
    },
    Feature {
        icon: "history",
        title: "History and collections",
        text: "Signed-in users keep every identification, searchable and sortable, and save titles to collections.",
    },
    Feature {
        icon: "share",
        title: "Share a result",
        text: "Send a link to what you found; friends open it without needing an account.",
    },
    Feature {
        icon: "shield",
        title: "Private by design",
        text: "Uploads are deleted after analysis. Only the result is kept, and only in your own history.",
    },
];

pub struct Stat {
    pub value: &'static str,
    pub label: &'static str,
}

/// Marketing figures (SPEC section 1: copy only).
const STATS: &[Stat] = &[
    Stat { value: "100K+", label: "Movies and shows" },
    Stat { value: "500K+", label: "Identifications" },
    Stat { value: "95%+", label: "Accuracy" },
    Stat { value: "5 Sec", label: "Average result" },
];

/// A filter button of the tutorial section.
pub struct FilterLink {
    pub label: &'static str,
    pub href: String,
    pub current: bool,
}

#[derive(Debug, Deserialize)]
pub struct AboutParams {
    pub category: Option<String>,
}

#[derive(Template, WebTemplate)]
#[template(path = "about/index.html")]
pub struct AboutPage {
    pub ctx: PageCtx,
    pub engines: Vec<EngineInfo>,
    pub features: &'static [Feature],
    pub stats: &'static [Stat],
    pub faq: Vec<Faq>,
    pub filters: Vec<FilterLink>,
    pub tutorials: Vec<&'static Tutorial>,
    pub category_label: &'static str,
}

/// Questions about how it works; the home page has the general ones.
pub fn about_faq(site: &Site, settings: &SettingsMap) -> Vec<Faq> {
    let name = &site.name;
    let max = settings.max_file_size_mb();
    let types = human_list(&settings.allowed_file_types());
    vec![
        Faq {
            question: "What is the largest file I can upload?".into(),
            answer: format!(
                "{max} MB. This limit is set by the site's administrator, applies to images and videos alike, and is checked \
                 while your file uploads. Accepted formats are {types}."
            ),
        },
        Faq {
            question: "Why did an engine give a low match percentage?".into(),
            answer: "The picture did not hold enough distinctive detail, or the engines disagreed. Try a frame with a clear \
                     face, a landmark or on-screen text, or upload a short clip instead."
                .into(),
        },
        Faq {
            question: format!("Does {name} keep my screenshots?"),
            answer: "No. Files are deleted as soon as the analysis ends, successful or not. Signed-in users keep the result in \
                     their history, never the file."
                .into(),
        },
        Faq {
            question: "What is the Library engine?".into(),
            answer: "An offline engine that matches your upload against fingerprints of videos the site has indexed. It needs \
                     no cloud provider and can name the exact episode and second, but it only knows what has been indexed."
                .into(),
        },
        Faq {
            question: "Can I host my own copy?".into(),
            answer: format!(
                "Yes. {name} is a single self-hostable program that runs with SQLite out of the box or PostgreSQL for larger \
                 sites. Add the API keys of the AI providers you want to use, or index your own videos for the Library engine."
            ),
        },
        Faq {
            question: "How do I report a wrong result?".into(),
            answer: format!(
                "Write to {} with the title you expected and, if you can, the shared link of the result. Wrong answers \
                 help us tune how the engines' votes are weighed.",
                site.contact_email
            ),
        },
    ]
}

async fn about(State(state): State<AppState>, ctx: PageCtx, Query(q): Query<AboutParams>) -> AppResult<AboutPage> {
    let settings = state.settings().await?;
    let site = ctx.site.clone();
    let selected = q
        .category
        .as_deref()
        .map(str::trim)
        .and_then(|c| TUTORIAL_CATEGORIES.iter().find(|(slug, _)| *slug == c))
        .map(|(slug, _)| *slug)
        .unwrap_or("all");
    let tutorials: Vec<&Tutorial> = TUTORIALS.iter().filter(|t| selected == "all" || t.category == selected).collect();
    let filters = TUTORIAL_CATEGORIES
        .iter()
        .map(|(slug, label)| FilterLink {
            label,
            href: if *slug == "all" { "/about#tutorials".into() } else { format!("/about?category={slug}#tutorials") },
            current: *slug == selected,
        })
        .collect();
    let category_label = TUTORIAL_CATEGORIES.iter().find(|(s, _)| *s == selected).map(|(_, l)| *l).unwrap_or("All");
    let ctx = ctx.with_page_meta(Page::About).with_json_ld(&json!({
        "@context": "https://schema.org",
        "@type": "AboutPage",
        "name": format!("About {}", site.name),
        "url": format!("{}/about", site.origin),
        "about": { "@type": "Organization", "name": site.company_name, "url": site.company_url },
    }));
    let mut ctx = ctx;
    // Filtered views are the same page for search engines.
    ctx.meta.canonical = format!("{}/about", site.origin);
    Ok(AboutPage {
        engines: engines(&settings),
        features: FEATURES,
        stats: STATS,
        faq: about_faq(&site, &settings),
        filters,
        tutorials,
        category_label,
        ctx,
    })
}
