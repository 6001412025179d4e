//! Lowering from copper's CUDA AST to the analysis IR.
//!
//! Side effects inside expressions (`a[i++]`, nested assignments, calls to
//! device functions, atomics) become statements before the expression that
//! uses them, in C's evaluation order; device functions are inlined; `for`,
//! `do` and `switch` become structured loops and scopes; C's implicit
//! conversions become explicit `Convert` nodes. Anything outside the subset
//! gets an error at the construct's location.

mod assign;
mod call;
mod cells;
mod decl;
mod dynamic_shared;
mod expr;
mod globals;
mod half2;
mod inline;
mod members;
mod methods;
mod names;
mod objects;
mod param_offsets;
mod records;
mod stmt;
mod surfaces;
mod textures;
mod types;
mod views;

use std::collections::HashMap;
use std::sync::Arc;

use super::record::Record;
use super::value::wrap;
use super::*;
use crate::cuda::ast::{self, BaseType, FnKind, Space};
use crate::cuda::parse::ParsedFile;
use crate::diag::{Diagnostic, Severity};
use names::unqualified;

/// A lowering failure at a file offset.
#[derive(Clone, Debug, PartialEq, Eq)]
struct LowerError {
    offset: usize,
    message: String,
}

type Result<T> = std::result::Result<T, LowerError>;

fn fail<T>(span: Span, message: impl Into<String>) -> Result<T> {
    Err(LowerError {
        offset: if span.is_synthetic() { 0 } else { span.start },
        message: message.into(),
    })
}

/// Lowers the kernel `name` of a parsed file.
pub fn lower_kernel(file: &ParsedFile, name: &str) -> std::result::Result<Kernel, Diagnostic> {
    let diag = |offset: usize, msg: String| {
        file.source
            .diagnostic(Severity::Error, "lower", offset, msg)
    };
    let Some(f) = file.function(name) else {
        return Err(diag(
            0,
            format!("no kernel named `{name}` parsed in this file"),
        ));
    };
    if f.kind != FnKind::Global {
        return Err(diag(
            f.meta.span.start,
            format!("`{name}` is not a `__global__` kernel"),
        ));
    }
    if f.is_uninstantiated() {
        return Err(diag(
            f.meta.span.start,
            format!("`{name}` is a template: name an instantiation (`{name}<…>`), which the file launches or `--instantiate` asks for"),
        ));
    }
    let mut l = Lowerer::new(file, f);
    l.kernel(f).map_err(|e| diag(e.offset, e.message))?;
    Ok(l.k)
}

/// One note (a warning) per symbol of `k`, at its first use: the
/// identifier is not defined anywhere, so the kernel is analyzed with it as
/// an unknown constant; and one per 2-D or 3-D texture, at its parameter:
/// what its reads are bounded as and what the model assumes.
pub fn symbol_notes(file: &ParsedFile, k: &Kernel) -> Vec<Diagnostic> {
    k.symbols
        .iter()
        .map(|&v| {
            let var = &k.vars[v];
            let n = &var.name;
            file.source.diagnostic(
                Severity::Warning,
                "symbol",
                var.span.start,
                format!("`{n}` is not defined in the file: treated as an unknown constant; pass -D{n}=… to fix it"),
            )
        })
        .chain(objects::object_notes(file, k))
        .collect()
}

/// What a name in scope denotes.
#[derive(Clone, Debug)]
enum Binding {
    /// A scalar variable.
    Var(VarId),
    /// A scalar stored in memory (a `__shared__ int x;`, a `__device__` global).
    Cell(ArrayId),
    /// A local struct or vector: one variable per component.
    Rec { vars: Vec<VarId>, rec: Arc<Record> },
    /// A reference to an array element (`float &r = a[i];`, `Node &n =
    /// g[i];`) or to a member of one (`float3 &p = parts[i].pos;`, `float &m
    /// = parts[i].mass;`): the array, the variable holding the index,
    /// evaluated once when it was bound, the member's first component and
    /// its type (`None`: the whole element).
    Elem {
        array: ArrayId,
        index: VarId,
        slot: usize,
        field: Option<record::FieldType>,
    },
    /// A compile-time constant: a template value parameter, a file-scope
    /// `const`/`constexpr` scalar.
    Const(Value, Scalar),
    /// An array or pointer: the array, an optional offset variable, and the
    /// inner dimensions used to flatten `a[i][j]`.
    Ptr {
        array: ArrayId,
        offset: Option<VarId>,
        inner: Vec<u64>,
    },
    /// A view of a scalar array as vectors (`const float4 *v =
    /// reinterpret_cast<const float4 *>(in);`): the array, the variable
    /// holding the element offset of the view's element 0, and the vector
    /// type.
    View {
        array: ArrayId,
        offset: VarId,
        rec: Arc<Record>,
    },
}

/// Where `break` and `continue` go.
#[derive(Clone, Copy, Debug)]
struct Target {
    scope: ScopeId,
    is_loop: bool,
}

/// An inlined function being lowered.
#[derive(Clone, Debug)]
struct Frame {
    name: String,
    scope: ScopeId,
    result: Returned,
    /// The call being inlined.
    call: Span,
}

/// Where an inlined function's result goes.
#[derive(Clone, Debug)]
enum Returned {
    /// `void`.
    Nothing,
    /// A scalar, in a variable.
    Scalar(VarId),
    /// A struct or vector, one variable per component.
    Record(Arc<Record>, Vec<VarId>),
}

struct Lowerer<'a> {
    file: &'a ParsedFile,
    k: Kernel,
    scopes: Vec<HashMap<String, Binding>>,
    consts: Vec<HashMap<String, i64>>,
    targets: Vec<Target>,
    frames: Vec<Frame>,
    name_uses: HashMap<String, usize>,
    statements: usize,
    /// The struct or vector type of each array of them.
    records: HashMap<ArrayId, Arc<Record>>,
    /// Struct and vector types by name, once laid out.
    record_cache: HashMap<String, Arc<Record>>,
    /// The type parameters of the template being lowered (`T` → `float`).
    template_types: HashMap<String, BaseType>,
    /// Names whose address the kernel or an inlined callee takes (`&x`):
    /// a scalar local of such a name lives in a one-element local array,
    /// so that a pointer can point at it.
    addressed: std::collections::HashSet<String>,
    /// The extents of each 2-D or 3-D texture (its array), in coordinate
    /// order.
    texture_extents: HashMap<ArrayId, Vec<VarId>>,
    /// Each surface (its array): its extents (none for a 1-D surface) and
    /// its element type, once an access has set it.
    surfaces: HashMap<ArrayId, (Vec<VarId>, Option<Scalar>)>,
    /// The value of each file-scope `const`/`constexpr` scalar (by name;
    /// `None` when it is not a constant copper can evaluate), each
    /// evaluated once, in file order, from the constants before it.
    file_constants: HashMap<String, Option<(Value, Scalar)>>,
}

/// What `++x`/`x++` (`--x`/`x--`) assign: `x + 1` (`x - 1`), as the
/// operator and the literal `1` at the expression's place.
fn step_of(op: ast::UnOp, meta: &ast::Meta) -> (BinOp, ast::Expr) {
    let bop = if matches!(op, ast::UnOp::PreInc | ast::UnOp::PostInc) {
        BinOp::Add
    } else {
        BinOp::Sub
    };
    let one = ast::Expr {
        meta: meta.clone(),
        kind: ast::ExprKind::Int {
            value: 1,
            text: "1".into(),
        },
    };
    (bop, one)
}

/// The names `&name` takes the address of in `body`.
fn addressed_names(body: &[ast::Stmt]) -> std::collections::HashSet<String> {
    let mut out = std::collections::HashSet::new();
    for s in body {
        crate::cuda::visit::visit_stmt_exprs(s, &mut |e| {
            if let ast::ExprKind::Unary(ast::UnOp::AddrOf, x) = &e.kind {
                if let ast::ExprKind::Ident(n) = &x.kind {
                    out.insert(n.clone());
                }
            }
        });
    }
    out
}

fn int(v: i64, ty: Scalar) -> Expr {
    Expr {
        kind: ExprKind::Const(wrap(v, ty)),
        ty,
    }
}

fn var_expr(k: &Kernel, v: VarId) -> Expr {
    Expr {
        kind: ExprKind::Var(v),
        ty: k.vars[v].ty,
    }
}

/// `e` converted to `ty` (no node when it already has that type).
fn convert(e: Expr, ty: Scalar) -> Expr {
    if e.ty == ty {
        return e;
    }
    Expr {
        kind: ExprKind::Convert {
            value: Box::new(e),
            explicit: false,
        },
        ty,
    }
}

fn bin(op: BinOp, l: Expr, r: Expr, ty: Scalar) -> Expr {
    Expr {
        kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
        ty,
    }
}

/// `l op r` with C's conversions applied.
fn arith(op: BinOp, l: Expr, r: Expr, span: Span) -> Result<Expr> {
    let bitwise = matches!(
        op,
        BinOp::Shl | BinOp::Shr | BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Rem
    );
    if bitwise && (l.ty.is_float() || r.ty.is_float()) && op != BinOp::Rem {
        return fail(
            span,
            format!("operator `{}` on a floating-point operand", op.symbol()),
        );
    }
    Ok(match op {
        BinOp::Shl | BinOp::Shr => {
            let lt = l.ty.promote();
            let rt = r.ty.promote();
            bin(op, convert(l, lt), convert(r, rt), lt)
        }
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
            let t = Scalar::common(l.ty, r.ty);
            let e = bin(op, convert(l, t), convert(r, t), t);
            Expr {
                ty: Scalar::I32,
                ..e
            }
        }
        BinOp::And => Expr {
            kind: ExprKind::And(Box::new(l), Box::new(r)),
            ty: Scalar::I32,
        },
        BinOp::Or => Expr {
            kind: ExprKind::Or(Box::new(l), Box::new(r)),
            ty: Scalar::I32,
        },
        _ => {
            let t = Scalar::common(l.ty, r.ty);
            bin(op, convert(l, t), convert(r, t), t)
        }
    })
}

impl<'a> Lowerer<'a> {
    fn new(file: &'a ParsedFile, f: &ast::Function) -> Lowerer<'a> {
        let mut lowerer = Lowerer {
            file,
            k: Kernel {
                name: f.name.clone(),
                params: Vec::new(),
                vars: Vec::new(),
                arrays: Vec::new(),
                sites: Vec::new(),
                symbols: Vec::new(),
                extents: Vec::new(),
                body: Vec::new(),
                scopes: 0,
                span: f.meta.span,
                warp_syncs: Vec::new(),
                inlined: Vec::new(),
            },
            scopes: vec![HashMap::new()],
            consts: vec![HashMap::new()],
            targets: Vec::new(),
            frames: Vec::new(),
            name_uses: HashMap::new(),
            statements: 0,
            records: HashMap::new(),
            record_cache: HashMap::new(),
            template_types: HashMap::new(),
            addressed: addressed_names(&f.body),
            texture_extents: HashMap::new(),
            surfaces: HashMap::new(),
            file_constants: HashMap::new(),
        };
        lowerer.evaluate_file_constants();
        lowerer
    }

    fn unique(&mut self, name: &str) -> String {
        let n = self.name_uses.entry(name.to_string()).or_insert(0);
        *n += 1;
        if *n == 1 {
            name.to_string()
        } else {
            format!("{name}_{}", *n - 1)
        }
    }

    fn new_var(&mut self, name: &str, ty: Scalar, kind: VarKind, span: Span) -> VarId {
        let name = self.unique(name);
        self.k.vars.push(Var {
            name,
            ty,
            kind,
            span,
        });
        self.k.vars.len() - 1
    }

    fn temp(&mut self, ty: Scalar, span: Span) -> VarId {
        self.new_var("tmp", ty, VarKind::Local, span)
    }

    fn new_array(&mut self, a: Array) -> ArrayId {
        self.k.arrays.push(a);
        self.k.arrays.len() - 1
    }

    fn new_scope(&mut self) -> ScopeId {
        self.k.scopes += 1;
        self.k.scopes - 1
    }

    fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), b);
        }
    }

    fn push_scope(&mut self) {
        self.scopes.push(HashMap::new());
        self.consts.push(HashMap::new());
    }

    fn pop_scope(&mut self) {
        self.scopes.pop();
        self.consts.pop();
    }

    fn lookup(&mut self, name: &str, span: Span) -> Result<Binding> {
        if let Some(b) = self.scopes.iter().rev().find_map(|s| s.get(name)) {
            return Ok(b.clone());
        }
        // Names are looked up without their namespace (`N::W` is `W`).
        self.global(unqualified(name), span)
    }

    fn kernel(&mut self, f: &ast::Function) -> Result<()> {
        // scopes[0] holds the globals; parameters get their own scope.
        self.push_scope();
        if let Some(t) = &f.template {
            let bindings = self.template_bindings(t, &t.args.clone(), f.meta.span)?;
            self.bind_template(bindings);
        }
        for (i, p) in f.params.iter().enumerate() {
            let span = p.meta.span;
            if p.ty.is_ref {
                return fail(span, "reference parameters of a kernel (only `__device__` functions take references)");
            }
            if objects::is_texture_object(&p.ty) && p.dims.is_empty() {
                self.texture_param(f, p, i)?;
                continue;
            }
            if objects::is_surface_object(&p.ty) && p.dims.is_empty() {
                self.surface_param(f, p, i)?;
                continue;
            }
            let depth = self.pointer_depth(&p.ty) + usize::from(!p.dims.is_empty());
            let rec = self.record_type(&p.ty, span)?;
            if let Some(rec) = rec.clone().filter(|_| depth == 0) {
                let vars = self.record_vars(&p.name, &rec, VarKind::Param(i), span);
                self.k.params.push(Param::Record {
                    name: p.name.clone(),
                    vars: vars.clone(),
                });
                self.bind(&p.name, Binding::Rec { vars, rec });
            } else if depth == 0 {
                let ty = self.scalar(&p.ty, span)?;
                let v = self.new_var(&p.name, ty, VarKind::Param(i), span);
                self.k.params.push(Param::Scalar(v));
                self.bind(&p.name, Binding::Var(v));
            } else if depth == 1 {
                let elem = match &rec {
                    Some(r) => r.types[0],
                    None => self.scalar(&p.ty, span)?,
                };
                let inner = if p.dims.len() > 1 {
                    self.dims(&p.dims[1..], span)?
                } else {
                    Vec::new()
                };
                let a = self.new_array(Array {
                    name: p.name.clone(),
                    space: Space::Device,
                    elem,
                    layout: rec.as_ref().map_or(Layout::scalar(elem), |r| r.layout()),
                    dims: Vec::new(),
                    param: Some(i),
                    init: Vec::new(),
                    span,
                });
                self.k.params.push(Param::Array(a));
                if let Some(r) = rec {
                    self.records.insert(a, r);
                }
                self.bind(
                    &p.name,
                    Binding::Ptr {
                        array: a,
                        offset: None,
                        inner,
                    },
                );
            } else {
                return fail(
                    span,
                    format!("unsupported: pointer to pointer (parameter `{}`): copper's arrays are flat buffers, and a table of row pointers may alias or hold rows anywhere in memory; pass one buffer and index it as `{}[r * cols + c]`", p.name, p.name),
                );
            }
        }
        let mut body = Vec::new();
        self.cell_addressed_params(f, &mut body);
        self.offset_moved_params(f, &mut body);
        self.block(&f.body, &mut body)?;
        self.k.body = body;
        Ok(())
    }
}
