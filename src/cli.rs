//! Command-line interface: `serve` (default), `migrate`, `user create`, `library ...`,
//! `identify` (the API client, see `client`).
use std::io::{IsTerminal, Read};

use clap::{Parser, Subcommand};

use crate::config::Config;
use crate::entities::user::Role;
use crate::services::users::{self, NewUser};

#[derive(Parser, Debug)]
#[command(name = "reelfind", version, about = "Identify the movie or TV show behind a screenshot or clip")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run the web server (the default).
    Serve,
    /// Bring the database schema up to date and exit.
    Migrate,
    /// Manage user accounts.
    #[command(subcommand)]
    User(UserCommand),
    /// Manage the offline scene library (index your own video files).
    #[command(subcommand)]
    Library(crate::library::cli::LibraryCommand),
    /// Identify a screenshot or clip (a file, or an http(s) URL) with a Reelfind server's
    /// API; the API key is read from REELFIND_API_KEY.
    Identify(crate::client::IdentifyArgs),
}

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create a user; the password is read from standard input or asked for.
    Create {
        #[arg(long)]
        username: String,
        #[arg(long)]
        email: String,
        /// Make the user an administrator.
        #[arg(long)]
        admin: bool,
    },
}

pub async fn run(cli: Cli, config: Config) -> anyhow::Result<()> {
    match cli.command.unwrap_or(Command::Serve) {
        Command::Serve => crate::app::serve(config).await,
        Command::Migrate => {
            let db = crate::db::connect(config.database_url.expose()).await?;
            crate::db::migrate(&db).await?;
            println!("database is up to date");
            Ok(())
        }
        Command::Library(cmd) => crate::library::cli::run(cmd, config).await,
        Command::Identify(args) => crate::client::identify(args).await,
        Command::User(UserCommand::Create { username, email, admin }) => {
            let password = read_password()?;
            let db = crate::db::connect(config.database_url.expose()).await?;
            crate::db::migrate(&db).await?;
            let role = if admin { Role::Admin } else { Role::User };
            let user = users::create(
                &db,
                NewUser { username: &username, email: &email, password: Some(&password), role, email_verified: true },
            )
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("created {} {} <{}>", role, user.username, user.email);
            Ok(())
        }
    }
}

/// A prompt without echo on a terminal; otherwise the first line of standard input.
fn read_password() -> anyhow::Result<String> {
    let password = if std::io::stdin().is_terminal() {
        let first = rpassword::prompt_password("Password: ")?;
        let again = rpassword::prompt_password("Repeat password: ")?;
        anyhow::ensure!(first == again, "passwords do not match");
        first
    } else {
        let mut buf = String::new();
        std::io::stdin().read_to_string(&mut buf)?;
        buf.lines().next().unwrap_or("").to_owned()
    };
    anyhow::ensure!(password.chars().count() >= users::MIN_PASSWORD_LEN, "password must be at least 6 characters long");
    Ok(password)
}
