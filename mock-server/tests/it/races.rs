//! Races the money and the signatures must survive: creates, cancels, top-ups
//! and the clock all in flight at once for several users, and rotate-secret
//! while deliveries are in flight. Seeded randomness, so a failing round
//! replays; `RACE_ROUNDS` runs more rounds.

use std::collections::{HashMap, HashSet};

use futures::future::join_all;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reqwest::Method;
use serde_json::json;
use webhook_verify::Webhook;

use crate::delivery::{advance, app, register};
use crate::receiver::Receiver;
use crate::{App, Reply, image_request, scaled};

/// One request of a round.
#[derive(Debug, Clone)]
enum Op {
    Create {
        key: String,
        idempotency_key: Option<String>,
        prompt: &'static str,
    },
    Cancel {
        key: String,
        id: String,
    },
    TopUp {
        key: String,
    },
    Advance {
        seconds: f64,
    },
}

async fn run(app: &App, op: Op) -> (Op, Reply) {
    let reply = match &op {
        Op::Create {
            key,
            idempotency_key: Some(idempotency_key),
            prompt,
        } => {
            app.create_with_key(key, idempotency_key, image_request(prompt))
                .await
        }
        Op::Create { key, prompt, .. } => {
            app.send(
                Method::POST,
                "/v1/generations",
                Some(key),
                Some(image_request(prompt)),
            )
            .await
        }
        Op::Cancel { key, id } => {
            app.send(
                Method::POST,
                &format!("/v1/generations/{id}/cancel"),
                Some(key),
                None,
            )
            .await
        }
        Op::TopUp { key } => {
            app.send(
                Method::POST,
                "/v1/billing/topup",
                Some(key),
                Some(json!({"amountRub": 100})),
            )
            .await
        }
        Op::Advance { seconds } => {
            app.control(
                Method::POST,
                "/_mock/clock/advance",
                json!({ "seconds": seconds }),
            )
            .await
        }
    };
    (op, reply)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn creates_cancels_top_ups_and_the_clock_in_flight_together_keep_the_ledger() {
    let app = &App::unlimited().await;
    let users: Vec<_> = (0..3)
        .map(|_| app.mock.create_user(12.0).unwrap())
        .collect();
    let mut rng = StdRng::seed_from_u64(0x7261_6365_7321);
    // Prompts that succeed, fail (refund) or take long enough to be cancelled.
    let prompts = ["a", "mock:fail=timeout", "mock:delay=3", "mock:delay=0.5"];
    let mut created: Vec<(String, String)> = Vec::new();
    let mut cancelled: HashSet<String> = HashSet::new();
    let mut tally: HashMap<String, usize> = HashMap::new();
    let rounds = scaled("RACE_ROUNDS", 30);
    for round in 0..rounds {
        let mut ops = Vec::new();
        let mut cancelling = HashSet::new();
        for _ in 0..16 {
            let key = users[rng.random_range(0..users.len())].api_key.clone();
            let op = match rng.random_range(0..10) {
                0..=4 => Op::Create {
                    key,
                    idempotency_key: rng
                        .random_bool(0.4)
                        .then(|| format!("k{}", rng.random_range(0..8))),
                    prompt: prompts[rng.random_range(0..prompts.len())],
                },
                5..=7 if !created.is_empty() => {
                    let (key, id) = created[rng.random_range(0..created.len())].clone();
                    if !cancelling.insert(id.clone()) {
                        continue;
                    }
                    Op::Cancel { key, id }
                }
                8 => Op::TopUp { key },
                _ => Op::Advance {
                    // Around the second a task waits in PENDING, so that a
                    // cancel and the worker taking the task meet.
                    seconds: rng.random_range(0.0..2.0),
                },
            };
            ops.push(op);
        }
        for (op, reply) in join_all(ops.into_iter().map(|op| run(app, op))).await {
            let status = reply.status.as_u16();
            let allowed: &[u16] = match &op {
                Op::Create { .. } => &[202, 402, 409, 429],
                Op::Cancel { .. } => &[200, 409],
                Op::TopUp { .. } => &[201],
                Op::Advance { .. } => &[200],
            };
            assert!(
                allowed.contains(&status),
                "round {round}: {op:?} gave {status} {}",
                reply.body
            );
            *tally
                .entry(format!("{} {status}", op_name(&op)))
                .or_default() += 1;
            match op {
                Op::Create { key, .. } if status == 202 => {
                    let id = reply.body["id"].as_str().expect("an id").to_owned();
                    if !created.iter().any(|(_, known)| *known == id) {
                        created.push((key, id));
                    }
                }
                Op::Cancel { id, .. } if status == 200 => {
                    assert!(cancelled.insert(id), "round {round}: cancelled twice");
                }
                _ => {}
            }
        }
        app.mock
            .check_ledger()
            .unwrap_or_else(|e| panic!("round {round}: {e}"));
        for user in &users {
            let (available, reserved) = app.mock.balance(user.user_id).expect("a user");
            assert!(
                available >= 0.0 && reserved >= 0.0,
                "round {round}: {available} available, {reserved} reserved"
            );
        }
    }
    app.mock.advance_clock(3600.0).unwrap();
    app.mock
        .check_ledger()
        .expect("the ledger holds at the end");
    for (key, id) in &created {
        let status = app
            .send(
                Method::GET,
                &format!("/v1/generations/{id}"),
                Some(key),
                None,
            )
            .await
            .body["status"]
            .clone();
        let expected_cancelled = cancelled.contains(id);
        assert_eq!(
            status == "CANCELLED",
            expected_cancelled,
            "{id} is {status}; its cancel answered 200: {expected_cancelled}"
        );
    }
    for user in &users {
        assert_eq!(app.mock.balance(user.user_id).map(|b| b.1), Some(0.0));
    }
    eprintln!("{rounds} rounds: {tally:?}");
}

fn op_name(op: &Op) -> &'static str {
    match op {
        Op::Create { .. } => "create",
        Op::Cancel { .. } => "cancel",
        Op::TopUp { .. } => "top-up",
        Op::Advance { .. } => "advance",
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rotating_the_secret_during_deliveries_signs_each_with_a_secret_the_endpoint_had() {
    let app = app().await;
    let receiver = Receiver::start().await;
    let endpoint = register(&app, &receiver, json!([])).await;
    let rounds = scaled("RACE_ROUNDS", 30);
    // Every secret the endpoint has had since the first delivery could start.
    let mut secrets = vec![rotate(&app, &endpoint).await];
    for _ in 0..rounds {
        let test = format!("/v1/webhook-endpoints/{endpoint}/test");
        let sends = join_all((0..4).map(|_| app.post(&test, json!({}))));
        let rotations = join_all((0..2).map(|_| rotate(&app, &endpoint)));
        let (sent, rotated) = futures::join!(sends, rotations);
        assert!(sent.iter().all(|r| r.status == 202));
        secrets.extend(rotated);
    }
    advance(&app, 0.0).await;
    // Parallel rotations answer in any order, so which of a round's secrets
    // won is unknown; one more, alone, is the endpoint's secret for certain.
    let last = rotate(&app, &endpoint).await;
    secrets.push(last.clone());
    app.post(&format!("/v1/webhook-endpoints/{endpoint}/test"), json!({}))
        .await;
    advance(&app, 0.0).await;
    let got = receiver.received();
    assert_eq!(got.len(), 4 * rounds as usize + 1, "every message arrived");
    let signers = |delivery: &crate::receiver::Received| -> Vec<usize> {
        secrets
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                Webhook::new(s)
                    .expect("a secret")
                    .verify_parts_ignoring_timestamp(
                        &delivery.raw,
                        &delivery.id,
                        &delivery.timestamp.to_string(),
                        &delivery.signature,
                    )
                    == Ok(())
            })
            .map(|(n, _)| n)
            .collect()
    };
    for delivery in &got {
        assert_eq!(
            signers(delivery).len(),
            1,
            "signed with exactly one secret the endpoint had: {}",
            delivery.signature
        );
    }
    let after = got.last().expect("the last delivery");
    assert_eq!(
        signers(after),
        [secrets.len() - 1],
        "a message sent after the last rotation uses the last secret {last}"
    );
}

/// Rotates the endpoint's secret and answers the new one.
async fn rotate(app: &App, endpoint: &str) -> String {
    let reply = app
        .post(
            &format!("/v1/webhook-endpoints/{endpoint}/rotate-secret"),
            json!({}),
        )
        .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["secret"].as_str().expect("a secret").to_owned()
}
