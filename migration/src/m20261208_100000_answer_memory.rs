//! The answer memory and the feedback on answers (issue 41).
//!
//! - `remembered_answers`: one catalog answer (TMDB id, type, season/episode) with the engine
//!   that gave it, its confidence and the tallies of the people's votes. Never a picture, a
//!   file name, a transcript or who uploaded it.
//! - `remembered_hashes`: the 256-bit perceptual hashes that answer stands for (a still's
//!   picture, a few frames of a clip), as four 64-bit words, by section (whole picture or its
//!   centre window). Append-only: every node's in-memory index reads the rows after the last
//!   id it has.
//! - `answer_votes`: "Was this right?" — one per person and identification.
//! - `identifications.memory_id`: which remembered answer an identification answered from or
//!   was remembered as (the owner's own row; cleared with their history).
use sea_orm_migration::prelude::*;

use crate::m20261122_000001_foundation::Users;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum RememberedAnswers {
    Table,
    Id,
    TmdbId,
    MediaType,
    Season,
    Episode,
    Title,
    Year,
    Engine,
    Confidence,
    MediaKind,
    Supporters,
    SupportWeight,
    DoubtWeight,
    Standing,
    Pinned,
    PreviousTitle,
    CorrectedAt,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum RememberedHashes {
    Table,
    Id,
    MemoryId,
    Section,
    H0,
    H1,
    H2,
    H3,
    CreatedAt,
}

#[derive(DeriveIden)]
enum AnswerVotes {
    Table,
    Id,
    MemoryId,
    IdentificationId,
    UserId,
    Engine,
    Verdict,
    ShownTmdbId,
    ShownMediaType,
    TmdbId,
    MediaType,
    Title,
    Year,
    Weight,
    Origin,
    Status,
    DecidedAt,
    CreatedAt,
}

#[derive(DeriveIden)]
enum Identifications {
    Table,
    MemoryId,
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, m: &SchemaManager) -> Result<(), DbErr> {
        m.create_table(
            Table::create()
                .table(RememberedAnswers::Table)
                .if_not_exists()
                .col(ColumnDef::new(RememberedAnswers::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(RememberedAnswers::TmdbId).big_integer().not_null())
                // `movie` or `tv`.
                .col(ColumnDef::new(RememberedAnswers::MediaType).string_len(8).not_null())
                .col(ColumnDef::new(RememberedAnswers::Season).integer().null())
                .col(ColumnDef::new(RememberedAnswers::Episode).integer().null())
                .col(ColumnDef::new(RememberedAnswers::Title).string_len(300).not_null())
                .col(ColumnDef::new(RememberedAnswers::Year).string_len(32).null())
                // The engine whose answer this was (`openai`, `ensemble`, ...).
                .col(ColumnDef::new(RememberedAnswers::Engine).string_len(32).not_null())
                .col(ColumnDef::new(RememberedAnswers::Confidence).double().not_null())
                // `image` or `video`.
                .col(ColumnDef::new(RememberedAnswers::MediaKind).string_len(8).not_null())
                // Tallies of the votes (see `services::feedback`), rewritten by every vote.
                .col(ColumnDef::new(RememberedAnswers::Supporters).integer().not_null().default(0))
                .col(ColumnDef::new(RememberedAnswers::SupportWeight).double().not_null().default(0.0))
                .col(ColumnDef::new(RememberedAnswers::DoubtWeight).double().not_null().default(0.0))
                // Answered from: doubts do not outweigh confirmations.
                .col(ColumnDef::new(RememberedAnswers::Standing).boolean().not_null().default(true))
                // Set by an administrator's decision: the people's rule no longer flips it.
                .col(ColumnDef::new(RememberedAnswers::Pinned).boolean().not_null().default(false))
                .col(ColumnDef::new(RememberedAnswers::PreviousTitle).string_len(300).null())
                .col(ColumnDef::new(RememberedAnswers::CorrectedAt).timestamp_with_time_zone().null())
                .col(ColumnDef::new(RememberedAnswers::CreatedAt).timestamp_with_time_zone().not_null())
                .col(ColumnDef::new(RememberedAnswers::UpdatedAt).timestamp_with_time_zone().not_null())
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(RememberedHashes::Table)
                .if_not_exists()
                .col(ColumnDef::new(RememberedHashes::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(RememberedHashes::MemoryId).big_integer().not_null())
                // 0: the whole picture (borders cut); 1: its centre window (the crop tier).
                .col(ColumnDef::new(RememberedHashes::Section).small_integer().not_null())
                .col(ColumnDef::new(RememberedHashes::H0).big_integer().not_null())
                .col(ColumnDef::new(RememberedHashes::H1).big_integer().not_null())
                .col(ColumnDef::new(RememberedHashes::H2).big_integer().not_null())
                .col(ColumnDef::new(RememberedHashes::H3).big_integer().not_null())
                .col(ColumnDef::new(RememberedHashes::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(RememberedHashes::Table, RememberedHashes::MemoryId)
                        .to(RememberedAnswers::Table, RememberedAnswers::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_remembered_hashes_memory")
                .table(RememberedHashes::Table)
                .col(RememberedHashes::MemoryId)
                .to_owned(),
        )
        .await?;
        m.create_table(
            Table::create()
                .table(AnswerVotes::Table)
                .if_not_exists()
                .col(ColumnDef::new(AnswerVotes::Id).big_integer().not_null().auto_increment().primary_key())
                .col(ColumnDef::new(AnswerVotes::MemoryId).big_integer().null())
                .col(ColumnDef::new(AnswerVotes::IdentificationId).string_len(32).not_null())
                .col(ColumnDef::new(AnswerVotes::UserId).big_integer().not_null())
                // The engine that gave the answer voted on (per-engine quality on Insight).
                .col(ColumnDef::new(AnswerVotes::Engine).string_len(32).not_null())
                // `right` or `wrong`.
                .col(ColumnDef::new(AnswerVotes::Verdict).string_len(8).not_null())
                // The title the identification showed.
                .col(ColumnDef::new(AnswerVotes::ShownTmdbId).big_integer().null())
                .col(ColumnDef::new(AnswerVotes::ShownMediaType).string_len(8).null())
                // The title the person says it is (the shown one for `right`; the picked one,
                // or none for "I don't know", for `wrong`).
                .col(ColumnDef::new(AnswerVotes::TmdbId).big_integer().null())
                .col(ColumnDef::new(AnswerVotes::MediaType).string_len(8).null())
                .col(ColumnDef::new(AnswerVotes::Title).string_len(300).null())
                .col(ColumnDef::new(AnswerVotes::Year).string_len(32).null())
                .col(ColumnDef::new(AnswerVotes::Weight).double().not_null())
                // A keyed digest of the network the vote came from (independence), never the address.
                .col(ColumnDef::new(AnswerVotes::Origin).string_len(32).not_null())
                // `open`, `accepted` or `rejected`.
                .col(ColumnDef::new(AnswerVotes::Status).string_len(12).not_null())
                .col(ColumnDef::new(AnswerVotes::DecidedAt).timestamp_with_time_zone().null())
                .col(ColumnDef::new(AnswerVotes::CreatedAt).timestamp_with_time_zone().not_null())
                .foreign_key(
                    ForeignKey::create()
                        .from(AnswerVotes::Table, AnswerVotes::MemoryId)
                        .to(RememberedAnswers::Table, RememberedAnswers::Id)
                        .on_delete(ForeignKeyAction::SetNull),
                )
                .foreign_key(
                    ForeignKey::create()
                        .from(AnswerVotes::Table, AnswerVotes::UserId)
                        .to(Users::Table, Users::Id)
                        .on_delete(ForeignKeyAction::Cascade),
                )
                .to_owned(),
        )
        .await?;
        // One vote per person per identification, whichever node takes it.
        m.create_index(
            Index::create()
                .name("idx_answer_votes_user_identification")
                .table(AnswerVotes::Table)
                .col(AnswerVotes::UserId)
                .col(AnswerVotes::IdentificationId)
                .unique()
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_answer_votes_memory")
                .table(AnswerVotes::Table)
                .col(AnswerVotes::MemoryId)
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_answer_votes_created")
                .table(AnswerVotes::Table)
                .col(AnswerVotes::CreatedAt)
                .to_owned(),
        )
        .await?;
        m.alter_table(
            Table::alter()
                .table(Identifications::Table)
                .add_column(ColumnDef::new(Identifications::MemoryId).big_integer().null())
                .to_owned(),
        )
        .await?;
        m.create_index(
            Index::create()
                .name("idx_identifications_memory")
                .table(Identifications::Table)
                .col(Identifications::MemoryId)
                .to_owned(),
        )
        .await
    }
}
