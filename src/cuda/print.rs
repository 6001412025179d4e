//! Pretty-printer for copper's AST, built on the `pretty` crate.
//!
//! One style: 4-space indent, braces on the same line, `T *name` pointers,
//! only the parentheses precedence needs, macro invocations printed as the
//! user wrote them. Long call argument and parameter lists break at 100
//! columns. `parse(print(ast)) == ast` holds for every kernel.

use pretty::RcDoc;

use super::ast::*;

/// Line width the printer aims for.
pub const WIDTH: usize = 100;
const INDENT: isize = 4;

type Doc = RcDoc<'static, ()>;

/// Prints a function definition.
pub fn function(f: &Function) -> String {
    let mut head: Vec<String> = Vec::new();
    let (before, after): (Vec<&String>, Vec<&String>) = f
        .qualifiers
        .iter()
        .partition(|q| !q.starts_with("__launch_bounds__"));
    // A linkage (`extern "C"`) comes first, before the storage class.
    let linkage = before.iter().filter(|q| q.starts_with("extern "));
    head.extend(
        before
            .iter()
            .filter(|q| q.as_str() != "inline" && q.as_str() != "static")
            .filter(|q| !q.starts_with("extern "))
            .map(|q| q.to_string()),
    );
    let storage: Vec<String> = linkage
        .chain(
            before
                .iter()
                .filter(|q| q.as_str() == "inline" || q.as_str() == "static"),
        )
        .map(|q| q.to_string())
        .collect();
    let kind = match f.kind {
        FnKind::Global => "__global__",
        FnKind::Device => "__device__",
        FnKind::HostDevice => "__host__ __device__",
    };
    let mut words = storage;
    words.push(kind.to_string());
    words.extend(head);
    words.push(type_prefix(&f.ret));
    words.extend(after.iter().map(|q| q.to_string()));
    let mut sig = words.join(" ");
    if !f.ret.pointers.is_empty() {
        sig.push(' ');
        sig.push_str(&pointer_text(&f.ret));
        sig = sig.trim_end().to_string();
    }
    let params: Vec<Doc> = f.params.iter().map(|p| Doc::text(param(p))).collect();
    let (head, name) = match &f.template {
        Some(t) => (template_head(t), t.name.as_str()),
        // An explicit specialization (`k<float>`) keeps its `template <>`.
        None if f.name.contains('<') => ("template <>\n".to_string(), f.name.as_str()),
        None => (String::new(), f.name.as_str()),
    };
    let doc = Doc::text(format!("{head}{sig} {name}("))
        .append(
            Doc::line_()
                .append(Doc::intersperse(params, Doc::text(",").append(Doc::line())))
                .nest(INDENT)
                .append(Doc::line_())
                .group(),
        )
        .append(Doc::text(") "))
        .append(block(&f.body));
    render(doc)
}

/// `template <typename T, int BS = 256>` and a newline.
fn template_head(t: &Template) -> String {
    let params: Vec<String> = t
        .params
        .iter()
        .map(|p| {
            let mut s = match &p.value_type {
                Some(ty) => format!("{} {}", type_name(ty), p.name),
                None => format!("{} {}", p.keyword, p.name),
            };
            if let Some(d) = &p.default {
                s.push_str(" = ");
                s.push_str(d);
            }
            s
        })
        .collect();
    format!("template <{}>\n", params.join(", "))
}

/// Prints a statement (at indentation 0).
pub fn statement(s: &Stmt) -> String {
    render(stmt(s))
}

/// Prints an expression.
pub fn expression(e: &Expr) -> String {
    expr(e, 0)
}

/// Prints a type as in a cast: `const float *`.
pub fn type_name(t: &Type) -> String {
    let p = pointer_text(t) + if t.is_ref { "&" } else { "" };
    if p.is_empty() {
        type_prefix(t)
    } else {
        format!("{} {}", type_prefix(t), p.trim_end())
    }
}

fn render(doc: Doc) -> String {
    let mut out = String::new();
    let _ = doc.render_fmt(WIDTH, &mut out);
    out.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

/// `const float` — qualifiers and base.
fn type_prefix(t: &Type) -> String {
    let mut s = String::new();
    if t.is_const {
        s.push_str("const ");
    }
    if t.is_volatile {
        s.push_str("volatile ");
    }
    s.push_str(t.base_spelling());
    s
}

/// `*__restrict__ ` / `*const ` … for each pointer level, innermost first.
fn pointer_text(t: &Type) -> String {
    let mut s = String::new();
    for p in &t.pointers {
        s.push('*');
        if p.is_const {
            s.push_str("const ");
        }
        if p.is_volatile {
            s.push_str("volatile ");
        }
        if p.is_restrict {
            s.push_str("__restrict__ ");
        }
    }
    s
}

fn declarator(t: &Type, name: &str, dims: &[Option<Expr>]) -> String {
    let mut s = pointer_text(t);
    if t.is_ref {
        s.push('&');
    }
    s.push_str(name);
    for d in dims {
        match d {
            Some(e) => s.push_str(&format!("[{}]", expr(e, 0))),
            None => s.push_str("[]"),
        }
    }
    s
}

/// A parameter declaration (`const float *__restrict__ x`).
pub fn param(p: &Param) -> String {
    let d = declarator(&p.ty, &p.name, &p.dims);
    let written = if d.is_empty() {
        type_prefix(&p.ty)
    } else {
        format!("{} {}", type_prefix(&p.ty), d)
    };
    match &p.default {
        Some(v) => format!("{written} = {}", expression(v)),
        None => written,
    }
}

fn space_word(s: Space) -> Option<&'static str> {
    match s {
        Space::Local => None,
        Space::Shared => Some("__shared__"),
        Space::Constant => Some("__constant__"),
        Space::Device => Some("__device__"),
        Space::Managed => Some("__managed__"),
    }
}

/// `__shared__ float a[16], *b = c` (without the semicolon).
pub fn declaration(decls: &[VarDecl]) -> String {
    let Some(first) = decls.first() else {
        return String::new();
    };
    let mut words = Vec::new();
    if first.is_extern {
        words.push("extern".to_string());
    }
    if first.is_static {
        words.push("static".to_string());
    }
    if first.is_constexpr {
        words.push("constexpr".to_string());
    }
    words.extend(space_word(first.space).map(str::to_string));
    words.push(type_prefix(&first.ty));
    let items: Vec<String> = decls
        .iter()
        .map(|d| {
            let mut s = declarator(&d.ty, &d.name, &d.dims);
            if let Some(i) = &d.init {
                s.push_str(" = ");
                s.push_str(&init(i));
            }
            s
        })
        .collect();
    format!("{} {}", words.join(" "), items.join(", "))
}

fn init(i: &Init) -> String {
    match i {
        Init::Expr(e) => expr(e, PREC_ASSIGN),
        Init::List(items) => format!(
            "{{{}}}",
            items.iter().map(init).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn block(stmts: &[Stmt]) -> Doc {
    if stmts.is_empty() {
        return Doc::text("{}");
    }
    Doc::text("{")
        .append(
            Doc::hardline()
                .append(Doc::intersperse(stmts.iter().map(stmt), Doc::hardline()))
                .nest(INDENT),
        )
        .append(Doc::hardline())
        .append(Doc::text("}"))
}

/// A branch or loop body: a block on the same line, anything else indented
/// on the next line.
fn body(s: &Stmt) -> (Doc, bool) {
    match &s.kind {
        StmtKind::Block(b) => (Doc::text(" ").append(block(b)), true),
        _ => (Doc::hardline().append(stmt(s)).nest(INDENT), false),
    }
}

/// Whether a statement printed without braces ends in an `if` that has no
/// `else` (directly or as the body of a loop or of an `else`), so that an
/// `else` printed after it would bind to that `if`.
pub fn ends_in_open_if(s: &Stmt) -> bool {
    match &s.kind {
        StmtKind::If { els: None, .. } => true,
        StmtKind::If { els: Some(e), .. } => ends_in_open_if(e),
        StmtKind::For { body, .. } | StmtKind::While { body, .. } => ends_in_open_if(body),
        _ => false,
    }
}

/// The parenthesized head of an `if`, `for`, `while`, `do … while` or
/// `switch` as printed: `(i < n)`, `(int i = 0; i < n; i++)`; `None` for
/// other statements.
pub fn head(s: &Stmt) -> Option<String> {
    Some(match &s.kind {
        StmtKind::If { cond, .. }
        | StmtKind::While { cond, .. }
        | StmtKind::DoWhile { cond, .. }
        | StmtKind::Switch { cond, .. } => format!("({})", expr(cond, 0)),
        StmtKind::For {
            init, cond, step, ..
        } => {
            let init_text = match init {
                None => ";".to_string(),
                Some(s) => match &s.kind {
                    StmtKind::Decl(d) => format!("{};", declaration(d)),
                    StmtKind::Expr(e) => expr_statement(e),
                    _ => ";".to_string(),
                },
            };
            let cond_text = cond
                .as_ref()
                .map(|c| format!(" {}", expr(c, 0)))
                .unwrap_or_default();
            let step_text = step
                .as_ref()
                .map(|c| format!(" {}", expr(c, 0)))
                .unwrap_or_default();
            format!("({init_text}{cond_text};{step_text})")
        }
        _ => return None,
    })
}

/// An expression statement. One that starts with a functional cast is
/// parenthesized: C++ reads `float(x);` as a declaration of `x`.
fn expr_statement(e: &Expr) -> String {
    fn leftmost_is_functional_cast(e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Cast(CastStyle::Functional, ..) => true,
            ExprKind::Binary(_, l, _)
            | ExprKind::Assign(_, l, _)
            | ExprKind::Cond(l, ..)
            | ExprKind::Index(l, _)
            | ExprKind::Unary(UnOp::PostInc | UnOp::PostDec, l)
            | ExprKind::Member { base: l, .. }
            | ExprKind::Method { base: l, .. } => leftmost_is_functional_cast(l),
            ExprKind::Comma(v) => v.first().is_some_and(leftmost_is_functional_cast),
            _ => false,
        }
    }
    if leftmost_is_functional_cast(e) {
        format!("({});", expr(e, 0))
    } else {
        format!("{};", expr(e, 0))
    }
}

/// [`head`] of a statement known to have one.
fn head_of(s: &Stmt) -> String {
    head(s).unwrap_or_default()
}

fn stmt(s: &Stmt) -> Doc {
    match &s.kind {
        StmtKind::Decl(d) => Doc::text(format!("{};", declaration(d))),
        StmtKind::Expr(e) => Doc::text(expr_statement(e)),
        StmtKind::Block(b) => block(b),
        StmtKind::If { then, els, .. } => {
            // A then-branch ending in an `if` without `else` would capture
            // our `else`.
            let needs_braces = els.is_some() && ends_in_open_if(then);
            let (then_doc, then_block) = if needs_braces {
                (
                    Doc::text(" ").append(block(std::slice::from_ref(then))),
                    true,
                )
            } else {
                body(then)
            };
            let mut d = Doc::text(format!("if {}", head_of(s))).append(then_doc);
            if let Some(e) = els {
                d = d.append(if then_block {
                    Doc::text(" ")
                } else {
                    Doc::hardline()
                });
                d = match &e.kind {
                    StmtKind::If { .. } => d.append(Doc::text("else ")).append(stmt(e)),
                    _ => d.append(Doc::text("else")).append(body(e).0),
                };
            }
            d
        }
        StmtKind::For { body: b, .. } => Doc::text(format!("for {}", head_of(s))).append(body(b).0),
        StmtKind::While { body: b, .. } => {
            Doc::text(format!("while {}", head_of(s))).append(body(b).0)
        }
        StmtKind::DoWhile { body: b, .. } => {
            let (d, is_block) = body(b);
            Doc::text("do")
                .append(d)
                .append(if is_block {
                    Doc::text(" ")
                } else {
                    Doc::hardline()
                })
                .append(Doc::text(format!("while {};", head_of(s))))
        }
        StmtKind::Switch { cases, .. } => {
            let case_docs = cases.iter().map(|c| {
                let labels = c.labels.iter().map(|l| match l {
                    Some(e) => Doc::text(format!("case {}:", expr(e, 0))),
                    None => Doc::text("default:"),
                });
                let mut d = Doc::intersperse(labels, Doc::hardline());
                if !c.body.is_empty() {
                    d = d.append(
                        Doc::hardline()
                            .append(Doc::intersperse(c.body.iter().map(stmt), Doc::hardline()))
                            .nest(INDENT),
                    );
                }
                d
            });
            Doc::text(format!("switch {} {{", head_of(s)))
                .append(
                    Doc::hardline()
                        .append(Doc::intersperse(case_docs, Doc::hardline()))
                        .nest(INDENT),
                )
                .append(Doc::hardline())
                .append(Doc::text("}"))
        }
        StmtKind::Break => Doc::text("break;"),
        StmtKind::Continue => Doc::text("continue;"),
        StmtKind::Return(None) => Doc::text("return;"),
        StmtKind::Return(Some(e)) => Doc::text(format!("return {};", expr(e, 0))),
        StmtKind::Empty => Doc::text(";"),
        StmtKind::Pragma(p) => Doc::text(format!("#pragma {p}")),
    }
}

const PREC_COMMA: u8 = 1;
const PREC_ASSIGN: u8 = 2;
const PREC_COND: u8 = 3;
const PREC_UNARY: u8 = 14;
const PREC_POSTFIX: u8 = 15;
const PREC_PRIMARY: u8 = 16;

fn binop_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 4,
        BinOp::And => 5,
        BinOp::BitOr => 6,
        BinOp::BitXor => 7,
        BinOp::BitAnd => 8,
        BinOp::Eq | BinOp::Ne => 9,
        BinOp::Lt | BinOp::Gt | BinOp::Le | BinOp::Ge => 10,
        BinOp::Shl | BinOp::Shr => 11,
        BinOp::Add | BinOp::Sub => 12,
        BinOp::Mul | BinOp::Div | BinOp::Rem => 13,
    }
}

/// Precedence of the outermost operator of an expression.
fn prec(e: &ExprKind) -> u8 {
    match e {
        ExprKind::Comma(_) => PREC_COMMA,
        ExprKind::Assign(..) => PREC_ASSIGN,
        ExprKind::Cond(..) => PREC_COND,
        ExprKind::Binary(op, ..) => binop_prec(*op),
        ExprKind::Unary(UnOp::PostInc | UnOp::PostDec, _) => PREC_POSTFIX,
        ExprKind::Unary(..)
        | ExprKind::Cast(..)
        | ExprKind::SizeofExpr(_)
        | ExprKind::SizeofType(_) => PREC_UNARY,
        ExprKind::Call(..)
        | ExprKind::Index(..)
        | ExprKind::Member { .. }
        | ExprKind::Method { .. } => PREC_POSTFIX,
        _ => PREC_PRIMARY,
    }
}

/// Prints `e`, parenthesized if its precedence is below `min`.
fn expr(e: &Expr, min: u8) -> String {
    let p = prec(&e.kind);
    let text = match &e.meta.macro_text {
        Some(m) => m.clone(),
        None => expr_inner(e),
    };
    if p < min {
        format!("({text})")
    } else {
        text
    }
}

fn unop_text(op: UnOp) -> &'static str {
    match op {
        UnOp::Neg => "-",
        UnOp::Plus => "+",
        UnOp::Not => "!",
        UnOp::BitNot => "~",
        UnOp::Deref => "*",
        UnOp::AddrOf => "&",
        UnOp::PreInc | UnOp::PostInc => "++",
        UnOp::PreDec | UnOp::PostDec => "--",
    }
}

fn expr_inner(e: &Expr) -> String {
    match &e.kind {
        ExprKind::Int { text, .. } => text.clone(),
        ExprKind::Float(t) | ExprKind::Char(t) | ExprKind::Str(t) => t.clone(),
        ExprKind::Bool(b) => b.to_string(),
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Unary(op @ (UnOp::PostInc | UnOp::PostDec), x) => {
            format!("{}{}", expr(x, PREC_POSTFIX), unop_text(*op))
        }
        ExprKind::Unary(op, x) => {
            // `++`/`--` take a unary expression, which a cast is not.
            let is_incdec = matches!(op, UnOp::PreInc | UnOp::PreDec);
            let inner = if is_incdec && matches!(x.kind, ExprKind::Cast(..)) {
                format!("({})", expr(x, 0))
            } else {
                expr(x, PREC_UNARY)
            };
            let sym = unop_text(*op);
            // `- -x` and `+ ++x` must not fuse into `--x` / `+++x`.
            let last = sym.chars().last().unwrap_or(' ');
            if matches!(last, '-' | '+' | '&') && inner.starts_with(last) {
                format!("{sym} {inner}")
            } else {
                format!("{sym}{inner}")
            }
        }
        ExprKind::Binary(op, l, r) => {
            let p = binop_prec(*op);
            format!("{} {} {}", expr(l, p), op.symbol(), expr(r, p + 1))
        }
        ExprKind::Assign(op, l, r) => {
            let sym = op
                .map(|o| format!("{}=", o.symbol()))
                .unwrap_or_else(|| "=".into());
            format!("{} {} {}", expr(l, PREC_UNARY), sym, expr(r, PREC_ASSIGN))
        }
        ExprKind::Cond(c, a, b) => {
            format!(
                "{} ? {} : {}",
                expr(c, PREC_COND + 1),
                expr(a, PREC_ASSIGN),
                expr(b, PREC_COND)
            )
        }
        ExprKind::Cast(CastStyle::C, t, x) => {
            format!("({}){}", type_name(t), expr(x, PREC_UNARY))
        }
        ExprKind::Cast(CastStyle::Functional, t, x) => {
            // A functional cast names its type in one word.
            let word = match t.base {
                BaseType::UInt => "unsigned",
                ref b => b.c_name(),
            };
            // A comma expression needs its own parentheses: `int(a, b)`
            // would be a constructor call with two arguments.
            format!("{word}({})", expr(x, PREC_ASSIGN))
        }
        ExprKind::Cast(style, t, x) => format!(
            "{}<{}>({})",
            style.keyword().unwrap_or_default(),
            type_name(t),
            expr(x, 0)
        ),
        ExprKind::Call(name, args) => format!(
            "{name}({})",
            args.iter()
                .map(|a| expr(a, PREC_ASSIGN))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Method {
            base,
            name,
            arrow,
            args,
        } => format!(
            "{}{}{name}({})",
            expr(base, PREC_POSTFIX),
            if *arrow { "->" } else { "." },
            args.iter()
                .map(|a| expr(a, PREC_ASSIGN))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        ExprKind::Index(a, i) => format!("{}[{}]", expr(a, PREC_POSTFIX), expr(i, 0)),
        ExprKind::Member { base, field, arrow } => {
            format!(
                "{}{}{}",
                expr(base, PREC_POSTFIX),
                if *arrow { "->" } else { "." },
                field
            )
        }
        ExprKind::SizeofType(t) => format!("sizeof({})", type_name(t)),
        ExprKind::SizeofExpr(x) => format!("sizeof({})", expr(x, 0)),
        ExprKind::Comma(xs) => xs
            .iter()
            .map(|x| expr(x, PREC_ASSIGN))
            .collect::<Vec<_>>()
            .join(", "),
    }
}
