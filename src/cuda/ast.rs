//! copper's CUDA AST: what kernels are made of, with spans and node ids.
//!
//! Every statement and expression carries a [`Meta`]: a stable [`NodeId`]
//! (assigned in source order when a kernel is parsed, so the same text always
//! gets the same ids), the [`Span`] of the user's text it came from, and, for
//! expressions written with a macro, the macro invocation to print back.
//! `Meta` never takes part in equality: two trees are equal when they have the
//! same structure, which is what `parse(print(ast)) == ast` means.

use crate::source::Span;

/// Identifies one AST node within a [`Program`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u64);

/// Where a node came from. Ignored by `==`.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// Stable id of the node.
    pub id: NodeId,
    /// Byte range in the user's file ([`Span::SYNTHETIC`] for made-up nodes).
    pub span: Span,
    /// For an expression that is exactly one macro expansion, the invocation
    /// the user wrote (`IDX(r, c)`), printed instead of the expansion.
    pub macro_text: Option<String>,
}

impl PartialEq for Meta {
    fn eq(&self, _: &Meta) -> bool {
        true
    }
}

impl Meta {
    /// Metadata for a node copper made up.
    pub fn synthetic(id: NodeId) -> Meta {
        Meta {
            id,
            span: Span::SYNTHETIC,
            macro_text: None,
        }
    }
}

/// Scalar and named base types.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BaseType {
    /// `void`
    Void,
    /// `bool`
    Bool,
    /// `char` (signed on every CUDA platform)
    Char,
    /// `signed char`
    SChar,
    /// `unsigned char`
    UChar,
    /// `short`
    Short,
    /// `unsigned short`
    UShort,
    /// `int`
    Int,
    /// `unsigned int`
    UInt,
    /// `long` (64-bit on CUDA's Linux targets)
    Long,
    /// `unsigned long`
    ULong,
    /// `long long`
    LongLong,
    /// `unsigned long long`
    ULongLong,
    /// `float`
    Float,
    /// `double`
    Double,
    /// A typedef, struct or CUDA vector type by name (`float4`, `dim3`,
    /// `size_t`, `struct Point`), or a template type parameter (`T`).
    Named(String),
    /// C++ `auto`: the type of the initializer.
    Auto,
}

impl BaseType {
    /// Size in bytes of a scalar type; `None` for named types copper does not
    /// know the layout of.
    pub fn size_bytes(&self) -> Option<u32> {
        Some(match self {
            BaseType::Void | BaseType::Auto => return None,
            BaseType::Bool | BaseType::Char | BaseType::SChar | BaseType::UChar => 1,
            BaseType::Short | BaseType::UShort => 2,
            BaseType::Int | BaseType::UInt | BaseType::Float => 4,
            BaseType::Long
            | BaseType::ULong
            | BaseType::LongLong
            | BaseType::ULongLong
            | BaseType::Double => 8,
            BaseType::Named(n) => return named_type_size(type_key(n)),
        })
    }

    /// The C spelling.
    pub fn c_name(&self) -> &str {
        match self {
            BaseType::Void => "void",
            BaseType::Bool => "bool",
            BaseType::Char => "char",
            BaseType::SChar => "signed char",
            BaseType::UChar => "unsigned char",
            BaseType::Short => "short",
            BaseType::UShort => "unsigned short",
            BaseType::Int => "int",
            BaseType::UInt => "unsigned int",
            BaseType::Long => "long",
            BaseType::ULong => "unsigned long",
            BaseType::LongLong => "long long",
            BaseType::ULongLong => "unsigned long long",
            BaseType::Float => "float",
            BaseType::Double => "double",
            BaseType::Named(n) => n,
            BaseType::Auto => "auto",
        }
    }
}

/// Sizes of the CUDA builtin typedefs and vector types copper knows.
/// The name a named type is looked up by: without `struct ` and without
/// the namespaces that qualify it (`geo::Pt` is `Pt`, `std::size_t` is
/// `size_t`), as the file's types are recorded.
pub fn type_key(name: &str) -> &str {
    let name = name.strip_prefix("struct ").unwrap_or(name);
    name.rsplit("::").next().unwrap_or(name).trim()
}

fn named_type_size(name: &str) -> Option<u32> {
    let scalar = |s: &str| -> Option<u32> {
        Some(match s {
            "char" | "uchar" => 1,
            "short" | "ushort" => 2,
            "int" | "uint" | "float" => 4,
            "long" | "ulong" | "longlong" | "ulonglong" | "double" => 8,
            _ => return None,
        })
    };
    match name {
        "size_t" | "ptrdiff_t" | "int64_t" | "uint64_t" => Some(8),
        "uint" | "int32_t" | "uint32_t" => Some(4),
        "ushort" | "int16_t" | "uint16_t" => Some(2),
        "half" | "__half" | "nv_bfloat16" | "__nv_bfloat16" => Some(2),
        "half2" | "__half2" | "nv_bfloat162" | "__nv_bfloat162" => Some(4),
        "uchar" | "int8_t" | "uint8_t" => Some(1),
        "dim3" => Some(12),
        _ => {
            let digits = name.trim_start_matches(|c: char| c.is_ascii_alphabetic());
            let lanes: u32 = digits.parse().ok().filter(|n| (1..=4).contains(n))?;
            scalar(&name[..name.len() - digits.len()]).map(|s| s * lanes)
        }
    }
}

/// One level of pointer, with its own qualifiers (`float * __restrict__ p`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct PtrQual {
    /// `* const`
    pub is_const: bool,
    /// `* volatile`
    pub is_volatile: bool,
    /// `* __restrict__`
    pub is_restrict: bool,
}

/// A type: base, qualifiers and pointer levels (array dimensions live on the
/// declaration).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    /// The base type.
    pub base: BaseType,
    /// `const` on the base.
    pub is_const: bool,
    /// `volatile` on the base.
    pub is_volatile: bool,
    /// Pointer levels, outermost last.
    pub pointers: Vec<PtrQual>,
    /// A C++ reference (`float &x`, `const float &x`): `&` after the
    /// pointer levels.
    pub is_ref: bool,
    /// The macro the base was written with, printed back in its place.
    pub base_macro: BaseMacro,
}

impl Type {
    /// An unqualified non-pointer type.
    pub fn scalar(base: BaseType) -> Type {
        Type {
            base,
            is_const: false,
            is_volatile: false,
            pointers: Vec::new(),
            is_ref: false,
            base_macro: BaseMacro::default(),
        }
    }

    /// The unqualified base of this type, written as it was (the element
    /// of a pointer, `DATA_TYPE` kept).
    pub fn base_only(&self) -> Type {
        Type {
            base_macro: self.base_macro.clone(),
            ..Type::scalar(self.base.clone())
        }
    }

    /// The base as the user wrote it: the macro while it still stands
    /// for the base (`DATA_TYPE`), else the C spelling (`float`).
    pub fn base_spelling(&self) -> &str {
        self.base_macro
            .for_base(&self.base)
            .unwrap_or(self.base.c_name())
    }

    /// Whether this is a pointer type.
    pub fn is_pointer(&self) -> bool {
        !self.pointers.is_empty()
    }
}

/// The object-like macro a type's base was written with (`DATA_TYPE` for
/// `#define DATA_TYPE float`), with the base it stood for: printed instead
/// of the base while the base is still that one, so a rewrite keeps the
/// user's choice of type (`-DDATA_TYPE=double` still builds the rewritten
/// kernel in `double`). Like [`Meta`], it takes no part in equality or
/// hashing: `DATA_TYPE` and `float` are the same type.
#[derive(Clone, Debug, Default)]
pub struct BaseMacro(pub Option<(String, BaseType)>);

impl BaseMacro {
    /// The macro's name, when it still stands for `base`.
    pub fn for_base(&self, base: &BaseType) -> Option<&str> {
        match &self.0 {
            Some((name, b)) if b == base => Some(name),
            _ => None,
        }
    }
}

impl PartialEq for BaseMacro {
    fn eq(&self, _: &BaseMacro) -> bool {
        true
    }
}

impl Eq for BaseMacro {}

impl std::hash::Hash for BaseMacro {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// Memory space of a variable declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Space {
    /// Registers / local memory (no qualifier).
    Local,
    /// `__shared__`
    Shared,
    /// `__constant__`
    Constant,
    /// `__device__` (a global variable)
    Device,
    /// `__managed__` (a global variable)
    Managed,
}

/// A variable declaration (one declarator: `int a = 1, b;` is two).
#[derive(Clone, Debug, PartialEq)]
pub struct VarDecl {
    /// Node metadata.
    pub meta: Meta,
    /// Memory space.
    pub space: Space,
    /// `extern` (used for dynamically sized `extern __shared__` arrays).
    pub is_extern: bool,
    /// `static`
    pub is_static: bool,
    /// `constexpr` (a compile-time constant; implies `const`).
    pub is_constexpr: bool,
    /// Element type.
    pub ty: Type,
    /// Variable name.
    pub name: String,
    /// Array dimensions, outermost first; `None` for `[]`.
    pub dims: Vec<Option<Expr>>,
    /// Initializer.
    pub init: Option<Init>,
}

impl VarDecl {
    /// Whether this declares one plain local scalar: not `static`,
    /// `extern`, an array, a pointer or a reference.
    pub fn is_plain_local(&self) -> bool {
        self.space == Space::Local
            && !self.is_static
            && !self.is_extern
            && self.dims.is_empty()
            && !self.ty.is_pointer()
            && !self.ty.is_ref
    }
}

/// An initializer.
#[derive(Clone, Debug, PartialEq)]
pub enum Init {
    /// `= e`
    Expr(Expr),
    /// `= { a, b, … }`
    List(Vec<Init>),
}

/// A statement.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt {
    /// Node metadata.
    pub meta: Meta,
    /// What the statement is.
    pub kind: StmtKind,
}

/// The kinds of statement.
#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind {
    /// Declarations of one declaration statement (`int a, b = 2;`).
    Decl(Vec<VarDecl>),
    /// An expression statement.
    Expr(Expr),
    /// `{ … }`
    Block(Vec<Stmt>),
    /// `if (cond) then else els`
    If {
        /// Condition.
        cond: Expr,
        /// Then branch.
        then: Box<Stmt>,
        /// Else branch.
        els: Option<Box<Stmt>>,
    },
    /// `for (init; cond; step) body`
    For {
        /// Initializer statement (a declaration or expression statement).
        init: Option<Box<Stmt>>,
        /// Condition.
        cond: Option<Expr>,
        /// Step expression.
        step: Option<Expr>,
        /// Body.
        body: Box<Stmt>,
    },
    /// `while (cond) body`
    While {
        /// Condition.
        cond: Expr,
        /// Body.
        body: Box<Stmt>,
    },
    /// `do body while (cond);`
    DoWhile {
        /// Body.
        body: Box<Stmt>,
        /// Condition.
        cond: Expr,
    },
    /// `switch (cond) { case …: … }` with its cases in order.
    Switch {
        /// Scrutinee.
        cond: Expr,
        /// Case groups in source order.
        cases: Vec<SwitchCase>,
    },
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return;` / `return e;`
    Return(Option<Expr>),
    /// `;`
    Empty,
    /// `#pragma …` kept where the user wrote it (e.g. `#pragma unroll`).
    Pragma(String),
}

/// One `case`/`default` group of a switch.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchCase {
    /// Node metadata.
    pub meta: Meta,
    /// Labels (`None` is `default`); several labels share one body.
    pub labels: Vec<Option<Expr>>,
    /// Statements up to the next label.
    pub body: Vec<Stmt>,
}

/// An expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// Node metadata.
    pub meta: Meta,
    /// What the expression is.
    pub kind: ExprKind,
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// Integer literal: value and the suffix/base text to print it back.
    Int {
        /// The value.
        value: u64,
        /// The literal as written, normalized (`0x10`, `5u`, `1L`).
        text: String,
    },
    /// Floating literal as written (`1.0f`, `2.5e-3`).
    Float(String),
    /// Character literal as written (`'a'`).
    Char(String),
    /// String literal as written (for `printf`).
    Str(String),
    /// `true` / `false`
    Bool(bool),
    /// A variable, parameter or builtin name (`threadIdx` is an `Ident`).
    Ident(String),
    /// Unary operator.
    Unary(UnOp, Box<Expr>),
    /// Binary operator (not assignment).
    Binary(BinOp, Box<Expr>, Box<Expr>),
    /// Assignment, plain (`None`) or compound (`Some(op)`).
    Assign(Option<BinOp>, Box<Expr>, Box<Expr>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `(T) e`, `T(e)`, `static_cast<T>(e)`, … (the style is how it is
    /// written).
    Cast(CastStyle, Type, Box<Expr>),
    /// `f(args)`
    Call(String, Vec<Expr>),
    /// `obj.f(args)` (`arrow == false`) or `p->f(args)`: a call of a
    /// struct's member function on an object.
    Method {
        /// The object (or the pointer to it).
        base: Box<Expr>,
        /// The member function's name.
        name: String,
        /// `->` rather than `.`
        arrow: bool,
        /// The arguments.
        args: Vec<Expr>,
    },
    /// `a[i]`
    Index(Box<Expr>, Box<Expr>),
    /// `e.f` (`arrow == false`) or `e->f`
    Member {
        /// The aggregate.
        base: Box<Expr>,
        /// The field name.
        field: String,
        /// `->` rather than `.`
        arrow: bool,
    },
    /// `sizeof(T)`
    SizeofType(Type),
    /// `sizeof e`
    SizeofExpr(Box<Expr>),
    /// `a, b`
    Comma(Vec<Expr>),
}

/// How a cast is written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastStyle {
    /// `(T) e`
    C,
    /// `T(e)` (a one-word type)
    Functional,
    /// `static_cast<T>(e)`
    Static,
    /// `reinterpret_cast<T>(e)` (copper accepts only those that leave the
    /// value unchanged)
    Reinterpret,
    /// `const_cast<T>(e)`
    Const,
}

impl CastStyle {
    /// The C++ keyword of a named cast (`static_cast`, …).
    pub fn keyword(self) -> Option<&'static str> {
        match self {
            CastStyle::C | CastStyle::Functional => None,
            CastStyle::Static => Some("static_cast"),
            CastStyle::Reinterpret => Some("reinterpret_cast"),
            CastStyle::Const => Some("const_cast"),
        }
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-e`
    Neg,
    /// `+e`
    Plus,
    /// `!e`
    Not,
    /// `~e`
    BitNot,
    /// `*e`
    Deref,
    /// `&e`
    AddrOf,
    /// `++e`
    PreInc,
    /// `--e`
    PreDec,
    /// `e++`
    PostInc,
    /// `e--`
    PostDec,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<`
    Lt,
    /// `>`
    Gt,
    /// `<=`
    Le,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `&&`
    And,
    /// `||`
    Or,
}

impl BinOp {
    /// Whether this is `<`, `>`, `<=`, `>=`, `==` or `!=`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge | BinOp::Eq | BinOp::Ne
        )
    }

    /// The C spelling.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Lt => "<",
            BinOp::Gt => ">",
            BinOp::Le => "<=",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::BitAnd => "&",
            BinOp::BitXor => "^",
            BinOp::BitOr => "|",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }

    /// Whether `a op b == b op a` for all operands (used for structural
    /// equality modulo commutativity).
    pub fn is_commutative(self) -> bool {
        matches!(
            self,
            BinOp::Mul
                | BinOp::Add
                | BinOp::Eq
                | BinOp::Ne
                | BinOp::BitAnd
                | BinOp::BitXor
                | BinOp::BitOr
        )
    }
}

/// What kind of CUDA function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FnKind {
    /// `__global__`: a kernel.
    Global,
    /// `__device__`
    Device,
    /// `__host__ __device__`
    HostDevice,
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    /// Node metadata.
    pub meta: Meta,
    /// Type.
    pub ty: Type,
    /// Name (parameters without a name get none).
    pub name: String,
    /// Array dimensions of an array parameter (`float a[][16]`).
    pub dims: Vec<Option<Expr>>,
    /// The default argument (`float s = 2.0f`), a constant or a name.
    pub default: Option<Expr>,
}

/// One parameter of a `template <…>` head.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TemplateParam {
    /// `Some(type)` for a value parameter (`int BS`), `None` for a type
    /// parameter (`typename T` / `class T`).
    pub value_type: Option<Type>,
    /// `typename` or `class`, as written (type parameters only).
    pub keyword: String,
    /// The parameter's name.
    pub name: String,
    /// The default argument as written (`= 256`), if any.
    pub default: Option<String>,
}

/// A function template's head and, for an instantiation, its arguments.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Template {
    /// The parameters, in order.
    pub params: Vec<TemplateParam>,
    /// The template's own name (`reduce`).
    pub name: String,
    /// One argument per parameter (defaults filled in), as text (`256`,
    /// `float`); empty for the template itself.
    pub args: Vec<String>,
}

/// A `__global__` or `__device__` function.
#[derive(Clone, Debug, PartialEq)]
pub struct Function {
    /// Node metadata (span: the whole definition).
    pub meta: Meta,
    /// Kernel or device function.
    pub kind: FnKind,
    /// Other qualifiers as written, in order (`__forceinline__`,
    /// `__launch_bounds__(256)`, `static`, `inline`).
    pub qualifiers: Vec<String>,
    /// Return type.
    pub ret: Type,
    /// Name.
    pub name: String,
    /// Parameters.
    pub params: Vec<Param>,
    /// Body statements.
    pub body: Vec<Stmt>,
    /// The `template <…>` head of a function template. An instantiation
    /// (`reduce<256>`, named so in [`Function::name`]) carries its
    /// arguments; the template itself has none.
    pub template: Option<Template>,
}

impl Expr {
    /// The names of the variables the expression reads (`Ident`s), in
    /// order, each once (function names excluded).
    pub fn identifiers(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match &e.kind {
                ExprKind::Ident(n) => {
                    if !out.contains(&n.as_str()) {
                        out.push(n);
                    }
                }
                ExprKind::Unary(_, x)
                | ExprKind::Cast(_, _, x)
                | ExprKind::SizeofExpr(x)
                | ExprKind::Member { base: x, .. } => stack.push(x),
                ExprKind::Binary(_, a, b) | ExprKind::Assign(_, a, b) | ExprKind::Index(a, b) => {
                    stack.extend([b.as_ref(), a.as_ref()])
                }
                ExprKind::Cond(c, a, b) => stack.extend([b.as_ref(), a.as_ref(), c.as_ref()]),
                ExprKind::Call(_, args) | ExprKind::Comma(args) => stack.extend(args.iter().rev()),
                ExprKind::Method { base, args, .. } => {
                    stack.extend(args.iter().rev());
                    stack.push(base);
                }
                ExprKind::Int { .. }
                | ExprKind::Float(_)
                | ExprKind::Char(_)
                | ExprKind::Str(_)
                | ExprKind::Bool(_)
                | ExprKind::SizeofType(_) => {}
            }
        }
        out
    }
}

impl Function {
    /// Whether this is a kernel (`__global__`).
    pub fn is_kernel(&self) -> bool {
        self.kind == FnKind::Global
    }

    /// Whether this is a function template that has not been given
    /// arguments (it cannot be lowered until it is instantiated).
    pub fn is_uninstantiated(&self) -> bool {
        self.template.as_ref().is_some_and(|t| t.args.is_empty())
    }
}
