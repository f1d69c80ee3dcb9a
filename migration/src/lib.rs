//! The database schema of Reelfind, one portable set of migrations for SQLite and PostgreSQL.
pub use sea_orm_migration::prelude::*;

mod m20261122_000001_foundation;
mod m20261122_100000_accounts;
mod m20261122_300000_testimonials;
mod m20261122_300001_blog_seed;
mod m20261122_400000_identify;
mod m20261122_500000_collections;
mod m20261122_510000_push;

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
        ]
    }
}
