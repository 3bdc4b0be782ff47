//! `generate`, `get`, `list` and `cancel`: the generations area, and following a
//! generation to its end.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use futures::StreamExt;
use mediagen::{
    Error, Generation, GenerationFilter, GenerationRequest, GenerationStatus, ModelParameterType,
};
use serde_json::json;
use uuid::Uuid;

use super::context::Context;
use crate::cli::generations::{GenerateArgs, GenerationsCommands, GetArgs, ListArgs, WaitArgs};
use crate::error::{Exit, Failure, GOES_ON};
use crate::output::{self, BOLD, DIM, GREEN, Output, Table};
use crate::sdk_error::may_have_acted;
use crate::signal::Signals;

/// The parameter a file goes to when the catalog does not name one.
const DEFAULT_FILE_PARAMETER: &str = "image_file_id";

pub async fn run(ctx: &Context, command: GenerationsCommands) -> anyhow::Result<()> {
    match command {
        GenerationsCommands::Generate(args) => generate(ctx, args).await,
        GenerationsCommands::Get(args) => get(ctx, args).await,
        GenerationsCommands::List(args) => list(ctx, args).await,
        GenerationsCommands::Cancel { id } => cancel(ctx, id).await,
    }
}

async fn generate(ctx: &Context, args: GenerateArgs) -> anyhow::Result<()> {
    let client = ctx.client().await?;
    let prompt = if args.prompt == "-" {
        let mut prompt = String::new();
        std::io::stdin()
            .read_to_string(&mut prompt)
            .context("while reading the prompt from stdin")?;
        prompt.trim_end().to_owned()
    } else {
        args.prompt.clone()
    };
    let mut request = GenerationRequest::new(&args.model, prompt);
    for (key, value) in &args.params {
        request = request.param(key, value.clone());
    }

    if args.dry_run || args.max_cost.is_some() {
        let estimate = client
            .generations()
            .estimate(&request)
            .await
            .context("while estimating the cost")?;
        if args.dry_run {
            return ctx.out.emit(&estimate, |out, w| {
                output::fields(
                    out,
                    w,
                    &[
                        ("model", args.model.clone()),
                        ("cost", output::rub(estimate.cost_rub)),
                        ("available", output::rub(estimate.available_rub)),
                        (
                            "enough",
                            if estimate.sufficient {
                                "yes"
                            } else {
                                "no: top up first"
                            }
                            .to_owned(),
                        ),
                    ],
                )
            });
        }
        if let Some(max) = args.max_cost.filter(|max| estimate.cost_rub > *max) {
            return Err(Failure::new(
                Exit::InsufficientBalance,
                "COST_ABOVE_MAXIMUM",
                format!(
                    "the generation would cost {}, above --max-cost {}; nothing was started",
                    output::rub(estimate.cost_rub),
                    output::rub(max)
                ),
            )
            .hint("raise --max-cost, or lower the parameters that raise the price (`mediagen models SLUG`)")
            .detail("costRub", estimate.cost_rub)
            .detail("maxCostRub", max)
            .into());
        }
    }

    if let Some(path) = &args.file {
        let parameter = file_parameter(ctx, &args.model).await?;
        let uploaded = super::files::upload(ctx, path, None).await?;
        request = request.param(parameter, uploaded.file_id.to_string());
    }
    // The key is chosen here, not in the SDK, so that it can be told when the create
    // ends without a clear answer: the same key then returns what it made, if anything.
    let key = args
        .idempotency_key
        .clone()
        .unwrap_or_else(|| Uuid::new_v4().to_string());
    request = request.idempotency_key(&key);

    let created = match client.generations().create(request).await {
        Ok(created) => created,
        // Retried as far as the policy allows and still no clear answer: it may exist.
        // A refusal (a 429 included) made nothing, and is told as it is.
        Err(err) if may_have_acted(&err) => {
            let failure = Failure::unanswered_create(
                &err,
                &key,
                &format!("run the same command with --idempotency-key {key}"),
            );
            return Err(anyhow::Error::new(failure).context("while starting the generation"));
        }
        Err(err) => return Err(anyhow::Error::new(err).context("while starting the generation")),
    };
    if !args.wait.waits() {
        let value = json!({
            "id": created.id,
            "status": created.status,
            "costRub": created.cost_rub,
            "idempotencyKey": created.idempotency_key,
        });
        return ctx.out.emit(&value, |out, w| {
            output::fields(
                out,
                w,
                &[
                    ("id", created.id.to_string()),
                    ("status", out.status(created.status.as_str())),
                    ("cost", output::rub(created.cost_rub)),
                    ("idempotency key", created.idempotency_key.clone()),
                ],
            )?;
            writeln!(
                w,
                "\n{}",
                out.paint(
                    DIM,
                    format!(
                        "follow it: {}",
                        ctx.command(&format!("get {} --wait", created.id))
                    )
                )
            )
        });
    }
    let started = format!(
        "started {} · {} reserved · idempotency key {}",
        created.id,
        output::rub(created.cost_rub),
        created.idempotency_key
    );
    follow(
        ctx,
        created.id,
        &args.wait,
        Some((started, created.idempotency_key.as_str())),
    )
    .await
}

/// The model's file parameter, from the catalog.
async fn file_parameter(ctx: &Context, slug: &str) -> anyhow::Result<String> {
    let model = ctx.client().await?.catalog().model(slug).await?;
    let Some(model) = model else {
        return Ok(DEFAULT_FILE_PARAMETER.to_owned());
    };
    model
        .parameters
        .iter()
        .find(|p| p.type_ == ModelParameterType::File)
        .map(|p| p.name.clone())
        .ok_or_else(|| {
            Failure::new(
                Exit::Usage,
                "INVALID_REQUEST",
                format!("the model {slug} takes no input file"),
            )
            .hint("drop --file, or choose a model with a file parameter (`mediagen models`)")
            .into()
        })
}

async fn get(ctx: &Context, args: GetArgs) -> anyhow::Result<()> {
    if args.wait.waits() {
        return follow(ctx, args.id, &args.wait, None).await;
    }
    let generation = ctx.client().await?.generations().get(args.id).await?;
    let seen = Seen::new(ctx);
    ctx.out
        .emit(&generation, |out, w| describe(out, w, &generation, &seen))
}

/// Waits for the end of a generation with a spinner, downloads its results when
/// asked, and prints it. Ctrl-C stops the wait, not the generation. `created` is
/// the line that tells of a create this command made, and its `Idempotency-Key`:
/// every failure from here on tells the id and the key, since the generation
/// exists and is paid for.
async fn follow(
    ctx: &Context,
    id: Uuid,
    args: &WaitArgs,
    created: Option<(String, &str)>,
) -> anyhow::Result<()> {
    let (started, key) = created.unzip();
    let client = ctx.client().await?;
    // Listening before anything is shown, so a Ctrl-C as soon as the id is on screen
    // is caught.
    let mut interrupt = Signals::interrupt()?;
    if let Some(started) = started.filter(|_| !ctx.out.is_json()) {
        ctx.out.note(started);
    }
    let began = std::time::Instant::now();
    let spinner = ctx.out.spinner();
    spinner.set_message(format!("waiting for {id}"));
    let plain_progress = !ctx.out.draws_progress() && !ctx.out.is_json();
    let mut wait = client.generations().wait(id).on_status(|g| {
        let message = format!(
            "{} · {} · {}",
            ctx.out.paint_err(BOLD, g.status.as_str()),
            output::rub(g.cost_rub),
            g.id
        );
        if plain_progress {
            // No terminal to draw on: one line per change, for logs.
            ctx.out.note(format!("{}: {}", g.id, g.status));
        }
        spinner.set_message(message);
    });
    if let Some(timeout) = args.timeout {
        wait = wait.timeout(timeout);
    }
    let mut resume = format!("get {id} --wait");
    if let Some(dir) = &args.output {
        resume.push_str(&format!(" --output {}", dir.display()));
    }
    let resume = ctx.command(&resume);
    // What to do after a failure while the generation runs: resume it, unless it
    // runs in the embedded mock, which ends with this command.
    let embedded = ctx.global().mock;
    let after_create = |failure: Failure, fact: &str| {
        if embedded {
            failure.created_on_embedded_mock(id, key)
        } else {
            let failure = if failure.facts.iter().any(|told| told == fact) {
                failure
            } else {
                failure.fact(fact)
            };
            failure
                .created(id, key, Some(&resume))
                .detail("resume", resume.clone())
        }
    };
    let ended = tokio::select! {
        ended = wait => ended,
        () = interrupt.recv() => {
            spinner.finish_and_clear();
            return Err(after_create(Failure::new(
                Exit::Interrupted,
                "INTERRUPTED",
                "stopped waiting",
            ), GOES_ON)
            .into());
        }
    };
    spinner.finish_and_clear();
    let waited = began.elapsed();
    let generation = match ended {
        Ok(generation) => generation,
        Err(err) => {
            let failure = Failure::from(&err);
            return Err(match err {
                // The generation ended: nothing to resume, but its id and key are told.
                Error::GenerationFailed(_)
                | Error::GenerationCancelled { .. }
                | Error::UnknownGenerationStatus { .. } => failure.key(key),
                _ => after_create(failure, GOES_ON),
            }
            .into());
        }
    };
    let files = match &args.output {
        Some(dir) if generation.status == GenerationStatus::Succeeded => {
            download(ctx, &generation, dir).await.map_err(|err| {
                // The results exist and are paid for: say how to fetch them again.
                after_create(Failure::of(&err), "the results stay on the service")
            })?
        }
        _ => Vec::new(),
    };
    let mut value = serde_json::to_value(&generation)?;
    if let Some(key) = key {
        value["idempotencyKey"] = json!(key);
    }
    if args.output.is_some() {
        value["files"] = json!(files);
    }
    let seen = Seen {
        key,
        files: &files,
        waited: Some(waited),
        ..Seen::new(ctx)
    };
    ctx.out
        .emit(&value, |out, w| describe(out, w, &generation, &seen))
}

/// Downloads each result into `dir` with a progress bar; the paths written.
async fn download(
    ctx: &Context,
    generation: &Generation,
    dir: &Path,
) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("while creating {}", dir.display()))?;
    let files = ctx.client().await?.files();
    let mut paths = Vec::new();
    for (url, path) in mediagen::output_paths(generation, dir) {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let bar = ctx.out.bytes_bar(&name);
        files
            .download(url, path.clone())
            .on_progress(Output::track(&bar))
            .await
            .with_context(|| format!("while downloading into {}", path.display()))?;
        bar.finish_and_clear();
        paths.push(path);
    }
    Ok(paths)
}

/// What a command knows of a generation beyond its record.
struct Seen<'a> {
    /// The `Idempotency-Key` of the create this command made.
    key: Option<&'a str>,
    /// The results saved.
    files: &'a [PathBuf],
    /// How long this command waited for the end, in real time.
    waited: Option<std::time::Duration>,
    /// Whether it lives in the embedded mock, whose URLs end with the command.
    embedded: bool,
}

impl Seen<'_> {
    fn new(ctx: &Context) -> Self {
        Self {
            key: None,
            files: &[],
            waited: None,
            embedded: ctx.global().mock,
        }
    }
}

/// A generation for people: its fields, its results and the files written. A
/// duration is real time, measured here: the service's times are told as times,
/// since a mock's clock may run faster than the wall's.
fn describe(
    out: &Output,
    w: &mut dyn Write,
    generation: &Generation,
    seen: &Seen,
) -> std::io::Result<()> {
    let mut pairs = vec![
        ("id", generation.id.to_string()),
        ("status", out.status(generation.status.as_str())),
        (
            "model",
            output::or_absent(generation.model_slug.as_deref(), str::to_owned),
        ),
        ("cost", output::rub(generation.cost_rub)),
        (
            "created",
            output::or_absent(generation.created_at.as_ref(), output::time),
        ),
    ];
    if let Some(finished) = &generation.finished_at {
        pairs.push(("finished", output::time(finished)));
    }
    if let Some(waited) = seen.waited {
        pairs.push(("waited", output::seconds(waited.as_secs_f64())));
    }
    if let Some(prompt) = &generation.prompt {
        pairs.push(("prompt", prompt.clone()));
    }
    if let Some(code) = &generation.error_code {
        let message = generation.error_message.clone().unwrap_or_default();
        pairs.push(("error", format!("{code}: {message}")));
    }
    if let Some(key) = seen.key {
        pairs.push(("idempotency key", key.to_owned()));
    }
    output::fields(out, w, &pairs)?;
    if seen.embedded {
        // The embedded mock, and every URL it gave, ends with this command.
        if seen.files.is_empty() && !generation.output_urls.is_empty() {
            let note = "the results ended with the embedded mock: --output DIR saves them";
            writeln!(w, "{}", out.paint(DIM, note))?;
        }
    } else {
        for url in &generation.output_urls {
            writeln!(w, "{}", out.paint(GREEN, url))?;
        }
    }
    for file in seen.files {
        writeln!(w, "saved {}", file.display())?;
    }
    Ok(())
}

async fn list(ctx: &Context, args: ListArgs) -> anyhow::Result<()> {
    let mut filter = GenerationFilter::new();
    if let Some(status) = &args.status {
        filter = filter.status(GenerationStatus::from(status.to_uppercase().as_str()));
    }
    if let Some(model) = &args.model {
        filter = filter.model_slug(model);
    }
    let stream = ctx.client().await?.generations().list(filter);
    let limit = if args.all { usize::MAX } else { args.limit };
    ctx.out
        .list(stream.take(limit), |out, w, generations| {
            let mut table = Table::new(["ID", "STATUS", "MODEL", "COST", "CREATED", "PROMPT"]);
            for g in generations {
                table.styled_row([
                    (g.id.to_string(), Default::default()),
                    (
                        g.status.as_str().to_owned(),
                        output::status_style(g.status.as_str()),
                    ),
                    (
                        output::or_absent(g.model_slug.as_deref(), str::to_owned),
                        Default::default(),
                    ),
                    (output::rub(g.cost_rub), Default::default()),
                    (
                        output::or_absent(g.created_at.as_ref(), output::time),
                        Default::default(),
                    ),
                    (
                        shorten(g.prompt.as_deref().unwrap_or(""), 40),
                        Default::default(),
                    ),
                ]);
            }
            if table.is_empty() {
                return writeln!(w, "no generations");
            }
            table.write(out, w)
        })
        .await
}

async fn cancel(ctx: &Context, id: Uuid) -> anyhow::Result<()> {
    let generation = ctx
        .client()
        .await?
        .generations()
        .cancel(id)
        .await
        .with_context(|| format!("while cancelling {id}"))?;
    let seen = Seen::new(ctx);
    ctx.out
        .emit(&generation, |out, w| describe(out, w, &generation, &seen))
}

/// At most `max` characters, with an ellipsis when cut.
pub fn shorten(text: &str, max: usize) -> String {
    let text = text.replace(['\n', '\r', '\t'], " ");
    if text.chars().count() <= max {
        return text;
    }
    let mut short: String = text.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}
