//! Padding a shared array's rows (beyond COpPER): `tile[32][32]` becomes
//! `tile[32][32 + 1]`, so the elements of a column, 32 words apart
//! before, are 33 words apart and fall in 32 different banks; reading a
//! column (the transposed read of a tiled transpose) is then free of bank
//! conflicts. The logical elements stay where they were: only the layout
//! changes, so the array must be used only as `tile[i][j]` with every
//! index given (never decayed to a pointer, passed on, or its address
//! taken). Rows whose length in 4-byte words is odd already spread over
//! the banks and are left alone. Whether the padding pays off is for the
//! cost analysis to say (the `conflicts` metric). The padding must fit
//! beside the kernel's shared memory and the launches' dynamic shared
//! memory ([`crate::shared_budget`]).

use copper::cuda::ast::{BinOp, Expr, ExprKind, Function, Space, StmtKind, UnOp};

use crate::ast_util::{self, bin, int, FileConstants};
use crate::shared_budget;
use crate::{Candidate, Context, Proposals, Refusal, Skip, Transform};

/// Shared-memory row padding.
pub struct PadShared;

impl Transform for PadShared {
    fn name(&self) -> &'static str {
        "shared-memory padding"
    }

    fn propose(&self, cx: &Context) -> Proposals {
        let mut out = Proposals::default();
        let f = cx.function;
        let used = shared_budget::in_use(cx, "its padding");
        let constants = FileConstants::of(cx.file).with_locals(f);
        let mut arrays = Vec::new();
        for s in &f.body {
            ast_util::visit_stmts(s, &mut |x| {
                if let StmtKind::Decl(ds) = &x.kind {
                    arrays.extend(
                        ds.iter()
                            .filter(|d| d.space == Space::Shared && d.dims.len() >= 2)
                            .cloned(),
                    );
                }
            });
        }
        for d in arrays {
            let line = cx.line(d.meta.span);
            let skip = |why: String| Skip {
                span: d.meta.span,
                reason: format!("`{}` (line {line}) is not padded: {why}", d.name),
            };
            let dims: Option<Vec<u64>> = d
                .dims
                .iter()
                .map(|e| e.as_ref().and_then(|e| constants.value(e)))
                .collect();
            let Some(dims) = dims else {
                out.skipped.push(skip("its sizes are not constants".into()));
                continue;
            };
            let Some(elem) = d.ty.base.size_bytes().filter(|_| !d.ty.is_pointer()) else {
                out.skipped.push(skip("its element size is unknown".into()));
                continue;
            };
            let row = dims[dims.len() - 1];
            let Some(row_bytes) = row.checked_mul(u64::from(elem)) else {
                out.skipped
                    .push(skip("its rows are too large to count".into()));
                continue;
            };
            if row_bytes.div_ceil(4) % 2 == 1 {
                continue;
            }
            let padding = dims[..dims.len() - 1]
                .iter()
                .try_fold(u64::from(elem), |bytes, &d| bytes.checked_mul(d));
            let Some(padding) = padding else {
                out.skipped
                    .push(skip("it has too many rows to count".into()));
                continue;
            };
            if let Some(why) = used.refusal("its padding", padding) {
                out.skipped.push(skip(why));
                continue;
            }
            if let Err(why) = indexed_fully(f, &d.name, dims.len()) {
                out.skipped.push(skip(why.to_string()));
                continue;
            }
            if redeclared(f, &d.name) {
                out.skipped
                    .push(skip("another variable has its name".into()));
                continue;
            }
            out.candidates.push(Candidate::new(
                self.name(),
                pad(f, &d.name),
                format!(
                    "padded the rows of shared array `{}` from {row} to {} elements, so the elements of a column fall in different banks",
                    d.name,
                    row + 1
                ),
            ));
        }
        out
    }
}

/// Whether `name` appears only as `name[i]…[k]` with `depth` indices.
fn indexed_fully(f: &Function, name: &str, depth: usize) -> Result<(), Refusal> {
    fn check(e: &Expr, name: &str, depth: usize) -> Result<(), Refusal> {
        if let Some((base, n)) = index_chain(e) {
            if matches!(&base.kind, ExprKind::Ident(b) if b == name) {
                if n != depth {
                    return Err("it is indexed with fewer indices than it has dimensions".into());
                }
                let mut x = e;
                while let ExprKind::Index(b, i) = &x.kind {
                    check(i, name, depth)?;
                    x = b;
                }
                return Ok(());
            }
        }
        match &e.kind {
            ExprKind::Ident(n) if n == name => {
                Err("it is used as a pointer (passed on, or its address taken)".into())
            }
            ExprKind::Unary(UnOp::AddrOf, x) if ast_util::root_name(x) == Some(name) => {
                Err("its address is taken".into())
            }
            _ => ast_util::children(e)
                .into_iter()
                .try_for_each(|c| check(c, name, depth)),
        }
    }
    let mut result = Ok(());
    for s in &f.body {
        ast_util::visit_stmt_roots(s, &mut |e| {
            if result.is_ok() {
                result = check(e, name, depth);
            }
        });
    }
    result
}

/// The innermost base of `a[i][j]…` and the number of indices.
fn index_chain(e: &Expr) -> Option<(&Expr, usize)> {
    let ExprKind::Index(first, _) = &e.kind else {
        return None;
    };
    let mut base: &Expr = first;
    let mut n = 1;
    while let ExprKind::Index(b, _) = &base.kind {
        base = b;
        n += 1;
    }
    Some((base, n))
}

/// Whether `name` is declared more than once in the kernel.
fn redeclared(f: &Function, name: &str) -> bool {
    let mut count = f.params.iter().filter(|p| p.name == name).count();
    for s in &f.body {
        ast_util::visit_stmts(s, &mut |x| {
            if let StmtKind::Decl(ds) = &x.kind {
                count += ds.iter().filter(|d| d.name == name).count();
            }
        });
    }
    count > 1
}

/// The kernel with the last dimension of shared array `name` one longer.
fn pad(f: &Function, name: &str) -> Function {
    let mut g = f.clone();
    for s in &mut g.body {
        ast_util::visit_stmts_mut(s, &mut |x| {
            if let StmtKind::Decl(ds) = &mut x.kind {
                for d in ds.iter_mut().filter(|d| d.name == name) {
                    if let Some(Some(last)) = d.dims.last_mut() {
                        *last = bin(BinOp::Add, last.clone(), int(1));
                    }
                }
            }
        });
    }
    g
}

/// The rewrite before and after, and the kernels it leaves alone with the
/// exact reason ([`crate::fixture`]).
#[cfg(test)]
mod tests {
    use super::PadShared;
    use crate::fixture::{check, check_not_applicable};

    #[test]
    fn a_transposed_tile_gets_one_more_column() {
        let desc = check(
            &PadShared,
            [32, 32, 1],
            r#"#define TILE 32

__global__ void transpose(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float tile[TILE][TILE];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) {
        tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) {
        out[y * n + x] = tile[threadIdx.x][threadIdx.y];
    }
}
"#,
            r#"#define TILE 32

__global__ void transpose(const float *__restrict__ in, float *__restrict__ out, int n) {
    __shared__ float tile[TILE][TILE + 1];
    int x = blockIdx.x * TILE + threadIdx.x;
    int y = blockIdx.y * TILE + threadIdx.y;
    if (x < n && y < n) {
        tile[threadIdx.y][threadIdx.x] = in[y * n + x];
    }
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    if (x < n && y < n) {
        out[y * n + x] = tile[threadIdx.x][threadIdx.y];
    }
}
"#,
        );
        assert_eq!(
        desc,
        "padded the rows of shared array `tile` from 32 to 33 elements, so the elements of a column fall in different banks"
    );
    }

    #[test]
    fn a_tile_of_doubles_with_size_t_indices_is_padded() {
        let desc = check(
            &PadShared,
            [16, 16, 1],
            r#"// A 16x16 tile of doubles: each row is 32 words long.
__global__ void transpose_f64(const double *in, double *out, size_t rows, size_t cols) {
    __shared__ double tile[16][16];
    size_t c = static_cast<size_t>(blockIdx.x) * 16 + threadIdx.x;
    size_t r = static_cast<size_t>(blockIdx.y) * 16 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    c = static_cast<size_t>(blockIdx.y) * 16 + threadIdx.x;
    r = static_cast<size_t>(blockIdx.x) * 16 + threadIdx.y;
    if (r < cols && c < rows) out[r * rows + c] = tile[threadIdx.x][threadIdx.y];
}
"#,
            r#"// A 16x16 tile of doubles: each row is 32 words long.
__global__ void transpose_f64(const double *in, double *out, size_t rows, size_t cols) {
    __shared__ double tile[16][16 + 1];
    size_t c = static_cast<size_t>(blockIdx.x) * 16 + threadIdx.x;
    size_t r = static_cast<size_t>(blockIdx.y) * 16 + threadIdx.y;
    if (r < rows && c < cols) tile[threadIdx.y][threadIdx.x] = in[r * cols + c];
    __syncthreads();
    c = static_cast<size_t>(blockIdx.y) * 16 + threadIdx.x;
    r = static_cast<size_t>(blockIdx.x) * 16 + threadIdx.y;
    if (r < cols && c < rows) out[r * rows + c] = tile[threadIdx.x][threadIdx.y];
}
"#,
        );
        assert_eq!(
        desc,
        "padded the rows of shared array `tile` from 16 to 17 elements, so the elements of a column fall in different banks"
    );
    }

    #[test]
    fn atomics_on_shared_bins_take_their_address() {
        check_not_applicable(
            &PadShared,
            [32, 8, 1],
            r#"// Bins of a per-block histogram, updated atomically: their addresses are taken.
__global__ void histogram(const unsigned char *data, unsigned int *bins, int n) {
    __shared__ unsigned int local[8][32];
    local[threadIdx.y][threadIdx.x] = 0u;
    __syncthreads();
    int i = blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&local[data[i] / 32 % 8][data[i] % 32], 1u);
    }
    __syncthreads();
    atomicAdd(&bins[threadIdx.y * 32 + threadIdx.x], local[threadIdx.y][threadIdx.x]);
}
"#,
            "`local` (line 3) is not padded: its address is taken",
        );
    }

    #[test]
    fn a_tile_that_would_overflow_shared_memory_stays() {
        check_not_applicable(
            &PadShared,
            [32, 8, 1],
            r#"#define ROWS 64
#define COLS 192
__global__ void big_tile(const float *in, float *out) {
    __shared__ float tile[ROWS][COLS];
    for (int r = threadIdx.y; r < ROWS; r += 8)
        for (int c = threadIdx.x; c < COLS; c += 32)
            tile[r][c] = in[(blockIdx.x * ROWS + r) * COLS + c];
    __syncthreads();
    out[blockIdx.x * 256 + threadIdx.y * 32 + threadIdx.x] = tile[threadIdx.x][threadIdx.y];
}
"#,
            "`tile` (line 4) is not padded: its padding takes 256 bytes, and with the kernel's 49152 bytes of shared memory more than 49152",
        );
    }
}
