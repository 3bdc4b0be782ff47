//! How long a model's tasks take, so that a wait reads a generation when it is
//! likely to have ended instead of spending the rate limit on reads that find
//! nothing new.
//!
//! The catalogue's `averageDurationSeconds` comes first when the catalogue
//! gives it (the service document does not promise that field); otherwise what
//! this process has seen of the model: the median of its recent tasks.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

/// Tasks of one model remembered for the median.
const SAMPLES: usize = 15;

/// The typical times of the models of one service.
#[derive(Debug, Default)]
pub(crate) struct Timing {
    /// `averageDurationSeconds` by model slug, read once; empty when the
    /// catalogue could not be read or gives none.
    catalogue: tokio::sync::OnceCell<HashMap<String, Duration>>,
    observed: Mutex<HashMap<String, VecDeque<Duration>>>,
}

impl Timing {
    /// The typical time of `model`: the catalogue's, read with `load` the
    /// first time any wait asks, else the median of what was observed.
    pub(crate) async fn expected<F, Fut>(&self, model: &str, load: F) -> Option<Duration>
    where
        F: FnOnce() -> Fut,
        Fut: Future<Output = HashMap<String, Duration>>,
    {
        let catalogue = self.catalogue.get_or_init(load).await;
        catalogue
            .get(model)
            .copied()
            .or_else(|| self.observed_median(model))
    }

    /// Remembers that a task of `model` took `took`, from its create to the
    /// read that found it ended.
    pub(crate) fn observe(&self, model: &str, took: Duration) {
        let mut observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        let samples = observed.entry(model.to_owned()).or_default();
        if samples.len() == SAMPLES {
            samples.pop_front();
        }
        samples.push_back(took);
    }

    /// The median of what was observed of `model`, without the catalogue.
    pub(crate) fn observed_median(&self, model: &str) -> Option<Duration> {
        let observed = self.observed.lock().unwrap_or_else(|p| p.into_inner());
        let mut samples: Vec<Duration> = observed.get(model)?.iter().copied().collect();
        samples.sort();
        samples.get(samples.len() / 2).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_catalogue_comes_first_then_the_median_of_what_was_seen() {
        let timing = Timing::default();
        for secs in [9, 3, 4, 5, 30] {
            timing.observe("flux-schnell", Duration::from_secs(secs));
            timing.observe("imagen-4", Duration::from_secs(secs * 2));
        }
        let load = || async { HashMap::from([("imagen-4".to_owned(), Duration::from_secs(12))]) };
        assert_eq!(
            timing.expected("imagen-4", load).await,
            Some(Duration::from_secs(12))
        );
        // The catalogue is read once; without the model, the median of the last
        // tasks, which one slow task does not move.
        assert_eq!(
            timing
                .expected("flux-schnell", || async { unreachable!() })
                .await,
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            timing.expected("veo-3", || async { unreachable!() }).await,
            None
        );
    }

    #[test]
    fn only_the_latest_tasks_count() {
        let timing = Timing::default();
        for _ in 0..SAMPLES {
            timing.observe("suno-v4", Duration::from_secs(60));
        }
        for _ in 0..SAMPLES {
            timing.observe("suno-v4", Duration::from_secs(20));
        }
        assert_eq!(
            timing.observed_median("suno-v4"),
            Some(Duration::from_secs(20))
        );
    }
}
