//! Crash-safe batches: a batch started again with its journal pays for nothing
//! twice, skips what ended and follows what runs.

use std::sync::{Arc, Mutex};

use chrono::{TimeDelta, Utc};
use mediagen::{
    BatchEvent, Error, Generation, GenerationRequest, GenerationStatus, Journal, JournalEntry,
    item_names,
};
use uuid::Uuid;

use crate::{App, within_deadline};

/// A journal in memory, shared by the runs of a test, that can be told to fail.
#[derive(Debug, Clone, Default)]
struct Memory {
    entries: Arc<Mutex<Vec<JournalEntry>>>,
    broken: bool,
}

impl Memory {
    fn entry(&self, item: &str) -> Option<JournalEntry> {
        let entries = self.entries.lock().unwrap();
        entries.iter().find(|e| e.item == item).cloned()
    }

    fn update(&self, item: &str, change: impl FnOnce(&mut JournalEntry)) {
        let mut entries = self.entries.lock().unwrap();
        if let Some(entry) = entries.iter_mut().find(|e| e.item == item) {
            change(entry);
        }
    }

    fn check(&self) -> mediagen::Result<()> {
        if self.broken {
            return Err(Error::Journal("the disk is full".into()));
        }
        Ok(())
    }
}

impl Journal for Memory {
    fn entries(&mut self) -> mediagen::Result<Vec<JournalEntry>> {
        Ok(self.entries.lock().unwrap().clone())
    }

    fn planned(
        &mut self,
        item: &str,
        idempotency_key: &str,
        at: chrono::DateTime<Utc>,
    ) -> mediagen::Result<()> {
        self.check()?;
        if self.entry(item).is_none() {
            self.entries
                .lock()
                .unwrap()
                .push(JournalEntry::new(item, idempotency_key, at));
        }
        Ok(())
    }

    fn created(&mut self, item: &str, id: Uuid, cost_rub: f64) -> mediagen::Result<()> {
        self.check()?;
        self.update(item, |e| {
            e.id = Some(id);
            e.cost_rub = Some(cost_rub);
        });
        Ok(())
    }

    fn ended(&mut self, item: &str, generation: &Generation) -> mediagen::Result<()> {
        self.check()?;
        self.update(item, |e| e.ended = Some(generation.clone()));
        Ok(())
    }
}

fn requests() -> Vec<GenerationRequest> {
    ["a fox", "a hare", "a fox"]
        .map(|p| GenerationRequest::new("flux-schnell", p))
        .to_vec()
}

fn creates(app: &App) -> usize {
    app.requests()
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/v1/generations")
        .count()
}

#[tokio::test]
async fn a_batch_run_again_with_its_journal_creates_nothing_and_gives_the_same_outcomes() {
    let app = App::start().await;
    let journal = Memory::default();
    let first = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests())
                .journal(journal.clone()),
        ),
    )
    .await;
    assert_eq!(creates(&app), 3, "two equal requests are two items");

    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);
    let again = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests())
                .journal(journal.clone())
                .on_progress(move |p| seen.lock().unwrap().push(p.event.clone())),
        ),
    )
    .await;

    assert_eq!(creates(&app), 3, "nothing was sent again");
    let ids = |results: &[mediagen::Result<Generation>]| -> Vec<Uuid> {
        results.iter().map(|r| r.as_ref().unwrap().id).collect()
    };
    assert_eq!(ids(&first), ids(&again));
    let recorded = events
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, BatchEvent::Recorded { .. }))
        .count();
    assert_eq!(recorded, 3, "the batch tells what it skipped");
    app.mock.check_ledger().unwrap();
}

#[tokio::test]
async fn a_create_written_down_but_unanswered_is_sent_again_with_its_key_and_charged_once() {
    let app = App::start().await;
    let journal = Memory::default();
    let names = item_names(&requests());
    // The crash came after the create reached the service and before its id
    // was written down: the service has the generation, the journal only the key.
    let lost = app
        .client
        .generations()
        .create(
            requests()[0]
                .clone()
                .idempotency_key("key-of-the-lost-answer"),
        )
        .await
        .unwrap();
    journal
        .clone()
        .planned(&names[0], "key-of-the-lost-answer", Utc::now())
        .unwrap();

    let results = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests())
                .journal(journal.clone()),
        ),
    )
    .await;

    assert_eq!(
        results[0].as_ref().unwrap().id,
        lost.id,
        "the first one, not a new one"
    );
    let user = app.mock.get_user(app.user.user_id).unwrap();
    assert_eq!(user.generations, 3, "one generation per item");
    app.mock.check_ledger().unwrap();
    assert_eq!(journal.entry(&names[0]).unwrap().id, Some(lost.id));
}

#[tokio::test]
async fn a_generation_an_earlier_run_created_is_followed_not_created() {
    let app = App::start().await;
    let journal = Memory::default();
    let names = item_names(&requests()[..1]);
    let running = app
        .client
        .generations()
        .create(requests()[0].clone())
        .await
        .unwrap();
    let mut writer = journal.clone();
    writer
        .planned(&names[0], &running.idempotency_key, Utc::now())
        .unwrap();
    writer
        .created(&names[0], running.id, running.cost_rub)
        .unwrap();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&events);

    let results = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests()[..1].to_vec())
                .journal(journal.clone())
                .on_progress(move |p| seen.lock().unwrap().push(p.event.clone())),
        ),
    )
    .await;

    assert_eq!(results[0].as_ref().unwrap().id, running.id);
    assert_eq!(creates(&app), 1, "only the first run's create");
    assert!(
        events
            .lock()
            .unwrap()
            .contains(&BatchEvent::Resumed { id: running.id })
    );
    assert_eq!(
        journal.entry(&names[0]).unwrap().ended.map(|g| g.status),
        Some(GenerationStatus::Succeeded)
    );
}

#[tokio::test]
async fn a_create_unanswered_for_more_than_a_day_is_not_sent_again() {
    let app = App::start().await;
    let journal = Memory::default();
    let names = item_names(&requests()[..1]);
    journal
        .clone()
        .planned(
            &names[0],
            "a-key-from-the-day-before",
            Utc::now() - TimeDelta::hours(25),
        )
        .unwrap();

    let results = within_deadline(
        app.clock.run(
            app.client
                .generations()
                .batch(requests()[..1].to_vec())
                .journal(journal),
        ),
    )
    .await;

    assert!(matches!(
        &results[0],
        Err(Error::StaleCreate { idempotency_key }) if idempotency_key == "a-key-from-the-day-before"
    ));
    assert_eq!(
        creates(&app),
        0,
        "its key may have expired: sending it could pay twice"
    );
}

#[tokio::test]
async fn nothing_is_created_that_the_journal_could_not_write_down() {
    let app = App::start().await;
    let journal = Memory {
        broken: true,
        ..Memory::default()
    };
    let results = within_deadline(
        app.clock
            .run(app.client.generations().batch(requests()).journal(journal)),
    )
    .await;
    assert!(results.iter().all(|r| matches!(r, Err(Error::Journal(_)))));
    assert_eq!(creates(&app), 0);
}
