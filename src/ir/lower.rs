//! Lowering from copper's CUDA AST to the analysis IR.
//!
//! Side effects inside expressions (`a[i++]`, nested assignments, calls to
//! device functions, atomics) become statements before the expression that
//! uses them, in C's evaluation order; device functions are inlined; `for`,
//! `do` and `switch` become structured loops and scopes; C's implicit
//! conversions become explicit `Convert` nodes. Anything outside the subset
//! gets an error at the construct's location.

mod records;

use std::collections::HashMap;
use std::sync::Arc;

use super::math::{self, Signature};
use super::record::{FieldType, Record};
use super::value::{binary, wrap};
use super::*;
use crate::cuda::ast::{
    self, BaseType, CastStyle, ExprKind as A, FnKind, Space, StmtKind as S, UnOp,
};
use crate::cuda::parse::ParsedFile;
use crate::cuda::template;
use crate::diag::{Diagnostic, Severity};
use records::Place;

/// Deepest nesting of inlined device functions.
const MAX_INLINE_DEPTH: usize = 16;
/// Most IR statements one kernel may lower to.
const MAX_STATEMENTS: usize = 200_000;

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
/// an unknown constant.
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
    /// A reference to an array element (`float &r = a[i];`): the array and
    /// the variable holding the index, evaluated once when it was bound
    /// (an element of a scalar array: references to struct fields are not
    /// supported).
    Elem { array: ArrayId, index: VarId },
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

/// The scalar type a builtin typedef name stands for.
fn builtin_typedef(name: &str) -> Option<Scalar> {
    Some(match name {
        "size_t" | "uint64_t" | "ulong" => Scalar::U64,
        "ptrdiff_t" | "int64_t" => Scalar::I64,
        "uint" | "uint32_t" => Scalar::U32,
        "int32_t" => Scalar::I32,
        "ushort" | "uint16_t" => Scalar::U16,
        "int16_t" => Scalar::I16,
        "uchar" | "uint8_t" => Scalar::U8,
        "int8_t" => Scalar::I8,
        _ => return None,
    })
}

impl<'a> Lowerer<'a> {
    fn new(file: &'a ParsedFile, f: &ast::Function) -> Lowerer<'a> {
        Lowerer {
            file,
            k: Kernel {
                name: f.name.clone(),
                params: Vec::new(),
                vars: Vec::new(),
                arrays: Vec::new(),
                sites: Vec::new(),
                symbols: Vec::new(),
                body: Vec::new(),
                scopes: 0,
                span: f.meta.span,
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
        }
    }

    // ---- types and names ----

    fn scalar(&self, t: &ast::Type, span: Span) -> Result<Scalar> {
        self.base_scalar(&t.base, span, 0)
    }

    fn base_scalar(&self, b: &BaseType, span: Span, depth: usize) -> Result<Scalar> {
        Ok(match b {
            BaseType::Bool => Scalar::Bool,
            BaseType::Char | BaseType::SChar => Scalar::I8,
            BaseType::UChar => Scalar::U8,
            BaseType::Short => Scalar::I16,
            BaseType::UShort => Scalar::U16,
            BaseType::Int => Scalar::I32,
            BaseType::UInt => Scalar::U32,
            BaseType::Long | BaseType::LongLong => Scalar::I64,
            BaseType::ULong | BaseType::ULongLong => Scalar::U64,
            BaseType::Float => Scalar::F32,
            BaseType::Double => Scalar::F64,
            BaseType::Void => return fail(span, "`void` values"),
            BaseType::Auto => return fail(span, "`auto` without an initializer to deduce from"),
            BaseType::Named(n) => {
                let n = ast::type_key(n);
                if let Some(s) = builtin_typedef(n) {
                    return Ok(s);
                }
                if let Some(t) = self.template_types.get(n) {
                    return self.base_scalar(&t.clone(), span, depth + 1);
                }
                match self.file.typedefs.get(n) {
                    Some(t) if t.pointers.is_empty() && depth < 16 => {
                        return self.base_scalar(&t.base, span, depth + 1)
                    }
                    _ => {
                        let what =
                            if Record::vector(n).is_some() || self.file.structs.contains_key(n) {
                                "a struct or vector type, used where copper needs a scalar"
                            } else {
                                "not a type copper knows"
                            };
                        return fail(span, format!("type `{n}` is {what}"));
                    }
                }
            }
        })
    }

    /// Pointer levels of a type, typedefs included.
    fn pointer_depth(&self, t: &ast::Type) -> usize {
        let mut n = t.pointers.len();
        if let BaseType::Named(name) = &t.base {
            if let Some(td) = self.file.typedefs.get(ast::type_key(name)) {
                n += td.pointers.len();
            }
        }
        n
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

    /// The value of a file-scope `const`/`constexpr` scalar named `name`
    /// with a constant initializer.
    fn file_constant(&self, name: &str) -> Option<(Value, Scalar)> {
        let g = self
            .file
            .globals
            .iter()
            .find(|g| g.name == unqualified(name))?;
        if g.space != Space::Local || !(g.ty.is_const || g.is_constexpr) || !g.dims.is_empty() {
            return None;
        }
        let ty = self.scalar(&g.ty, g.meta.span).ok()?;
        match &g.init {
            Some(ast::Init::Expr(e)) => Some((self.const_value(e)?.convert(ty), ty)),
            _ => None,
        }
    }

    /// Whether nothing in scope or in the file defines `name` (a symbol
    /// made for it earlier counts as undefined).
    fn is_undefined(&self, name: &str) -> bool {
        self.is_symbol(name)
            || (!self.scopes.iter().any(|s| s.contains_key(name))
                && !self.consts.iter().any(|c| c.contains_key(name))
                && !self.file.globals.iter().any(|g| g.name == name))
    }

    /// Whether `name` is bound to a symbol of the kernel.
    fn is_symbol(&self, name: &str) -> bool {
        self.k.symbols.iter().any(|&v| self.k.vars[v].name == name)
    }

    /// A new symbol for the undefined identifier `name`, first used at
    /// `span`: an `int` the launch gives, bound for the rest of the kernel.
    fn symbol(&mut self, name: &str, span: Span) -> VarId {
        let v = self.new_var(name, Scalar::I32, VarKind::Symbol, span);
        self.k.symbols.push(v);
        if let Some(s) = self.scopes.first_mut() {
            s.insert(name.to_string(), Binding::Var(v));
        }
        v
    }

    /// Binds a `__constant__`/`__device__` global on first use.
    fn global(&mut self, name: &str, span: Span) -> Result<Binding> {
        if let Some((v, ty)) = self.file_constant(name) {
            return Ok(Binding::Const(v, ty));
        }
        let file = self.file;
        let Some(g) = file.globals.iter().find(|g| g.name == name) else {
            if crate::cuda::include::looks_like_macro(name) {
                let hint = crate::cuda::include::define_hint(name);
                return fail(span, format!("unknown identifier `{name}`: {hint}"));
            }
            return fail(span, format!("unknown identifier `{name}`"));
        };
        if !g.ty.pointers.is_empty() {
            return fail(g.meta.span, "global pointer variables are not supported");
        }
        if g.space == Space::Local {
            return fail(
                g.meta.span,
                format!("file-scope `{name}` is not a constant copper can evaluate (a `const` scalar with a constant initializer)"),
            );
        }
        let rec = self.record_type(&g.ty, g.meta.span)?;
        let elem = match &rec {
            Some(r) => r.types[0],
            None => self.scalar(&g.ty, g.meta.span)?,
        };
        let layout = rec.as_ref().map_or(Layout::scalar(elem), |r| r.layout());
        let dynamic = g.is_extern && g.dims.len() == 1 && g.dims[0].is_none();
        let dims = if dynamic {
            Vec::new()
        } else {
            self.dims(&g.dims, g.meta.span)?
        };
        if dynamic && g.space != Space::Shared {
            return fail(
                g.meta.span,
                "only `extern __shared__` arrays may have an unspecified size",
            );
        }
        if dynamic {
            let id = self.new_array(Array {
                name: name.to_string(),
                space: Space::Shared,
                elem,
                layout,
                dims: Vec::new(),
                param: None,
                init: Vec::new(),
                span: g.meta.span,
            });
            if let Some(r) = rec {
                self.records.insert(id, r);
            }
            let b = Binding::Ptr {
                array: id,
                offset: None,
                inner: Vec::new(),
            };
            if let Some(s) = self.scopes.first_mut() {
                s.insert(name.to_string(), b.clone());
            }
            return Ok(b);
        }
        let init = match &g.init {
            None => Vec::new(),
            Some(i) => self.const_init(i, &layout.types, g.meta.span)?,
        };
        let scalar = dims.is_empty();
        let id = self.new_array(Array {
            name: name.to_string(),
            space: g.space,
            elem,
            layout,
            dims: if scalar { vec![1] } else { dims.clone() },
            param: None,
            init,
            span: g.meta.span,
        });
        if let Some(r) = rec {
            self.records.insert(id, r);
        }
        let b = if scalar {
            Binding::Cell(id)
        } else {
            Binding::Ptr {
                array: id,
                offset: None,
                inner: dims[1..].to_vec(),
            }
        };
        if let Some(s) = self.scopes.first_mut() {
            s.insert(name.to_string(), b.clone());
        }
        Ok(b)
    }

    /// The flattened constant initializer of a global whose components
    /// have `types` (value `i` converted to `types[i % types.len()]`).
    fn const_init(&self, i: &ast::Init, types: &[Scalar], span: Span) -> Result<Vec<Value>> {
        let mut out = Vec::new();
        let mut stack = vec![i];
        while let Some(i) = stack.pop() {
            match i {
                ast::Init::Expr(e) => {
                    let elem = types[out.len() % types.len()];
                    let v = self.const_value(e).map(|v| v.convert(elem));
                    match v {
                        Some(v) => out.push(v),
                        None => return fail(span, "initializer of a global is not a constant"),
                    }
                }
                ast::Init::List(items) => stack.extend(items.iter().rev()),
            }
        }
        Ok(out)
    }

    /// Value of a constant expression (literals, `const` locals with constant
    /// initializers, arithmetic on them, `sizeof`).
    fn const_value(&self, e: &ast::Expr) -> Option<Value> {
        Some(match &e.kind {
            A::Int { value, text } => {
                Value::I(*value as i64).convert(self.int_literal_type(*value, text))
            }
            A::Float(t) => Value::F(t.trim_end_matches(['f', 'F']).parse().ok()?),
            A::Bool(b) => Value::I(*b as i64),
            A::Char(c) => Value::I(char_value(c)?),
            A::Ident(n) => match self.consts.iter().rev().find_map(|c| c.get(n)) {
                Some(v) => Value::I(*v),
                None => match self.file_constant(n) {
                    Some((v, _)) => v,
                    None => math::library_constant(n)?.0,
                },
            },
            A::Unary(UnOp::Neg, x) => match self.const_value(x)? {
                Value::I(v) => Value::I(v.wrapping_neg()),
                Value::F(f) => Value::F(-f),
            },
            A::Unary(UnOp::Plus, x) => self.const_value(x)?,
            A::Binary(op, l, r) => {
                let (l, r) = (self.const_value(l)?, self.const_value(r)?);
                let ty = match (l, r) {
                    (Value::F(_), _) | (_, Value::F(_)) => Scalar::F64,
                    _ => Scalar::I64,
                };
                binary(*op, l, r, ty).ok()?
            }
            A::Cast(_, t, x) => self
                .const_value(x)?
                .convert(self.scalar(t, e.meta.span).ok()?),
            A::SizeofType(t) => Value::I(self.scalar(t, e.meta.span).ok()?.size() as i64),
            _ => return None,
        })
    }

    fn dims(&self, dims: &[Option<ast::Expr>], span: Span) -> Result<Vec<u64>> {
        dims.iter()
            .map(|d| match d.as_ref().and_then(|e| self.const_value(e)) {
                Some(Value::I(v)) if v > 0 && v <= (1 << 32) => Ok(v as u64),
                _ => {
                    let at = d.as_ref().map_or(span, |e| e.meta.span);
                    let undefined = d
                        .iter()
                        .flat_map(|e| e.identifiers())
                        .find(|n| self.is_undefined(unqualified(n)));
                    match undefined {
                        Some(n) => fail(
                            at,
                            format!(
                                "array size needs the value of `{n}`: {}",
                                crate::cuda::include::define_hint(n)
                            ),
                        ),
                        None => fail(at, "array size must be a positive integer constant"),
                    }
                }
            })
            .collect()
    }

    fn int_literal_type(&self, value: u64, text: &str) -> Scalar {
        let lower = text.to_ascii_lowercase();
        let unsigned = lower.contains('u');
        let long = lower.ends_with('l');
        let decimal = !lower.starts_with('0')
            || lower == "0"
            || lower.starts_with("0u")
            || lower.starts_with("0l");
        match (unsigned, long) {
            (true, true) => Scalar::U64,
            (false, true) => {
                if value <= i64::MAX as u64 {
                    Scalar::I64
                } else {
                    Scalar::U64
                }
            }
            (true, false) => {
                if value <= u32::MAX as u64 {
                    Scalar::U32
                } else {
                    Scalar::U64
                }
            }
            (false, false) => {
                if value <= i32::MAX as u64 {
                    Scalar::I32
                } else if !decimal && value <= u32::MAX as u64 {
                    Scalar::U32
                } else if value <= i64::MAX as u64 {
                    Scalar::I64
                } else {
                    Scalar::U64
                }
            }
        }
    }

    // ---- kernel and statements ----

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
        self.block(&f.body, &mut body)?;
        self.k.body = body;
        Ok(())
    }

    fn block(&mut self, stmts: &[ast::Stmt], out: &mut Vec<Stmt>) -> Result<()> {
        self.push_scope();
        let r = stmts.iter().try_for_each(|s| self.stmt(s, out));
        self.pop_scope();
        r
    }

    fn count(&mut self, span: Span) -> Result<()> {
        self.statements += 1;
        if self.statements > MAX_STATEMENTS {
            return fail(
                span,
                format!("kernel lowers to more than {MAX_STATEMENTS} statements"),
            );
        }
        Ok(())
    }

    fn stmt(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        let span = s.meta.span;
        self.count(span)?;
        match &s.kind {
            S::Decl(decls) => decls.iter().try_for_each(|d| self.decl(d, out)),
            S::Expr(e) => self.effect(e, out),
            S::Block(b) => self.block(b, out),
            S::If { cond, then, els } => {
                let c = self.expr(cond, out)?;
                let mut t = Vec::new();
                self.branch(then, &mut t)?;
                let mut e = Vec::new();
                if let Some(els) = els {
                    self.branch(els, &mut e)?;
                }
                out.push(Stmt::If {
                    cond: c,
                    then: t,
                    els: e,
                    span,
                });
                Ok(())
            }
            S::While { cond, body } => {
                self.push_scope();
                let r = self.lower_loop(Some(cond), body, None, true, span, out);
                self.pop_scope();
                r
            }
            S::DoWhile { body, cond } => {
                self.push_scope();
                let r = self.lower_loop(Some(cond), body, None, false, span, out);
                self.pop_scope();
                r
            }
            S::For {
                init,
                cond,
                step,
                body,
            } => {
                self.push_scope();
                let r = (|| {
                    if let Some(i) = init {
                        self.stmt(i, out)?;
                    }
                    self.lower_loop(cond.as_ref(), body, step.as_ref(), true, span, out)
                })();
                self.pop_scope();
                r
            }
            S::Switch { cond, cases } => self.switch(cond, cases, span, out),
            S::Break => {
                let Some(t) = self.targets.last().copied() else {
                    return fail(span, "`break` outside a loop or switch");
                };
                out.push(Stmt::Jump {
                    kind: JumpKind::Break,
                    scope: t.scope,
                    span,
                });
                Ok(())
            }
            S::Continue => {
                let Some(t) = self.targets.iter().rev().find(|t| t.is_loop).copied() else {
                    return fail(span, "`continue` outside a loop");
                };
                out.push(Stmt::Jump {
                    kind: JumpKind::Continue,
                    scope: t.scope,
                    span,
                });
                Ok(())
            }
            S::Return(e) => self.ret(e.as_ref(), span, out),
            S::Empty | S::Pragma(_) => Ok(()),
        }
    }

    /// A branch body in its own lexical scope.
    fn branch(&mut self, s: &ast::Stmt, out: &mut Vec<Stmt>) -> Result<()> {
        self.push_scope();
        let r = self.stmt(s, out);
        self.pop_scope();
        r
    }

    fn ret(&mut self, e: Option<&ast::Expr>, span: Span, out: &mut Vec<Stmt>) -> Result<()> {
        match self.frames.last().cloned() {
            None => {
                if e.is_some() {
                    return fail(span, "a kernel cannot return a value");
                }
                out.push(Stmt::Return { span });
            }
            Some(frame) => {
                match (e, frame.result) {
                    (Some(e), Returned::Record(rec, vars)) => {
                        self.record_return(e, &rec, vars, span, out)?
                    }
                    (Some(e), Returned::Scalar(r)) => {
                        let v = self.expr(e, out)?;
                        let ty = self.k.vars[r].ty;
                        out.push(Stmt::Assign {
                            var: r,
                            value: convert(v, ty),
                            span,
                        });
                    }
                    (None, Returned::Nothing) => {}
                    (Some(e), Returned::Nothing) => self.effect(e, out)?,
                    (None, _) => {
                        return fail(span, format!("`{}` must return a value", frame.name))
                    }
                }
                out.push(Stmt::Jump {
                    kind: JumpKind::Break,
                    scope: frame.scope,
                    span,
                });
            }
        }
        Ok(())
    }

    fn lower_loop(
        &mut self,
        cond: Option<&ast::Expr>,
        body: &ast::Stmt,
        step: Option<&ast::Expr>,
        test_first: bool,
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let scope = self.new_scope();
        self.targets.push(Target {
            scope,
            is_loop: true,
        });
        let r = (|| {
            let mut pre = Vec::new();
            let c = match cond {
                Some(c) => Some(self.expr(c, &mut pre)?),
                None => None,
            };
            let mut b = Vec::new();
            self.branch(body, &mut b)?;
            let mut st = Vec::new();
            if let Some(s) = step {
                self.effect(s, &mut st)?;
            }
            let cond = if pre.is_empty() {
                c
            } else {
                // A condition with side effects: evaluate it at the top of the
                // body and leave when it fails.
                let c = c.unwrap_or_else(|| int(1, Scalar::I32));
                let not_c = Expr {
                    kind: ExprKind::Unary(Unary::Not, Box::new(c)),
                    ty: Scalar::I32,
                };
                pre.push(Stmt::If {
                    cond: not_c,
                    then: vec![Stmt::Jump {
                        kind: JumpKind::Break,
                        scope,
                        span,
                    }],
                    els: Vec::new(),
                    span,
                });
                if !test_first {
                    // do { body } while (effects; c): run the test after the body.
                    b.extend(std::mem::take(&mut st));
                    st = pre;
                    pre = Vec::new();
                }
                pre.extend(b);
                b = pre;
                None
            };
            out.push(Stmt::Loop {
                scope,
                cond,
                body: b,
                step: st,
                test_first,
                span,
            });
            Ok(())
        })();
        self.targets.pop();
        r
    }

    fn switch(
        &mut self,
        cond: &ast::Expr,
        cases: &[ast::SwitchCase],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let c = self.expr(cond, out)?;
        let ty = c.ty.promote();
        let sel = self.temp(ty, span);
        out.push(Stmt::Assign {
            var: sel,
            value: convert(c, ty),
            span,
        });
        let scope = self.new_scope();
        self.targets.push(Target {
            scope,
            is_loop: false,
        });
        let r = (|| {
            let ends_in_jump = |c: &ast::SwitchCase| {
                matches!(
                    c.body.last().map(|s| &s.kind),
                    Some(S::Break | S::Return(_) | S::Continue)
                )
            };
            let fallthrough = cases.iter().rev().skip(1).any(|c| !ends_in_jump(c));
            let mut bodies = Vec::new();
            for case in cases {
                let mut b = Vec::new();
                self.push_scope();
                let n = case.body.len();
                let r = case.body.iter().enumerate().try_for_each(|(i, s)| {
                    if !fallthrough && i + 1 == n && matches!(s.kind, S::Break) {
                        Ok(())
                    } else {
                        self.stmt(s, &mut b)
                    }
                });
                self.pop_scope();
                r?;
                let mut tests = Vec::new();
                let mut is_default = false;
                for l in &case.labels {
                    match l {
                        None => is_default = true,
                        Some(e) => match self.const_value(e) {
                            Some(v) => tests.push(v.convert(ty)),
                            None => return fail(e.meta.span, "`case` label is not a constant"),
                        },
                    }
                }
                bodies.push((tests, is_default, b, case.meta.span));
            }
            let eq = |v: Value| {
                bin(
                    BinOp::Eq,
                    var_expr(&self.k, sel),
                    Expr {
                        kind: ExprKind::Const(v),
                        ty,
                    },
                    ty,
                )
            };
            let test = |tests: &[Value]| -> Option<Expr> {
                tests
                    .iter()
                    .map(|v| Expr {
                        ty: Scalar::I32,
                        ..eq(*v)
                    })
                    .reduce(|a, b| Expr {
                        kind: ExprKind::Or(Box::new(a), Box::new(b)),
                        ty: Scalar::I32,
                    })
            };
            let mut body = Vec::new();
            if !fallthrough {
                // if (sel == a || sel == b) … else if … else default
                let mut chain: Vec<Stmt> = bodies
                    .iter()
                    .find(|(_, d, _, _)| *d)
                    .map(|(_, _, b, _)| b.clone())
                    .unwrap_or_default();
                for (tests, is_default, b, span) in bodies.into_iter().rev() {
                    if is_default && tests.is_empty() {
                        continue;
                    }
                    let Some(t) = test(&tests) else { continue };
                    let t = if is_default {
                        Expr {
                            kind: ExprKind::Const(Value::I(1)),
                            ty: Scalar::I32,
                        }
                    } else {
                        t
                    };
                    chain = vec![Stmt::If {
                        cond: t,
                        then: b,
                        els: chain,
                        span,
                    }];
                }
                body = chain;
            } else {
                // k = index of the first matching case (default if none);
                // case i runs when k <= i, so control falls through.
                let n = bodies.len() as i64;
                let default_index = bodies
                    .iter()
                    .position(|(_, d, _, _)| *d)
                    .map_or(n, |i| i as i64);
                let mut k_expr = int(default_index, Scalar::I32);
                for (i, (tests, _, _, _)) in bodies.iter().enumerate().rev() {
                    if let Some(t) = test(tests) {
                        k_expr = Expr {
                            kind: ExprKind::Select(
                                Box::new(t),
                                Box::new(int(i as i64, Scalar::I32)),
                                Box::new(k_expr),
                            ),
                            ty: Scalar::I32,
                        };
                    }
                }
                let kv = self.temp(Scalar::I32, span);
                body.push(Stmt::Assign {
                    var: kv,
                    value: k_expr,
                    span,
                });
                for (i, (_, _, b, span)) in bodies.into_iter().enumerate() {
                    let c = bin(
                        BinOp::Le,
                        var_expr(&self.k, kv),
                        int(i as i64, Scalar::I32),
                        Scalar::I32,
                    );
                    body.push(Stmt::If {
                        cond: Expr {
                            ty: Scalar::I32,
                            ..c
                        },
                        then: b,
                        els: Vec::new(),
                        span,
                    });
                }
            }
            out.push(Stmt::Scope { scope, body });
            Ok(())
        })();
        self.targets.pop();
        r
    }

    fn decl(&mut self, d: &ast::VarDecl, out: &mut Vec<Stmt>) -> Result<()> {
        let span = d.meta.span;
        if d.is_static && d.space == Space::Local {
            return fail(span, "`static` local variables are not supported");
        }
        if d.ty.is_ref {
            return self.reference(d, out);
        }
        if d.ty.base == BaseType::Auto {
            return self.auto_decl(d, out);
        }
        let pointer = self.pointer_depth(&d.ty);
        if pointer > 1 {
            return fail(span, "pointers to pointers are not supported");
        }
        if pointer == 1 {
            if d.space != Space::Local || !d.dims.is_empty() {
                return fail(
                    span,
                    "arrays of pointers and pointers in shared memory are not supported",
                );
            }
            let Some(ast::Init::Expr(init)) = &d.init else {
                return fail(span, "a pointer variable must be initialized from an array");
            };
            let (array, off, inner) = self.pointer(init, out)?;
            let ov = self.new_var(
                &format!("{}_offset", d.name),
                Scalar::I64,
                VarKind::Local,
                span,
            );
            out.push(Stmt::Assign {
                var: ov,
                value: off.map_or(int(0, Scalar::I64), |o| convert(o, Scalar::I64)),
                span,
            });
            self.bind(
                &d.name,
                Binding::Ptr {
                    array,
                    offset: Some(ov),
                    inner,
                },
            );
            return Ok(());
        }
        let rec = self.record_type(&d.ty, span)?;
        let is_array = !d.dims.is_empty();
        let memory = !matches!(d.space, Space::Local);
        if let (Some(r), false, false) = (&rec, is_array, memory) {
            return self.record_local(d, r.clone(), out);
        }
        let elem = match &rec {
            Some(r) => r.types[0],
            None => self.scalar(&d.ty, span)?,
        };
        if is_array || memory {
            let dims = if d.is_extern && d.dims.len() == 1 && d.dims[0].is_none() {
                Vec::new()
            } else {
                let dims = self.dims(&d.dims, span)?;
                if dims.is_empty() {
                    vec![1]
                } else {
                    dims
                }
            };
            let space = if d.space == Space::Local {
                Space::Local
            } else {
                d.space
            };
            if !matches!(space, Space::Local | Space::Shared) {
                return fail(
                    span,
                    "only local and `__shared__` variables can be declared in a kernel",
                );
            }
            let name = self.unique(&d.name);
            let id = self.new_array(Array {
                name,
                space,
                elem,
                layout: rec.as_ref().map_or(Layout::scalar(elem), |r| r.layout()),
                dims: dims.clone(),
                param: None,
                init: Vec::new(),
                span,
            });
            if let Some(r) = &rec {
                self.records.insert(id, r.clone());
                if d.init.is_some() {
                    return fail(
                        span,
                        "initializers of struct or vector arrays are not supported yet",
                    );
                }
            }
            if is_array {
                self.bind(
                    &d.name,
                    Binding::Ptr {
                        array: id,
                        offset: None,
                        inner: dims.get(1..).unwrap_or(&[]).to_vec(),
                    },
                );
            } else {
                self.bind(&d.name, Binding::Cell(id));
            }
            if let Some(init) = &d.init {
                if space == Space::Shared {
                    return fail(span, "`__shared__` variables cannot have initializers");
                }
                let mut flat = Vec::new();
                flatten_init(init, &mut flat);
                for (i, e) in flat.into_iter().enumerate() {
                    let v = self.expr(e, out)?;
                    let access = self.access(id, int(i as i64, Scalar::I64), true, &e.meta);
                    out.push(Stmt::Store {
                        access,
                        value: convert(v, elem),
                        span,
                    });
                }
            }
            return Ok(());
        }
        let v = self.new_var(&d.name, elem, VarKind::Local, span);
        if let Some(init) = &d.init {
            let ast::Init::Expr(e) = init else {
                return fail(span, "brace initializer for a scalar");
            };
            let value = self.expr(e, out)?;
            out.push(Stmt::Assign {
                var: v,
                value: convert(value, elem),
                span,
            });
            self.remember_constant(d, e);
        }
        self.bind(&d.name, Binding::Var(v));
        Ok(())
    }

    /// A `const`/`constexpr` local with a constant integer initializer is
    /// also a compile-time constant (an array size, a template argument).
    fn remember_constant(&mut self, d: &ast::VarDecl, e: &ast::Expr) {
        if !(d.ty.is_const || d.is_constexpr) {
            return;
        }
        if let Some(Value::I(c)) = self.const_value(e) {
            if let Some(m) = self.consts.last_mut() {
                m.insert(d.name.clone(), c);
            }
        }
    }

    /// `auto x = e;`: a scalar of `e`'s type (`auto` pointers and arrays
    /// are not supported).
    fn auto_decl(&mut self, d: &ast::VarDecl, out: &mut Vec<Stmt>) -> Result<()> {
        let span = d.meta.span;
        let Some(ast::Init::Expr(e)) = &d.init else {
            return fail(
                span,
                "`auto` needs an initializer `= expression` to deduce its type",
            );
        };
        if !d.ty.pointers.is_empty() || !d.dims.is_empty() || d.space != Space::Local {
            return fail(span, "`auto` is supported only for local scalars");
        }
        if self.is_pointer_expr(e) {
            return fail(span, "`auto` deduced as a pointer is not supported");
        }
        let value = self.expr(e, out)?;
        let v = self.new_var(&d.name, value.ty, VarKind::Local, span);
        out.push(Stmt::Assign {
            var: v,
            value,
            span,
        });
        self.remember_constant(d, e);
        self.bind(&d.name, Binding::Var(v));
        Ok(())
    }

    /// `float &r = lvalue;`: `r` names the lvalue itself. An array element's
    /// index is evaluated once, here, as C++ binds it.
    fn reference(&mut self, d: &ast::VarDecl, out: &mut Vec<Stmt>) -> Result<()> {
        let span = d.meta.span;
        let Some(ast::Init::Expr(e)) = &d.init else {
            return fail(span, "a reference must be initialized with `= lvalue`");
        };
        if !d.ty.pointers.is_empty() || !d.dims.is_empty() || d.space != Space::Local {
            return fail(span, "references to pointers or arrays are not supported");
        }
        if let Some(rec) = self.record_type(&d.ty, span)? {
            let b = self.record_reference(e, &rec, &d.name, d.ty.is_const, out)?;
            self.bind(&d.name, b);
            return Ok(());
        }
        let b = self.bind_lvalue(e, &d.name, out)?;
        if d.ty.base != BaseType::Auto {
            let want = self.scalar(&d.ty, span)?;
            if self.binding_type(&b) != Some(want) {
                return fail(
                    span,
                    "a reference must bind to an lvalue of the same type (a conversion would need a temporary)",
                );
            }
        }
        self.bind(&d.name, b);
        Ok(())
    }

    /// The binding that makes a reference named `name` alias the lvalue `e`.
    fn bind_lvalue(&mut self, e: &ast::Expr, name: &str, out: &mut Vec<Stmt>) -> Result<Binding> {
        Ok(match self.lvalue(e, out)? {
            LValue::Var(v) => Binding::Var(v),
            LValue::Mem(array, index, slot) => {
                if slot != 0 || self.records.contains_key(&array) {
                    return fail(
                        e.meta.span,
                        "references to struct or vector members are not supported",
                    );
                }
                let iv = self.new_var(
                    &format!("{name}_index"),
                    Scalar::I64,
                    VarKind::Local,
                    e.meta.span,
                );
                out.push(Stmt::Assign {
                    var: iv,
                    value: convert(index, Scalar::I64),
                    span: e.meta.span,
                });
                Binding::Elem { array, index: iv }
            }
        })
    }

    /// The scalar type of what a binding denotes, if it is one scalar.
    fn binding_type(&self, b: &Binding) -> Option<Scalar> {
        match b {
            Binding::Var(v) => Some(self.k.vars[*v].ty),
            Binding::Cell(a) | Binding::Elem { array: a, .. } => Some(self.k.arrays[*a].elem),
            Binding::Const(_, t) => Some(*t),
            Binding::Ptr { .. } | Binding::Rec { .. } => None,
        }
    }

    /// The parameter bindings of a template instantiated with `args`:
    /// types for type parameters, constants for value parameters.
    fn template_bindings(
        &self,
        t: &ast::Template,
        args: &[String],
        span: Span,
    ) -> Result<Vec<(String, TemplateArg)>> {
        if args.len() != t.params.len() {
            return fail(
                span,
                format!(
                    "`{}` takes {} template arguments but {} were given",
                    t.name,
                    t.params.len(),
                    args.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (p, a) in t.params.iter().zip(args) {
            let arg = match &p.value_type {
                None => TemplateArg::Type(self.type_argument(a, span)?),
                Some(ty) => {
                    let scalar = self.scalar(ty, span)?;
                    let v = self.value_argument(a).ok_or_else(|| LowerError {
                        offset: span.start,
                        message: if crate::cuda::lex::is_identifier(a) {
                            format!(
                                "template argument `{a}` for `{}` needs a value: {}",
                                p.name,
                                crate::cuda::include::define_hint(a)
                            )
                        } else {
                            format!(
                                "template argument `{a}` for `{}` is not an integer constant copper can evaluate",
                                p.name
                            )
                        },
                    })?;
                    TemplateArg::Value(v.convert(scalar), scalar)
                }
            };
            out.push((p.name.clone(), arg));
        }
        Ok(out)
    }

    /// A type argument as written (`float`, `unsigned int`, `T`, a typedef).
    fn type_argument(&self, a: &str, span: Span) -> Result<BaseType> {
        let words: Vec<&str> = a.split_whitespace().collect();
        let base = match words.as_slice() {
            ["float"] => BaseType::Float,
            ["double"] => BaseType::Double,
            ["int"] | ["signed"] | ["signed", "int"] => BaseType::Int,
            ["unsigned"] | ["unsigned", "int"] => BaseType::UInt,
            ["long"] | ["long", "long"] => BaseType::LongLong,
            ["unsigned", "long"] | ["unsigned", "long", "long"] => BaseType::ULongLong,
            ["short"] => BaseType::Short,
            ["unsigned", "short"] => BaseType::UShort,
            ["char"] => BaseType::Char,
            ["unsigned", "char"] => BaseType::UChar,
            ["bool"] => BaseType::Bool,
            [n] if n.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                match self.template_types.get(*n) {
                    Some(t) => t.clone(),
                    None => BaseType::Named(n.to_string()),
                }
            }
            _ => {
                return fail(
                    span,
                    format!("template type argument `{a}` is not supported"),
                )
            }
        };
        self.base_scalar(&base, span, 0)?;
        Ok(base)
    }

    /// A value argument: an integer literal or a constant in scope.
    fn value_argument(&self, a: &str) -> Option<Value> {
        let a = a.trim();
        if let Ok(v) = a.trim_end_matches(['u', 'U', 'l', 'L']).parse::<i64>() {
            return Some(Value::I(v));
        }
        if let Some(v) = self.consts.iter().rev().find_map(|c| c.get(a)) {
            return Some(Value::I(*v));
        }
        match a {
            "true" => Some(Value::I(1)),
            "false" => Some(Value::I(0)),
            _ => self.file_constant(a).map(|(v, _)| v),
        }
    }

    /// Binds template parameters in the current scope.
    fn bind_template(&mut self, bindings: Vec<(String, TemplateArg)>) {
        for (name, arg) in bindings {
            match arg {
                TemplateArg::Type(t) => {
                    self.template_types.insert(name, t);
                }
                TemplateArg::Value(v, ty) => {
                    if let (Value::I(i), Some(m)) = (v, self.consts.last_mut()) {
                        m.insert(name.clone(), i);
                    }
                    self.bind(&name, Binding::Const(v, ty));
                }
            }
        }
    }

    /// An access to a scalar element, with a new site.
    fn access(&mut self, array: ArrayId, index: Expr, is_write: bool, meta: &ast::Meta) -> Access {
        self.access_slot(array, index, 0, is_write, meta)
    }

    /// An access to component `slot` of element `index`, with a new site.
    fn access_slot(
        &mut self,
        array: ArrayId,
        index: Expr,
        slot: usize,
        is_write: bool,
        meta: &ast::Meta,
    ) -> Access {
        let a = &self.k.arrays[array];
        let (offset, width) = (a.layout.offsets[slot], a.slot_type(slot).size());
        let site = self.site(array, is_write, meta, offset, width);
        Access {
            array,
            index: Box::new(index),
            site,
            slot,
            charged: true,
        }
    }

    /// An error unless the elements of `array` are scalars.
    fn scalar_element(&self, array: ArrayId, span: Span) -> Result<()> {
        match self.records.get(&array) {
            Some(r) => fail(
                span,
                format!(
                    "a `{}` element used as a scalar (name a member, e.g. `.{}`)",
                    r.name, r.fields[0].name
                ),
            ),
            None => Ok(()),
        }
    }

    /// A new access site touching `width` bytes at `offset` in each
    /// element.
    fn site(
        &mut self,
        array: ArrayId,
        is_write: bool,
        meta: &ast::Meta,
        offset: u32,
        width: u32,
    ) -> SiteId {
        self.k.sites.push(Site {
            array,
            is_write,
            span: meta.span,
            node: meta.id,
            call: self.frames.first().map(|f| f.call),
            offset,
            width,
        });
        self.k.sites.len() - 1
    }

    // ---- expressions ----

    /// Lowers an expression statement (value discarded).
    fn effect(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<()> {
        let span = e.meta.span;
        match &e.kind {
            A::Assign(op, lhs, rhs) => self.assign(*op, lhs, rhs, span, out, false).map(|_| ()),
            A::Unary(op @ (UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec), x) => {
                let bop = if matches!(op, UnOp::PreInc | UnOp::PostInc) {
                    BinOp::Add
                } else {
                    BinOp::Sub
                };
                let one = ast::Expr {
                    meta: e.meta.clone(),
                    kind: A::Int {
                        value: 1,
                        text: "1".into(),
                    },
                };
                self.assign(Some(bop), x, &one, span, out, false)
                    .map(|_| ())
            }
            A::Call(name, args) => self.call(name, args, span, out, false).map(|_| ()),
            A::Comma(xs) => xs.iter().try_for_each(|x| self.effect(x, out)),
            _ => self.expr(e, out).map(|_| ()),
        }
    }

    /// Lowers an assignment; returns the assigned value as an expression
    /// that is valid after the statements emitted.
    fn assign(
        &mut self,
        op: Option<BinOp>,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Expr> {
        // Pointer assignment: `p = a + k`, `p += k`.
        if let A::Ident(n) = &lhs.kind {
            if let Binding::Ptr {
                array,
                offset: Some(ov),
                ..
            } = self.lookup(n, lhs.meta.span)?
            {
                let new_off = match op {
                    None => {
                        let (a2, off, _) = self.pointer(rhs, out)?;
                        if a2 != array {
                            return fail(
                                span,
                                "a pointer variable must always point into the same array",
                            );
                        }
                        off.map_or(int(0, Scalar::I64), |o| convert(o, Scalar::I64))
                    }
                    Some(o @ (BinOp::Add | BinOp::Sub)) => {
                        let k = self.expr(rhs, out)?;
                        arith(o, var_expr(&self.k, ov), convert(k, Scalar::I64), span)?
                    }
                    Some(_) => return fail(span, "this operator on a pointer"),
                };
                out.push(Stmt::Assign {
                    var: ov,
                    value: convert(new_off, Scalar::I64),
                    span,
                });
                return Ok(var_expr(&self.k, ov));
            }
        }
        if let Some(FieldType::Record(_)) = self.static_field_type(lhs) {
            if op.is_some() || want_value {
                return fail(
                    span,
                    "a struct or vector assignment used as a value or with an operator",
                );
            }
            self.record_assign(lhs, rhs, span, out)?;
            return Ok(int(0, Scalar::I32));
        }
        let target = self.lvalue(lhs, out)?;
        let r = self.expr(rhs, out)?;
        match target {
            LValue::Var(v) => {
                let ty = self.k.vars[v].ty;
                let value = match op {
                    None => r,
                    Some(o) => arith(o, var_expr(&self.k, v), r, span)?,
                };
                out.push(Stmt::Assign {
                    var: v,
                    value: convert(value, ty),
                    span,
                });
                Ok(var_expr(&self.k, v))
            }
            LValue::Mem(array, index, slot) => {
                let elem = self.k.arrays[array].slot_type(slot);
                let value = match op {
                    None => r,
                    Some(o) => {
                        let read = self.access_slot(array, index.clone(), slot, false, &lhs.meta);
                        let cur = Expr {
                            kind: ExprKind::Load(read),
                            ty: elem,
                        };
                        arith(o, cur, r, span)?
                    }
                };
                let mut value = convert(value, elem);
                if want_value {
                    // The assignment's value, saved before memory changes.
                    let t = self.temp(elem, span);
                    out.push(Stmt::Assign {
                        var: t,
                        value,
                        span,
                    });
                    value = var_expr(&self.k, t);
                }
                let access = self.access_slot(array, index, slot, true, &lhs.meta);
                out.push(Stmt::Store {
                    access,
                    value: value.clone(),
                    span,
                });
                Ok(value)
            }
        }
    }

    /// The place an lvalue denotes; index side effects are emitted.
    fn lvalue(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<LValue> {
        let span = e.meta.span;
        match &e.kind {
            A::Ident(n) => match self.lookup(n, span)? {
                Binding::Var(v) if self.k.vars[v].kind == VarKind::Symbol => fail(
                    span,
                    format!(
                        "cannot assign to `{n}`: {}",
                        crate::cuda::include::define_hint(n)
                    ),
                ),
                Binding::Var(v) => Ok(LValue::Var(v)),
                Binding::Cell(a) => Ok(LValue::Mem(a, int(0, Scalar::I64), 0)),
                Binding::Elem { array, index } => {
                    Ok(LValue::Mem(array, var_expr(&self.k, index), 0))
                }
                Binding::Const(..) => fail(span, format!("cannot assign to constant `{n}`")),
                Binding::Ptr { .. } => fail(span, format!("cannot assign to array `{n}`")),
                Binding::Rec { .. } => fail(span, format!("`{n}` is a struct or vector")),
            },
            A::Index(..) | A::Unary(UnOp::Deref, _) => {
                let (a, idx) = self.element(e, out)?;
                self.scalar_element(a, span)?;
                Ok(LValue::Mem(a, idx, 0))
            }
            A::Member { .. } => match self.place(e, out)? {
                (_, FieldType::Record(r)) => {
                    fail(span, format!("`{}` member used as a scalar", r.name))
                }
                (Place::Vars(v), _) => Ok(LValue::Var(v[0])),
                (
                    Place::Mem {
                        array, index, slot, ..
                    },
                    _,
                ) => Ok(LValue::Mem(array, index, slot)),
            },
            _ => fail(span, "expression is not assignable"),
        }
    }

    /// The array and flattened index of `a[i][j]…` or `*p`.
    fn element(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<(ArrayId, Expr)> {
        let span = e.meta.span;
        let mut indices = Vec::new();
        let mut base = e;
        loop {
            match &base.kind {
                A::Index(b, i) => {
                    indices.push(i.as_ref());
                    base = b;
                }
                A::Unary(UnOp::Deref, p) if indices.is_empty() => {
                    let (array, off, _) = self.pointer(p, out)?;
                    return Ok((array, off.unwrap_or_else(|| int(0, Scalar::I64))));
                }
                _ => break,
            }
        }
        indices.reverse();
        let (array, off, inner) = self.pointer(base, out)?;
        if indices.len() > inner.len() + 1 {
            return fail(span, "too many indices for this array");
        }
        if indices.len() < inner.len() + 1 {
            return fail(
                span,
                "partially indexed multi-dimensional arrays are not supported",
            );
        }
        let mut idx: Option<Expr> = None;
        for (k, i) in indices.iter().enumerate() {
            let v = self.expr(i, out)?;
            if v.ty.is_float() {
                return fail(i.meta.span, "array index is not an integer");
            }
            idx = Some(match idx {
                None => v,
                Some(prev) => {
                    let scaled = arith(
                        BinOp::Mul,
                        convert(prev, Scalar::I64),
                        int(inner[k - 1] as i64, Scalar::I64),
                        span,
                    )?;
                    arith(BinOp::Add, scaled, convert(v, Scalar::I64), span)?
                }
            });
        }
        let idx = idx.unwrap_or_else(|| int(0, Scalar::I64));
        let idx = match off {
            Some(o) => arith(BinOp::Add, o, convert(idx, Scalar::I64), span)?,
            None => idx,
        };
        Ok((array, idx))
    }

    /// An expression denoting a pointer into an array: `a`, `a + k`,
    /// `&a[i]`, `p - k`. Returns the array, the element offset, and the
    /// inner dimensions.
    fn pointer(
        &mut self,
        e: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(ArrayId, Option<Expr>, Vec<u64>)> {
        let span = e.meta.span;
        match &e.kind {
            A::Ident(n) => match self.lookup(n, span)? {
                Binding::Ptr {
                    array,
                    offset,
                    inner,
                } => Ok((array, offset.map(|o| var_expr(&self.k, o)), inner)),
                Binding::Cell(a) => fail(
                    span,
                    format!(
                        "`{n}` is a scalar in memory, not an array ({})",
                        self.k.arrays[a].name
                    ),
                ),
                Binding::Var(_)
                | Binding::Rec { .. }
                | Binding::Elem { .. }
                | Binding::Const(..) => fail(span, format!("`{n}` is not an array or pointer")),
            },
            A::Binary(op @ (BinOp::Add | BinOp::Sub), l, r) => {
                let (p, k, neg) = if matches!(
                    l.kind,
                    A::Ident(_) | A::Binary(..) | A::Unary(UnOp::AddrOf, _)
                ) && self.is_pointer_expr(l)
                {
                    (l, r, *op == BinOp::Sub)
                } else if *op == BinOp::Add && self.is_pointer_expr(r) {
                    (r, l, false)
                } else {
                    return fail(span, "expected a pointer into an array");
                };
                let (array, off, inner) = self.pointer(p, out)?;
                if !inner.is_empty() {
                    return fail(
                        span,
                        "pointer arithmetic on multi-dimensional arrays is not supported",
                    );
                }
                let kv = convert(self.expr(k, out)?, Scalar::I64);
                let kv = if neg {
                    arith(BinOp::Sub, int(0, Scalar::I64), kv, span)?
                } else {
                    kv
                };
                let total = match off {
                    Some(o) => arith(BinOp::Add, o, kv, span)?,
                    None => kv,
                };
                Ok((array, Some(total), inner))
            }
            A::Unary(UnOp::AddrOf, x) => {
                let (a, idx) = match &x.kind {
                    A::Ident(n) => match self.lookup(n, span)? {
                        Binding::Cell(a) => (a, int(0, Scalar::I64)),
                        Binding::Elem { array, index } => (array, var_expr(&self.k, index)),
                        _ => return fail(span, "address of a local variable"),
                    },
                    _ => self.element(x, out)?,
                };
                Ok((a, Some(convert(idx, Scalar::I64)), Vec::new()))
            }
            A::Cast(style, t, x) => {
                let (array, off, inner) = self.pointer(x, out)?;
                let same = t.pointers.len() == 1
                    && self.scalar(t, span).ok() == Some(self.k.arrays[array].elem);
                if !same && !matches!(t.base, BaseType::Void) {
                    let what = style.keyword().unwrap_or("cast");
                    return fail(
                        span,
                        format!("`{what}` to a pointer of another element type is not supported (it reinterprets memory)"),
                    );
                }
                Ok((array, off, inner))
            }
            _ => fail(span, "expected a pointer into an array"),
        }
    }

    fn is_pointer_expr(&self, e: &ast::Expr) -> bool {
        match &e.kind {
            A::Ident(n) => {
                matches!(
                    self.scopes.iter().rev().find_map(|s| s.get(n)),
                    Some(Binding::Ptr { .. })
                ) || self
                    .file
                    .globals
                    .iter()
                    .any(|g| &g.name == n && !g.dims.is_empty())
            }
            A::Binary(BinOp::Add | BinOp::Sub, l, r) => {
                self.is_pointer_expr(l) || self.is_pointer_expr(r)
            }
            A::Unary(UnOp::AddrOf, _) => true,
            A::Cast(_, t, x) => !t.pointers.is_empty() && self.is_pointer_expr(x),
            _ => false,
        }
    }

    /// Lowers an expression used as a value.
    fn expr(&mut self, e: &ast::Expr, out: &mut Vec<Stmt>) -> Result<Expr> {
        let span = e.meta.span;
        Ok(match &e.kind {
            A::Int { value, text } => {
                let ty = self.int_literal_type(*value, text);
                Expr {
                    kind: ExprKind::Const(Value::I(*value as i64).convert(ty)),
                    ty,
                }
            }
            A::Float(t) => {
                let single = t.ends_with(['f', 'F']);
                let ty = if single { Scalar::F32 } else { Scalar::F64 };
                let Ok(f) = t.trim_end_matches(['f', 'F']).parse::<f64>() else {
                    return fail(span, format!("floating literal `{t}` is not supported"));
                };
                Expr {
                    kind: ExprKind::Const(Value::F(f).convert(ty)),
                    ty,
                }
            }
            A::Char(c) => match char_value(c) {
                Some(v) => int(v, Scalar::I8),
                None => return fail(span, format!("character literal {c} is not supported")),
            },
            A::Bool(b) => Expr {
                kind: ExprKind::Const(Value::I(*b as i64)),
                ty: Scalar::Bool,
            },
            A::Str(_) => return fail(span, "string literals outside `printf`"),
            A::Ident(n) => match n.as_str() {
                "warpSize" => Expr {
                    kind: ExprKind::Builtin(Builtin::WarpSize),
                    ty: Scalar::I32,
                },
                _ => match self.lookup(n, span) {
                    Ok(Binding::Var(v)) => var_expr(&self.k, v),
                    Ok(Binding::Cell(a)) => {
                        self.scalar_element(a, span)?;
                        let access = self.access(a, int(0, Scalar::I64), false, &e.meta);
                        Expr {
                            kind: ExprKind::Load(access),
                            ty: self.k.arrays[a].elem,
                        }
                    }
                    Ok(Binding::Elem { array, index }) => {
                        self.scalar_element(array, span)?;
                        let idx = var_expr(&self.k, index);
                        let access = self.access(array, idx, false, &e.meta);
                        Expr {
                            kind: ExprKind::Load(access),
                            ty: self.k.arrays[array].elem,
                        }
                    }
                    Ok(Binding::Const(v, ty)) => Expr {
                        kind: ExprKind::Const(v),
                        ty,
                    },
                    Ok(Binding::Ptr { .. }) => {
                        return fail(span, format!("array `{n}` used as a value"))
                    }
                    Ok(Binding::Rec { rec, .. }) => {
                        return fail(
                            span,
                            format!("`{n}` (a `{}`) used as a scalar value", rec.name),
                        )
                    }
                    // `INT_MAX`, `FLT_MAX`, … when nothing in the file
                    // defines them; otherwise an unknown constant.
                    Err(e) => match math::library_constant(n) {
                        Some((v, ty)) => Expr {
                            kind: ExprKind::Const(v),
                            ty,
                        },
                        None if self.is_undefined(n) => {
                            let v = self.symbol(n, span);
                            var_expr(&self.k, v)
                        }
                        None => return Err(e),
                    },
                },
            },
            A::Member {
                base,
                field,
                arrow: false,
            } => {
                let dim = match field.as_str() {
                    "x" => 0,
                    "y" => 1,
                    "z" => 2,
                    _ => 3,
                };
                let b = match &base.kind {
                    A::Ident(n) if dim < 3 => match n.as_str() {
                        "threadIdx" => Some(Builtin::ThreadIdx(dim)),
                        "blockIdx" => Some(Builtin::BlockIdx(dim)),
                        "blockDim" => Some(Builtin::BlockDim(dim)),
                        "gridDim" => Some(Builtin::GridDim(dim)),
                        _ => None,
                    },
                    _ => None,
                };
                match b {
                    Some(b) => Expr {
                        kind: ExprKind::Builtin(b),
                        ty: Scalar::U32,
                    },
                    None => self.member_value(e, out)?,
                }
            }
            A::Member { .. } => self.member_value(e, out)?,
            A::Unary(op, x) => match op {
                UnOp::Neg | UnOp::BitNot => {
                    let v = self.expr(x, out)?;
                    if *op == UnOp::BitNot && v.ty.is_float() {
                        return fail(span, "`~` on a floating-point operand");
                    }
                    let ty = v.ty.promote();
                    let u = if *op == UnOp::Neg {
                        Unary::Neg
                    } else {
                        Unary::BitNot
                    };
                    Expr {
                        kind: ExprKind::Unary(u, Box::new(convert(v, ty))),
                        ty,
                    }
                }
                UnOp::Plus => {
                    let v = self.expr(x, out)?;
                    let ty = v.ty.promote();
                    convert(v, ty)
                }
                UnOp::Not => {
                    let v = self.expr(x, out)?;
                    Expr {
                        kind: ExprKind::Unary(Unary::Not, Box::new(v)),
                        ty: Scalar::I32,
                    }
                }
                UnOp::Deref => {
                    let (a, idx) = self.element(e, out)?;
                    self.scalar_element(a, span)?;
                    let access = self.access(a, idx, false, &e.meta);
                    Expr {
                        kind: ExprKind::Load(access),
                        ty: self.k.arrays[a].elem,
                    }
                }
                UnOp::AddrOf => {
                    return fail(span, "`&` outside an atomic call or pointer initialization")
                }
                UnOp::PreInc | UnOp::PreDec => {
                    let bop = if *op == UnOp::PreInc {
                        BinOp::Add
                    } else {
                        BinOp::Sub
                    };
                    let one = ast::Expr {
                        meta: e.meta.clone(),
                        kind: A::Int {
                            value: 1,
                            text: "1".into(),
                        },
                    };
                    let v = self.assign(Some(bop), x, &one, span, out, true)?;
                    self.snapshot(v, span, out)
                }
                UnOp::PostInc | UnOp::PostDec => {
                    let old = self.expr(x, out)?;
                    let old = self.snapshot(old, span, out);
                    let bop = if *op == UnOp::PostInc {
                        BinOp::Add
                    } else {
                        BinOp::Sub
                    };
                    let one = ast::Expr {
                        meta: e.meta.clone(),
                        kind: A::Int {
                            value: 1,
                            text: "1".into(),
                        },
                    };
                    self.assign(Some(bop), x, &one, span, out, false)?;
                    old
                }
            },
            A::Binary(op @ (BinOp::And | BinOp::Or), l, r) => {
                let lv = self.expr(l, out)?;
                let mut effects = Vec::new();
                let rv = self.expr(r, &mut effects)?;
                if effects.is_empty() {
                    arith(*op, lv, rv, span)?
                } else {
                    // `l && r` where r has side effects: t = l; if (t) { effects; t = r; }
                    let t = self.temp(Scalar::I32, span);
                    let truth = |v: Expr| Expr {
                        kind: ExprKind::Unary(
                            Unary::Not,
                            Box::new(Expr {
                                kind: ExprKind::Unary(Unary::Not, Box::new(v)),
                                ty: Scalar::I32,
                            }),
                        ),
                        ty: Scalar::I32,
                    };
                    out.push(Stmt::Assign {
                        var: t,
                        value: truth(lv),
                        span,
                    });
                    effects.push(Stmt::Assign {
                        var: t,
                        value: truth(rv),
                        span,
                    });
                    let tv = var_expr(&self.k, t);
                    let cond = if *op == BinOp::And {
                        tv
                    } else {
                        Expr {
                            kind: ExprKind::Unary(Unary::Not, Box::new(tv)),
                            ty: Scalar::I32,
                        }
                    };
                    out.push(Stmt::If {
                        cond,
                        then: effects,
                        els: Vec::new(),
                        span,
                    });
                    var_expr(&self.k, t)
                }
            }
            A::Binary(op, l, r) => {
                if self.is_pointer_expr(e) {
                    return fail(span, "pointer arithmetic used as a value");
                }
                let lv = self.expr(l, out)?;
                let lv = if expr_has_effects(r) {
                    self.snapshot(lv, span, out)
                } else {
                    lv
                };
                let rv = self.expr(r, out)?;
                arith(*op, lv, rv, span)?
            }
            A::Assign(op, lhs, rhs) => {
                let v = self.assign(*op, lhs, rhs, span, out, true)?;
                self.snapshot(v, span, out)
            }
            A::Cond(c, a, b) => {
                let cv = self.expr(c, out)?;
                let mut ea = Vec::new();
                let av = self.expr(a, &mut ea)?;
                let mut eb = Vec::new();
                let bv = self.expr(b, &mut eb)?;
                let ty = if av.ty == bv.ty {
                    av.ty
                } else {
                    Scalar::common(av.ty, bv.ty)
                };
                if ea.is_empty() && eb.is_empty() {
                    Expr {
                        kind: ExprKind::Select(
                            Box::new(cv),
                            Box::new(convert(av, ty)),
                            Box::new(convert(bv, ty)),
                        ),
                        ty,
                    }
                } else {
                    let t = self.temp(ty, span);
                    ea.push(Stmt::Assign {
                        var: t,
                        value: convert(av, ty),
                        span,
                    });
                    eb.push(Stmt::Assign {
                        var: t,
                        value: convert(bv, ty),
                        span,
                    });
                    out.push(Stmt::If {
                        cond: cv,
                        then: ea,
                        els: eb,
                        span,
                    });
                    var_expr(&self.k, t)
                }
            }
            A::Cast(style, t, x) => {
                if !t.pointers.is_empty() {
                    return fail(span, "pointer casts used as values");
                }
                let v = self.expr(x, out)?;
                let ty = self.scalar(t, span)?;
                if let (Some(kw), true) = (
                    style.keyword(),
                    matches!(style, CastStyle::Reinterpret | CastStyle::Const),
                ) {
                    if v.ty != ty {
                        return fail(
                            span,
                            format!("`{kw}` that changes the value's type is not supported"),
                        );
                    }
                }
                Expr {
                    kind: ExprKind::Convert {
                        value: Box::new(v),
                        explicit: true,
                    },
                    ty,
                }
            }
            A::Call(name, args) => match self.call(name, args, span, out, true)? {
                Some(v) => v,
                None => return fail(span, format!("`{name}` does not return a value")),
            },
            A::Index(..) => {
                let (a, idx) = self.element(e, out)?;
                self.scalar_element(a, span)?;
                let access = self.access(a, idx, false, &e.meta);
                Expr {
                    kind: ExprKind::Load(access),
                    ty: self.k.arrays[a].elem,
                }
            }
            A::SizeofType(t) => {
                let size = match self.record_type(t, span)? {
                    Some(r) if t.pointers.is_empty() => r.size,
                    _ => self.scalar(t, span)?.size(),
                };
                int(size as i64, Scalar::U64)
            }
            A::SizeofExpr(x) => {
                let mut scratch = Vec::new();
                let saved = (self.k.sites.len(), self.k.vars.len());
                let v = self.expr(x, &mut scratch)?;
                self.k.sites.truncate(saved.0);
                self.k.vars.truncate(saved.1);
                int(v.ty.size() as i64, Scalar::U64)
            }
            A::Comma(xs) => {
                let (last, rest) = xs.split_last().expect("comma has operands");
                for x in rest {
                    self.effect(x, out)?;
                }
                self.expr(last, out)?
            }
        })
    }

    /// Saves a value in a temporary when later effects could change it.
    fn snapshot(&mut self, v: Expr, span: Span, out: &mut Vec<Stmt>) -> Expr {
        if matches!(v.kind, ExprKind::Const(_)) {
            return v;
        }
        let t = self.temp(v.ty, span);
        out.push(Stmt::Assign {
            var: t,
            value: v,
            span,
        });
        var_expr(&self.k, t)
    }

    /// Lowers a call; returns its value when `want_value`.
    fn call(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Option<Expr>> {
        if name == "__syncthreads" {
            if want_value {
                return fail(span, "`__syncthreads()` used as a value");
            }
            out.push(Stmt::Sync { span });
            return Ok(None);
        }
        if matches!(
            name,
            "printf"
                | "assert"
                | "__threadfence"
                | "__threadfence_block"
                | "__threadfence_system"
                | "__syncwarp"
        ) {
            // No effect on results or cost in the model.
            return Ok(if want_value {
                Some(int(0, Scalar::I32))
            } else {
                None
            });
        }
        if let Some(op) = atomic_op(name) {
            return self.atomic(op, name, args, span, out, want_value);
        }
        if let Some((f, signature)) = math::lookup(name) {
            let mut vals = Vec::new();
            for a in args {
                vals.push(self.expr(a, out)?);
            }
            return Ok(Some(math_call(f, signature, name, vals, span)?));
        }
        if let Some((f, arity)) = math::warp_lookup(name) {
            return Ok(Some(self.warp_call(f, arity, name, args, span, out)?));
        }
        if name.starts_with("__shfl") || name.starts_with("__ballot") || name.starts_with("__match")
        {
            return fail(
                span,
                format!("warp intrinsic `{name}` is not supported (copper knows the `_sync` shuffles, ballot, any, all and __activemask)"),
            );
        }
        match self.inline(name, args, span, out)? {
            Returned::Scalar(r) => Ok(Some(var_expr(&self.k, r))),
            Returned::Nothing if want_value => fail(span, format!("`{name}` returns `void`")),
            Returned::Record(rec, _) if want_value => fail(
                span,
                format!("`{name}` returns a `{}` value, used as a scalar", rec.name),
            ),
            Returned::Nothing | Returned::Record(..) => Ok(None),
        }
    }

    /// A warp-level primitive: shuffles take and give `var`'s (promoted)
    /// type, with `width` 32 when it is left out; votes give an `int` or
    /// an `unsigned` mask.
    fn warp_call(
        &mut self,
        f: MathFn,
        arity: usize,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Expr> {
        let shuffle = !matches!(
            f,
            MathFn::Ballot | MathFn::Any | MathFn::All | MathFn::ActiveMask
        );
        if args.len() != arity && !(shuffle && args.len() == arity + 1) {
            let also = if shuffle {
                " (and an optional width)"
            } else {
                ""
            };
            return fail(span, format!("`{name}` takes {arity} argument(s){also}"));
        }
        let mut vals = Vec::new();
        for a in args {
            vals.push(self.expr(a, out)?);
        }
        if shuffle && vals.len() == arity {
            vals.push(int(32, Scalar::I32));
        }
        let ty = match f {
            MathFn::Ballot | MathFn::ActiveMask => Scalar::U32,
            MathFn::Any | MathFn::All => Scalar::I32,
            _ if vals[1].ty == Scalar::Bool => {
                return fail(span, format!("`{name}` of a `bool`"));
            }
            _ => vals[1].ty.promote(),
        };
        let types: Vec<Scalar> = match f {
            MathFn::ActiveMask => vec![],
            MathFn::Ballot | MathFn::Any | MathFn::All => vec![Scalar::U32, Scalar::Bool],
            _ => vec![Scalar::U32, ty, Scalar::I32, Scalar::I32],
        };
        let args = vals
            .into_iter()
            .zip(types)
            .map(|(v, t)| convert(v, t))
            .collect();
        Ok(Expr {
            kind: ExprKind::Call(f, args),
            ty,
        })
    }

    fn atomic(
        &mut self,
        op: AtomicOp,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
        want_value: bool,
    ) -> Result<Option<Expr>> {
        let expected = if op == AtomicOp::Cas { 3 } else { 2 };
        if args.len() != expected {
            return fail(span, format!("`{name}` takes {expected} arguments"));
        }
        let (array, off, _) = self.pointer(&args[0], out)?;
        let elem = self.k.arrays[array].elem;
        let idx = off.unwrap_or_else(|| int(0, Scalar::I64));
        let (compare, value) = if op == AtomicOp::Cas {
            let c = self.expr(&args[1], out)?;
            let v = self.expr(&args[2], out)?;
            (Some(convert(c, elem)), convert(v, elem))
        } else {
            let v = self.expr(&args[1], out)?;
            (None, convert(v, elem))
        };
        if elem.is_float() && !matches!(op, AtomicOp::Add | AtomicOp::Exch | AtomicOp::Sub) {
            return fail(span, format!("`{name}` on floating-point data"));
        }
        let result = want_value.then(|| self.temp(elem, span));
        let access = self.access(array, idx, true, &args[0].meta);
        out.push(Stmt::Atomic {
            op,
            access,
            value,
            compare,
            result,
            span,
        });
        Ok(result.map(|r| var_expr(&self.k, r)))
    }

    fn inline(
        &mut self,
        name: &str,
        args: &[ast::Expr],
        span: Span,
        out: &mut Vec<Stmt>,
    ) -> Result<Returned> {
        let file = self.file;
        let (base, targs) = match template::split_name(name) {
            Some((b, a)) => (b, Some(a)),
            None => (name, None),
        };
        let pf = callee(file, base).map_err(|m| LowerError {
            offset: span.start,
            message: m,
        })?;
        let f = match &pf.result {
            Ok(f) => f,
            Err(d) if pf.item.span.is_included() => {
                let at = format!("{}:{}:{}", d.file.display(), d.line, d.col);
                return fail(
                    span,
                    format!(
                        "call to `{name}`, which copper could not read ({at}): {}",
                        d.message
                    ),
                );
            }
            Err(d) => {
                return fail(
                    span,
                    format!(
                        "call to `{name}`, which copper could not read: {}",
                        d.message
                    ),
                )
            }
        };
        if f.kind == FnKind::Global {
            return fail(span, "kernel launches inside a kernel are not supported");
        }
        let template_bindings = match (&f.template, targs) {
            (Some(t), Some(a)) => {
                let args = template::arguments(&t.params, a, &crate::cuda::macros::MacroTable::new(&[]))
                    .map_err(|m| LowerError {
                        offset: span.start,
                        message: format!("`{name}`: {m}"),
                    })?;
                self.template_bindings(t, &args, span)?
            }
            (Some(_), None) => {
                return fail(
                    span,
                    format!("call to template `{name}` without explicit template arguments: copper does not deduce them; write `{name}<…>(…)`"),
                )
            }
            (None, Some(_)) => return fail(span, format!("`{base}` is not a template")),
            (None, None) => Vec::new(),
        };
        if self.frames.iter().any(|fr| fr.name == name) {
            return fail(
                span,
                format!("recursive call to `{name}` (recursion is not supported)"),
            );
        }
        if self.frames.len() >= MAX_INLINE_DEPTH {
            return fail(
                span,
                format!("device functions nested more than {MAX_INLINE_DEPTH} deep"),
            );
        }
        if args.len() != f.params.len() {
            return fail(
                span,
                format!(
                    "`{name}` takes {} arguments but {} were given",
                    f.params.len(),
                    args.len()
                ),
            );
        }
        // Evaluate arguments in the caller's scope.
        let mut bindings = Vec::new();
        // Template arguments are read in the caller; the callee's
        // parameter types use the callee's.
        let caller_types = std::mem::take(&mut self.template_types);
        let mut types = HashMap::new();
        for (n, a) in &template_bindings {
            if let TemplateArg::Type(t) = a {
                types.insert(n.clone(), t.clone());
            }
        }
        self.template_types = types.clone();
        // Per parameter: its scalar type, or `None` for a reference, a
        // pointer or a struct/vector (bound below).
        let mut param_types: Result<Vec<Option<Scalar>>> = Ok(Vec::new());
        for p in &f.params {
            let t =
                if p.ty.is_ref || self.pointer_depth(&p.ty) + usize::from(!p.dims.is_empty()) > 0 {
                    Ok(None)
                } else {
                    match self.record_type(&p.ty, p.meta.span) {
                        Ok(Some(_)) => Ok(None),
                        Ok(None) => self.scalar(&p.ty, p.meta.span).map(Some),
                        Err(e) => Err(e),
                    }
                };
            param_types = param_types.and_then(|mut v| {
                v.push(t?);
                Ok(v)
            });
        }
        let ret_record = if f.ret.pointers.is_empty() {
            self.record_type(&f.ret, f.meta.span)
        } else {
            Ok(None)
        };
        let ret_type = if f.ret.base == BaseType::Void || !f.ret.pointers.is_empty() {
            None
        } else {
            Some(self.scalar(&f.ret, f.meta.span))
        };
        let ref_types: Vec<Option<Scalar>> = f
            .params
            .iter()
            .map(|p| {
                p.ty.is_ref
                    .then(|| self.scalar(&p.ty, p.meta.span).ok())
                    .flatten()
            })
            .collect();
        self.template_types = caller_types;
        let param_types = param_types?;
        for (k, (p, a)) in f.params.iter().zip(args).enumerate() {
            if p.ty.is_ref {
                if !p.ty.pointers.is_empty() {
                    return fail(p.meta.span, "references to pointers are not supported");
                }
                if let Some(rec) = self.record_type(&p.ty, p.meta.span)? {
                    let b = self.record_reference(a, &rec, &p.name, p.ty.is_const, out)?;
                    bindings.push((p.name.clone(), b));
                    continue;
                }
                // A `const` reference to a value that is not an lvalue binds
                // to a temporary copy.
                let is_lvalue = matches!(
                    a.kind,
                    A::Ident(_) | A::Index(..) | A::Unary(UnOp::Deref, _)
                );
                let b = if p.ty.is_const && !is_lvalue {
                    let want = ref_types[k].ok_or_else(|| LowerError {
                        offset: p.meta.span.start,
                        message: "reference of this type is not supported".into(),
                    })?;
                    let v = self.expr(a, out)?;
                    let pv = self.new_var(&p.name, want, VarKind::Local, p.meta.span);
                    out.push(Stmt::Assign {
                        var: pv,
                        value: convert(v, want),
                        span,
                    });
                    Binding::Var(pv)
                } else {
                    let b = self.bind_lvalue(a, &p.name, out)?;
                    if self.binding_type(&b) != ref_types[k] {
                        return fail(
                            a.meta.span,
                            format!("argument for reference parameter `{}` is not an lvalue of its type", p.name),
                        );
                    }
                    b
                };
                bindings.push((p.name.clone(), b));
                continue;
            }
            if let Some(ty) = param_types[k] {
                let v = self.expr(a, out)?;
                let pv = self.new_var(&p.name, ty, VarKind::Local, p.meta.span);
                out.push(Stmt::Assign {
                    var: pv,
                    value: convert(v, ty),
                    span,
                });
                bindings.push((p.name.clone(), Binding::Var(pv)));
                continue;
            }
            if self.pointer_depth(&p.ty) + usize::from(!p.dims.is_empty()) == 0 {
                if let Some(rec) = self.record_type(&p.ty, p.meta.span)? {
                    let (from, vals) = self.record_value(a, out)?;
                    let vars = self.record_vars(&p.name, &rec, VarKind::Local, p.meta.span);
                    records::check_compatible(&rec, &from, span)?;
                    let ty = FieldType::Record(rec.clone());
                    self.write_place(Place::Vars(vars.clone()), &ty, vals, &a.meta, out);
                    bindings.push((p.name.clone(), Binding::Rec { vars, rec }));
                    continue;
                }
            }
            {
                let (array, off, inner) = self.pointer(a, out)?;
                let offset = match off {
                    None => None,
                    Some(o) => {
                        let ov = self.new_var(
                            &format!("{}_offset", p.name),
                            Scalar::I64,
                            VarKind::Local,
                            p.meta.span,
                        );
                        out.push(Stmt::Assign {
                            var: ov,
                            value: convert(o, Scalar::I64),
                            span,
                        });
                        Some(ov)
                    }
                };
                bindings.push((
                    p.name.clone(),
                    Binding::Ptr {
                        array,
                        offset,
                        inner,
                    },
                ));
            }
        }
        let result = if f.ret.base == BaseType::Void && f.ret.pointers.is_empty() {
            Returned::Nothing
        } else {
            if !f.ret.pointers.is_empty() {
                return fail(
                    f.meta.span,
                    "device functions returning pointers are not supported",
                );
            }
            match ret_record? {
                Some(rec) => {
                    let vars =
                        self.record_vars(&format!("{base}_result"), &rec, VarKind::Local, span);
                    Returned::Record(rec, vars)
                }
                None => {
                    let ty = ret_type.unwrap_or_else(|| self.scalar(&f.ret, f.meta.span))?;
                    let v = self.new_var(&format!("{base}_result"), ty, VarKind::Local, span);
                    Returned::Scalar(v)
                }
            }
        };
        let scope = self.new_scope();
        // The callee sees only globals and its parameters.
        let globals = self.scopes[0].clone();
        let saved_scopes = std::mem::replace(&mut self.scopes, vec![globals, HashMap::new()]);
        let saved_consts = std::mem::replace(&mut self.consts, vec![HashMap::new()]);
        let saved_targets = std::mem::take(&mut self.targets);
        let saved_types = std::mem::replace(&mut self.template_types, types);
        self.bind_template(template_bindings);
        for (n, b) in bindings {
            self.bind(&n, b);
        }
        self.frames.push(Frame {
            name: name.to_string(),
            scope,
            result: result.clone(),
            call: span,
        });
        let mut body = Vec::new();
        let r = f.body.iter().try_for_each(|s| self.stmt(s, &mut body));
        self.frames.pop();
        self.template_types = saved_types;
        self.targets = saved_targets;
        self.consts = saved_consts;
        let callee_globals = std::mem::replace(&mut self.scopes, saved_scopes);
        // Globals first bound inside the callee stay bound.
        if let (Some(outer), Some(inner)) = (self.scopes.first_mut(), callee_globals.first()) {
            for (k, v) in inner {
                outer.entry(k.clone()).or_insert_with(|| v.clone());
            }
        }
        r?;
        if matches!(body.last(), Some(Stmt::Jump { kind: JumpKind::Break, scope: s, .. }) if *s == scope)
        {
            body.pop();
        }
        if contains_jump_to(&body, scope) {
            out.push(Stmt::Scope { scope, body });
        } else {
            out.extend(body);
        }
        Ok(result)
    }
}

/// What a template parameter is bound to.
#[derive(Clone, Debug)]
enum TemplateArg {
    /// A type (`T` → `float`).
    Type(BaseType),
    /// An integer constant of the parameter's type.
    Value(Value, Scalar),
}

/// `N::f` → `f` (copper looks names up without their namespace).
fn unqualified(name: &str) -> &str {
    name.rsplit("::").next().unwrap_or(name)
}

/// The device function a call names (`f`, `N::f`): a qualified name must
/// match the namespace it was declared in; an unqualified one must be
/// unambiguous.
fn callee<'f>(
    file: &'f ParsedFile,
    name: &str,
) -> std::result::Result<&'f crate::cuda::parse::ParsedFunction, String> {
    let short = unqualified(name);
    let qual = name[..name.len() - short.len()].trim_end_matches("::");
    let qual = qual.trim_start_matches("::");
    let found: Vec<_> = file
        .functions
        .iter()
        .filter(|f| f.item.name == short)
        .filter(|f| {
            name == short
                || f.item.namespace == qual
                || f.item.namespace.ends_with(&format!("::{qual}"))
        })
        .collect();
    match found.as_slice() {
        [] => Err(format!("call to unknown function `{name}`")),
        [f] => Ok(f),
        [f, ..] if found.iter().all(|g| g.item.namespace == f.item.namespace) => Ok(f),
        _ => Err(format!(
            "call to `{name}` is ambiguous: functions of that name are declared in several namespaces; qualify it (`N::{short}`)"
        )),
    }
}

/// A place to assign to: a variable, or component `slot` of an array
/// element.
enum LValue {
    Var(VarId),
    Mem(ArrayId, Expr, usize),
}

fn flatten_init<'e>(i: &'e ast::Init, out: &mut Vec<&'e ast::Expr>) {
    match i {
        ast::Init::Expr(e) => out.push(e),
        ast::Init::List(items) => items.iter().for_each(|x| flatten_init(x, out)),
    }
}

fn expr_has_effects(e: &ast::Expr) -> bool {
    match &e.kind {
        A::Assign(..) | A::Call(..) => true,
        A::Unary(UnOp::PreInc | UnOp::PreDec | UnOp::PostInc | UnOp::PostDec, _) => true,
        A::Unary(_, x) | A::Cast(_, _, x) | A::SizeofExpr(x) | A::Member { base: x, .. } => {
            expr_has_effects(x)
        }
        A::Binary(_, l, r) | A::Index(l, r) => expr_has_effects(l) || expr_has_effects(r),
        A::Cond(c, a, b) => expr_has_effects(c) || expr_has_effects(a) || expr_has_effects(b),
        A::Comma(xs) => xs.iter().any(expr_has_effects),
        _ => false,
    }
}

fn contains_jump_to(stmts: &[Stmt], scope: ScopeId) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Jump { scope: t, .. } => *t == scope,
        Stmt::If { then, els, .. } => contains_jump_to(then, scope) || contains_jump_to(els, scope),
        Stmt::Loop { body, step, .. } => {
            contains_jump_to(body, scope) || contains_jump_to(step, scope)
        }
        Stmt::Scope { body, .. } => contains_jump_to(body, scope),
        _ => false,
    })
}

fn char_value(c: &str) -> Option<i64> {
    let inner = c.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let first = chars.next()?;
    if first != '\\' {
        return (chars.next().is_none() && first.is_ascii()).then_some(first as i64);
    }
    let rest: String = chars.collect();
    Some(match rest.as_str() {
        "n" => 10,
        "t" => 9,
        "r" => 13,
        "0" => 0,
        "\\" => 92,
        "'" => 39,
        "\"" => 34,
        "a" => 7,
        "b" => 8,
        "f" => 12,
        "v" => 11,
        r if r.starts_with('x') => i64::from_str_radix(&r[1..], 16).ok()? as i8 as i64,
        r if r.chars().all(|c| c.is_digit(8)) => i64::from_str_radix(r, 8).ok()? as i8 as i64,
        _ => return None,
    })
}

fn atomic_op(name: &str) -> Option<AtomicOp> {
    let base = name
        .strip_suffix("_block")
        .or_else(|| name.strip_suffix("_system"))
        .unwrap_or(name);
    Some(match base {
        "atomicAdd" => AtomicOp::Add,
        "atomicSub" => AtomicOp::Sub,
        "atomicExch" => AtomicOp::Exch,
        "atomicMin" => AtomicOp::Min,
        "atomicMax" => AtomicOp::Max,
        "atomicAnd" => AtomicOp::And,
        "atomicOr" => AtomicOp::Or,
        "atomicXor" => AtomicOp::Xor,
        "atomicInc" => AtomicOp::Inc,
        "atomicDec" => AtomicOp::Dec,
        "atomicCAS" => AtomicOp::Cas,
        _ => return None,
    })
}

/// Types the arguments and result of a math call.
fn math_call(
    f: MathFn,
    signature: Signature,
    name: &str,
    args: Vec<Expr>,
    span: Span,
) -> Result<Expr> {
    let arity = signature.arity();
    if args.len() != arity {
        return fail(span, format!("`{name}` takes {arity} argument(s)"));
    }
    let (arg_types, ty): (Vec<Scalar>, Scalar) = match signature {
        Signature::Same { ty, arity } => (vec![ty; arity], ty),
        Signature::Fixed { args, result } => (args.to_vec(), result),
        Signature::Overloaded { arity, at_least } => {
            let tys: Vec<Scalar> = args.iter().map(|a| a.ty).collect();
            let t = math::overloaded_type(&tys, at_least);
            (vec![t; arity], t)
        }
    };
    let args = args
        .into_iter()
        .zip(arg_types)
        .map(|(a, t)| convert(a, t))
        .collect();
    Ok(Expr {
        kind: ExprKind::Call(f, args),
        ty,
    })
}
