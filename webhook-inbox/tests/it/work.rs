//! Working: claim, process, complete; nothing lost to a crash, nothing done twice.

use std::time::Duration;

use webhook_inbox::{InboxConfig, InboxError};

use crate::{Fixture, WAIT, completed};

fn record_table(fixture: &Fixture) {
    fixture.inbox.with_connection(|db| {
        db.execute_batch("CREATE TABLE handled (webhook_id TEXT NOT NULL)")
            .unwrap();
    });
}

fn handled(fixture: &Fixture) -> Vec<String> {
    fixture.inbox.with_connection(|db| {
        let mut rows = db
            .prepare("SELECT webhook_id FROM handled ORDER BY rowid")
            .unwrap();
        rows.query_map([], |row| row.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_are_handed_over_in_order_of_arrival() {
    let fixture = Fixture::open();
    for n in 0..3 {
        fixture.deliver(&format!("msg_{n}"), &completed(n)).await;
    }
    for n in 0..3 {
        let claim = fixture.inbox.wait_claim(WAIT).unwrap().unwrap();
        assert_eq!(claim.message.webhook_id, format!("msg_{n}"));
        assert_eq!(claim.message.attempt, 1);
        fixture.inbox.complete(&claim).unwrap();
    }
    assert!(fixture.inbox.claim().unwrap().is_none());
    assert_eq!(fixture.inbox.stats().unwrap().done, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_left_by_a_crash_is_taken_again_after_a_restart() {
    let fixture = Fixture::open();
    fixture.deliver("msg_1", &completed(1)).await;
    let claim = fixture.inbox.claim().unwrap().unwrap();
    // The process dies with the message claimed: nothing completes it.
    drop(claim);
    let fixture = fixture.reopen(InboxConfig::default());
    let again = fixture
        .inbox
        .claim()
        .unwrap()
        .expect("claimed again at once");
    assert_eq!(again.message.webhook_id, "msg_1");
    assert_eq!(again.message.attempt, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claim_whose_lease_ran_out_is_taken_again_and_its_late_completion_rolls_back() {
    let fixture = Fixture::with(InboxConfig::default().lease(Duration::ZERO));
    record_table(&fixture);
    fixture.deliver("msg_1", &completed(1)).await;
    let slow = fixture.inbox.claim().unwrap().unwrap();
    let fast = fixture.inbox.claim().unwrap().expect("the lease ran out");
    assert_eq!(fast.message.attempt, 2);
    let record = |claim: &webhook_inbox::Claim| {
        fixture.inbox.complete_with(claim, |tx| {
            tx.execute(
                "INSERT INTO handled (webhook_id) VALUES (?1)",
                [&claim.message.webhook_id],
            )
            .map_err(InboxError::from)
        })
    };
    record(&fast).unwrap();
    assert!(matches!(record(&slow), Err(InboxError::ClaimLost)));
    assert_eq!(handled(&fixture), ["msg_1"], "exactly once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_that_fails_rolls_back_and_the_message_is_taken_again() {
    let fixture = Fixture::open();
    record_table(&fixture);
    fixture.deliver("msg_1", &completed(1)).await;
    let claim = fixture.inbox.claim().unwrap().unwrap();
    let failed = fixture.inbox.complete_with(&claim, |tx| {
        tx.execute("INSERT INTO handled (webhook_id) VALUES ('msg_1')", [])
            .map_err(InboxError::from)?;
        Err::<(), _>(InboxError::Full)
    });
    assert!(failed.is_err());
    assert!(
        handled(&fixture).is_empty(),
        "the insert went with the failure"
    );
    fixture.inbox.release(&claim, Duration::ZERO).unwrap();
    let again = fixture.inbox.claim().unwrap().unwrap();
    assert_eq!(again.message.attempt, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_worker_wakes_when_a_message_is_stored() {
    let fixture = Fixture::open();
    let inbox = fixture.inbox.clone();
    let worker = std::thread::spawn(move || inbox.wait_claim(Duration::from_secs(30)));
    fixture.deliver("msg_1", &completed(1)).await;
    let claim = worker.join().unwrap().unwrap().expect("woken by the store");
    assert_eq!(claim.message.webhook_id, "msg_1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_done_message_is_forgotten_only_after_its_retention() {
    let fixture = Fixture::open();
    fixture.deliver("msg_1", &completed(1)).await;
    let claim = fixture.inbox.claim().unwrap().unwrap();
    fixture.inbox.complete(&claim).unwrap();
    assert_eq!(
        fixture.inbox.prune().unwrap(),
        0,
        "within the default 7 days"
    );

    let fixture = fixture.reopen(InboxConfig::default().retention(Duration::ZERO));
    fixture.deliver("msg_2", &completed(2)).await;
    assert_eq!(
        fixture.inbox.prune().unwrap(),
        1,
        "only the done message goes"
    );
    assert_eq!(fixture.inbox.stats().unwrap().waiting, 1);
}
