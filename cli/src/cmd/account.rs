//! `account`, `summary` and `config`.

use super::Context;
use crate::cli::SummaryArgs;
use crate::output::{self, BOLD, Table};

pub async fn account(ctx: &Context) -> anyhow::Result<()> {
    let account = ctx.client().await?.account().get().await?;
    ctx.out.emit(&account, |out, w| {
        output::fields(
            out,
            w,
            &[
                ("id", account.id.to_string()),
                ("email", account.email.clone()),
                (
                    "name",
                    account.name.clone().unwrap_or_else(|| "-".to_owned()),
                ),
                ("balance", output::rub(account.balance_rub)),
                ("reserved", output::rub(account.reserved_rub)),
                (
                    "active limit",
                    format!("{} generations", account.limits.concurrent_generations),
                ),
                ("since", output::time(&account.created_at)),
            ],
        )
    })
}

pub async fn summary(ctx: &Context, args: SummaryArgs) -> anyhow::Result<()> {
    let summary = ctx
        .client()
        .await?
        .account()
        .summary(args.from, args.to)
        .await?;
    ctx.out.emit(&summary, |out, w| {
        writeln!(
            w,
            "{} to {}",
            output::time(&summary.from),
            output::time(&summary.to)
        )?;
        output::fields(
            out,
            w,
            &[
                ("generations", summary.generations.to_string()),
                ("spent", output::rub(summary.spent_rub)),
            ],
        )?;
        writeln!(w, "\n{}", out.paint(BOLD, "By media type"))?;
        let mut table = Table::new([
            "MEDIA",
            "GENERATIONS",
            "SPENT",
            "SUCCEEDED",
            "FAILED",
            "CANCELLED",
            "ACTIVE",
        ]);
        for media in &summary.by_media_type {
            let counts = &media.by_status;
            table.row([
                media.media_type.to_string(),
                media.generations.to_string(),
                output::rub(media.spent_rub),
                counts.succeeded.to_string(),
                counts.failed.to_string(),
                counts.cancelled.to_string(),
                (counts.pending + counts.processing).to_string(),
            ]);
        }
        table.write(out, w)
    })
}

pub fn config(ctx: &Context) -> anyhow::Result<()> {
    let settings = ctx.settings()?;
    ctx.out.emit(&settings, |out, w| {
        let file = match &settings.config_file {
            Some(path) if settings.config_file_exists => path.display().to_string(),
            Some(path) => format!("{} (not there)", path.display()),
            None => "-".to_owned(),
        };
        output::fields(
            out,
            w,
            &[
                ("config file", file),
                ("profile", settings.profile.clone()),
                (
                    "base URL",
                    format!("{} (from {})", settings.base_url, settings.base_url_from),
                ),
                (
                    "API key",
                    match (&settings.api_key_shown, settings.api_key_from) {
                        (Some(key), Some(from)) => format!("{key} (from {from})"),
                        _ => "not set".to_owned(),
                    },
                ),
            ],
        )
    })
}
