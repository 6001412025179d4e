//! Running one block of a launch to its outcome (costs per metric,
//! site statistics, work used) or to the error that stopped it, and the
//! blocks of a grid a launch runs.

use crate::launch::Dims;
use std::collections::BTreeMap;

use super::exec::{Block, LaunchCtx, Warp};
use super::{SimError, SiteStats, WALL_CLOCK};
use crate::cost::{Counts, Metric, COUNTERS};

/// A block that failed: why, and the work units it used until then
/// (charged to the launch's work limit like those of a block that ends).
pub(super) struct BlockFail {
    pub(super) error: SimError,
    pub(super) steps: u64,
}

/// What one block produced.
pub(super) struct BlockOutcome {
    pub(super) per_metric: Vec<(f64, f64, f64, f64)>,
    /// Counters per statement, summed over the block's warps (empty
    /// unless counted).
    pub(super) by_statement: Vec<(usize, Counts)>,
    pub(super) sites: Vec<SiteStats>,
    pub(super) extents: Vec<u64>,
    pub(super) warps: u64,
    pub(super) instructions: u64,
    pub(super) work: u64,
}

/// Adds counters by statement into `sum`.
pub(super) fn add_by_statement(
    sum: &mut BTreeMap<usize, Counts>,
    from: impl IntoIterator<Item = (usize, Counts)>,
) {
    for (at, counts) in from {
        let into = sum.entry(at).or_insert([0; COUNTERS]);
        for (s, c) in into.iter_mut().zip(counts) {
            *s += c;
        }
    }
}

fn diff(a: &Counts, b: &Counts) -> Counts {
    let mut d = [0u64; COUNTERS];
    for i in 0..COUNTERS {
        d[i] = a[i] - b[i];
    }
    d
}

fn current_span(w: &Warp, m: usize, metric: &Metric) -> f64 {
    w.span_base[m] + metric.span.cost(&diff(&w.counts, &w.counts_at_sync))
}

/// The blocks of a grid to simulate: all of them, or at most `sample`
/// (the first, the last and evenly spaced ones between, in launch order).
pub(super) fn sampled_blocks(grid: Dims, sample: Option<u64>) -> Vec<[u64; 3]> {
    let [gx, gy, _] = grid.to_array();
    let total = grid.count();
    let at = |i: u64| [i % gx, (i / gx) % gy, i / (gx * gy)];
    match sample {
        Some(k) if k < total => {
            let k = k.max(2);
            let mut ids: Vec<u64> = (0..k).map(|j| j * (total - 1) / (k - 1)).collect();
            ids.dedup();
            ids.into_iter().map(at).collect()
        }
        _ => (0..total).map(at).collect(),
    }
}

pub(super) fn run_block(
    ctx: &LaunchCtx<'_>,
    id: [u64; 3],
    metrics: &[Metric],
    cap: u64,
) -> Result<BlockOutcome, BlockFail> {
    // A warp looks at the deadline every so many steps; a launch of many
    // short blocks is stopped between them.
    if ctx.deadline.is_some_and(|d| std::time::Instant::now() > d) {
        return Err(BlockFail {
            error: SimError {
                message: WALL_CLOCK.into(),
                span: ctx.kernel.span,
                block: id,
                thread: [0; 3],
                race: false,
            },
            steps: 0,
        });
    }
    let mut block = Block::new(ctx, id, metrics.len());
    block.cap = cap;
    for w in &mut block.warps {
        w.seed_params(ctx.param_values, ctx.kernel);
    }
    let ran = block.run(|warps| {
        for (m, metric) in metrics.iter().enumerate() {
            let s = warps
                .iter()
                .map(|w| current_span(w, m, metric))
                .fold(0.0, f64::max);
            for w in warps.iter_mut() {
                w.span_base[m] = s;
            }
        }
        for w in warps.iter_mut() {
            w.counts_at_sync = w.counts;
        }
    });
    if let Err(error) = ran {
        return Err(BlockFail {
            steps: block.warps.iter().map(|w| w.work()).sum(),
            error,
        });
    }
    let per_metric = metrics
        .iter()
        .enumerate()
        .map(|(m, metric)| {
            let costs: Vec<f64> = block
                .warps
                .iter()
                .map(|w| metric.work.cost(&w.counts))
                .collect();
            let max_warp = costs.iter().copied().fold(0.0, f64::max);
            let total: f64 = costs.iter().sum();
            let span = block
                .warps
                .iter()
                .map(|w| current_span(w, m, metric))
                .fold(0.0, f64::max);
            (max_warp, total, total, span)
        })
        .collect();
    let mut by_statement: BTreeMap<usize, Counts> = BTreeMap::new();
    for w in &mut block.warps {
        add_by_statement(
            &mut by_statement,
            w.by_statement.take().into_iter().flatten(),
        );
    }
    Ok(BlockOutcome {
        per_metric,
        by_statement: by_statement.into_iter().collect(),
        sites: block.sites,
        extents: block.extents,
        warps: block.warps.len() as u64,
        instructions: block.warps.iter().map(|w| w.steps()).sum(),
        work: block.warps.iter().map(|w| w.work()).sum(),
    })
}

#[cfg(test)]
mod tests {
    use super::sampled_blocks;

    #[test]
    fn a_sample_of_blocks_keeps_the_first_and_the_last() {
        let all = sampled_blocks(crate::launch::grid([4, 3, 2]).unwrap(), None);
        assert_eq!(all.len(), 24);
        assert_eq!((all[0], all[5], all[23]), ([0, 0, 0], [1, 1, 0], [3, 2, 1]));
        let some = sampled_blocks(crate::launch::grid([4, 3, 2]).unwrap(), Some(4));
        // Linear ids 0, 7, 15, 23 (x fastest).
        assert_eq!(some, vec![[0, 0, 0], [3, 1, 0], [3, 0, 1], [3, 2, 1]]);
        // A sample as large as the grid is the grid.
        assert_eq!(
            sampled_blocks(crate::launch::grid([4, 3, 2]).unwrap(), Some(24)),
            all
        );
        assert_eq!(
            sampled_blocks(crate::launch::grid([65535, 1, 1]).unwrap(), Some(2)).len(),
            2
        );
    }
}
