//! The checker of a search's kernel, built when a candidate first needs a
//! check: the original is simulated on its test launches once, and only
//! when some candidate beats the incumbent on its bound (a search whose
//! candidates all lose, or that has none, simulates nothing).

use std::sync::OnceLock;

use copper_transforms::check::Checker;

use super::Unchecked;

/// How a checker is built: the original simulated on its test launches,
/// its bounds compared with every run.
type Build<'a> = Box<dyn Fn() -> Result<Checker, Unchecked> + Send + Sync + 'a>;

/// A checker built on first use, by whichever candidate asks first (the
/// others wait for it).
pub(super) struct LazyChecker<'a> {
    cell: OnceLock<Result<Checker, Unchecked>>,
    build: Build<'a>,
}

impl<'a> LazyChecker<'a> {
    /// A checker that `build` makes when first asked for.
    pub fn new(build: impl Fn() -> Result<Checker, Unchecked> + Send + Sync + 'a) -> Self {
        LazyChecker {
            cell: OnceLock::new(),
            build: Box::new(build),
        }
    }

    /// The checker, built now if no one asked before.
    pub fn get(&self) -> &Result<Checker, Unchecked> {
        self.cell.get_or_init(|| (self.build)())
    }

    /// Why the search must stop before its next round: the candidates'
    /// checks have used `limit` work units or more
    /// ([`Checker::checks_used`]); `None` while some is left, or when no
    /// checker was built. Looked at between rounds only, where the sum is
    /// the same whatever order the round's candidates were checked in.
    pub fn out_of_work(&self, limit: u64) -> Option<String> {
        let used = self.cell.get()?.as_ref().ok()?.checks_used();
        (used >= limit).then(|| {
            format!(
                "the search stopped at its work limit: its candidates' checks used {used} work units (simulated instructions and array values, the same on every machine), the limit being {limit} (raise it with --max-check-steps); results may be incomplete"
            )
        })
    }

    /// The checker, when some candidate needed it (`None`: none did, and
    /// the original was never simulated).
    pub fn into_built(self) -> Option<Result<Checker, Unchecked>> {
        self.cell.into_inner()
    }
}
