//! sea-orm entities in the shape `sea-orm-cli generate entity` writes them.
//! Behaviour lives in `services/`, not here.
pub mod analytics_event;
pub mod blog_post;
pub mod collection_item;
pub mod email_verification_token;
pub mod guest_usage;
pub mod identification;
pub mod metadata_cache;
pub mod notification_preference;
pub mod oauth_state;
pub mod push_subscription;
pub mod session;
pub mod setting;
pub mod testimonial;
pub mod user;
