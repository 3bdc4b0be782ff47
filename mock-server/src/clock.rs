//! The one clock behind every delay of the mock: task processing, rate-limit
//! windows, idempotency expiry and webhook back-off.
//!
//! - real: wall-clock time, optionally running `scale` times faster;
//! - manual: time stands still until a test advances it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use tokio::sync::watch;

use crate::config::ClockMode;
use crate::events::{Bus, EventKind};

/// The time on a world's clock, its mode and scale (`GET /_mock/clock`).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ClockView {
    /// Now, on the world's clock.
    #[serde(serialize_with = "crate::wire::millis::serialize")]
    pub now: DateTime<Utc>,
    /// `manual` (moved by [`World::advance_clock`](crate::World::advance_clock)) or `real`.
    pub mode: ClockMode,
    /// How many times faster than real time a real clock runs; 0 for a manual one.
    pub time_scale: f64,
}

/// A moment at the network edge ([`Clock::edge_time`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EdgeTime {
    /// Real seconds plus the seconds a manual clock was moved forward.
    pub edge: f64,
    /// Real seconds.
    pub real: f64,
}

/// The one clock behind every delay of the mock: real (optionally scaled) or
/// manual, moved only by [`Clock::advance`].
#[derive(Clone)]
pub struct Clock {
    inner: Arc<Inner>,
}

struct Inner {
    mode: Mode,
    /// Bumped on every manual advance so that sleepers re-check the time.
    ticks: watch::Sender<u64>,
    /// The live journal a move is told to.
    events: OnceLock<Bus>,
    /// When the clock was made, for the edge's time (`edge_time`).
    born: Instant,
    /// Microseconds a manual clock was moved forward by hand in all.
    advanced_us: AtomicU64,
}

enum Mode {
    Real {
        /// The time on this clock at a real instant; moved only by a restore.
        origin: Mutex<(DateTime<Utc>, Instant)>,
        scale: f64,
    },
    Manual {
        now: Mutex<DateTime<Utc>>,
    },
}

/// Why the clock could not be advanced.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum ClockError {
    /// The clock is real: it cannot be moved.
    #[error("the clock is real; start the mock with a manual clock to advance it")]
    NotManual,
    /// A negative or non-finite number of seconds.
    #[error("seconds must be a finite number of at least 0, got {0}")]
    BadAmount(f64),
    /// Past the latest time the clock can show.
    #[error("the clock cannot go past {0}")]
    OutOfRange(DateTime<Utc>),
}

/// The latest time a manual clock may reach: a century before the end of year
/// 9999, the last that RFC 3339 writes, so that every time the mock shows (an
/// error's `timestamp`, a record's, a schedule it adds: 3 days of webhook
/// back-off at most) stays a valid RFC 3339 time.
fn latest() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("9899-12-31T23:59:59Z")
        .expect("a valid time")
        .to_utc()
}

impl std::fmt::Debug for Clock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Clock")
            .field("manual", &self.is_manual())
            .field("now", &self.now())
            .finish()
    }
}

impl Clock {
    /// Wall-clock time running `scale` times faster (1.0 is real time).
    pub fn real(scale: f64) -> Self {
        let scale = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
        Self::with_mode(Mode::Real {
            origin: Mutex::new((Utc::now(), Instant::now())),
            scale,
        })
    }

    /// A clock that starts at `start` and moves only when advanced.
    pub fn manual(start: DateTime<Utc>) -> Self {
        Self::with_mode(Mode::Manual {
            now: Mutex::new(start),
        })
    }

    fn with_mode(mode: Mode) -> Self {
        Self {
            inner: Arc::new(Inner {
                mode,
                ticks: watch::channel(0).0,
                events: OnceLock::new(),
                born: Instant::now(),
                advanced_us: AtomicU64::new(0),
            }),
        }
    }

    /// Tells every later move to `events`, before what it makes due is applied.
    pub(crate) fn publish_moves(&self, events: Bus) {
        self.inner.events.set(events).ok();
    }

    fn moved(&self, from: DateTime<Utc>, to: DateTime<Utc>) {
        if let Some(events) = self.inner.events.get()
            && events.listening()
        {
            events.publish(to, EventKind::Clock { from });
        }
    }

    /// The time, mode and scale, as `GET /_mock/clock` answers them and a
    /// snapshot keeps them.
    pub fn view(&self) -> ClockView {
        ClockView {
            now: self.now(),
            mode: if self.is_manual() {
                ClockMode::Manual
            } else {
                ClockMode::Real
            },
            time_scale: self.scale(),
        }
    }

    /// Whether time moves only when advanced.
    pub fn is_manual(&self) -> bool {
        matches!(self.inner.mode, Mode::Manual { .. })
    }

    /// How much faster than wall-clock time a real clock runs; 0 for a manual
    /// clock, whose time does not pass by itself.
    pub fn scale(&self) -> f64 {
        match &self.inner.mode {
            Mode::Real { scale, .. } => *scale,
            Mode::Manual { .. } => 0.0,
        }
    }

    /// Seconds of this clock per real second, as a client on the network sees
    /// them: the scale of a real clock, 1 for a manual one (its time moves only
    /// when a test moves it, so a wait told in real seconds is counted one to one).
    pub fn edge_scale(&self) -> f64 {
        match &self.inner.mode {
            Mode::Real { scale, .. } => *scale,
            Mode::Manual { .. } => 1.0,
        }
    }

    /// This moment, read once, as a client at the network edge lives it
    /// (`edge`: real seconds since the clock was made, plus every second a
    /// manual clock was moved forward, since a client whose waits move the
    /// mock's clock waits in those; a scaled real clock counts real seconds
    /// only, the ones `retry-after` is given in), and in real seconds alone,
    /// which order two events at the edge whatever a manual clock did between
    /// them (an answer held back a second leaves a second later, however far
    /// the clock moves meanwhile).
    pub fn edge_time(&self) -> EdgeTime {
        let real = self.inner.born.elapsed().as_secs_f64();
        EdgeTime {
            edge: real + self.inner.advanced_us.load(Ordering::Relaxed) as f64 / 1e6,
            real,
        }
    }

    /// The time on this clock.
    pub fn now(&self) -> DateTime<Utc> {
        match &self.inner.mode {
            Mode::Real { origin, scale } => {
                let (wall, at) = *origin.lock().unwrap_or_else(|p| p.into_inner());
                let elapsed = at.elapsed().as_secs_f64() * scale;
                wall + chrono::Duration::microseconds((elapsed * 1e6) as i64)
            }
            Mode::Manual { now } => *now.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }

    /// Makes the time on this clock `now` (a restored snapshot's), from which a
    /// real clock runs on at its scale.
    pub fn set_now(&self, now: DateTime<Utc>) {
        let from = self.now();
        match &self.inner.mode {
            Mode::Real { origin, .. } => {
                *origin.lock().unwrap_or_else(|p| p.into_inner()) = (now, Instant::now());
            }
            Mode::Manual { now: current } => {
                *current.lock().unwrap_or_else(|p| p.into_inner()) = now;
            }
        }
        self.inner.ticks.send_modify(|t| *t += 1);
        self.moved(from, now);
    }

    /// Moves a manual clock forward by `seconds` and returns the new time.
    pub fn advance(&self, seconds: f64) -> Result<DateTime<Utc>, ClockError> {
        if !(0.0..1e11).contains(&seconds) {
            return Err(ClockError::BadAmount(seconds));
        }
        let Mode::Manual { now } = &self.inner.mode else {
            return Err(ClockError::NotManual);
        };
        let (from, new) = {
            let mut now = now.lock().unwrap_or_else(|p| p.into_inner());
            let from = *now;
            let new = now
                .checked_add_signed(chrono::Duration::microseconds((seconds * 1e6) as i64))
                .filter(|new| *new <= latest())
                .ok_or_else(|| ClockError::OutOfRange(latest()))?;
            *now = new;
            (from, new)
        };
        self.inner
            .advanced_us
            .fetch_add((seconds * 1e6) as u64, Ordering::Relaxed);
        self.inner.ticks.send_modify(|t| *t += 1);
        self.moved(from, new);
        Ok(new)
    }

    /// A receiver that changes whenever a manual clock is advanced.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.ticks.subscribe()
    }

    /// How long to wait in real time until the clock reads `at`: `None` for a
    /// manual clock, whose time only moves by `advance`.
    pub fn real_wait_until(&self, at: DateTime<Utc>) -> Option<Duration> {
        match &self.inner.mode {
            Mode::Real { scale, .. } => {
                let virtual_wait = (at - self.now()).to_std().unwrap_or(Duration::ZERO);
                Some(virtual_wait.div_f64(*scale))
            }
            Mode::Manual { .. } => None,
        }
    }

    /// Waits until the clock reads at least `at`.
    pub async fn sleep_until(&self, at: DateTime<Utc>) {
        let mut ticks = self.subscribe();
        loop {
            if self.now() >= at {
                return;
            }
            match self.real_wait_until(at) {
                Some(wait) => tokio::time::sleep(wait).await,
                None => {
                    if ticks.changed().await.is_err() {
                        return;
                    }
                }
            }
        }
    }
}

/// A span of the mock's clock of `secs` seconds (fractions kept to the
/// microsecond; negative or absurd amounts clamped).
pub fn seconds(secs: f64) -> chrono::Duration {
    chrono::Duration::microseconds((secs.clamp(0.0, 1e10) * 1e6) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .map(|t| t.with_timezone(&Utc))
            .unwrap_or_default()
    }

    #[test]
    fn a_manual_clock_refuses_to_go_past_the_latest_time_instead_of_overflowing() {
        let clock = Clock::manual(start());
        for _ in 0..100 {
            if clock.advance(9.9e10).is_err() {
                assert!(clock.now() <= latest());
                return;
            }
        }
        panic!("100 advances of 9.9e10 s went past chrono's range without an error");
    }

    #[test]
    fn manual_clock_stands_still_until_advanced() {
        let clock = Clock::manual(start());
        assert_eq!(clock.now(), start());
        let new = clock.advance(12.5).expect("manual");
        assert_eq!(new - start(), chrono::Duration::milliseconds(12_500));
        assert_eq!(clock.now(), new);
    }

    #[test]
    fn a_clock_set_to_a_time_runs_on_from_it() {
        let manual = Clock::manual(start());
        let later = start() + chrono::Duration::hours(5);
        manual.set_now(later);
        assert_eq!(manual.now(), later);
        let real = Clock::real(1.0);
        real.set_now(start());
        let now = real.now();
        assert!(
            now >= start() && now < start() + chrono::Duration::seconds(5),
            "{now}"
        );
    }

    #[test]
    fn real_clock_refuses_to_be_advanced() {
        assert_eq!(Clock::real(1.0).advance(1.0), Err(ClockError::NotManual));
    }

    #[test]
    fn negative_or_absurd_advances_are_refused() {
        let clock = Clock::manual(start());
        for bad in [-1.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(matches!(clock.advance(bad), Err(ClockError::BadAmount(_))));
        }
        assert_eq!(clock.now(), start());
    }

    #[test]
    fn scaled_clock_waits_less_real_time() {
        let clock = Clock::real(100.0);
        let wait = clock
            .real_wait_until(clock.now() + chrono::Duration::seconds(100))
            .expect("real clock");
        assert!(wait <= Duration::from_secs(1), "{wait:?}");
    }

    #[tokio::test]
    async fn sleeper_on_manual_clock_wakes_when_advanced_past_its_time() {
        let clock = Clock::manual(start());
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move {
                clock
                    .sleep_until(start() + chrono::Duration::seconds(10))
                    .await
            }
        });
        clock.advance(5.0).expect("manual");
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.advance(5.0).expect("manual");
        sleeper.await.expect("sleeper ends");
    }
}
