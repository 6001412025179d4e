//! The analyses of kernel versions met during a search, cached by a hash
//! of their file text, kernel name and configuration.

use std::collections::hash_map::DefaultHasher;
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use copper::bound::{prepare, Config};
use copper::cost::Metric;
use copper::cuda::parse::ParsedFile;
use copper::ir::lower::lower_kernel;
use copper::ir::Kernel;

use super::{Analyzed, Lineage, SearchError};

/// Analyses of kernel versions, by a hash of the file text they are in,
/// the kernel's name and the configuration: a candidate met again (the
/// same rewrite from two transforms, the same file in a batch) is not
/// analyzed twice.
#[derive(Default)]
pub struct Cache {
    map: Mutex<HashMap<u64, Arc<Analyzed>>>,
    hits: AtomicU64,
}

impl Cache {
    /// How many analyses were found in the cache.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    /// The analysis of kernel `name` as it is in `file` (lowered as
    /// `kernel` when the caller has it).
    pub(super) fn analyze(
        &self,
        file: ParsedFile,
        name: &str,
        kernel: Option<Kernel>,
        config: &Config,
        metrics: &[Metric],
        lineage: Lineage,
    ) -> Result<Arc<Analyzed>, SearchError> {
        let mut h = DefaultHasher::new();
        file.source.text.hash(&mut h);
        name.hash(&mut h);
        // The budget left differs from candidate to candidate: not part of
        // what an analysis is.
        let what = Config {
            budget: Duration::ZERO,
            ..*config
        };
        format!("{what:?}{metrics:?}").hash(&mut h);
        let key = h.finish();
        if let Some(a) = self.map.lock().ok().and_then(|m| m.get(&key).cloned()) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(a);
        }
        let start = Instant::now();
        let function = file
            .function(name)
            .cloned()
            .ok_or_else(|| SearchError::NoKernel(name.to_string()))?;
        let kernel = match kernel {
            Some(k) => k,
            None => lower_kernel(&file, name).map_err(|d| SearchError::NotLowered(d.render()))?,
        };
        let prepared = prepare(&kernel, *config);
        let bounds = metrics.iter().map(|m| prepared.bound(m)).collect();
        let a = Arc::new(Analyzed {
            file,
            function,
            kernel,
            prepared,
            bounds,
            seconds: start.elapsed().as_secs_f64(),
            lineage,
        });
        if let Ok(mut m) = self.map.lock() {
            m.insert(key, a.clone());
        }
        Ok(a)
    }
}
