//! `requisites` and `requisites set`: the legal entity that invoices are made out
//! to, which the service needs before it issues one.

use std::io::Read;
use std::path::Path;

use anyhow::Context as _;
use serde_json::{Map, Value, json};

use super::context::Context;
use crate::cli::billing::{RequisitesArgs, RequisitesCommand, RequisitesFields, RequisitesSetArgs};
use crate::error::{Exit, Failure};
use crate::output::{self, DIM};
use crate::parse;

/// A field of the contract's `RequisitesInput`: its key, the flag that sets it,
/// its label for people, the check of its form, and whether the contract
/// requires it.
struct Field {
    key: &'static str,
    flag: &'static str,
    label: &'static str,
    check: fn(&str) -> Result<String, String>,
    required: bool,
}

/// Every field, in the order of [`RequisitesFields::values`].
const FIELDS: [Field; 11] = [
    field("legalName", "--legal-name", "legal name", parse::text, true),
    field("inn", "--inn", "INN", parse::inn, true),
    field("kpp", "--kpp", "KPP", parse::kpp, false),
    field("ogrn", "--ogrn", "OGRN", parse::ogrn, true),
    field(
        "legalAddress",
        "--legal-address",
        "legal address",
        parse::text,
        true,
    ),
    field(
        "postalAddress",
        "--postal-address",
        "postal address",
        parse::text,
        false,
    ),
    field("bankName", "--bank-name", "bank", parse::text, true),
    field("bic", "--bic", "BIC", parse::bic, true),
    field(
        "settlementAccount",
        "--settlement-account",
        "settlement account",
        parse::settlement_account,
        true,
    ),
    field(
        "correspondentAccount",
        "--correspondent-account",
        "correspondent account",
        parse::correspondent_account,
        true,
    ),
    // The service judges an address; the CLI only refuses a blank one.
    field("email", "--email", "e-mail", parse::text, false),
];

const fn field(
    key: &'static str,
    flag: &'static str,
    label: &'static str,
    check: fn(&str) -> Result<String, String>,
    required: bool,
) -> Field {
    Field {
        key,
        flag,
        label,
        check,
        required,
    }
}

impl RequisitesFields {
    /// The values, in the order of [`FIELDS`].
    fn values(self) -> [Option<String>; 11] {
        [
            self.legal_name,
            self.inn,
            self.kpp,
            self.ogrn,
            self.legal_address,
            self.postal_address,
            self.bank_name,
            self.bic,
            self.settlement_account,
            self.correspondent_account,
            self.email,
        ]
    }
}

pub async fn run(ctx: &Context, args: RequisitesArgs) -> anyhow::Result<()> {
    match args.command {
        None => show(ctx).await,
        Some(RequisitesCommand::Set(args)) => set(ctx, *args).await,
    }
}

async fn show(ctx: &Context) -> anyhow::Result<()> {
    let requisites = ctx
        .client()
        .await?
        .billing()
        .requisites()
        .await
        .context("while reading the requisites")?;
    let value = serde_json::to_value(&requisites)?;
    ctx.out.emit(&value, |out, w| describe(out, w, &value))
}

/// `requisites set`: the flags over the file's keys, each checked for its form,
/// then sent whole.
async fn set(ctx: &Context, args: RequisitesSetArgs) -> anyhow::Result<()> {
    let file = match &args.file {
        Some(path) => Some(read(path)?),
        None => None,
    };
    let from_file = file.map_or_else(Default::default, RequisitesFields::values);
    let file_name = args
        .file
        .as_deref()
        .map(|path| path.display().to_string())
        .unwrap_or_default();
    let mut body = Map::new();
    let mut malformed = Vec::new();
    let mut missing = Vec::new();
    for ((field, flag), in_file) in FIELDS.iter().zip(args.fields.values()).zip(from_file) {
        let (value, named) = match (flag, in_file) {
            (Some(value), _) => (value, field.flag.to_owned()),
            (None, Some(value)) => (value, format!("{} in {file_name}", field.key)),
            (None, None) if field.required => {
                missing.push(field);
                continue;
            }
            (None, None) => continue,
        };
        match (field.check)(&value) {
            Ok(value) => {
                body.insert(field.key.to_owned(), Value::String(value));
            }
            Err(why) => malformed.push((field, format!("{named}: {why}"))),
        }
    }
    if !malformed.is_empty() || !missing.is_empty() {
        return Err(refused(&malformed, &missing).into());
    }
    let input: mediagen::RequisitesInput =
        serde_json::from_value(Value::Object(body)).map_err(|err| {
            Failure::new(
                Exit::Usage,
                "INVALID_REQUEST",
                format!("the requisites were not sent: {err}"),
            )
        })?;
    let stored = match ctx.client().await?.billing().set_requisites(input).await {
        Ok(stored) => stored,
        // The service names the fields of its body (`/inn`); the person typed flags.
        Err(mediagen::Error::Api(api)) => {
            let failure = Failure::answer_naming(&api, |path| {
                FIELDS
                    .iter()
                    .find(|field| path.strip_prefix('/') == Some(field.key))
                    .map(|field| field.flag)
            });
            return Err(anyhow::Error::new(failure).context("while setting the requisites"));
        }
        Err(err) => return Err(anyhow::Error::new(err).context("while setting the requisites")),
    };
    let value = serde_json::to_value(&stored)?;
    ctx.out.emit(&value, |out, w| {
        describe(out, w, &value)?;
        let next = ctx.command("invoices create AMOUNT");
        writeln!(
            w,
            "\n{}",
            out.paint(DIM, format!("ask for an invoice: {next}"))
        )
    })
}

/// The requisites of a JSON file, or stdin for `-`.
fn read(path: &Path) -> anyhow::Result<RequisitesFields> {
    let text = if path.as_os_str() == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("while reading the requisites from stdin")?;
        text
    } else {
        std::fs::read_to_string(path)
            .with_context(|| format!("while reading {}", path.display()))?
    };
    let fields = serde_json::from_str(&text).and_then(|mut value: Value| {
        // What `mediagen requisites --json` prints beside them.
        if let Some(object) = value.as_object_mut() {
            object.remove("updatedAt");
        }
        serde_json::from_value(value)
    });
    fields.map_err(|err| {
        let keys: Vec<&str> = FIELDS.iter().map(|field| field.key).collect();
        Failure::new(
            Exit::Usage,
            "INVALID_REQUEST",
            format!(
                "{} is not a JSON object of requisites: {err}",
                path.display()
            ),
        )
        .hint(format!(
            "give an object of text values with the keys {}; `mediagen requisites --json` \
             prints one",
            keys.join(", ")
        ))
        .into()
    })
}

/// What was wrong with the requisites before anything was sent, every value at
/// once: each named, and in the service's shape of `details.fields[]`.
fn refused(malformed: &[(&Field, String)], missing: &[&Field]) -> Failure {
    let field = |field: &Field, keyword: &str, message: &str| json!({"path": format!("/{}", field.key), "keyword": keyword, "message": message});
    let fields: Vec<Value> = malformed
        .iter()
        .map(|(wrong, why)| field(wrong, "pattern", why))
        .chain(
            missing
                .iter()
                .map(|absent| field(absent, "required", "missing")),
        )
        .collect();
    let mut failure = Failure::new(
        Exit::Usage,
        "INVALID_REQUEST",
        "the requisites were not sent",
    )
    .hint("give each value named, in the form `mediagen requisites set --help` shows")
    .detail("fields", fields);
    failure.facts = malformed.iter().map(|(_, why)| why.clone()).collect();
    if !missing.is_empty() {
        let flags: Vec<&str> = missing.iter().map(|field| field.flag).collect();
        failure.facts.push(format!("missing {}", flags.join(", ")));
    }
    failure
}

/// The requisites for people, from their JSON: a value the answer left out shows
/// as absent.
fn describe(
    out: &output::Output,
    w: &mut dyn std::io::Write,
    value: &Value,
) -> std::io::Result<()> {
    let mut pairs: Vec<(&str, String)> = FIELDS
        .iter()
        .map(|field| {
            let shown = value[field.key].as_str().map(str::to_owned);
            (field.label, output::or_absent(shown, |text| text))
        })
        .collect();
    let updated = value["updatedAt"]
        .as_str()
        .and_then(|at| chrono::DateTime::parse_from_rfc3339(at).ok());
    pairs.push((
        "updated",
        output::or_absent(updated, |at| output::time(&at.to_utc())),
    ));
    output::fields(out, w, &pairs)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::billing::BillingCommands;
    use crate::cli::{Cli, Command};

    #[test]
    fn each_flag_fills_the_field_of_its_key() {
        let mut args = vec![
            "mediagen".to_owned(),
            "requisites".to_owned(),
            "set".to_owned(),
        ];
        for field in &FIELDS {
            args.push(field.flag.to_owned());
            args.push(field.key.to_owned());
        }
        let cli = Cli::try_parse_from(args).unwrap();
        let Command::Billing(BillingCommands::Requisites(RequisitesArgs {
            command: Some(RequisitesCommand::Set(set)),
        })) = cli.command
        else {
            panic!("not requisites set");
        };
        let values = set.fields.values();
        for (field, value) in FIELDS.iter().zip(values) {
            assert_eq!(value.as_deref(), Some(field.key));
        }
    }
}
