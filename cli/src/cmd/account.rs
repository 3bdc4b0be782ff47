//! `account` and `summary`.

use super::context::Context;
use crate::cli::account::{AccountCommands, SummaryArgs};
use crate::output::{self, BOLD, Table};

pub async fn run(ctx: &Context, command: AccountCommands) -> anyhow::Result<()> {
    match command {
        AccountCommands::Account => account(ctx).await,
        AccountCommands::Summary(args) => summary(ctx, args).await,
    }
}

async fn account(ctx: &Context) -> anyhow::Result<()> {
    let account = ctx.client().await?.account().get().await?;
    ctx.out.emit(&account, |out, w| {
        output::fields(
            out,
            w,
            &[
                ("id", account.id.to_string()),
                (
                    "email",
                    output::or_absent(account.email.as_deref(), str::to_owned),
                ),
                (
                    "name",
                    output::or_absent(account.name.as_deref(), str::to_owned),
                ),
                (
                    "balance",
                    output::or_absent(account.balance_rub, output::rub),
                ),
                (
                    "reserved",
                    output::or_absent(account.reserved_rub, output::rub),
                ),
                (
                    "active limit",
                    output::or_absent(
                        account
                            .limits
                            .as_ref()
                            .and_then(|l| l.concurrent_generations),
                        |n| format!("{n} generations"),
                    ),
                ),
                (
                    "since",
                    output::or_absent(account.created_at.as_ref(), output::time),
                ),
            ],
        )
    })
}

async fn summary(ctx: &Context, args: SummaryArgs) -> anyhow::Result<()> {
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
            // Counts keyed by the status as sent; a status with none may be absent.
            let count = |statuses: &[&str]| {
                output::or_absent(media.by_status.as_ref(), |counts| {
                    let n: u64 = statuses.iter().filter_map(|s| counts.get(*s)).sum();
                    n.to_string()
                })
            };
            table.row([
                media.media_type.to_string(),
                media.generations.to_string(),
                output::or_absent(media.spent_rub, output::rub),
                count(&["SUCCEEDED"]),
                count(&["FAILED"]),
                count(&["CANCELLED"]),
                count(&["PENDING", "PROCESSING"]),
            ]);
        }
        table.write(out, w)
    })
}
