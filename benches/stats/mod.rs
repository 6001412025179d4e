//! The spread of a benchmark's repeated runs, for the benchmarks that
//! print a table (shared by the engine's and the search crate's
//! benchmarks): each figure is the median of a stated number of runs,
//! with the fastest and slowest beside it.
//!
//! The number of runs is each benchmark's default, or `COPPER_BENCH_RUNS`
//! when set (a positive integer; anything else is refused).

// Each benchmark uses only some of these.
#![allow(dead_code)]

use std::time::Instant;

/// Median, minimum and maximum of some runs' times, in seconds.
#[derive(Clone, Copy, Debug)]
pub struct Spread {
    /// The middle time (the upper middle of an even count).
    pub median: f64,
    /// The fastest run.
    pub min: f64,
    /// The slowest run.
    pub max: f64,
}

impl Spread {
    /// The spread of `times` (seconds); `None` when there are none.
    pub fn of(mut times: Vec<f64>) -> Option<Spread> {
        times.sort_by(f64::total_cmp);
        Some(Spread {
            median: *times.get(times.len() / 2)?,
            min: *times.first()?,
            max: *times.last()?,
        })
    }

    /// `median (min–max)` in milliseconds, `digits` after the point.
    pub fn ms(&self, digits: usize) -> String {
        format!(
            "{:.digits$} ({:.digits$}–{:.digits$})",
            self.median * 1e3,
            self.min * 1e3,
            self.max * 1e3
        )
    }

    /// `median (min–max)` in seconds, `digits` after the point.
    pub fn s(&self, digits: usize) -> String {
        format!(
            "{:.digits$} ({:.digits$}–{:.digits$})",
            self.median, self.min, self.max
        )
    }
}

/// The number of runs: `COPPER_BENCH_RUNS`, else `default`. Exits with a
/// message when the variable is set to anything but a positive integer.
pub fn runs(default: usize) -> usize {
    match std::env::var("COPPER_BENCH_RUNS") {
        Err(_) => default,
        Ok(v) => match v.trim().parse::<usize>() {
            Ok(n) if n > 0 => n,
            _ => {
                eprintln!("COPPER_BENCH_RUNS must be a positive integer, not `{v}`");
                std::process::exit(2);
            }
        },
    }
}

/// Runs `f` `runs` times (once at least); the spread of their wall
/// times and the last run's result.
pub fn time<T>(runs: usize, mut f: impl FnMut() -> T) -> (Spread, T) {
    let mut once = || {
        let start = Instant::now();
        let r = f();
        (start.elapsed().as_secs_f64(), r)
    };
    let (t, mut last) = once();
    let mut times = vec![t];
    for _ in 1..runs {
        let (t, r) = once();
        times.push(t);
        last = r;
    }
    (Spread::of(times).expect("one run at least"), last)
}
