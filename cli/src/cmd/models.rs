//! `models`: the catalog, and one model's parameters and prices.

use serde_json::Value;

use super::context::Context;
use crate::error::{Exit, Failure};
use crate::output::{self, BOLD, Table};

pub async fn run(ctx: &Context, slug: Option<String>) -> anyhow::Result<()> {
    // The catalog is public: no key needed.
    let client = ctx.public_client().await?;
    let catalog = client.catalog();
    let Some(slug) = slug else {
        let models = catalog.models().await?;
        return ctx.out.emit(&models, |out, w| {
            let mut table =
                Table::new(["MODEL", "NAME", "MEDIA", "PRICE", "TYPICAL TIME", "STATUS"]);
            for model in &models {
                let status = output::or_absent(model.status.as_ref(), ToString::to_string);
                table.styled_row([
                    (model.slug.clone(), Default::default()),
                    (
                        output::or_absent(model.name.as_deref(), str::to_owned),
                        Default::default(),
                    ),
                    (model.media_type.to_string(), Default::default()),
                    (price(&model.pricing), Default::default()),
                    (
                        typical_time(model.average_duration_seconds),
                        Default::default(),
                    ),
                    (status.clone(), output::status_style(&status)),
                ]);
            }
            table.write(out, w)
        });
    };
    let Some(model) = catalog.model(&slug).await? else {
        return Err(Failure::new(
            Exit::Other,
            mediagen::ErrorCode::NotFound.as_str(),
            format!("no model `{slug}` in the catalog"),
        )
        .hint(format!("`{}` lists the models", ctx.command("models")))
        .into());
    };
    ctx.out.emit(&model, |out, w| {
        match &model.name {
            Some(name) => writeln!(w, "{} ({})", out.paint(BOLD, name), model.slug)?,
            None => writeln!(w, "{}", out.paint(BOLD, &model.slug))?,
        }
        if let Some(description) = &model.description {
            writeln!(w, "{description}")?;
        }
        writeln!(w)?;
        output::fields(
            out,
            w,
            &[
                ("media", model.media_type.to_string()),
                (
                    "status",
                    output::or_absent(model.status.as_ref(), |s| out.status(s.as_str())),
                ),
                ("price", price(&model.pricing)),
                ("typical time", typical_time(model.average_duration_seconds)),
                (
                    "max prompt",
                    output::or_absent(model.max_prompt_length, |n| format!("{n} characters")),
                ),
            ],
        )?;
        if !model.pricing.factors.is_empty() {
            writeln!(w, "\n{}", out.paint(BOLD, "Price factors"))?;
            let mut table = Table::new(["PARAMETER", "VALUE", "MULTIPLIER"]);
            for factor in &model.pricing.factors {
                table.row([
                    factor.parameter.clone(),
                    factor.value.clone(),
                    format!("×{}", factor.multiplier),
                ]);
            }
            table.write(out, w)?;
        }
        writeln!(w, "\n{}", out.paint(BOLD, "Parameters"))?;
        let mut table = Table::new([
            "NAME",
            "TYPE",
            "REQUIRED",
            "DEFAULT",
            "ALLOWED",
            "DESCRIPTION",
        ]);
        for p in &model.parameters {
            let range = match (p.minimum, p.maximum) {
                (Some(min), Some(max)) => format!("{min} to {max}"),
                (Some(min), None) => format!("from {min}"),
                (None, Some(max)) => format!("up to {max}"),
                (None, None) => p
                    .allowed_values
                    .iter()
                    .map(text)
                    .collect::<Vec<_>>()
                    .join(", "),
            };
            table.row([
                p.name.clone(),
                p.type_.to_string(),
                // Without `required` a parameter is optional.
                if p.required == Some(true) {
                    "yes"
                } else {
                    "no"
                }
                .to_owned(),
                p.default
                    .as_ref()
                    .map(text)
                    .unwrap_or_else(|| "-".to_owned()),
                if range.is_empty() {
                    "-".to_owned()
                } else {
                    range
                },
                output::or_absent(p.description.as_deref(), str::to_owned),
            ]);
        }
        table.write(out, w)?;
        writeln!(
            w,
            "\nuse: mediagen generate -m {} --param NAME=VALUE \"PROMPT\"",
            model.slug
        )
    })
}

/// `2.50 RUB per generation`, `12.00 RUB per second`.
fn price(pricing: &mediagen::ModelPricing) -> String {
    let unit = match pricing.unit.to_string().as_str() {
        "generation" => "generation".to_owned(),
        "second" => "second".to_owned(),
        "thousand_characters" => "1000 characters".to_owned(),
        other => other.to_owned(),
    };
    format!("{} per {unit}", output::rub(pricing.base_rub))
}

/// `45 s`, `0.3 s`, or absent. The catalogue tells real seconds (a mock whose clock
/// runs faster tells them shorter), so a model that takes under a second is shown
/// in tenths rather than as `0 s`.
fn typical_time(seconds: Option<f64>) -> String {
    output::or_absent(seconds, output::seconds)
}

/// A JSON value as text: strings without quotes.
fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
