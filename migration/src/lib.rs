//! The database schema of Reelfind, one portable set of migrations for SQLite and PostgreSQL.
pub use sea_orm_migration::prelude::*;

mod m20261122_000001_foundation;
mod m20261122_100000_accounts;
mod m20261122_300000_testimonials;
mod m20261122_300001_blog_seed;
mod m20261122_400000_identify;
mod m20261122_500000_collections;
mod m20261122_510000_push;
mod m20261201_100000_testimonial_moderation;
mod m20261201_200000_rate_limits;
mod m20261201_210000_blog_studio;
mod m20261201_300000_identification_sharing;
mod m20261201_400000_insight;
mod m20261201_410000_account_trust;
mod m20261202_100000_api_keys;
mod m20261203_100000_single_use_tokens;
mod m20261205_100000_achievements;
mod m20261206_100000_content_version;
mod m20261207_100000_account_races;
mod m20261208_100000_answer_memory;
mod m20261209_100000_library_catalog;

pub struct Migrator;

#[async_trait::async_trait]
impl MigratorTrait for Migrator {
    fn migrations() -> Vec<Box<dyn MigrationTrait>> {
        vec![
            Box::new(m20261122_000001_foundation::Migration),
            Box::new(m20261122_100000_accounts::Migration),
            Box::new(m20261122_300000_testimonials::Migration),
            Box::new(m20261122_300001_blog_seed::Migration),
            Box::new(m20261122_400000_identify::Migration),
            Box::new(m20261122_500000_collections::Migration),
            Box::new(m20261122_510000_push::Migration),
            Box::new(m20261201_100000_testimonial_moderation::Migration),
            Box::new(m20261201_200000_rate_limits::Migration),
            Box::new(m20261201_210000_blog_studio::Migration),
            Box::new(m20261201_300000_identification_sharing::Migration),
            Box::new(m20261201_400000_insight::Migration),
            Box::new(m20261201_410000_account_trust::Migration),
            Box::new(m20261202_100000_api_keys::Migration),
            Box::new(m20261203_100000_single_use_tokens::Migration),
            Box::new(m20261205_100000_achievements::Migration),
            Box::new(m20261206_100000_content_version::Migration),
            Box::new(m20261207_100000_account_races::Migration),
            Box::new(m20261208_100000_answer_memory::Migration),
            Box::new(m20261209_100000_library_catalog::Migration),
        ]
    }
}
