//! Resource metrics (RaCUDA §3) and the hardware model (warp size,
//! transaction bytes, banks; [`hardware`]).
//!
//! Execution is summarized by [`Counts`]: how many times each resource
//! constant was charged, and for memory accesses the number of accesses and
//! the sum of their transaction/conflict counts. A [`Metric`] turns counts
//! into a cost; every built-in and user metric charges memory accesses an
//! affine function `per·n + base` of the transaction count `n`, so the two
//! sums are all it needs.

pub mod hardware;

use serde::{Deserialize, Serialize};

pub use hardware::{Footprint, Hardware};

/// The resource constants of miniCUDA, plus the memory-access sums.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Counter {
    /// Reading a local variable or the thread index.
    Var,
    /// A constant.
    Const,
    /// Reading a kernel parameter or a launch builtin.
    Param,
    /// An operator.
    Op,
    /// Writing a local variable.
    VWrite,
    /// A conditional or loop test.
    If,
    /// A divergent warp.
    Div,
    /// A barrier.
    Sync,
    /// Global reads (requests).
    GRead,
    /// Global reads: sum of transactions.
    GReadN,
    /// Global writes (requests).
    GWrite,
    /// Global writes: sum of transactions.
    GWriteN,
    /// Shared reads (requests).
    SRead,
    /// Shared reads: sum of conflict degrees.
    SReadN,
    /// Shared writes (requests).
    SWrite,
    /// Shared writes: sum of conflict degrees.
    SWriteN,
}

/// Number of counters.
pub const COUNTERS: usize = 16;

/// How often each counter was charged.
pub type Counts = [u64; COUNTERS];

/// Cost of a memory access with `n` transactions: `per·n + base`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MemCost {
    /// Cost per transaction (or per conflicting access).
    #[serde(default)]
    pub per: f64,
    /// Cost per access.
    #[serde(default)]
    pub base: f64,
}

impl MemCost {
    /// The cost of one access with `n` transactions.
    pub fn of(&self, n: u64) -> f64 {
        self.per * n as f64 + self.base
    }
}

/// The cost of each resource constant (one projection of a metric).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct CostTable {
    /// `M^var`
    pub var: f64,
    /// `M^const`
    #[serde(rename = "const")]
    pub konst: f64,
    /// `M^param`
    pub param: f64,
    /// `M^op`
    pub op: f64,
    /// `M^vwrite`
    pub vwrite: f64,
    /// `M^if`
    #[serde(rename = "if")]
    pub test: f64,
    /// `M^div`
    pub div: f64,
    /// `M^sync`
    pub sync: f64,
    /// `M^gread(n)`
    pub gread: MemCost,
    /// `M^gwrite(n)`
    pub gwrite: MemCost,
    /// `M^sread(n)`
    pub sread: MemCost,
    /// `M^swrite(n)`
    pub swrite: MemCost,
}

impl CostTable {
    /// The cost of everything counted in `c`.
    pub fn cost(&self, c: &Counts) -> f64 {
        use Counter::*;
        let n = |k: Counter| c[k as usize] as f64;
        self.var * n(Var)
            + self.konst * n(Const)
            + self.param * n(Param)
            + self.op * n(Op)
            + self.vwrite * n(VWrite)
            + self.test * n(If)
            + self.div * n(Div)
            + self.sync * n(Sync)
            + self.gread.per * n(GReadN)
            + self.gread.base * n(GRead)
            + self.gwrite.per * n(GWriteN)
            + self.gwrite.base * n(GWrite)
            + self.sread.per * n(SReadN)
            + self.sread.base * n(SRead)
            + self.swrite.per * n(SWriteN)
            + self.swrite.base * n(SWrite)
    }

    /// The cost of one occurrence of a non-memory counter.
    pub fn unit(&self, k: Counter) -> f64 {
        match k {
            Counter::Var => self.var,
            Counter::Const => self.konst,
            Counter::Param => self.param,
            Counter::Op => self.op,
            Counter::VWrite => self.vwrite,
            Counter::If => self.test,
            Counter::Div => self.div,
            Counter::Sync => self.sync,
            _ => 0.0,
        }
    }

    /// Whether every cost is nonnegative for every `n ≥ 1` (what soundness
    /// of the analysis needs).
    pub fn is_nonnegative(&self) -> bool {
        let scalars = [
            self.var,
            self.konst,
            self.param,
            self.op,
            self.vwrite,
            self.test,
            self.div,
            self.sync,
        ];
        let mems = [self.gread, self.gwrite, self.sread, self.swrite];
        scalars.iter().all(|c| *c >= 0.0)
            && mems.iter().all(|m| m.per >= 0.0 && m.per + m.base >= 0.0)
    }
}

/// A resource metric with its work and span projections (RaCUDA §5).
#[derive(Clone, Debug, PartialEq)]
pub struct Metric {
    /// Name (`steps`, `wsteps`, …).
    pub name: String,
    /// Work projection (also the per-warp lock-step cost).
    pub work: CostTable,
    /// Span projection.
    pub span: CostTable,
}

/// Names of the built-in metrics.
pub const BUILTIN_METRICS: [&str; 5] = ["wsteps", "steps", "sectors", "conflicts", "divwarps"];

impl Metric {
    /// A metric whose span projection equals its work projection.
    pub fn uniform(name: &str, t: CostTable) -> Metric {
        Metric {
            name: name.into(),
            work: t,
            span: t,
        }
    }

    /// A built-in metric by name:
    /// - `steps` (RaCUDA §7): every operation 1, memory accesses `n`;
    /// - `wsteps` (COpPER §4.1): every operation 1, divergence +1, global
    ///   access `5n`, shared access `n`;
    /// - `sectors`: global transactions;
    /// - `conflicts`: bank conflicts `n − 1` per shared access;
    /// - `divwarps`: divergent warps.
    pub fn builtin(name: &str) -> Option<Metric> {
        let mem = |per, base| MemCost { per, base };
        let ones = CostTable {
            var: 1.0,
            konst: 1.0,
            param: 1.0,
            op: 1.0,
            vwrite: 1.0,
            test: 1.0,
            div: 0.0,
            sync: 1.0,
            gread: mem(1.0, 0.0),
            gwrite: mem(1.0, 0.0),
            sread: mem(1.0, 0.0),
            swrite: mem(1.0, 0.0),
        };
        let t = match name {
            "steps" => ones,
            "wsteps" => CostTable {
                div: 1.0,
                gread: mem(5.0, 0.0),
                gwrite: mem(5.0, 0.0),
                ..ones
            },
            "sectors" => CostTable {
                gread: mem(1.0, 0.0),
                gwrite: mem(1.0, 0.0),
                ..CostTable::default()
            },
            "conflicts" => CostTable {
                sread: mem(1.0, -1.0),
                swrite: mem(1.0, -1.0),
                ..CostTable::default()
            },
            "divwarps" => CostTable {
                div: 1.0,
                ..CostTable::default()
            },
            _ => return None,
        };
        Some(Metric::uniform(name, t))
    }
}

/// A user metric as written in TOML: a work table and optional span
/// overrides.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricSpec {
    /// Work projection.
    #[serde(flatten)]
    pub work: CostTable,
    /// Span projection (defaults to the work projection).
    pub span: Option<CostTable>,
}

/// Why a file of user metrics is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MetricsError {
    /// Not TOML, or not the metric tables' keys and types.
    #[error(transparent)]
    Toml(#[from] toml::de::Error),
    /// A metric with a negative cost.
    #[error("metric `{0}` has a negative cost; costs must be nonnegative for every access")]
    Negative(String),
}

error_message!(MetricsError);

/// Reads user metrics from TOML: `[metric.NAME]` tables of resource
/// constants (`var = 1`, `gread = { per = 5 }`, optional `[metric.NAME.span]`).
pub fn metrics_from_toml(text: &str) -> Result<Vec<Metric>, MetricsError> {
    #[derive(Deserialize)]
    struct File {
        #[serde(default)]
        metric: std::collections::BTreeMap<String, MetricSpec>,
    }
    let f: File = toml::from_str(text)?;
    let mut out = Vec::new();
    for (name, spec) in f.metric {
        let m = Metric {
            name: name.clone(),
            work: spec.work,
            span: spec.span.unwrap_or(spec.work),
        };
        if !m.work.is_nonnegative() || !m.span.is_nonnegative() {
            return Err(MetricsError::Negative(name));
        }
        out.push(m);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_price_counts_as_the_papers_say() {
        let mut c = [0u64; COUNTERS];
        c[Counter::Op as usize] = 3;
        c[Counter::Div as usize] = 1;
        c[Counter::GRead as usize] = 2;
        c[Counter::GReadN as usize] = 6;
        c[Counter::SWrite as usize] = 1;
        c[Counter::SWriteN as usize] = 4;
        let cost = |n: &str| Metric::builtin(n).unwrap().work.cost(&c);
        assert_eq!(cost("steps"), 3.0 + 6.0 + 4.0);
        assert_eq!(cost("wsteps"), 3.0 + 1.0 + 30.0 + 4.0);
        assert_eq!(cost("sectors"), 6.0);
        assert_eq!(cost("conflicts"), 3.0);
        assert_eq!(cost("divwarps"), 1.0);
    }

    #[test]
    fn user_metrics_from_toml() {
        let ms = metrics_from_toml(
            "[metric.lat]\nop = 1\ngread = { per = 400 }\n[metric.lat.span]\nop = 1\ngread = { per = 4, base = 300 }\n",
        )
        .unwrap();
        assert_eq!(ms[0].name, "lat");
        assert_eq!(ms[0].work.gread.per, 400.0);
        assert_eq!(ms[0].span.gread.base, 300.0);
        assert!(metrics_from_toml("[metric.bad]\nop = -1\n").is_err());
        assert!(metrics_from_toml("[metric.typo]\nopp = 1\n").is_err());
    }
}
