use super::*;

#[test]
fn every_row_is_reached_by_its_topic_and_commands() {
    for (index, row) in TABLE.iter().enumerate() {
        let commands = match row.commands {
            // A command that no row names.
            Any => &[C::Completions][..],
            Only(commands) => commands,
        };
        for command in commands {
            assert!(
                super::row(&row.topic, *command).is_some_and(|found| std::ptr::eq(found, row)),
                "row {index} ({:?} for {command:?}) is shadowed by an earlier one",
                row.topic
            );
        }
    }
}

#[test]
fn a_failure_code_or_an_error_code_nobody_knows_still_has_a_hint() {
    let failure = Topic::Failed(FailureCode::Other("something_new".into()));
    let answer = Topic::Code(ErrorCode::Other("GATEWAY_EXPLODED".into()));
    for topic in [failure, answer] {
        assert!(hint(&topic, C::Api).is_some(), "{topic:?}");
    }
}

#[test]
fn a_refused_login_does_not_point_at_what_login_does_not_read() {
    let hint = hint(&Topic::Code(E::AuthenticationError), C::Login).unwrap();
    assert!(!hint.contains("MEDIAGEN_API_KEY") && !hint.contains("--api-key"));
}

#[test]
fn a_webhook_url_refusal_names_the_mocks_switch_and_no_model_parameters() {
    for command in TAKE_WEBHOOK_URLS {
        let hint = hint(&Topic::WebhookUrl, *command).unwrap();
        assert!(hint.contains("--allow-private-webhooks"), "{hint}");
        assert!(!hint.contains("mediagen models"), "{hint}");
    }
    assert!(
        !hint(&Topic::RefusedValue, C::List)
            .unwrap()
            .contains("models")
    );
    assert!(
        hint(&Topic::WebhookUrl, C::Api)
            .unwrap()
            .contains("fields named")
    );
}

/// The commands in backquotes in `text`, each as its words up to the first
/// placeholder or option (`mediagen get ID --wait` as `mediagen get`).
fn commands_in(text: &str) -> Vec<Vec<&str>> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with("mediagen "))
        .map(|quoted| {
            quoted
                .split_whitespace()
                .take_while(|word| word.chars().all(|c| c.is_ascii_lowercase()))
                .collect()
        })
        .collect()
}

#[test]
fn every_command_a_hint_names_is_a_command_of_mediagen() {
    let hints = TABLE.iter().map(|row| row.hint);
    let checks = [
        O::CreateTopup,
        O::CreateInvoice,
        O::CreateWebhookEndpoint,
        O::UpdateWebhookEndpoint,
        O::RotateWebhookEndpointSecret,
        O::SendTestWebhook,
        O::RedeliverWebhookMessage,
        O::CancelGeneration,
    ]
    .into_iter()
    .filter_map(check_command)
    .map(|command| format!("`{command}`"));
    let texts: Vec<String> = hints
        .chain([EMBEDDED_MOCK_BALANCE])
        .map(str::to_owned)
        .chain(checks)
        .collect();
    let mut named = 0;
    for text in &texts {
        for words in commands_in(text) {
            named += 1;
            let help = crate::cli::command()
                .try_get_matches_from(words.iter().copied().chain(["--help"]))
                .expect_err("--help ends the parse");
            assert_eq!(
                help.kind(),
                clap::error::ErrorKind::DisplayHelp,
                "`{}` in \"{text}\" is no command",
                words.join(" ")
            );
        }
    }
    assert!(named > 20, "{named} commands found");
}

#[test]
fn the_balance_and_a_refused_invoice_lead_to_the_requisites() {
    for topic in [
        Topic::Code(E::InsufficientBalance),
        Topic::Code(E::DailyCapExceeded),
        Topic::NoRequisites,
    ] {
        let hint = hint(&topic, C::Generate).unwrap();
        assert!(
            hint.contains("`mediagen requisites set`"),
            "{topic:?}: {hint}"
        );
    }
    let refused = hint(&Topic::NoRequisites, C::InvoicesCreate).unwrap();
    assert!(!refused.contains("amount"), "{refused}");
}

#[test]
fn a_missing_path_of_api_is_not_blamed_on_a_model_slug() {
    let hint = hint(&Topic::Code(E::NotFound), C::Api).unwrap();
    assert!(hint.contains("path") && !hint.contains("slug"), "{hint}");
}
