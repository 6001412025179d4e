//! CUDA's launch limits, and a launch shape checked against them.
//!
//! The one place the limits are written down: the command line's
//! `--block` and `--grid`, `copper.toml`, parameter files and the
//! `<<<grid, block>>>` launches of a file all become a [`Shape`] through
//! [`Shape::checked`] (or a block or grid alone, a [`Dims`], through
//! [`Dims::checked`]), and the analyses that assume the largest launch CUDA allows read the
//! constants here. A refused shape is a [`ShapeError`] that names the
//! limit it breaks.

use std::fmt;

/// Threads in a warp on NVIDIA GPUs (the hardware model's default; a
/// `copper.toml` may model another).
pub const WARP_SIZE: u64 = 32;

/// Most threads in one block (`blockDim.x · blockDim.y · blockDim.z`).
pub const MAX_BLOCK_THREADS: u64 = 1024;

/// Largest `blockDim` along x, y and z: 1024, 1024 and 64.
pub const MAX_BLOCK_DIM: [u64; 3] = [MAX_BLOCK_THREADS, MAX_BLOCK_THREADS, 64];

/// Most bytes of static `__shared__` memory one block may declare (48 KiB;
/// more needs dynamic shared memory and an opt-in at run time).
pub const MAX_STATIC_SHARED_BYTES: u64 = 48 * 1024;

/// Largest `gridDim` along x, y and z: 2^31 − 1, 65535 and 65535.
pub const MAX_GRID_DIM: [u64; 3] = [(1 << 31) - 1, 65535, 65535];

/// The two halves of a launch shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// `gridDim`: blocks in the grid.
    Grid,
    /// `blockDim`: threads in a block.
    Block,
}

impl Part {
    /// `grid` or `block`, as parameter files and options name it.
    pub fn name(self) -> &'static str {
        match self {
            Part::Grid => "grid",
            Part::Block => "block",
        }
    }
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why a launch shape is refused: the limit it breaks.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ShapeError {
    /// A dimension is 0, so the launch has no thread.
    #[error("the launch has 0 threads: {part}.{} is 0 (every dimension is at least 1)", axis_name(*.axis))]
    NoThreads {
        /// The grid or the block.
        part: Part,
        /// The dimension that is 0 (0 for x).
        axis: u8,
    },
    /// A block dimension beyond [`MAX_BLOCK_DIM`].
    #[error("a block of {} threads is more than CUDA allows ({} = {}; at most {})", dims(*.block), axis_name(*.axis), .block[usize::from(*.axis)], MAX_BLOCK_DIM[usize::from(*.axis)])]
    BlockDim {
        /// The block.
        block: [u64; 3],
        /// The dimension too large (0 for x).
        axis: u8,
    },
    /// More than [`MAX_BLOCK_THREADS`] threads in a block.
    #[error("a block of {} threads is more than CUDA allows ({} threads; at most {MAX_BLOCK_THREADS} a block)", dims(*.block), threads(*.block))]
    BlockThreads {
        /// The block.
        block: [u64; 3],
    },
    /// A grid dimension beyond [`MAX_GRID_DIM`].
    #[error("a grid of {} blocks is more than CUDA allows ({} = {}; at most {})", dims(*.grid), axis_name(*.axis), .grid[usize::from(*.axis)], MAX_GRID_DIM[usize::from(*.axis)])]
    GridDim {
        /// The grid.
        grid: [u64; 3],
        /// The dimension too large (0 for x).
        axis: u8,
    },
    /// A `grid` or `block` list (of a parameter file, `copper.toml`) with
    /// no or too many dimensions.
    #[error("`{part}` must have 1 to 3 dimensions, got {got}")]
    Dimensions {
        /// The grid or the block.
        part: Part,
        /// How many it has.
        got: usize,
    },
}

error_message!(ShapeError);

/// The threads of a block, computed without wrapping around.
const fn threads(block: [u64; 3]) -> u128 {
    block[0] as u128 * block[1] as u128 * block[2] as u128
}

/// `x`, `y` or `z`.
fn axis_name(axis: u8) -> &'static str {
    ["x", "y", "z"][usize::from(axis.min(2))]
}

/// `X×Y×Z` of dimensions not (yet) checked, as refusals print them.
fn dims(d: [u64; 3]) -> String {
    format!("{}×{}×{}", d[0], d[1], d[2])
}

/// A block or a grid within CUDA's limits: every dimension at least 1, a
/// block within [`MAX_BLOCK_DIM`] and [`MAX_BLOCK_THREADS`], a grid within
/// [`MAX_GRID_DIM`]. Only [`Dims::checked`] makes one (or
/// [`Dims::halved`] from one), so a `Dims` the
/// analyses receive needs no check for zero or for the limits. It prints
/// as `X×Y×Z` and serializes as `[x, y, z]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Dims([u64; 3]);

impl Dims {
    /// One thread (or one block).
    pub const ONE: Dims = Dims([1, 1, 1]);

    /// The block of the launches synthesized for a kernel whose block is
    /// not known: 64 threads along x.
    pub const SYNTHESIZED_BLOCK: Dims = Dims::block_constant([64, 1, 1]);

    /// A block written in copper's code, checked when copper is compiled:
    /// only for constants (`const B: Dims = Dims::block_constant(…)`),
    /// where a block CUDA refuses fails the build.
    pub const fn block_constant(d: [u64; 3]) -> Dims {
        match Dims::checked(Part::Block, d) {
            Ok(b) => b,
            Err(_) => panic!("a constant block CUDA refuses"),
        }
    }

    /// Checks `d` as the `part` of a launch against CUDA's limits. A
    /// block's product is computed without wrapping around, so no block
    /// passes as a small one.
    pub const fn checked(part: Part, d: [u64; 3]) -> Result<Dims, ShapeError> {
        let mut axis = 0;
        while axis < 3 {
            if d[axis] == 0 {
                return Err(ShapeError::NoThreads {
                    part,
                    axis: axis as u8,
                });
            }
            axis += 1;
        }
        match part {
            Part::Block => {
                if let Some(axis) = over(d, MAX_BLOCK_DIM) {
                    return Err(ShapeError::BlockDim { block: d, axis });
                }
                if threads(d) > MAX_BLOCK_THREADS as u128 {
                    return Err(ShapeError::BlockThreads { block: d });
                }
            }
            Part::Grid => {
                if let Some(axis) = over(d, MAX_GRID_DIM) {
                    return Err(ShapeError::GridDim { grid: d, axis });
                }
            }
        }
        Ok(Dims(d))
    }

    /// Dimension x.
    pub fn x(self) -> u64 {
        self.0[0]
    }

    /// Dimension y.
    pub fn y(self) -> u64 {
        self.0[1]
    }

    /// Dimension z.
    pub fn z(self) -> u64 {
        self.0[2]
    }

    /// `[x, y, z]`, for arithmetic over the dimensions.
    pub fn to_array(self) -> [u64; 3] {
        self.0
    }

    /// The product of the dimensions: threads of a block, blocks of a
    /// grid (at most 2^63 for a grid, so it cannot overflow).
    pub fn count(self) -> u64 {
        self.0.iter().product()
    }

    /// The block with dimension `axis` halved (rounded down), `None` when
    /// it is 1: fewer threads along one dimension stay within every limit.
    pub fn halved(self, axis: usize) -> Option<Dims> {
        let mut d = self.0;
        let a = axis.min(2);
        (d[a] > 1).then(|| {
            d[a] /= 2;
            Dims(d)
        })
    }
}

/// Dimension `axis`: 0 for x, 1 for y, 2 for z (read only, so a `Dims`
/// stays within its limits).
impl std::ops::Index<usize> for Dims {
    type Output = u64;

    fn index(&self, axis: usize) -> &u64 {
        &self.0[axis]
    }
}

impl fmt::Display for Dims {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&dims(self.0))
    }
}

/// A launch shape within CUDA's limits: a grid and a block, each a
/// [`Dims`] checked as such. Only [`Shape::checked`] and
/// [`Shape::from_lists`] make one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    grid: Dims,
    block: Dims,
}

impl Shape {
    /// Checks a launch against CUDA's limits, the block first.
    pub fn checked(grid: [u64; 3], block: [u64; 3]) -> Result<Shape, ShapeError> {
        let block = Dims::checked(Part::Block, block)?;
        let grid = Dims::checked(Part::Grid, grid)?;
        Ok(Shape { grid, block })
    }

    /// A shape of a grid and a block already checked.
    pub fn new(grid: Dims, block: Dims) -> Shape {
        Shape { grid, block }
    }

    /// A shape from the lists of a parameter file or `copper.toml`: one to
    /// three dimensions each, the missing ones 1.
    pub fn from_lists(grid: &[u64], block: &[u64]) -> Result<Shape, ShapeError> {
        let block = listed(block, Part::Block)?;
        let grid = listed(grid, Part::Grid)?;
        Shape::checked(grid, block)
    }

    /// `gridDim`
    pub fn grid(&self) -> Dims {
        self.grid
    }

    /// `blockDim`
    pub fn block(&self) -> Dims {
        self.block
    }

    /// Threads per block.
    pub fn block_threads(&self) -> u64 {
        self.block.count()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.count()
    }

    /// Warps per block for a warp size.
    pub fn warps_per_block(&self, warp: u64) -> u64 {
        self.block_threads().div_ceil(warp.max(1))
    }
}

/// A block alone checked against CUDA's limits ([`Dims::checked`] as a
/// [`Part::Block`]), for a launch whose grid is not known.
pub fn block(block: [u64; 3]) -> Result<Dims, ShapeError> {
    Dims::checked(Part::Block, block)
}

/// A grid alone checked against CUDA's limits ([`Dims::checked`] as a
/// [`Part::Grid`]), for a launch whose block is not known.
pub fn grid(grid: [u64; 3]) -> Result<Dims, ShapeError> {
    Dims::checked(Part::Grid, grid)
}

/// One to three dimensions as a `[x, y, z]`, the missing ones 1 (not yet
/// checked against the limits).
pub fn listed(v: &[u64], part: Part) -> Result<[u64; 3], ShapeError> {
    if v.is_empty() || v.len() > 3 {
        return Err(ShapeError::Dimensions { part, got: v.len() });
    }
    let mut d = [1u64; 3];
    d[..v.len()].copy_from_slice(v);
    Ok(d)
}

/// The first dimension of `d` above its limit.
const fn over(d: [u64; 3], limit: [u64; 3]) -> Option<u8> {
    let mut i = 0;
    while i < 3 {
        if d[i] > limit[i] {
            return Some(i as u8);
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_err(b: [u64; 3]) -> String {
        Shape::checked([1, 1, 1], b).unwrap_err().to_string()
    }

    fn grid_err(g: [u64; 3]) -> String {
        Shape::checked(g, [1, 1, 1]).unwrap_err().to_string()
    }

    #[test]
    fn each_block_dimension_is_checked_at_its_limit() {
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            let mut b = [1u64; 3];
            b[axis] = MAX_BLOCK_DIM[axis];
            assert!(Shape::checked([1, 1, 1], b).is_ok(), "{b:?}");
            b[axis] += 1;
            assert_eq!(
                Shape::checked([1, 1, 1], b),
                Err(ShapeError::BlockDim {
                    block: b,
                    axis: axis as u8
                })
            );
            let limit = MAX_BLOCK_DIM[axis];
            assert!(
                block_err(b).ends_with(&format!("({name} = {}; at most {limit})", limit + 1)),
                "{}",
                block_err(b)
            );
        }
        assert_eq!(MAX_BLOCK_DIM, [1024, 1024, 64]);
    }

    #[test]
    fn threads_per_block_are_checked_at_the_limit() {
        assert_eq!(MAX_BLOCK_THREADS, 1024);
        assert!(Shape::checked([1, 1, 1], [32, 32, 1]).is_ok());
        assert!(Shape::checked([1, 1, 1], [16, 16, 4]).is_ok());
        assert!(Shape::checked([1, 1, 1], [33, 31, 1]).is_ok());
        assert_eq!(
            block_err([32, 32, 2]),
            "a block of 32×32×2 threads is more than CUDA allows (2048 threads; at most 1024 a block)"
        );
        assert_eq!(
            Shape::checked([1, 1, 1], [1025, 1, 1]),
            Err(ShapeError::BlockDim {
                block: [1025, 1, 1],
                axis: 0
            })
        );
        assert_eq!(
            Shape::checked([1, 1, 1], [41, 25, 1]),
            Err(ShapeError::BlockThreads { block: [41, 25, 1] })
        );
    }

    #[test]
    fn each_grid_dimension_is_checked_at_its_limit() {
        assert_eq!(MAX_GRID_DIM, [2147483647, 65535, 65535]);
        for (axis, name) in ["x", "y", "z"].iter().enumerate() {
            let mut g = [1u64; 3];
            g[axis] = MAX_GRID_DIM[axis];
            assert!(Shape::checked(g, [1, 1, 1]).is_ok(), "{g:?}");
            g[axis] += 1;
            assert_eq!(
                Shape::checked(g, [1, 1, 1]),
                Err(ShapeError::GridDim {
                    grid: g,
                    axis: axis as u8
                })
            );
            assert!(
                grid_err(g).contains(&format!("({name} = {}; at most", MAX_GRID_DIM[axis] + 1)),
                "{}",
                grid_err(g)
            );
        }
        assert_eq!(
            grid_err([1, 70000, 1]),
            "a grid of 1×70000×1 blocks is more than CUDA allows (y = 70000; at most 65535)"
        );
    }

    #[test]
    fn zero_dimensions_name_the_part_and_axis() {
        assert_eq!(
            block_err([0, 1, 1]),
            "the launch has 0 threads: block.x is 0 (every dimension is at least 1)"
        );
        assert!(grid_err([4, 0, 1]).contains("grid.y is 0"));
        assert!(Shape::checked([1, 1, 1], [1, 1, 1]).is_ok());
        // Zero is found before a dimension too large.
        assert!(block_err([0, 1, 65]).contains("block.x is 0"));
    }

    #[test]
    fn products_that_wrap_around_are_refused() {
        // 2^62 + 1 times 4 is 4 modulo 2^64; the x limit refuses it first,
        // and a product past 2^64 is counted without wrapping.
        let wraps = block_err([4611686018427387905, 4, 1]);
        assert!(wraps.contains("more than CUDA allows (x = "), "{wraps}");
        assert_eq!(
            Shape::checked([1, 1, 1], [1024, 1024, 64]),
            Err(ShapeError::BlockThreads {
                block: [1024, 1024, 64]
            })
        );
        assert!(block_err([1024, 1024, 64]).contains("(67108864 threads;"));
    }

    #[test]
    fn lists_have_one_to_three_dimensions() {
        let s = Shape::from_lists(&[2], &[128, 2]).unwrap();
        assert_eq!(
            (s.grid().to_array(), s.block().to_array()),
            ([2, 1, 1], [128, 2, 1])
        );
        assert_eq!(
            (s.grid().to_string(), s.block().to_string()),
            ("2×1×1".into(), "128×2×1".into())
        );
        assert_eq!((s.blocks(), s.block_threads()), (2, 256));
        assert_eq!(s.warps_per_block(WARP_SIZE), 8);
        assert_eq!(
            Shape::from_lists(&[], &[32]).unwrap_err().to_string(),
            "`grid` must have 1 to 3 dimensions, got 0"
        );
        assert_eq!(
            Shape::from_lists(&[1], &[1, 1, 1, 1]),
            Err(ShapeError::Dimensions {
                part: Part::Block,
                got: 4
            })
        );
    }

    #[test]
    fn dims_alone_are_checked_as_their_part() {
        let b = Dims::checked(Part::Block, [16, 16, 1]).unwrap();
        assert_eq!((b.x(), b.y(), b.z(), b.count()), (16, 16, 1, 256));
        assert_eq!(b.to_string(), "16×16×1");
        assert_eq!(serde_json::to_string(&b).unwrap(), "[16,16,1]");
        // A grid's limits are not a block's.
        assert!(Dims::checked(Part::Grid, [2048, 1, 1]).is_ok());
        assert_eq!(
            Dims::checked(Part::Block, [2048, 1, 1]),
            Err(ShapeError::BlockDim {
                block: [2048, 1, 1],
                axis: 0
            })
        );
        assert_eq!(
            Dims::checked(Part::Grid, [1, 0, 1]),
            Err(ShapeError::NoThreads {
                part: Part::Grid,
                axis: 1
            })
        );
        assert_eq!(b.halved(1).map(|h| h.to_array()), Some([16, 8, 1]));
        assert_eq!(b.halved(2), None);
    }
}
