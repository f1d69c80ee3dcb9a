//! Everything that lets someone act as a person without their password: sessions, API keys
//! (a key made from a stolen session would outlive it), push subscriptions (a device an
//! intruder subscribed would go on hearing about the person's identifications). When the
//! password changes hands (a change, a reset, a Google sign-in taking over an unproven
//! registration), they all end together, in the caller's transaction.
use chrono::Utc;
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, ConnectionTrait, EntityTrait, QueryFilter};

use crate::entities::{api_key, push_subscription};
use crate::services::sessions;

/// What [`revoke_all`] ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Revoked {
    pub sessions: u64,
    pub api_keys: u64,
    pub push_devices: u64,
}

/// Ends every session of `user_id` but the one of `keep_session` (the person changing
/// their password keeps the browser they did it in), revokes every live API key and
/// forgets every push subscription. Run it inside the transaction that changes the password.
pub async fn revoke_all(
    db: &impl ConnectionTrait,
    user_id: i64,
    keep_session: Option<&str>,
) -> Result<Revoked, sea_orm::DbErr> {
    let sessions = sessions::delete_others(db, user_id, keep_session).await?;
    let api_keys = api_key::Entity::update_many()
        .col_expr(api_key::Column::RevokedAt, Expr::value(Utc::now()))
        .filter(api_key::Column::UserId.eq(user_id))
        .filter(api_key::Column::RevokedAt.is_null())
        .exec(db)
        .await?
        .rows_affected;
    let push_devices = push_subscription::Entity::delete_many()
        .filter(push_subscription::Column::UserId.eq(user_id))
        .exec(db)
        .await?
        .rows_affected;
    Ok(Revoked { sessions, api_keys, push_devices })
}

/// The sentence that tells the person what else ended, or nothing when nothing did.
pub fn summary(r: &Revoked) -> Option<String> {
    let plural = |n: u64, one: &str, many: &str| if n == 1 { format!("1 {one}") } else { format!("{n} {many}") };
    let mut parts = Vec::new();
    if r.api_keys > 0 {
        parts.push(format!("{} revoked", plural(r.api_keys, "API key was", "API keys were")));
    }
    if r.push_devices > 0 {
        parts.push(format!("notifications were turned off on {}", plural(r.push_devices, "device", "devices")));
    }
    (!parts.is_empty()).then(|| {
        let mut s = parts.join(", and ");
        if let Some(first) = s.get(0..1) {
            s = first.to_uppercase() + &s[1..];
        }
        s + "."
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_names_what_ended() {
        assert_eq!(summary(&Revoked::default()), None);
        assert_eq!(summary(&Revoked { sessions: 3, api_keys: 1, push_devices: 0 }).unwrap(), "1 API key was revoked.");
        assert_eq!(
            summary(&Revoked { sessions: 0, api_keys: 2, push_devices: 1 }).unwrap(),
            "2 API keys were revoked, and notifications were turned off on 1 device."
        );
        assert_eq!(
            summary(&Revoked { sessions: 0, api_keys: 0, push_devices: 2 }).unwrap(),
            "Notifications were turned off on 2 devices."
        );
    }
}
