//! `balance`, `history`, `topup` and `invoices`: the billing area; `requisites` has
//! its own module.

use std::path::PathBuf;

use anyhow::Context as _;
use futures::StreamExt;
use mediagen::{BillingOperationType, HistoryFilter};

use super::context::Context;
use crate::cli::billing::{BillingCommands, DocumentArgs, HistoryArgs, InvoicesCommand};
use crate::output::{self, DIM, Table};

pub async fn run(ctx: &Context, command: BillingCommands) -> anyhow::Result<()> {
    match command {
        BillingCommands::Balance => balance(ctx).await,
        BillingCommands::History(args) => history(ctx, args).await,
        BillingCommands::Topup { amount, return_url } => topup(ctx, amount, return_url).await,
        BillingCommands::Invoices(command) => invoices(ctx, command).await,
        BillingCommands::Requisites(args) => super::requisites::run(ctx, args).await,
    }
}

async fn balance(ctx: &Context) -> anyhow::Result<()> {
    let balance = ctx.client().await?.billing().balance().await?;
    ctx.out.emit(&balance, |out, w| {
        output::fields(
            out,
            w,
            &[
                ("available", output::rub(balance.available_rub)),
                (
                    "reserved",
                    output::or_absent(balance.reserved_rub, output::rub),
                ),
                (
                    "updated",
                    output::or_absent(balance.updated_at.as_ref(), output::time),
                ),
            ],
        )
    })
}

async fn history(ctx: &Context, args: HistoryArgs) -> anyhow::Result<()> {
    let mut filter = HistoryFilter::new();
    if let Some(kind) = &args.kind {
        // A type this version does not name is sent as given: the service may know it.
        filter = filter.kind(BillingOperationType::from(kind.to_uppercase().as_str()));
    }
    if let Some(from) = args.from {
        filter = filter.from(from);
    }
    if let Some(to) = args.to {
        filter = filter.to(to);
    }
    let operations = ctx.client().await?.billing().history(filter);
    ctx.out
        .list(operations.take(args.limit), |out, w, operations| {
            if operations.is_empty() {
                return writeln!(w, "no operations");
            }
            let mut table = Table::new(["WHEN", "TYPE", "AMOUNT", "NET", "STATUS", "DESCRIPTION"]);
            for op in operations {
                let status = output::or_absent(op.status.as_ref(), ToString::to_string);
                table.styled_row([
                    (output::time(&op.created_at), Default::default()),
                    (op.type_.to_string(), Default::default()),
                    (output::rub(op.amount_rub), Default::default()),
                    (
                        output::or_absent(op.net_amount_rub, output::rub),
                        Default::default(),
                    ),
                    (status.clone(), output::status_style(&status)),
                    (
                        output::or_absent(op.description.as_deref(), str::to_owned),
                        Default::default(),
                    ),
                ]);
            }
            table.write(out, w)
        })
        .await
}

async fn topup(ctx: &Context, amount: f64, return_url: Option<String>) -> anyhow::Result<()> {
    let topup = ctx
        .client()
        .await?
        .billing()
        .topup(amount, return_url.as_deref())
        .await
        .context("while starting the top-up")?;
    ctx.out.emit(&topup, |out, w| {
        output::fields(
            out,
            w,
            &[
                ("id", topup.id.to_string()),
                ("amount", output::rub(topup.amount_rub)),
                ("status", out.status(&topup.status.to_string())),
            ],
        )?;
        if let Some(url) = &topup.payment_url {
            writeln!(w, "\npay here: {url}")?;
        }
        Ok(())
    })
}

async fn invoices(ctx: &Context, command: InvoicesCommand) -> anyhow::Result<()> {
    let billing = ctx.client().await?.billing();
    match command {
        InvoicesCommand::List => {
            ctx.out
                .list(billing.invoices(), |out, w, invoices| {
                    if invoices.is_empty() {
                        return writeln!(w, "no invoices");
                    }
                    let mut table =
                        Table::new(["ID", "NUMBER", "AMOUNT", "STATUS", "ISSUED", "DUE"]);
                    for invoice in invoices {
                        let status = invoice.status.to_string();
                        table.styled_row([
                            (invoice.id.to_string(), Default::default()),
                            (invoice.number.clone(), Default::default()),
                            (output::rub(invoice.amount_rub), Default::default()),
                            (status.clone(), output::status_style(&status)),
                            (
                                output::or_absent(invoice.issued_at.as_ref(), output::time),
                                Default::default(),
                            ),
                            (
                                output::or_absent(invoice.due_at.as_ref(), output::time),
                                Default::default(),
                            ),
                        ]);
                    }
                    table.write(out, w)
                })
                .await
        }
        InvoicesCommand::Create { amount } => {
            let invoice = billing
                .create_invoice(amount)
                .await
                .context("while issuing the invoice")?;
            ctx.out.emit(&invoice, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("id", invoice.id.to_string()),
                        ("number", invoice.number.clone()),
                        ("amount", output::rub(invoice.amount_rub)),
                        ("VAT", output::or_absent(invoice.vat_rub, output::rub)),
                        ("status", out.status(&invoice.status.to_string())),
                        (
                            "due",
                            output::or_absent(invoice.due_at.as_ref(), output::time),
                        ),
                    ],
                )?;
                let pdf = ctx.command(&format!("invoices pdf {}", invoice.id));
                writeln!(w, "\n{}", out.paint(DIM, format!("save the PDF: {pdf}")))
            })
        }
        InvoicesCommand::Pdf(args) => {
            let pdf = billing
                .invoice_pdf(args.id)
                .await
                .context("while fetching the invoice")?;
            save(ctx, args, "invoice", &pdf)
        }
        InvoicesCommand::Act(args) => {
            let pdf = billing
                .invoice_act(args.id)
                .await
                .context("while fetching the act")?;
            save(ctx, args, "act", &pdf)
        }
    }
}

/// Writes a document to its file, or to stdout for `-o -`.
fn save(ctx: &Context, args: DocumentArgs, kind: &str, pdf: &[u8]) -> anyhow::Result<()> {
    let path = args
        .output
        .unwrap_or_else(|| PathBuf::from(format!("{kind}-{}.pdf", args.id)));
    if path.as_os_str() == "-" {
        return ctx.out.bytes(pdf);
    }
    std::fs::write(&path, pdf).with_context(|| format!("while writing {}", path.display()))?;
    let value = serde_json::json!({ "id": args.id, "path": path, "bytes": pdf.len() });
    ctx.out.emit(&value, |_, w| {
        writeln!(w, "saved {} ({} bytes)", path.display(), pdf.len())
    })
}
