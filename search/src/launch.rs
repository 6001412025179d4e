//! Where a kernel's launch shape and test inputs come from: the command
//! line, the file's own `<<<grid, block>>>` launches (evaluated over the
//! host code before them), the parameter file next to it, or, with none of
//! these, a launch inferred from the kernel alone ([`test_plan`]).

use copper::launch::Dims;
use copper::shown::Shown;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use copper::absint::deps::{self, Coef, Dep, LaunchFacts};
use copper::cuda::ast::BinOp;
use copper::cuda::launch::{BytesOf, Launch, TestLaunch};
use copper::cuda::parse::ParsedFile;
use copper::input::{read_input_text, InputFileError};
use copper::ir::structured::without_jumps;
use copper::ir::{visit_stmts, Builtin, Expr, ExprKind, Kernel, Param, Stmt, VarId};
use copper::launch::{Shape, ShapeError, MAX_BLOCK_THREADS};
use copper::sim::params::{LaunchSpec, ParamFile};
use copper::sim::test_launch::{random_array, runs_on_block, uses};
use copper::sim::work::Work;
use copper::sim::InputError;
use copper::source::Span;

mod params;
mod test_launch;

pub use params::Params;
pub use test_launch::{test_launch, TestedLaunch};

/// A kernel's launch shape as far as it is known (either part may be
/// unknown), and where it came from. Every known part has passed
/// [`copper::launch::Shape::checked`], the one check of CUDA's limits
/// that command-line options, parameter files and launch sites go through.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownShape {
    /// Block shape, when known.
    pub block: Option<Dims>,
    /// Grid shape, when known.
    pub grid: Option<Dims>,
    /// Where it came from, for people ("the launch at line 40").
    pub source: String,
    /// Whether copper assumed the block from the kernel alone
    /// ([`assume_block`]): nothing gave a launch shape.
    pub assumed: bool,
}

/// The launch sites of a header's kernel in the file given that includes
/// the header. They give the kernel its test launch and the sizes it is
/// ranked at, as if it were defined in that file, but license no shape: a
/// header is shared by every file that includes it, and copper does not
/// see all their launches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Includer {
    /// The file given that includes the header.
    pub path: PathBuf,
    /// Its launches of the kernel.
    pub launches: Vec<Launch>,
}

/// The launch sites of a kernel of `parsed`: its `includer`'s for a
/// header's kernel, else the file's own; and what follows "the launch at
/// line N" in messages about them (" of src/main.cu" for an includer's).
pub fn sites<'a>(parsed: &'a ParsedFile, includer: Option<&'a Includer>) -> (&'a [Launch], String) {
    match includer {
        Some(i) => (&i.launches, format!(" of {}", i.path.as_path().shown())),
        None => (&parsed.launches, String::new()),
    }
}

/// Why CUDA would refuse the launch site `l` (a block of more than 1024
/// threads, a grid past its limits), when its block is known (a grid not
/// known counts as one block).
pub fn refused_shape(l: &Launch) -> Option<ShapeError> {
    site_shape(l)?.err()
}

/// The block and grid (when known) of the launch site `l`, checked
/// against CUDA's limits; `None` when its block is not known.
fn site_shape(l: &Launch) -> Option<Result<(Dims, Option<Dims>), ShapeError>> {
    let shape = Shape::checked(l.grid.unwrap_or([1, 1, 1]), l.block?);
    Some(shape.map(|s| (s.block(), l.grid.map(|_| s.grid()))))
}

/// The launch shape of kernel `name`: the command line (`block`, `grid`),
/// else every launch site of the file (when they agree; the parameter
/// file's grid where the sites' is not known and the blocks agree), else
/// the parameter file's entry `spec`.
pub fn launch_shape(
    block: Option<Dims>,
    grid: Option<Dims>,
    parsed: &ParsedFile,
    spec: Option<&LaunchSpec>,
    name: &str,
) -> KnownShape {
    if block.is_some() || grid.is_some() {
        return KnownShape {
            block,
            grid,
            source: "command line".into(),
            assumed: false,
        };
    }
    let mut sites = Vec::new();
    for l in parsed.launches.iter().filter(|l| l.kernel == name) {
        match site_shape(l) {
            Some(Ok((block, grid))) => sites.push((l.line, block, grid)),
            // A launch CUDA would refuse (`<<<1, 100000>>>`) says nothing
            // about the shapes the kernel runs with.
            Some(Err(why)) => return refused_site(l.line, why),
            None => {}
        }
    }
    if let Some(&(line, block, first_grid)) = sites.first() {
        if sites.iter().all(|s| s.1 == block) {
            let grid = first_grid.filter(|_| sites.iter().all(|s| s.2 == first_grid));
            // A grid the host code computes at run time: the parameter
            // file's, when it launches the same block.
            let from_file = spec
                .and_then(|s| s.shape().ok())
                .filter(|s| grid.is_none() && s.block() == block);
            if let Some(s) = from_file {
                return KnownShape {
                    block: Some(block),
                    grid: Some(s.grid()),
                    source: format!("the launch at line {line}, grid from the parameter file"),
                    assumed: false,
                };
            }
            return KnownShape {
                block: Some(block),
                grid,
                source: format!("the launch at line {line}"),
                assumed: false,
            };
        }
    }
    if let Some(s) = spec.and_then(|s| s.shape().ok()) {
        return KnownShape {
            block: Some(s.block()),
            grid: Some(s.grid()),
            source: "the parameter file".into(),
            assumed: false,
        };
    }
    KnownShape {
        block: None,
        grid: None,
        source: "no launch shape known: bounds hold for any block".into(),
        assumed: false,
    }
}

/// The shape of a kernel one of whose launch sites, at `line`, CUDA would
/// refuse (`why`): none.
fn refused_site(line: usize, why: ShapeError) -> KnownShape {
    KnownShape {
        block: None,
        grid: None,
        source: format!(
            "the launch at line {line} is not one CUDA runs ({why}), so no shape is assumed: bounds hold for any block"
        ),
        assumed: false,
    }
}

/// The launch shape every command analyzes `kernel` on: [`launch_shape`]
/// of the file `parsed` (the `block` and `grid` given, else its launch
/// sites, else the parameter file's entry `spec`), else with the block
/// [`assume_block`] infers from `kernel` as `code` holds it (the file, or
/// the kernel's excerpt of it), its runs charged to `work`.
pub fn kernel_shape(
    block: Option<Dims>,
    grid: Option<Dims>,
    parsed: &ParsedFile,
    code: &ParsedFile,
    kernel: &Kernel,
    spec: Option<&LaunchSpec>,
    work: &Arc<Work>,
) -> KnownShape {
    let shape = launch_shape(block, grid, parsed, spec, &kernel.name);
    assume_block(code, kernel, shape, work)
}

/// `shape`, or, when it has no block and no launch site of the kernel
/// gives one, the block inferred from `kernel` ([`infer_block`]), marked
/// as assumed: the analysis, the transforms and the lint then treat it as
/// if the user had passed `--block`, and the output says where it came
/// from. The grid stays unknown (bounds hold for any grid). The runs
/// that look for a block the shared arrays fit are charged to `work`
/// (a fresh [`Work`] of [`FIT_STEPS`], or the lint's allowance for the
/// kernel), and stop once it is spent.
pub fn assume_block(
    parsed: &ParsedFile,
    kernel: &Kernel,
    shape: KnownShape,
    work: &Arc<Work>,
) -> KnownShape {
    let site_block = parsed
        .launches
        .iter()
        .any(|l| l.kernel == kernel.name && l.block.is_some());
    if shape.block.is_some() || site_block {
        return shape;
    }
    let (inferred, why) = infer_block(parsed, kernel);
    let mut source = format!("assumed block {inferred} {why}");
    let mut block = inferred;
    // A block too large for the kernel's shared arrays (a 32×32 tile
    // filled by 32×8 threads in a loop) runs them out of bounds: halve it
    // until the original runs cleanly, and say so.
    let deadline = Some(Instant::now() + FIT_WALL_CLOCK);
    let halvings = if kernel.arrays.iter().any(|a| a.is_shared()) {
        MAX_HALVINGS
    } else {
        0
    };
    for _ in 0..halvings {
        let Some(overflow) = shared_overflow(parsed, kernel, block, work, deadline) else {
            break;
        };
        let Some(halved) = block.halved(usize::from(block[1] > 1)) else {
            break;
        };
        block = halved;
        source = format!("assumed block {block}: {inferred} {why} runs {overflow}");
    }
    KnownShape {
        block: Some(block),
        grid: shape.grid,
        source,
        assumed: true,
    }
}

/// Most instructions of all launches tried while looking for a block the
/// kernel's shared arrays fit, when the command gives no allowance of its
/// own (the deterministic work limit: a launch cut by it ends the
/// halving).
pub const FIT_STEPS: u64 = 20_000_000;

/// What the lint calls the block fit, when the work limit stops it.
pub const FIT: &str = "the block fit";

/// Wall-clock safety net for finding a block the shared arrays fit.
const FIT_WALL_CLOCK: Duration = Duration::from_secs(20);

/// Most halvings of an inferred block.
const MAX_HALVINGS: usize = 6;

/// Where the original, on the smallest launch synthesized around `block`,
/// accesses a `__shared__` array out of bounds ("out of bounds at line
/// 18 (`tile[1024]`)"); `None` when it does not.
fn shared_overflow(
    parsed: &ParsedFile,
    kernel: &Kernel,
    block: Dims,
    work: &Arc<Work>,
    deadline: Option<Instant>,
) -> Option<String> {
    let e = runs_on_block(kernel, block, work, deadline).err()??;
    if e.message.starts_with(copper::sim::WORK_LIMIT) {
        work.note_stop(FIT);
        return None;
    }
    let shared = kernel.arrays.iter().filter(|a| a.is_shared()).find(|a| {
        e.message
            .starts_with(&format!("out-of-bounds access `{}[", a.name))
    })?;
    let (line, _) = parsed.source.line_col(e.span.start);
    let element = e
        .message
        .split('`')
        .nth(1)
        .map_or_else(|| shared.name.clone(), str::to_string);
    Some(format!("out of bounds at line {line} (`{element}`)"))
}

/// Why a parameter file cannot be used: the file, and the reason.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}: {reason}", path.shown())]
#[non_exhaustive]
pub struct ParamsError {
    /// The file.
    pub path: PathBuf,
    /// Why it cannot be used.
    #[source]
    pub reason: ParamsReason,
}

/// Why a parameter file cannot be used.
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParamsReason {
    /// The file cannot be read.
    #[error("cannot read parameter file: {0}")]
    Read(#[source] Arc<InputFileError>),
    /// Its text is not a valid parameter file.
    #[error("invalid parameter file: {0}")]
    Invalid(#[source] copper::sim::params::ParamsError),
}

/// The parameter file of `file`: `explicit` when given (an error when it
/// cannot be read), else `file` with the extension `.toml` when it exists.
pub fn read_params(file: &Path, explicit: Option<&Path>) -> Result<Option<ParamFile>, ParamsError> {
    match explicit {
        Some(path) => read_param_file(path).map(Some),
        None => {
            let path = file.with_extension("toml");
            match read_input_text(&path) {
                Ok(text) => parse_params(path, &text).map(Some),
                Err(e) if e.is_not_found() => Ok(None),
                Err(e) => Err(ParamsError {
                    path,
                    reason: ParamsReason::Read(Arc::new(e)),
                }),
            }
        }
    }
}

/// The parameter file at `path`, which must exist.
pub fn read_param_file(path: &Path) -> Result<ParamFile, ParamsError> {
    match read_input_text(path) {
        Ok(text) => parse_params(path.to_path_buf(), &text),
        Err(e) => Err(ParamsError {
            path: path.to_path_buf(),
            reason: ParamsReason::Read(Arc::new(e)),
        }),
    }
}

/// The parameter file `path` holds `text`.
fn parse_params(path: PathBuf, text: &str) -> Result<ParamFile, ParamsError> {
    ParamFile::from_toml(text).map_err(|e| ParamsError {
        path,
        reason: ParamsReason::Invalid(e),
    })
}

/// Why a parameter file's launch cannot run.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LaunchError {
    /// Its shape is refused.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// Its arguments or arrays do not fit the kernel.
    #[error(transparent)]
    Inputs(#[from] InputError),
}

/// Checks a parameter file's launch of `kernel` as the simulator reads it
/// (shape, every argument given and in its type's range, every array
/// described), without filling any array, and whatever its size (a
/// benchmark runs on a GPU, beyond what the simulator takes).
pub fn check_launch(kernel: &copper::ir::Kernel, spec: &LaunchSpec) -> Result<(), LaunchError> {
    spec.shape()?;
    let mut empty = spec.clone();
    empty.grid = vec![1, 1, 1];
    for a in empty.arrays.values_mut() {
        a.len = 0;
    }
    copper::sim::inputs_from_spec(kernel, &empty)?;
    Ok(())
}

/// The launches a kernel's candidates are checked on, and what copper
/// assumed to build them (printed once per kernel, and in JSON).
#[derive(Clone, Debug, PartialEq)]
pub struct TestPlan {
    /// The launch the checks vary (the parameter file's, or the one the
    /// host code gives); `None`: launches synthesized around `block`.
    pub spec: Option<LaunchSpec>,
    /// Block of the synthesized launches.
    pub block: Option<Dims>,
    /// Where the launch came from, and every assumption made.
    pub assumptions: Vec<String>,
    /// Whether the parameter file's launch was scaled down for testing
    /// ([`copper::sim::scale`]).
    pub scaled: bool,
}

/// Plans the test launches of `kernel` (lowered): the parameter file's
/// launch `param`; else the launch the host code before a `<<<…>>>` site
/// of the kernel evaluates to (its `includer`'s for a header's kernel);
/// else a launch inferred from the kernel
/// alone, around `shape`'s block when known.
pub fn test_plan(
    parsed: &ParsedFile,
    kernel: &Kernel,
    param: Option<&LaunchSpec>,
    shape: &KnownShape,
    includer: Option<&Includer>,
) -> TestPlan {
    if let Some(p) = param {
        let scaled = copper::sim::scale::for_testing(kernel, p);
        let assumption = match scaled.changes.is_empty() {
            true => "tested on the parameter file's launch and variants of it".to_string(),
            false => format!(
                "tested on the parameter file's launch scaled down ({}) and variants of it",
                scaled.changes.join(", ")
            ),
        };
        return TestPlan {
            spec: Some(scaled.spec),
            block: shape.block,
            assumptions: vec![assumption],
            scaled: !scaled.changes.is_empty(),
        };
    }
    let mut assumptions = Vec::new();
    let (launches, of) = sites(parsed, includer);
    if let Some(l) = launches.iter().find(|l| l.kernel == kernel.name) {
        let line = format!("{}{of}", l.line);
        match (refused_shape(l), &l.test) {
            (Some(why), _) => assumptions.push(format!(
                "the launch at line {line} is not one CUDA runs ({why}); launch inferred instead"
            )),
            (None, Some(t)) => match host_spec(kernel, t) {
                Ok((spec, notes)) => {
                    let mut a = vec![format!(
                        "tested on the launch at line {line} (grid {}, block {}) and variants of it",
                        dims(t.host.grid),
                        dims(t.host.block)
                    )];
                    a.extend(notes);
                    return TestPlan {
                        spec: Some(spec),
                        block: shape.block,
                        assumptions: a,
                        scaled: false,
                    };
                }
                Err(why) => assumptions.push(format!(
                    "the launch at line {line} could not be used ({why}); launch inferred instead"
                )),
            },
            (None, None) => assumptions.push(format!(
                "the launch at line {line} could not be evaluated from the host code before it; launch inferred instead"
            )),
        }
    }
    let block = match shape.block {
        Some(b) if shape.assumed => {
            assumptions.push(shape.source.clone());
            b
        }
        Some(b) => {
            assumptions.push(format!("block {b} from {}", shape.source));
            b
        }
        None => {
            let (b, why) = infer_block(parsed, kernel);
            assumptions.push(format!("assumed block {b} {why}"));
            b
        }
    };
    assumptions.push(
        "arrays of random data, grown until every access of the original is in bounds (and one launch with them shrunk to what it accesses); integer arguments chosen so the last block is partial".into(),
    );
    TestPlan {
        spec: None,
        block: Some(block),
        assumptions,
        scaled: false,
    }
}

/// Why the host code's launch of a kernel cannot be tested on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostLaunchError {
    /// It passes another number of arguments than the kernel takes.
    #[error("it passes {passed} arguments, the kernel takes {takes}")]
    Arguments {
        /// Arguments passed.
        passed: usize,
        /// Parameters taken.
        takes: usize,
    },
    /// An integer argument the host code does not determine.
    #[error("argument `{name}` (`{text}`) could not be evaluated")]
    NotEvaluated {
        /// The parameter.
        name: String,
        /// The argument as written.
        text: String,
    },
    /// A struct passed by value.
    #[error("argument `{name}` (`{text}`) is a struct passed by value, whose fields copper does not follow in host code")]
    Struct {
        /// The parameter.
        name: String,
        /// The argument as written.
        text: String,
    },
    /// Part of the launch (grid, block, dynamic shared memory) is not
    /// known.
    #[error("its {0} is not known")]
    Unknown(&'static str),
}

/// The parameter-file launch the host code's test launch `t` gives
/// `kernel`, with notes on what copper cut or assumed; an error when an
/// integer argument cannot be evaluated or the arguments do not match.
fn host_spec(
    kernel: &Kernel,
    t: &TestLaunch,
) -> Result<(LaunchSpec, Vec<String>), HostLaunchError> {
    let h = &t.host;
    if h.args.len() != kernel.params.len() {
        return Err(HostLaunchError::Arguments {
            passed: h.args.len(),
            takes: kernel.params.len(),
        });
    }
    let mut notes: Vec<String> = t
        .cut
        .iter()
        .map(|(name, was, now)| format!("`{name}` = {was} cut to {now} for testing"))
        .collect();
    let mut args = BTreeMap::new();
    let mut arrays = BTreeMap::new();
    for (i, (p, arg)) in kernel.params.iter().zip(&h.args).enumerate() {
        match p {
            Param::Scalar(v) => {
                let var = &kernel.vars[*v];
                let value = match arg.value {
                    Some(x) => x as f64,
                    None if var.ty.is_float() => {
                        notes.push(format!("assumed `{}` = 1.5 (`{}`)", var.name, arg.text));
                        1.5
                    }
                    None => {
                        return Err(HostLaunchError::NotEvaluated {
                            name: var.name.clone(),
                            text: arg.text.clone(),
                        })
                    }
                };
                args.insert(var.name.clone(), value);
            }
            Param::Record { name, .. } => {
                return Err(HostLaunchError::Struct {
                    name: name.clone(),
                    text: arg.text.clone(),
                })
            }
            Param::Array(a) => {
                let arr = &kernel.arrays[*a];
                let len = match arg.bytes {
                    Some(b) => b / u64::from(arr.layout.size).max(1),
                    None => {
                        notes.push(format!(
                            "the length of `{}` is not known from the host code: {} elements assumed",
                            arr.name, UNKNOWN_LEN
                        ));
                        UNKNOWN_LEN
                    }
                };
                let mut spec = random_array(arr, len, 1 + i as u64);
                spec.len_expr = t
                    .bytes_of
                    .get(i)
                    .cloned()
                    .flatten()
                    .and_then(|b| length_expr(kernel, &b, arr.layout.size));
                arrays.insert(arr.name.clone(), spec);
            }
        }
    }
    // A length written as an expression must give the length tested.
    for a in arrays.values_mut() {
        if let Some(e) = &a.len_expr {
            if copper::sim::size_expr::eval(e, &args) != Ok(a.len) {
                a.len_expr = None;
            }
        }
    }
    let spec = LaunchSpec {
        grid: h.grid.ok_or(HostLaunchError::Unknown("grid"))?.to_vec(),
        block: h.block.ok_or(HostLaunchError::Unknown("block"))?.to_vec(),
        shared_bytes: h
            .shared_bytes
            .ok_or(HostLaunchError::Unknown("dynamic shared memory size"))?,
        args,
        arrays,
        defines: Default::default(),
    };
    Ok((spec, notes))
}

/// The length of an array of `elem`-byte elements whose allocation is
/// `b` bytes, as an expression of the kernel's integer parameters
/// (`rows * cols`, `2 * n`); `None` when the bytes are not a whole number
/// of elements per unit or an argument is not an integer parameter.
fn length_expr(kernel: &Kernel, b: &BytesOf, elem: u32) -> Option<String> {
    let elem = u64::from(elem).max(1);
    if !b.factor.is_multiple_of(elem) {
        return None;
    }
    let per = b.factor / elem;
    let mut terms: Vec<String> = Vec::new();
    if per != 1 {
        terms.push(per.to_string());
    }
    for &i in &b.args {
        let Some(Param::Scalar(v)) = kernel.params.get(i) else {
            return None;
        };
        let var = &kernel.vars[*v];
        if var.ty.is_float() {
            return None;
        }
        terms.push(var.name.clone());
    }
    Some(terms.join(" * "))
}

/// Elements given to an array whose allocation copper cannot see.
const UNKNOWN_LEN: u64 = 1 << 16;

/// The block a kernel without a known launch is assumed to run with, and
/// why: the shape of a `__shared__` tile indexed by the thread index
/// (`As[threadIdx.y][threadIdx.x]` on a `[16][16]` tile ⇒ 16×16, a
/// padded `[32][33]` row ⇒ 32 wide); else the constants the thread index
/// is compared against (`if (tx < TILE)` ⇒ `TILE` wide); else 16×16 for a
/// kernel using `threadIdx.y` or `blockIdx.y`, 256 otherwise.
pub fn infer_block(parsed: &ParsedFile, kernel: &Kernel) -> (Dims, String) {
    if let Some(found) = shared_tile(parsed, kernel) {
        return found;
    }
    let two_d = uses(kernel, Builtin::ThreadIdx(1)) || uses(kernel, Builtin::BlockIdx(1));
    if let Some(found) = compared(parsed, kernel, two_d) {
        return found;
    }
    if two_d {
        (DEFAULT_2D, "(the kernel indexes in two dimensions)".into())
    } else {
        (
            DEFAULT_1D,
            "(the default for a one-dimensional kernel)".into(),
        )
    }
}

/// The block assumed for a kernel that indexes in two dimensions.
const DEFAULT_2D: Dims = Dims::block_constant([16, 16, 1]);

/// The block assumed for a one-dimensional kernel.
const DEFAULT_1D: Dims = Dims::block_constant([256, 1, 1]);

/// `X×Y×Z` of a launch site's grid or block as the host code evaluates
/// it (1×1×1 when not known), before it is checked against CUDA's limits.
fn dims(d: Option<[u64; 3]>) -> String {
    let [x, y, z] = d.unwrap_or([1; 3]);
    format!("{x}×{y}×{z}")
}

/// The block a `__shared__` array indexed `threadIdx.x + c·threadIdx.y`
/// (`c` its row length) gives, and where.
fn shared_tile(parsed: &ParsedFile, kernel: &Kernel) -> Option<(Dims, String)> {
    let (jump_free, flags) = without_jumps(kernel);
    let launch = LaunchFacts {
        block: None,
        grid: None,
        warp: 32,
    };
    let deps = deps::analyze_with_flags(&jump_free, &launch, &flags);
    for (i, site) in kernel.sites.iter().enumerate() {
        let arr = &kernel.arrays[site.array];
        if !arr.is_shared() || site.span.is_synthetic() {
            continue;
        }
        let Some(Dep::Affine([Coef::Known(cx), Coef::Known(cy), Coef::Known(0)], cong)) =
            deps.index.get(&i).copied()
        else {
            continue;
        };
        if cx != 1 {
            continue;
        }
        // A 2-D tile may be entered at a whole row (`tile[threadIdx.y +
        // j][threadIdx.x]`).
        let whole_rows = |cols: u64| {
            cong.residue() == 0
                && (cong.modulus() == 0 || (cong.modulus() as u64).is_multiple_of(cols))
        };
        let block = match (arr.dims.as_slice(), cy) {
            ([n], 0) if cong.value() == Some(0) => [*n, 1, 1],
            ([rows, cols], c) if c as u64 == *cols && whole_rows(*cols) => {
                [floor_pow2(*cols), *rows, 1]
            }
            _ => continue,
        };
        let Ok(block) = copper::launch::block(block) else {
            continue;
        };
        let (line, _) = parsed.source.line_col(site.span.start);
        return Some((
            block,
            format!("from `{}` at line {line}", parsed.source.slice(site.span)),
        ));
    }
    None
}

/// The block the kernel's comparisons of `threadIdx.x` and `threadIdx.y`
/// (or a local assigned only from one) against constants give, the
/// largest per dimension (`tid < 128` ⇒ 128 wide, `<=` one more), and the
/// first test that gave it; a dimension nothing bounds stays at the
/// default (16 in a two-dimensional kernel, kept within 1024 threads).
fn compared(parsed: &ParsedFile, kernel: &Kernel, two_d: bool) -> Option<(Dims, String)> {
    let mut assigned: HashMap<VarId, Vec<&Expr>> = HashMap::new();
    visit_stmts(&kernel.body, &mut |s| {
        if let Stmt::Assign { var, value, .. } = s {
            assigned.entry(*var).or_default().push(value);
        }
    });
    // The dimension of the thread index `e` is, directly or through a
    // local assigned once.
    let dim_of = |e: &Expr| -> Option<u8> {
        let e = unconverted(e);
        match &e.kind {
            ExprKind::Builtin(Builtin::ThreadIdx(d)) if *d < 2 => Some(*d),
            ExprKind::Var(v) => match assigned.get(v).map(Vec::as_slice) {
                Some([value]) => match unconverted(value).kind {
                    ExprKind::Builtin(Builtin::ThreadIdx(d)) if d < 2 => Some(d),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    };
    let mut bound: [Option<(u64, Span)>; 2] = [None, None];
    visit_stmts(&kernel.body, &mut |s| {
        let (cond, span) = match s {
            Stmt::If { cond, span, .. } => (cond, *span),
            Stmt::Loop {
                cond: Some(cond),
                span,
                ..
            } => (cond, *span),
            _ => return,
        };
        cond.visit(&mut |e| {
            let ExprKind::Binary(op, l, r) = &e.kind else {
                return;
            };
            // `tid < c`, `tid <= c`, `c > tid`, `c >= tid`.
            let (d, c, inclusive) = match (op, dim_of(l), constant(r), dim_of(r), constant(l)) {
                (BinOp::Lt, Some(d), Some(c), ..) | (BinOp::Gt, _, _, Some(d), Some(c)) => {
                    (d, c, false)
                }
                (BinOp::Le, Some(d), Some(c), ..) | (BinOp::Ge, _, _, Some(d), Some(c)) => {
                    (d, c, true)
                }
                _ => return,
            };
            let n = if inclusive { c + 1 } else { c };
            if !(1..=MAX_BLOCK_THREADS as i64).contains(&n) {
                return;
            }
            let slot = &mut bound[d as usize];
            if slot.is_none_or(|(m, _)| (n as u64) > m) {
                *slot = Some((n as u64, span));
            }
        });
    });
    let (x, y) = (bound[0].map(|b| b.0), bound[1].map(|b| b.0));
    let block = match (x, y, two_d || y.is_some()) {
        (None, None, _) => return None,
        (Some(x), None, false) => [x, 1, 1],
        (Some(x), None, true) => [x, (MAX_BLOCK_THREADS / x).min(16), 1],
        (None, Some(y), _) => [(MAX_BLOCK_THREADS / y).min(16), y, 1],
        (Some(x), Some(y), _) => [x, y, 1],
    };
    let block = copper::launch::block(block).ok()?;
    let tests: Vec<String> = bound
        .iter()
        .flatten()
        .map(|(_, span)| {
            let (line, _) = parsed.source.line_col(span.start);
            format!("`{}` at line {line}", parsed.source.line_text(line).trim())
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    Some((
        block,
        format!(
            "from the thread index compared with constants in {}",
            tests.join(" and ")
        ),
    ))
}

/// `e` without implicit or explicit conversions.
fn unconverted(mut e: &Expr) -> &Expr {
    while let ExprKind::Convert { value, .. } = &e.kind {
        e = value;
    }
    e
}

/// The integer constant `e` is, when it is one.
fn constant(e: &Expr) -> Option<i64> {
    match &unconverted(e).kind {
        ExprKind::Const(v) if !e.ty.is_float() => Some(v.as_i64()),
        _ => None,
    }
}

/// The largest power of two at most `n` (`n` ≥ 1).
fn floor_pow2(n: u64) -> u64 {
    1 << (63 - n.max(1).leading_zeros())
}
