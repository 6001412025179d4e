//! The analysis IR: structured, close to miniCUDA (RaCUDA §3).
//!
//! A [`Kernel`] is a list of statements over local variables, scalar
//! parameters, CUDA builtins and arrays in named memory spaces. Expressions
//! are side-effect free operator trees with a C type at every node;
//! assignments, array stores, atomics and barriers are statements. Loops,
//! `break`/`continue`, `switch` and early `return` are structured: every jump
//! names the scope it leaves. Device functions are inlined. Every IR node
//! keeps the file span it came from.

pub mod alias;
pub mod float16;
pub mod fold;
pub mod half;
pub mod lower;
pub mod math;
pub mod record;
pub mod sites;
pub mod structured;
pub mod sync;
pub mod value;

use crate::cuda::ast::{BinOp, Space};
use crate::source::Span;
pub use math::MathFn;
pub use value::{Scalar, Value};

/// Index of a variable in [`Kernel::vars`].
pub type VarId = usize;
/// Index of an array in [`Kernel::arrays`].
pub type ArrayId = usize;
/// Index of an access site in [`Kernel::sites`].
pub type SiteId = usize;
/// Identifies a loop or scope that `break`/`continue`/exit jump out of.
pub type ScopeId = usize;

/// What a variable is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarKind {
    /// A scalar kernel parameter (the index in the kernel's parameter list).
    Param(usize),
    /// A local variable (or a temporary copper introduced).
    Local,
    /// An identifier nothing in the file defines, used as an integer: an
    /// unknown constant of the kernel (a missing `-DN=…`), analyzed like an
    /// `int` parameter the kernel never assigns and valued by the launch.
    Symbol,
}

impl VarKind {
    /// Whether the launch gives the value (a scalar parameter or a symbol):
    /// the same in every thread, unknown to the analysis.
    pub fn is_input(self) -> bool {
        matches!(self, VarKind::Param(_) | VarKind::Symbol)
    }
}

/// A scalar variable.
#[derive(Clone, Debug, PartialEq)]
pub struct Var {
    /// Name (unique within the kernel; inlined or shadowing locals get a
    /// suffix).
    pub name: String,
    /// C type.
    pub ty: Scalar,
    /// Parameter or local.
    pub kind: VarKind,
    /// Where it was declared.
    pub span: Span,
}

/// An array: a pointer parameter, a `__shared__`/local/`__constant__`
/// array, or a `__device__` global.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// Name.
    pub name: String,
    /// Memory space (`Device` for pointer parameters: global memory).
    pub space: Space,
    /// Type of an element of a scalar array; for an array of structs or
    /// vectors, the type of the first component (each component has its
    /// own: [`Array::slot_type`]).
    pub elem: Scalar,
    /// Where an element's components lie in memory.
    pub layout: Layout,
    /// Dimensions, outermost first (row-major). Empty for a pointer
    /// parameter or `extern __shared__` array, whose length the launch gives.
    pub dims: Vec<u64>,
    /// Index in the kernel's parameter list, for pointer parameters.
    pub param: Option<usize>,
    /// Initial contents for `__constant__`/`__device__` globals with an
    /// initializer (flattened).
    pub init: Vec<Value>,
    /// Where it was declared.
    pub span: Span,
}

/// The memory layout of one array element (C layout): its size and the
/// byte offset and scalar type of each component ("slot"). A scalar array
/// has one slot; a `float4` array four `float`s at 0, 4, 8, 12 in 16
/// bytes; an array of `struct { int a; double b; }` an `int` at 0 and a
/// `double` at 8 in 16 bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Bytes per element (with padding).
    pub size: u32,
    /// Byte offset of each component.
    pub offsets: Vec<u32>,
    /// Scalar type of each component.
    pub types: Vec<Scalar>,
    /// Name of each component (`x`, `pos.y`; empty for a scalar).
    pub names: Vec<String>,
}

impl Layout {
    /// The layout of a scalar element.
    pub fn scalar(elem: Scalar) -> Layout {
        Layout {
            size: elem.size(),
            offsets: vec![0],
            types: vec![elem],
            names: vec![String::new()],
        }
    }

    /// Number of scalar components per element.
    pub fn slots(&self) -> usize {
        self.offsets.len()
    }

    /// Whether every component has one scalar type.
    pub fn is_uniform(&self) -> bool {
        self.types.windows(2).all(|w| w[0] == w[1])
    }

    /// The components of field `name` (all of a nested struct's or
    /// vector's: `pos` is `pos.x`, `pos.y`, `pos.z`; all of an array
    /// member's: `v` is `v[0]`, `v[1]`, …).
    pub fn field_slots(&self, name: &str) -> Vec<usize> {
        let (dot, bracket) = (format!("{name}."), format!("{name}["));
        (0..self.slots())
            .filter(|&k| {
                let n = &self.names[k];
                !n.is_empty() && (n == name || n.starts_with(&dot) || n.starts_with(&bracket))
            })
            .collect()
    }
}

impl Array {
    /// Whether elements are scalars (not structs or vectors).
    pub fn is_scalar(&self) -> bool {
        self.layout.slots() == 1
    }

    /// The scalar type of component `slot` of an element.
    pub fn slot_type(&self, slot: usize) -> Scalar {
        self.layout.types[slot]
    }

    /// The bytes a lane touches at the site `s` of this array, from the
    /// index of its accesses: in elements, or in [`Site::unit`]s.
    pub fn footprint(&self, s: &Site) -> crate::cost::Footprint {
        crate::cost::Footprint {
            stride: s.unit.unwrap_or(self.layout.size),
            element: self.layout.size,
            offset: s.offset,
            width: s.width,
        }
    }

    /// Number of values the index of an access at site `s` takes when the
    /// declaration fixes the length: elements, or the site's units for a
    /// run-time index into an array member.
    pub fn index_len(&self, s: &Site) -> Option<u64> {
        let per = s.unit.map_or(1, |u| u64::from(self.layout.size / u.max(1)));
        self.fixed_len().map(|n| n.saturating_mul(per))
    }

    /// Number of elements when fixed by the declaration.
    pub fn fixed_len(&self) -> Option<u64> {
        if self.dims.is_empty() {
            None
        } else {
            // Saturating: a declared size may be absurd (the simulator
            // refuses it, instead of wrapping around).
            Some(self.dims.iter().fold(1u64, |n, &d| n.saturating_mul(d)))
        }
    }

    /// Whether accesses are charged as global memory transactions.
    pub fn is_global(&self) -> bool {
        matches!(self.space, Space::Device | Space::Managed | Space::Constant)
    }

    /// Whether accesses are charged as shared-memory bank conflicts.
    pub fn is_shared(&self) -> bool {
        self.space == Space::Shared
    }
}

/// A place in the source where an array is read or written.
#[derive(Clone, Debug, PartialEq)]
pub struct Site {
    /// Array accessed.
    pub array: ArrayId,
    /// Read or write (atomics count as writes).
    pub is_write: bool,
    /// Where the access is.
    pub span: Span,
    /// The AST node of the access (in the function it was written in: a
    /// device function's accesses keep that function's ids).
    pub node: crate::cuda::ast::NodeId,
    /// For an access inside an inlined device function, the kernel's call
    /// that reached it (the outermost call of the chain).
    pub call: Option<Span>,
    /// Byte offset of the accessed part within the element (a field).
    pub offset: u32,
    /// Bytes each lane accesses: the element's size for a scalar array,
    /// 16 for a whole `float4`, 4 for its `.y`.
    pub width: u32,
    /// For an access to an array member at a run-time index
    /// (`cells[i].v[k]`, [`Access::member`]): the bytes one unit of the
    /// access's index stands for; the lane's bytes are then `width` bytes
    /// from `index·unit + offset` (`offset` below `unit`).
    pub unit: Option<u32>,
}

/// One dimension of a CUDA builtin vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    /// `threadIdx.{x,y,z}` (0, 1, 2)
    ThreadIdx(u8),
    /// `blockIdx.{x,y,z}`
    BlockIdx(u8),
    /// `blockDim.{x,y,z}`
    BlockDim(u8),
    /// `gridDim.{x,y,z}`
    GridDim(u8),
    /// `warpSize`
    WarpSize,
}

/// Unary operators of the IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unary {
    /// `-x`
    Neg,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
}

/// A typed, side-effect free expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Its C type.
    pub ty: Scalar,
}

/// Expression forms. Costs (000 §3): `Const` → `const`, `Var` → `var` (or
/// `param` for a parameter), thread index → `var`, other builtins → `param`,
/// each operator → `op`, loads → `gread`/`sread`/`var` by memory space,
/// explicit casts → `op`, implicit conversions → free.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A constant.
    Const(Value),
    /// A variable or scalar parameter.
    Var(VarId),
    /// A CUDA builtin.
    Builtin(Builtin),
    /// A unary operator.
    Unary(Unary, Box<Expr>),
    /// An arithmetic, bitwise or comparison operator (not `&&`/`||`).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// `a && b`: `b` is evaluated only for lanes where `a` holds.
    And(Box<Expr>, Box<Expr>),
    /// `a || b`: `b` is evaluated only for lanes where `a` fails.
    Or(Box<Expr>, Box<Expr>),
    /// `c ? a : b`, each side evaluated only for its lanes.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// Conversion to this expression's type; `explicit` for a cast the user
    /// wrote.
    Convert {
        /// The converted value.
        value: Box<Expr>,
        /// Written as a cast (charged) or implied by C (free).
        explicit: bool,
    },
    /// An array element.
    Load(Access),
    /// A math function or intrinsic.
    Call(MathFn, Vec<Expr>),
}

/// A scalar component of an array element: array, flattened row-major
/// index, component, and site.
///
/// A whole `float4` (or any vector whose alignment is its size) is one
/// memory access of 16 bytes but four components: it lowers to four
/// accesses of one site, run together; the first is `charged` with the
/// site's cost and the others are free.
#[derive(Clone, Debug, PartialEq)]
pub struct Access {
    /// The array.
    pub array: ArrayId,
    /// Element index (row-major flattening already applied).
    pub index: Box<Expr>,
    /// The source site.
    pub site: SiteId,
    /// Component of the element ([`Layout::offsets`]); 0 for scalars.
    pub slot: usize,
    /// Whether this access pays the site's memory cost (false for the
    /// other components of one vector access).
    pub charged: bool,
    /// An element of an array member at a run-time index (`cells[i].v[k]`):
    /// `index` is then the lane's address in [`Site::unit`]s, `e·(size /
    /// unit) + Σ k·units` for element `e` (what the cost and the analysis
    /// see), and the member indices `k`, checked against their lengths, are
    /// in these variables; `slot` is the component at index 0.
    pub member: Option<Box<Member>>,
}

/// The run-time indices into array members of an [`Access`], outermost
/// first (`m[r][c]` has two).
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    /// One per index.
    pub dims: Vec<MemberDim>,
}

/// One run-time index into an array member.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberDim {
    /// The variable holding the index (assigned before the access and not
    /// between the index's evaluation and it).
    pub var: VarId,
    /// The member's name as written (`v`, `m[r]`), for messages.
    pub name: String,
    /// Number of elements.
    pub len: u64,
    /// Components per element.
    pub slots: usize,
    /// [`Site::unit`]s per element.
    pub units: u64,
}

/// Atomic read-modify-write operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AtomicOp {
    /// `atomicAdd`
    Add,
    /// `atomicSub`
    Sub,
    /// `atomicExch`
    Exch,
    /// `atomicMin`
    Min,
    /// `atomicMax`
    Max,
    /// `atomicAnd`
    And,
    /// `atomicOr`
    Or,
    /// `atomicXor`
    Xor,
    /// `atomicInc` (wraps to 0 past the operand)
    Inc,
    /// `atomicDec`
    Dec,
    /// `atomicCAS`
    Cas,
}

impl AtomicOp {
    /// Every operation.
    pub const ALL: [AtomicOp; 11] = [
        AtomicOp::Add,
        AtomicOp::Sub,
        AtomicOp::Exch,
        AtomicOp::Min,
        AtomicOp::Max,
        AtomicOp::And,
        AtomicOp::Or,
        AtomicOp::Xor,
        AtomicOp::Inc,
        AtomicOp::Dec,
        AtomicOp::Cas,
    ];

    /// The CUDA function's name (`atomicAdd`, …).
    pub fn name(self) -> &'static str {
        match self {
            AtomicOp::Add => "atomicAdd",
            AtomicOp::Sub => "atomicSub",
            AtomicOp::Exch => "atomicExch",
            AtomicOp::Min => "atomicMin",
            AtomicOp::Max => "atomicMax",
            AtomicOp::And => "atomicAnd",
            AtomicOp::Or => "atomicOr",
            AtomicOp::Xor => "atomicXor",
            AtomicOp::Inc => "atomicInc",
            AtomicOp::Dec => "atomicDec",
            AtomicOp::Cas => "atomicCAS",
        }
    }
}

/// What a jump does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JumpKind {
    /// Leave the loop or scope.
    Break,
    /// Go to the loop's step and test.
    Continue,
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `x = e` (cost `vwrite`).
    Assign {
        /// Target variable.
        var: VarId,
        /// Value.
        value: Expr,
        /// Source span.
        span: Span,
    },
    /// `A[i] = e` (cost `gwrite`/`swrite`; local arrays `vwrite`).
    Store {
        /// Element written.
        access: Access,
        /// Value.
        value: Expr,
        /// Source span.
        span: Span,
    },
    /// `old = atomicOp(&A[i], value[, compare])`, lanes in lane order.
    Atomic {
        /// Operation.
        op: AtomicOp,
        /// Element updated.
        access: Access,
        /// Operand (the new value for `atomicCAS`).
        value: Expr,
        /// Compared value for `atomicCAS`.
        compare: Option<Expr>,
        /// Variable receiving the old value.
        result: Option<VarId>,
        /// Source span.
        span: Span,
    },
    /// `if (cond) then else els` (cost `if`, plus `div` when the warp
    /// diverges).
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then: Vec<Stmt>,
        /// Else branch.
        els: Vec<Stmt>,
        /// Source span.
        span: Span,
    },
    /// A loop. Each test costs `if` (plus `div` when some lanes leave).
    Loop {
        /// Scope id for `break`/`continue`.
        scope: ScopeId,
        /// Condition; `None` is `true` (`for (;;)`).
        cond: Option<Expr>,
        /// Body.
        body: Vec<Stmt>,
        /// Run after the body and after `continue` (a `for` step).
        step: Vec<Stmt>,
        /// `while`/`for` test first; `do … while` runs the body first.
        test_first: bool,
        /// Source span.
        span: Span,
    },
    /// A block that `break` (from a `switch`) or a device function's
    /// `return` leaves.
    Scope {
        /// Scope id.
        scope: ScopeId,
        /// Body.
        body: Vec<Stmt>,
    },
    /// `break`/`continue`, or leaving a scope.
    Jump {
        /// Break or continue.
        kind: JumpKind,
        /// Loop or scope left.
        scope: ScopeId,
        /// Source span.
        span: Span,
    },
    /// `return` from the kernel: the lanes are done.
    Return {
        /// Source span.
        span: Span,
    },
    /// `__syncthreads()` (cost `sync`).
    Sync {
        /// Source span.
        span: Span,
    },
}

/// A scalar, array or struct kernel parameter.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    /// A scalar parameter and its variable.
    Scalar(VarId),
    /// A pointer parameter and its array.
    Array(ArrayId),
    /// A struct or vector passed by value (`Params p`, `float3 c`): one
    /// variable per scalar component, named `p.w`, `c.x`, … (each of its
    /// own type, so a struct may mix `int` and `float` fields).
    Record {
        /// The parameter's name.
        name: String,
        /// Its components' variables, in memory order.
        vars: Vec<VarId>,
    },
}

/// A kernel in IR form.
#[derive(Clone, Debug, PartialEq)]
pub struct Kernel {
    /// Kernel name.
    pub name: String,
    /// Parameters in order.
    pub params: Vec<Param>,
    /// Variables.
    pub vars: Vec<Var>,
    /// Arrays.
    pub arrays: Vec<Array>,
    /// Access sites.
    pub sites: Vec<Site>,
    /// Undefined identifiers used as unknown constants ([`VarKind::Symbol`]
    /// variables), in order of first use.
    pub symbols: Vec<VarId>,
    /// The extents of the 2-D and 3-D texture parameters, in elements
    /// (`t.width`, `t.height`, `t.depth`): [`VarKind::Param`] variables of
    /// the texture's index that the kernel cannot name, given by the
    /// launch like scalar arguments.
    pub extents: Vec<VarId>,
    /// Body.
    pub body: Vec<Stmt>,
    /// Number of scope ids used.
    pub scopes: usize,
    /// Span of the kernel definition.
    pub span: Span,
    /// The `__syncwarp()` calls (no statement: they have no effect in the
    /// lock-step model, but a kernel with them is warp-aware, see
    /// [`Kernel::lockstep_only`]).
    pub warp_syncs: Vec<Span>,
    /// Every device function inlined, with the call that reaches it.
    pub inlined: Vec<Inlined>,
}

/// A device function inlined into a kernel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Inlined {
    /// The call in the kernel's own code through which it is reached.
    pub call: Span,
    /// The function's definition.
    pub callee: Span,
}

impl Kernel {
    /// Whether the kernel can only run in lock-step warps: it calls a
    /// warp-level primitive (a shuffle, vote or `__activemask`), whose value
    /// in one lane comes from the others, or `__syncwarp`, which orders
    /// the lanes of a warp. Other kernels may also run with the halves of
    /// each warp one after the other ([`crate::sim::SimOptions::split_warps`]).
    pub fn lockstep_only(&self) -> bool {
        let mut warp = !self.warp_syncs.is_empty();
        visit_exprs(&self.body, &mut |e| {
            warp |= matches!(&e.kind, ExprKind::Call(f, _) if f.is_warp());
        });
        warp
    }

    /// The calls in the kernel's own code through which code at `span`
    /// (in a device function) is reached, in source order; empty for the
    /// kernel's own code.
    pub fn calls_reaching(&self, span: Span) -> Vec<Span> {
        let mut calls: Vec<Span> = self
            .inlined
            .iter()
            .filter(|i| i.callee.start <= span.start && span.end <= i.callee.end)
            .map(|i| i.call)
            .collect();
        calls.sort_by_key(|s| s.start);
        calls.dedup();
        calls
    }

    /// The parameter named `name`.
    pub fn param_named(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| self.param_name(p) == name)
    }

    /// The name of parameter `p`.
    pub fn param_name<'a>(&'a self, p: &'a Param) -> &'a str {
        match p {
            Param::Scalar(v) => &self.vars[*v].name,
            Param::Array(a) => &self.arrays[*a].name,
            Param::Record { name, .. } => name,
        }
    }

    /// The variables a launch gives values to: scalar parameters, the
    /// components of structs passed by value and the extents of textures
    /// (a parameter file's `args`).
    pub fn scalar_params(&self) -> impl Iterator<Item = VarId> + '_ {
        self.params
            .iter()
            .flat_map(|p| match p {
                Param::Scalar(v) => std::slice::from_ref(v),
                Param::Record { vars, .. } => vars.as_slice(),
                Param::Array(_) => &[],
            })
            .chain(&self.extents)
            .copied()
    }

    /// Whether the kernel contains a `__syncthreads()`.
    pub fn uses_sync(&self) -> bool {
        fn any(stmts: &[Stmt]) -> bool {
            stmts.iter().any(|s| match s {
                Stmt::Sync { .. } => true,
                Stmt::If { then, els, .. } => any(then) || any(els),
                Stmt::Loop { body, step, .. } => any(body) || any(step),
                Stmt::Scope { body, .. } => any(body),
                _ => false,
            })
        }
        any(&self.body)
    }
}

impl Expr {
    /// Calls `f` on this expression and every subexpression (array indices
    /// included), outermost first.
    pub fn visit(&self, f: &mut impl FnMut(&Expr)) {
        f(self);
        match &self.kind {
            ExprKind::Const(_) | ExprKind::Var(_) | ExprKind::Builtin(_) => {}
            ExprKind::Unary(_, x) | ExprKind::Convert { value: x, .. } => x.visit(f),
            ExprKind::Binary(_, a, b) | ExprKind::And(a, b) | ExprKind::Or(a, b) => {
                a.visit(f);
                b.visit(f);
            }
            ExprKind::Select(c, a, b) => {
                c.visit(f);
                a.visit(f);
                b.visit(f);
            }
            ExprKind::Load(a) => a.index.visit(f),
            ExprKind::Call(_, args) => args.iter().for_each(|a| a.visit(f)),
        }
    }
}

/// Calls `f` on every expression of a statement list (conditions, values,
/// array indices and their subexpressions), in program order.
pub fn visit_exprs(stmts: &[Stmt], f: &mut impl FnMut(&Expr)) {
    for s in stmts {
        match s {
            Stmt::Assign { value, .. } => value.visit(f),
            Stmt::Store { access, value, .. } => {
                access.index.visit(f);
                value.visit(f);
            }
            Stmt::Atomic {
                access,
                value,
                compare,
                ..
            } => {
                access.index.visit(f);
                value.visit(f);
                if let Some(c) = compare {
                    c.visit(f);
                }
            }
            Stmt::If {
                cond, then, els, ..
            } => {
                cond.visit(f);
                visit_exprs(then, f);
                visit_exprs(els, f);
            }
            Stmt::Loop {
                cond, body, step, ..
            } => {
                if let Some(c) = cond {
                    c.visit(f);
                }
                visit_exprs(body, f);
                visit_exprs(step, f);
            }
            Stmt::Scope { body, .. } => visit_exprs(body, f),
            Stmt::Jump { .. } | Stmt::Return { .. } | Stmt::Sync { .. } => {}
        }
    }
}

/// Calls `f` on every statement of a list and of the lists nested in it,
/// each before its nested ones.
pub fn visit_stmts<'k>(stmts: &'k [Stmt], f: &mut impl FnMut(&'k Stmt)) {
    for s in stmts {
        f(s);
        match s {
            Stmt::If { then, els, .. } => {
                visit_stmts(then, f);
                visit_stmts(els, f);
            }
            Stmt::Loop { body, step, .. } => {
                visit_stmts(body, f);
                visit_stmts(step, f);
            }
            Stmt::Scope { body, .. } => visit_stmts(body, f),
            _ => {}
        }
    }
}
