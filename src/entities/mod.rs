//! sea-orm entities in the shape `sea-orm-cli generate entity` writes them.
//! Behaviour lives in `services/`, not here.
pub mod achievement;
pub mod analytics_event;
pub mod answer_vote;
pub mod api_key;
pub mod api_quota;
pub mod blog_image;
pub mod blog_post;
pub mod blog_slug_redirect;
pub mod collection_item;
pub mod content_version;
pub mod identification;
pub mod metadata_cache;
pub mod notification_preference;
pub mod oauth_state;
pub mod push_subscription;
pub mod rate_limit;
pub mod remembered_answer;
pub mod remembered_hash;
pub mod sea_orm_active_enums;
pub mod session;
pub mod setting;
pub mod single_use_token;
pub mod testimonial;
pub mod user;
