//! sea-orm entities in the shape `sea-orm-cli generate entity` writes them.
//! Behaviour lives in `services/`, not here.
pub mod blog_post;
pub mod email_verification_token;
pub mod oauth_state;
pub mod session;
pub mod setting;
pub mod user;
