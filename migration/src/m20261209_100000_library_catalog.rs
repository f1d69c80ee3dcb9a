//! The Library's catalog in the database every node shares (issue 40), used when the hashes
//! live in Milvus (`REELFIND_LIBRARY_INDEX=milvus://...`); with the embedded index the
//! catalog stays `catalog.json` beside its segment files.
//!
//! - `library_videos`: one indexed video file (its path on the machines that index it, the
//!   file's size, time and partial hash, what it is, how many entries of each tier).
//! - `library_catalog`: one row: the next video id to give and the catalog's version, raised
//!   by every change (a node re-reads the videos when it sees a new version; a writer
//!   changes the catalog only from the version it read).
//! - `library_sounds`: a video's soundtrack landmarks (the audio tier's file, as bytes), so a
//!   node that did not index the video can search its sound.
//! - `library_pending`: ids given to an ingest that has not published its video yet, with
//!   the time (seconds since the epoch); one left long after belonged to a process that died,
//!   and its entries are swept.
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum LibraryVideos {
    Table,
    Id,
    Path,
    Size,
    Mtime,
    PartialHash,
    Title,
    Year,
    Show,
    Season,
    Episode,
    MetaSource,
    Duration,
    Frames,
    CropFrames,
    UpperFrames,
    AudioLandmarks,
    IndexedAt,
    IndexSeconds,
}

#[derive(DeriveIden)]
enum LibraryCatalog {
    Table,
    Id,
    NextId,
    Version,
}

#[derive(DeriveIden)]
enum LibrarySounds {
    Table,
    VideoId,
    Landmarks,
}

#[derive(DeriveIden)]
enum LibraryPending {
    Table,
    VideoId,
    Since,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(LibraryVideos::Table)
                .if_not_exists()
                // Given by the catalog (`library_catalog.next_id`), never reused: it names the
                // video's rows in Milvus.
                .col(ColumnDef::new(LibraryVideos::Id).big_integer().not_null().primary_key())
                .col(ColumnDef::new(LibraryVideos::Path).text().not_null())
                .col(ColumnDef::new(LibraryVideos::Size).big_integer().not_null())
                .col(ColumnDef::new(LibraryVideos::Mtime).big_integer().not_null())
                .col(ColumnDef::new(LibraryVideos::PartialHash).string_len(80).not_null())
                .col(ColumnDef::new(LibraryVideos::Title).text().not_null())
                .col(ColumnDef::new(LibraryVideos::Year).integer().null())
                .col(ColumnDef::new(LibraryVideos::Show).text().null())
                .col(ColumnDef::new(LibraryVideos::Season).integer().null())
                .col(ColumnDef::new(LibraryVideos::Episode).integer().null())
                // `nfo`, `filename` or `admin`.
                .col(ColumnDef::new(LibraryVideos::MetaSource).string_len(16).not_null())
                .col(ColumnDef::new(LibraryVideos::Duration).double().not_null())
                .col(ColumnDef::new(LibraryVideos::Frames).integer().not_null())
                .col(ColumnDef::new(LibraryVideos::CropFrames).integer().not_null())
                .col(ColumnDef::new(LibraryVideos::UpperFrames).integer().not_null())
                .col(ColumnDef::new(LibraryVideos::AudioLandmarks).integer().not_null())
                .col(ColumnDef::new(LibraryVideos::IndexedAt).string_len(64).not_null())
                .col(ColumnDef::new(LibraryVideos::IndexSeconds).double().not_null())
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(LibraryCatalog::Table)
                .if_not_exists()
                .col(ColumnDef::new(LibraryCatalog::Id).integer().not_null().primary_key())
                .col(ColumnDef::new(LibraryCatalog::NextId).big_integer().not_null())
                .col(ColumnDef::new(LibraryCatalog::Version).big_integer().not_null())
                .to_owned(),
        )
        .await?;
        m.exec_stmt(
            Query::insert()
                .into_table(LibraryCatalog::Table)
                .columns([LibraryCatalog::Id, LibraryCatalog::NextId, LibraryCatalog::Version])
                .values_panic([1.into(), 1.into(), 0.into()])
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(LibrarySounds::Table)
                .if_not_exists()
                .col(ColumnDef::new(LibrarySounds::VideoId).big_integer().not_null().primary_key())
                .col(ColumnDef::new(LibrarySounds::Landmarks).blob().not_null())
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(LibraryPending::Table)
                .if_not_exists()
                .col(ColumnDef::new(LibraryPending::VideoId).big_integer().not_null().primary_key())
                .col(ColumnDef::new(LibraryPending::Since).big_integer().not_null())
                .to_owned(),
        )
        .await?;
        Ok(())
    }

    async fn down(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.drop_table(Table::drop().table(LibraryPending::Table).if_exists().to_owned()).await?;
        m.drop_table(Table::drop().table(LibrarySounds::Table).if_exists().to_owned()).await?;
        m.drop_table(Table::drop().table(LibraryCatalog::Table).if_exists().to_owned()).await?;
        m.drop_table(Table::drop().table(LibraryVideos::Table).if_exists().to_owned()).await
    }
}
