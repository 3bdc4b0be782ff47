//! `webhooks`: endpoints, their deliveries, `verify` for debugging signatures and
//! `listen` for receiving deliveries on this machine.

mod endpoints;
mod listen;
mod trigger;
mod verify;

use super::context::Context;
use crate::cli::webhooks::WebhooksCommand;

pub async fn run(ctx: &Context, command: WebhooksCommand) -> anyhow::Result<()> {
    match command {
        WebhooksCommand::Verify(args) => verify::run(&ctx.out, args),
        WebhooksCommand::Listen(args) => listen::run(ctx, args).await,
        WebhooksCommand::Trigger(args) => trigger::run(ctx, args).await,
        WebhooksCommand::Create {
            url,
            events,
            description,
        } => endpoints::create(ctx, url, events, description).await,
        WebhooksCommand::List => endpoints::list(ctx).await,
        WebhooksCommand::Get { id } => endpoints::get(ctx, id).await,
        WebhooksCommand::Update {
            id,
            url,
            events,
            description,
            enable,
            disable,
        } => endpoints::update(ctx, id, url, events, description, enable, disable).await,
        WebhooksCommand::Rotate { id } => endpoints::rotate(ctx, id).await,
        WebhooksCommand::Delete { id } => endpoints::delete(ctx, id).await,
        WebhooksCommand::Test { id, event } => endpoints::test(ctx, id, event).await,
        WebhooksCommand::Deliveries { id, limit } => endpoints::deliveries(ctx, id, limit).await,
        WebhooksCommand::Redeliver { id, message_id } => {
            endpoints::redeliver(ctx, id, message_id).await
        }
    }
}
