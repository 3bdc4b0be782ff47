//! The SDK's names of 0.1.0 that moved still build and reach the same
//! operations, until they go in 0.3.0.

#![allow(deprecated)]

use std::marker::PhantomData;

use mediagen::{ErrorKind, GenerationFilter, WebhookEndpointRequest};
use mediagen_mock_server::MockServer;
use uuid::Uuid;

use crate::App;

#[test]
fn the_generated_names_of_hand_written_records_are_those_records() {
    // Each line compiles only while the old name is the type it became.
    let _: PhantomData<mediagen::types::Generation> = PhantomData::<mediagen::Generation>;
    let _: PhantomData<mediagen::types::FieldError> = PhantomData::<mediagen::FieldError>;
    let _: PhantomData<mediagen::types::WebhookEndpointCreated> =
        PhantomData::<mediagen::CreatedWebhookEndpoint>;
    let _: PhantomData<mediagen::types::WebhookSecret> = PhantomData::<mediagen::RotatedSecret>;
    let _: PhantomData<mediagen::types::WebhookEndpointCreatedSecret> =
        PhantomData::<mediagen::WebhookSecret>;
    let _: PhantomData<mediagen::types::WebhookSecretSecret> =
        PhantomData::<mediagen::WebhookSecret>;
}

#[test]
fn the_generated_records_at_their_old_path_are_those_at_the_root() {
    let _: PhantomData<mediagen::types::Invoice> = PhantomData::<mediagen::Invoice>;
    let _: PhantomData<mediagen::types::Account> = PhantomData::<mediagen::Account>;
    let _: PhantomData<mediagen::types::Catalog> = PhantomData::<mediagen::Catalog>;
    let _: PhantomData<mediagen::types::Error> = PhantomData::<mediagen::ErrorEnvelope>;
    let _: PhantomData<mediagen::types::builder::RequisitesInput> =
        PhantomData::<mediagen::raw::record_builders::RequisitesInput>;
    let _: PhantomData<mediagen::raw::Client> = PhantomData::<mediagen::raw::GeneratedClient>;
    let _: PhantomData<mediagen::raw::Error> = PhantomData::<mediagen::raw::GeneratedError>;
}

#[tokio::test]
async fn the_handles_at_their_old_paths_reach_their_areas() {
    let mock = MockServer::builder()
        .config(|c| c.allow_private_webhooks = true)
        .start()
        .await;
    let app = App::with(mock, 1000.0).await;
    let billing: mediagen::Billing<'_> = app.client.billing();
    let generations: mediagen::Generations<'_> = app.client.generations();
    let files: mediagen::Files<'_> = app.client.files();
    let auth: mediagen::Auth<'_> = app.client.auth();
    let webhooks: mediagen::WebhookEndpoints<'_> = app.client.webhooks();
    let account: mediagen::areas::Account<'_> = app.client.account();
    let catalog: mediagen::areas::Catalog<'_> = app.client.catalog();

    let balance = billing.balance().await.unwrap();
    let page = generations
        .list_page(&GenerationFilter::new(), None)
        .await
        .unwrap();
    let missing = files.get(Uuid::new_v4()).await.unwrap_err();
    let owner = account.get().await.unwrap();
    let models = catalog.models().await.unwrap();
    auth.request_magic_link(&app.user.email).await.unwrap();
    let created: mediagen::types::WebhookEndpointCreated = webhooks
        .create(WebhookEndpointRequest::new("http://127.0.0.1:9/hooks"))
        .await
        .unwrap();
    let rotated: mediagen::types::WebhookSecret =
        webhooks.rotate_secret(&created.id).await.unwrap();

    assert_eq!(balance.available_rub, 1000.0);
    assert!(page.items.is_empty());
    assert_eq!(missing.kind(), Some(&ErrorKind::NotFound));
    assert_eq!(app.mock.list_outbox()[0].to, app.user.email);
    assert!(!owner.id.to_string().is_empty());
    assert!(!models.is_empty());
    let secret: &mediagen::types::WebhookSecretSecret = &rotated.secret;
    assert!(secret.expose().starts_with("whsec_"));
    assert_ne!(secret, &created.secret);
}
