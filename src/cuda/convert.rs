//! Conversion from `lang-c`'s C AST to copper's CUDA AST.
//!
//! Spans are mapped back to the user's file, CUDA qualifiers recorded by the
//! unit builder are re-attached, `#pragma` lines are re-inserted as
//! statements, and expressions that are exactly one macro expansion remember
//! the invocation. Anything outside copper's C subset becomes an error naming
//! the construct.

use std::collections::VecDeque;

use lang_c::ast as c;
use lang_c::span::Node;

use super::ast::*;
use super::unit::{Unit, AUTO_STAND_IN};
use crate::source::Span;

/// A construct that copper cannot represent, at a file offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvertError {
    /// File offset.
    pub offset: Option<usize>,
    /// Message naming the construct.
    pub message: String,
}

type Result<T> = std::result::Result<T, ConvertError>;

/// Converts nodes of one parse unit.
pub struct Converter<'a> {
    unit: &'a Unit,
    next_id: u64,
    pragmas: VecDeque<(usize, String)>,
}

impl<'a> Converter<'a> {
    /// A converter for `unit`, numbering nodes from `first_id`.
    pub fn new(unit: &'a Unit, first_id: u64) -> Converter<'a> {
        Converter {
            unit,
            next_id: first_id,
            pragmas: unit.pragmas.iter().cloned().collect(),
        }
    }

    /// The next unused node id.
    pub fn next_id(&self) -> u64 {
        self.next_id
    }

    fn file_span(&self, s: lang_c::span::Span) -> Span {
        if s.is_none() {
            return Span::SYNTHETIC;
        }
        self.unit.map.span_to_file(s.start, s.end)
    }

    /// The file span of `s` extended back over the blanks before it, where
    /// the unit builder removed CUDA qualifiers.
    fn with_leading_blanks(&self, s: lang_c::span::Span) -> Span {
        let before = &self.unit.text[..s.start.min(self.unit.text.len())];
        let start = before.trim_end().len();
        let mut span = self.file_span(s);
        if let Some(f) = (start..s.start).find_map(|o| self.unit.map.to_file(o)) {
            span.start = span.start.min(f);
        }
        span
    }

    fn meta(&mut self, s: lang_c::span::Span) -> Meta {
        let id = NodeId(self.next_id);
        self.next_id += 1;
        Meta {
            id,
            span: self.file_span(s),
            macro_text: None,
        }
    }

    fn err<T>(&self, s: lang_c::span::Span, message: impl Into<String>) -> Result<T> {
        Err(ConvertError {
            offset: self.unit.map.to_file(s.start),
            message: message.into(),
        })
    }

    fn unsupported<T>(&self, s: lang_c::span::Span, what: &str) -> Result<T> {
        self.err(s, format!("{what} are not supported in kernels"))
    }

    /// The qualifier (`N::`) written before the name at unit span `s`.
    fn scope_of(&self, s: lang_c::span::Span) -> Option<&'a str> {
        self.unit
            .scopes
            .iter()
            .find(|(o, _)| *o == s.start)
            .map(|(_, q)| q.as_str())
    }

    /// `name` with the qualifier written before it (`N::name`).
    fn qualified(&self, s: lang_c::span::Span, name: &str) -> String {
        match self.scope_of(s) {
            Some(q) => format!("{q}{name}"),
            None => name.to_string(),
        }
    }

    /// The CUDA qualifiers recorded inside the file range `span`.
    fn quals_in(&self, span: Span) -> impl Iterator<Item = &'a str> {
        self.unit
            .quals
            .iter()
            .filter(move |q| q.offset >= span.start && q.offset < span.end)
            .map(|q| q.text.as_str())
    }

    /// Converts a function definition whose declaration starts at file
    /// offset `start` (its CUDA qualifiers are between there and the name).
    pub fn function(&mut self, f: &Node<c::FunctionDefinition>, start: usize) -> Result<Function> {
        let mut meta = self.meta(f.span);
        meta.span.start = start;
        let def = &f.node;
        let (name, name_span) = match &def.declarator.node.kind.node {
            c::DeclaratorKind::Identifier(id) => (id.node.name.clone(), id.span),
            _ => return self.unsupported(def.declarator.span, "function declarators of this form"),
        };
        let head = Span::new(meta.span.start, self.file_span(name_span).start);
        let mut kind = None;
        let mut qualifiers = Vec::new();
        let mut host = false;
        for q in self.quals_in(head) {
            match q {
                "__global__" => kind = Some(FnKind::Global),
                "__device__" => kind = kind.or(Some(FnKind::Device)),
                "__host__" => host = true,
                other => qualifiers.push(other.to_string()),
            }
        }
        let kind = match kind {
            Some(FnKind::Device) if host => FnKind::HostDevice,
            Some(k) => k,
            None => return self.err(f.span, "function is neither `__global__` nor `__device__`"),
        };
        let (base, storage) = self.specifiers(&def.specifiers)?;
        for s in storage {
            qualifiers.push(s.to_string());
        }
        let mut ret = base;
        let mut params = None;
        for d in &def.declarator.node.derived {
            match &d.node {
                c::DerivedDeclarator::Pointer(q) => ret.pointers.push(self.ptr_qual(q)),
                c::DerivedDeclarator::Function(fd) => params = Some(self.params(&fd.node)?),
                c::DerivedDeclarator::KRFunction(ids) if ids.is_empty() => {
                    params = Some(Vec::new())
                }
                _ => return self.unsupported(d.span, "K&R-style or array-returning functions"),
            }
        }
        let params = match params {
            Some(p) => p,
            None => return self.err(def.declarator.span, "expected a parameter list"),
        };
        if !def.declarations.is_empty() {
            return self.unsupported(f.span, "K&R-style parameter declarations");
        }
        let body = match &def.statement.node {
            c::Statement::Compound(items) => self.block_items(items, def.statement.span)?,
            _ => return self.err(def.statement.span, "expected a function body"),
        };
        Ok(Function {
            meta,
            kind,
            qualifiers,
            ret,
            name,
            params,
            body,
            template: None,
        })
    }

    fn params(&mut self, fd: &c::FunctionDeclarator) -> Result<Vec<Param>> {
        if let c::Ellipsis::Some = fd.ellipsis {
            return self.err(
                lang_c::span::Span::none(),
                "variadic functions are not supported in kernels",
            );
        }
        let mut out = Vec::new();
        for p in &fd.parameters {
            let meta = self.meta(p.span);
            let (base, storage) = self.specifiers(&p.node.specifiers)?;
            if let Some(s) = storage.first() {
                return self.err(p.span, format!("storage class `{s}` on a parameter"));
            }
            let (ty, name, dims) = match &p.node.declarator {
                Some(d) => self.declarator(base, d)?,
                None => (base, String::new(), Vec::new()),
            };
            if ty.base == BaseType::Void && !ty.is_pointer() && name.is_empty() {
                if fd.parameters.len() == 1 {
                    return Ok(out);
                }
                return self.err(p.span, "`void` parameter");
            }
            out.push(Param {
                meta,
                ty,
                name,
                dims,
            });
        }
        Ok(out)
    }

    /// Base type and storage-class words (`static`, `extern`, `inline`).
    fn specifiers(
        &mut self,
        specs: &[Node<c::DeclarationSpecifier>],
    ) -> Result<(Type, Vec<&'static str>)> {
        let mut ts = Vec::new();
        let mut storage = Vec::new();
        let mut is_const = false;
        let mut is_volatile = false;
        for s in specs {
            match &s.node {
                c::DeclarationSpecifier::TypeSpecifier(t) => ts.push(t),
                c::DeclarationSpecifier::TypeQualifier(q) => match q.node {
                    c::TypeQualifier::Const => is_const = true,
                    c::TypeQualifier::Volatile => is_volatile = true,
                    c::TypeQualifier::Restrict => {}
                    _ => return self.unsupported(q.span, "this type qualifier"),
                },
                c::DeclarationSpecifier::StorageClass(sc) => storage.push(match sc.node {
                    c::StorageClassSpecifier::Static => "static",
                    c::StorageClassSpecifier::Extern => "extern",
                    c::StorageClassSpecifier::Register => "register",
                    c::StorageClassSpecifier::Typedef => "typedef",
                    _ => return self.unsupported(sc.span, "this storage class"),
                }),
                c::DeclarationSpecifier::Function(fs) => match fs.node {
                    c::FunctionSpecifier::Inline => storage.push("inline"),
                    c::FunctionSpecifier::Noreturn => {
                        return self.unsupported(fs.span, "`_Noreturn` functions")
                    }
                },
                c::DeclarationSpecifier::Alignment(a) => {
                    return self.unsupported(a.span, "alignment specifiers")
                }
                c::DeclarationSpecifier::Extension(_) => {}
            }
        }
        let base = self.base_type(&ts)?;
        Ok((
            Type {
                base,
                is_const,
                is_volatile,
                pointers: Vec::new(),
                is_ref: false,
            },
            storage,
        ))
    }

    fn base_type(&self, ts: &[&Node<c::TypeSpecifier>]) -> Result<BaseType> {
        let mut unsigned = false;
        let mut signed = false;
        let mut longs = 0;
        let mut kw = None;
        for t in ts {
            match &t.node {
                c::TypeSpecifier::Unsigned => unsigned = true,
                c::TypeSpecifier::Signed => signed = true,
                c::TypeSpecifier::Long => longs += 1,
                c::TypeSpecifier::Int => kw = kw.or(Some("int")),
                c::TypeSpecifier::Void => kw = Some("void"),
                c::TypeSpecifier::Char => kw = Some("char"),
                c::TypeSpecifier::Short => kw = Some("short"),
                c::TypeSpecifier::Float => kw = Some("float"),
                c::TypeSpecifier::Double => kw = Some("double"),
                c::TypeSpecifier::Bool => kw = Some("bool"),
                c::TypeSpecifier::TypedefName(id) => {
                    if let Some(q) = self.scope_of(id.span) {
                        // `geo::Pt`: kept as written for printing, looked
                        // up without its namespaces (`ast::type_key`).
                        return Ok(BaseType::Named(format!("{q}{}", id.node.name)));
                    }
                    return Ok(match id.node.name.as_str() {
                        "bool" => BaseType::Bool,
                        AUTO_STAND_IN => BaseType::Auto,
                        n => BaseType::Named(n.to_string()),
                    });
                }
                c::TypeSpecifier::Struct(st) => {
                    let kw = match st.node.kind.node {
                        c::StructKind::Struct => "struct",
                        c::StructKind::Union => "union",
                    };
                    return match (&st.node.identifier, &st.node.declarations) {
                        (Some(id), None) => Ok(BaseType::Named(format!("{kw} {}", id.node.name))),
                        _ => self.unsupported(st.span, "struct definitions inside functions"),
                    };
                }
                _ => return self.unsupported(t.span, "this type"),
            }
        }
        Ok(match (kw, unsigned, signed, longs) {
            (Some("void"), false, false, 0) => BaseType::Void,
            (Some("bool"), false, false, 0) => BaseType::Bool,
            (Some("char"), false, false, 0) => BaseType::Char,
            (Some("char"), false, true, 0) => BaseType::SChar,
            (Some("char"), true, false, 0) => BaseType::UChar,
            (Some("short"), false, _, 0) => BaseType::Short,
            (Some("short"), true, false, 0) => BaseType::UShort,
            (Some("int") | None, false, _, 0) if kw.is_some() || signed => BaseType::Int,
            (Some("int") | None, true, false, 0) => BaseType::UInt,
            (Some("int") | None, false, _, 1) => BaseType::Long,
            (Some("int") | None, true, false, 1) => BaseType::ULong,
            (Some("int") | None, false, _, 2) => BaseType::LongLong,
            (Some("int") | None, true, false, 2) => BaseType::ULongLong,
            (Some("float"), false, false, 0) => BaseType::Float,
            (Some("double"), false, false, 0) => BaseType::Double,
            _ => {
                let span = ts
                    .first()
                    .map(|t| t.span)
                    .unwrap_or_else(lang_c::span::Span::none);
                return self.unsupported(
                    span,
                    "this combination of type specifiers (e.g. `long double`)",
                );
            }
        })
    }

    fn ptr_qual(&self, q: &[Node<c::PointerQualifier>]) -> PtrQual {
        let mut p = PtrQual::default();
        for q in q {
            if let c::PointerQualifier::TypeQualifier(t) = &q.node {
                match t.node {
                    c::TypeQualifier::Const => p.is_const = true,
                    c::TypeQualifier::Volatile => p.is_volatile = true,
                    c::TypeQualifier::Restrict => p.is_restrict = true,
                    _ => {}
                }
            }
        }
        p
    }

    /// Type, name and array dimensions of a declarator.
    fn declarator(
        &mut self,
        mut ty: Type,
        d: &Node<c::Declarator>,
    ) -> Result<(Type, String, Vec<Option<Expr>>)> {
        let name = match &d.node.kind.node {
            c::DeclaratorKind::Identifier(id) => id.node.name.clone(),
            c::DeclaratorKind::Abstract => String::new(),
            c::DeclaratorKind::Declarator(_) => {
                return self.unsupported(
                    d.span,
                    "parenthesized declarators (pointers to arrays or functions)",
                )
            }
        };
        let mut dims = Vec::new();
        for dd in &d.node.derived {
            match &dd.node {
                c::DerivedDeclarator::Pointer(_) if ty.is_ref => {
                    return self.unsupported(dd.span, "pointers to references");
                }
                c::DerivedDeclarator::Pointer(_) if self.unit.refs.contains(&dd.span.start) => {
                    if !dims.is_empty() {
                        return self.unsupported(dd.span, "arrays of references");
                    }
                    ty.is_ref = true;
                }
                c::DerivedDeclarator::Pointer(q) => {
                    if !dims.is_empty() {
                        return self.unsupported(dd.span, "arrays of pointers");
                    }
                    ty.pointers.push(self.ptr_qual(q));
                }
                c::DerivedDeclarator::Array(a) => dims.push(match &a.node.size {
                    c::ArraySize::Unknown => None,
                    c::ArraySize::VariableExpression(e) | c::ArraySize::StaticExpression(e) => {
                        Some(self.expr(e)?)
                    }
                    c::ArraySize::VariableUnknown => {
                        return self.unsupported(a.span, "`[*]` array sizes")
                    }
                }),
                _ => return self.unsupported(dd.span, "function declarators inside functions"),
            }
        }
        Ok((ty, name, dims))
    }

    /// Converts a file-scope `typedef` into the names it defines and their
    /// types.
    pub fn typedefs(&mut self, d: &Node<c::Declaration>) -> Result<Vec<(String, Type)>> {
        let (base, storage) = self.specifiers(&d.node.specifiers)?;
        if !storage.contains(&"typedef") {
            return self.err(d.span, "expected a `typedef`");
        }
        let mut out = Vec::new();
        for id in &d.node.declarators {
            let (ty, name, dims) = self.declarator(base.clone(), &id.node.declarator)?;
            if !dims.is_empty() {
                return self.unsupported(id.span, "array typedefs");
            }
            out.push((name, ty));
        }
        Ok(out)
    }

    /// Converts a file-scope struct definition (`struct Node { … };`,
    /// `typedef struct { … } knode;`): the names it can be used by (the
    /// tag, which C++ makes a type name, and typedef names) and its fields
    /// in order.
    pub fn struct_definition(
        &mut self,
        d: &Node<c::Declaration>,
    ) -> Result<(Vec<String>, Vec<VarDecl>)> {
        let mut is_typedef = false;
        let mut def = None;
        for s in &d.node.specifiers {
            match &s.node {
                c::DeclarationSpecifier::StorageClass(sc) => {
                    is_typedef |= sc.node == c::StorageClassSpecifier::Typedef
                }
                c::DeclarationSpecifier::TypeSpecifier(t) => {
                    if let c::TypeSpecifier::Struct(st) = &t.node {
                        def = Some(st);
                    }
                }
                _ => {}
            }
        }
        let Some(st) = def else {
            return self.err(d.span, "expected a struct definition");
        };
        if st.node.kind.node != c::StructKind::Struct {
            return self.unsupported(st.span, "unions");
        }
        let Some(decls) = &st.node.declarations else {
            return self.err(d.span, "expected a struct definition");
        };
        let mut names: Vec<String> = st
            .node
            .identifier
            .iter()
            .map(|i| i.node.name.clone())
            .collect();
        if is_typedef {
            for id in &d.node.declarators {
                let (ty, name, dims) =
                    self.declarator(Type::scalar(BaseType::Void), &id.node.declarator)?;
                if ty.pointers.is_empty() && dims.is_empty() {
                    names.push(name);
                }
            }
        }
        let mut fields = Vec::new();
        for f in decls {
            let c::StructDeclaration::Field(f) = &f.node else {
                return self.unsupported(f.span, "static assertions in structs");
            };
            let specs: Vec<Node<c::DeclarationSpecifier>> = f
                .node
                .specifiers
                .iter()
                .filter_map(|sq| {
                    let spec = match &sq.node {
                        c::SpecifierQualifier::TypeSpecifier(t) => {
                            c::DeclarationSpecifier::TypeSpecifier(t.clone())
                        }
                        c::SpecifierQualifier::TypeQualifier(q) => {
                            c::DeclarationSpecifier::TypeQualifier(q.clone())
                        }
                        c::SpecifierQualifier::Extension(_) => return None,
                    };
                    Some(Node::new(spec, sq.span))
                })
                .collect();
            let (base, _) = self.specifiers(&specs)?;
            for sd in &f.node.declarators {
                let (Some(decl), None) = (&sd.node.declarator, &sd.node.bit_width) else {
                    return self.unsupported(sd.span, "bit fields and unnamed fields");
                };
                let (ty, name, dims) = self.declarator(base.clone(), decl)?;
                fields.push(VarDecl {
                    meta: self.meta(sd.span),
                    space: Space::Local,
                    is_extern: false,
                    is_static: false,
                    is_constexpr: false,
                    ty,
                    name,
                    dims,
                    init: None,
                });
            }
        }
        Ok((names, fields))
    }

    /// Converts a declaration into one [`VarDecl`] per declarator.
    pub fn declaration(&mut self, d: &Node<c::Declaration>) -> Result<Vec<VarDecl>> {
        let (base, storage) = self.specifiers(&d.node.specifiers)?;
        if storage.contains(&"typedef") {
            return self.unsupported(d.span, "`typedef`s inside functions");
        }
        let whole = self.with_leading_blanks(d.span);
        let mut space = Space::Local;
        let is_constexpr = self.quals_in(whole).any(|q| q == "constexpr");
        for q in self.quals_in(whole) {
            space = match q {
                "__shared__" => Space::Shared,
                "__constant__" => Space::Constant,
                "__device__" if space == Space::Local => Space::Device,
                "__managed__" => Space::Managed,
                _ => space,
            };
        }
        let mut out = Vec::new();
        for id in &d.node.declarators {
            let meta = self.meta(id.span);
            let (ty, name, dims) = self.declarator(base.clone(), &id.node.declarator)?;
            let init = match &id.node.initializer {
                Some(i) => Some(self.initializer(i)?),
                None => None,
            };
            out.push(VarDecl {
                meta,
                space,
                is_extern: storage.contains(&"extern"),
                is_static: storage.contains(&"static"),
                is_constexpr,
                ty,
                name,
                dims,
                init,
            });
        }
        if out.is_empty() {
            return self.unsupported(d.span, "declarations without a declarator");
        }
        Ok(out)
    }

    fn initializer(&mut self, i: &Node<c::Initializer>) -> Result<Init> {
        Ok(match &i.node {
            c::Initializer::Expression(e) => Init::Expr(self.expr(e)?),
            c::Initializer::List(items) => {
                let mut out = Vec::new();
                for it in items {
                    if !it.node.designation.is_empty() {
                        return self.unsupported(it.span, "designated initializers");
                    }
                    out.push(self.initializer(&it.node.initializer)?);
                }
                Init::List(out)
            }
        })
    }

    /// Inserts the pragmas that come before file offset `before`.
    fn take_pragmas(&mut self, before: usize, out: &mut Vec<Stmt>) {
        while self.pragmas.front().is_some_and(|(o, _)| *o < before) {
            if let Some((o, text)) = self.pragmas.pop_front() {
                let id = NodeId(self.next_id);
                self.next_id += 1;
                out.push(Stmt {
                    meta: Meta {
                        id,
                        span: Span::new(o, o),
                        macro_text: None,
                    },
                    kind: StmtKind::Pragma(text),
                });
            }
        }
    }

    fn block_items(
        &mut self,
        items: &[Node<c::BlockItem>],
        span: lang_c::span::Span,
    ) -> Result<Vec<Stmt>> {
        let mut out = Vec::new();
        for item in items {
            let start = self.file_span(item.span).start;
            self.take_pragmas(start, &mut out);
            match &item.node {
                c::BlockItem::Declaration(d) => {
                    let meta = self.meta(d.span);
                    let decls = self.declaration(d)?;
                    out.push(Stmt {
                        meta,
                        kind: StmtKind::Decl(decls),
                    });
                }
                c::BlockItem::Statement(s) => out.push(self.stmt(s)?),
                c::BlockItem::StaticAssert(s) => {
                    return self.unsupported(s.span, "static assertions")
                }
            }
        }
        let end = self.file_span(span).end;
        self.take_pragmas(end, &mut out);
        Ok(out)
    }

    fn boxed(&mut self, s: &Node<c::Statement>) -> Result<Box<Stmt>> {
        self.stmt(s).map(Box::new)
    }

    /// Converts a statement.
    pub fn stmt(&mut self, s: &Node<c::Statement>) -> Result<Stmt> {
        let meta = self.meta(s.span);
        let kind = match &s.node {
            c::Statement::Compound(items) => StmtKind::Block(self.block_items(items, s.span)?),
            c::Statement::Expression(None) => StmtKind::Empty,
            c::Statement::Expression(Some(e)) => StmtKind::Expr(self.expr(e)?),
            c::Statement::If(i) => StmtKind::If {
                cond: self.expr(&i.node.condition)?,
                then: self.boxed(&i.node.then_statement)?,
                els: match &i.node.else_statement {
                    Some(e) => Some(self.boxed(e)?),
                    None => None,
                },
            },
            c::Statement::While(w) => StmtKind::While {
                cond: self.expr(&w.node.expression)?,
                body: self.boxed(&w.node.statement)?,
            },
            c::Statement::DoWhile(w) => StmtKind::DoWhile {
                body: self.boxed(&w.node.statement)?,
                cond: self.expr(&w.node.expression)?,
            },
            c::Statement::For(f) => {
                let init = match &f.node.initializer.node {
                    c::ForInitializer::Empty => None,
                    c::ForInitializer::Expression(e) => {
                        let m = self.meta(f.node.initializer.span);
                        Some(Box::new(Stmt {
                            meta: m,
                            kind: StmtKind::Expr(self.expr(e)?),
                        }))
                    }
                    c::ForInitializer::Declaration(d) => {
                        let m = self.meta(d.span);
                        Some(Box::new(Stmt {
                            meta: m,
                            kind: StmtKind::Decl(self.declaration(d)?),
                        }))
                    }
                    c::ForInitializer::StaticAssert(a) => {
                        return self.unsupported(a.span, "static assertions")
                    }
                };
                StmtKind::For {
                    init,
                    cond: match &f.node.condition {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    },
                    step: match &f.node.step {
                        Some(e) => Some(self.expr(e)?),
                        None => None,
                    },
                    body: self.boxed(&f.node.statement)?,
                }
            }
            c::Statement::Switch(sw) => StmtKind::Switch {
                cond: self.expr(&sw.node.expression)?,
                cases: self.switch_body(&sw.node.statement)?,
            },
            c::Statement::Break => StmtKind::Break,
            c::Statement::Continue => StmtKind::Continue,
            c::Statement::Return(e) => StmtKind::Return(match e {
                Some(e) => Some(self.expr(e)?),
                None => None,
            }),
            c::Statement::Goto(_) => return self.unsupported(s.span, "`goto` statements"),
            c::Statement::Asm(_) => return self.unsupported(s.span, "inline assembly statements"),
            c::Statement::Labeled(l) => match l.node.label.node {
                c::Label::Identifier(_) => return self.unsupported(s.span, "statement labels"),
                _ => {
                    return self.unsupported(
                        s.span,
                        "`case` labels outside the top level of a `switch` body",
                    )
                }
            },
        };
        Ok(Stmt { meta, kind })
    }

    /// The cases of a switch whose body is a block with labels at its top level.
    fn switch_body(&mut self, body: &Node<c::Statement>) -> Result<Vec<SwitchCase>> {
        let c::Statement::Compound(items) = &body.node else {
            return self.unsupported(body.span, "`switch` statements without a `{ … }` body");
        };
        let mut cases: Vec<SwitchCase> = Vec::new();
        for item in items {
            let mut stmt = match &item.node {
                c::BlockItem::Statement(s) => s,
                c::BlockItem::Declaration(d) => {
                    return self.unsupported(d.span, "declarations directly inside a `switch` body")
                }
                c::BlockItem::StaticAssert(a) => {
                    return self.unsupported(a.span, "static assertions")
                }
            };
            while let c::Statement::Labeled(l) = &stmt.node {
                let label = match &l.node.label.node {
                    c::Label::Case(e) => Some(self.expr(e)?),
                    c::Label::Default => None,
                    c::Label::CaseRange(_) => return self.unsupported(l.span, "case ranges"),
                    c::Label::Identifier(_) => return self.unsupported(l.span, "statement labels"),
                };
                match cases.last_mut() {
                    Some(last) if last.body.is_empty() => last.labels.push(label),
                    _ => {
                        let meta = self.meta(l.span);
                        cases.push(SwitchCase {
                            meta,
                            labels: vec![label],
                            body: Vec::new(),
                        });
                    }
                }
                stmt = &l.node.statement;
            }
            let converted = self.stmt(stmt)?;
            match cases.last_mut() {
                Some(last) => last.body.push(converted),
                None => {
                    return self.unsupported(
                        stmt.span,
                        "statements before the first `case` of a `switch`",
                    )
                }
            }
        }
        Ok(cases)
    }

    fn bx(&mut self, e: &Node<c::Expression>) -> Result<Box<Expr>> {
        self.expr(e).map(Box::new)
    }

    /// Converts an expression.
    pub fn expr(&mut self, e: &Node<c::Expression>) -> Result<Expr> {
        let mut meta = self.meta(e.span);
        meta.macro_text = self.macro_text(e.span);
        let kind = match &e.node {
            c::Expression::Identifier(id) => match id.node.name.as_str() {
                "true" => ExprKind::Bool(true),
                "false" => ExprKind::Bool(false),
                n => ExprKind::Ident(self.qualified(id.span, n)),
            },
            c::Expression::Constant(k) => self.constant(&k.node, k.span)?,
            c::Expression::StringLiteral(s) => ExprKind::Str(s.node.join(" ")),
            c::Expression::Member(m) => ExprKind::Member {
                base: self.bx(&m.node.expression)?,
                field: m.node.identifier.node.name.clone(),
                arrow: m.node.operator.node == c::MemberOperator::Indirect,
            },
            c::Expression::Call(call) => {
                let name = match &call.node.callee.node {
                    c::Expression::Identifier(id) => {
                        let mut name = self.qualified(id.span, &id.node.name);
                        if let Some((_, args)) = self
                            .unit
                            .template_args
                            .iter()
                            .find(|(o, _)| *o == id.span.start)
                        {
                            name.push_str(&format!("<{args}>"));
                        }
                        name
                    }
                    _ => return self.unsupported(call.span, "calls through function pointers"),
                };
                let mut args = Vec::new();
                for a in &call.node.arguments {
                    args.push(self.expr(a)?);
                }
                ExprKind::Call(name, args)
            }
            c::Expression::SizeOfTy(t) => ExprKind::SizeofType(self.type_name(&t.node.0)?),
            c::Expression::SizeOfVal(v) => ExprKind::SizeofExpr(self.bx(&v.node.0)?),
            c::Expression::UnaryOperator(u) => {
                let op = match u.node.operator.node {
                    c::UnaryOperator::PostIncrement => UnOp::PostInc,
                    c::UnaryOperator::PostDecrement => UnOp::PostDec,
                    c::UnaryOperator::PreIncrement => UnOp::PreInc,
                    c::UnaryOperator::PreDecrement => UnOp::PreDec,
                    c::UnaryOperator::Address => UnOp::AddrOf,
                    c::UnaryOperator::Indirection => UnOp::Deref,
                    c::UnaryOperator::Plus => UnOp::Plus,
                    c::UnaryOperator::Minus => UnOp::Neg,
                    c::UnaryOperator::Complement => UnOp::BitNot,
                    c::UnaryOperator::Negate => UnOp::Not,
                };
                ExprKind::Unary(op, self.bx(&u.node.operand)?)
            }
            c::Expression::Cast(cast) => {
                // lang-c's span may start at parentheses around the cast.
                let lead = self.unit.text[e.span.start.min(self.unit.text.len())..]
                    .find(|c: char| c != '(' && !c.is_whitespace())
                    .unwrap_or(0);
                let style = self
                    .unit
                    .casts
                    .iter()
                    .find(|(o, _)| (e.span.start..e.span.start + lead).contains(o))
                    .map_or(CastStyle::C, |(_, s)| *s);
                let ty = self.type_name(&cast.node.type_name)?;
                if style == CastStyle::Functional && (ty.is_pointer() || ty.is_ref) {
                    return self.unsupported(e.span, "functional casts to pointer types");
                }
                ExprKind::Cast(style, ty, self.bx(&cast.node.expression)?)
            }
            c::Expression::BinaryOperator(b) => self.binary(b)?,
            c::Expression::Conditional(k) => ExprKind::Cond(
                self.bx(&k.node.condition)?,
                self.bx(&k.node.then_expression)?,
                self.bx(&k.node.else_expression)?,
            ),
            c::Expression::Comma(list) => {
                let mut out = Vec::new();
                for x in list.iter() {
                    out.push(self.expr(x)?);
                }
                ExprKind::Comma(out)
            }
            c::Expression::CompoundLiteral(_) => {
                return self.unsupported(e.span, "compound literals")
            }
            c::Expression::GenericSelection(_) => {
                return self.unsupported(e.span, "`_Generic` selections")
            }
            c::Expression::AlignOf(_) => return self.unsupported(e.span, "`_Alignof` expressions"),
            c::Expression::OffsetOf(_) => {
                return self.unsupported(e.span, "`offsetof` expressions")
            }
            c::Expression::VaArg(_) => return self.unsupported(e.span, "`va_arg` expressions"),
            c::Expression::Statement(_) => {
                return self.unsupported(e.span, "statement expressions")
            }
        };
        Ok(Expr { meta, kind })
    }

    fn binary(&mut self, b: &Node<c::BinaryOperatorExpression>) -> Result<ExprKind> {
        use c::BinaryOperator as B;
        let op = b.node.operator.node.clone();
        let lhs = self.bx(&b.node.lhs)?;
        let rhs = self.bx(&b.node.rhs)?;
        let plain = |o| Some(o);
        let (assign, bin) = match op {
            B::Index => return Ok(ExprKind::Index(lhs, rhs)),
            B::Assign => (true, None),
            B::AssignMultiply => (true, plain(BinOp::Mul)),
            B::AssignDivide => (true, plain(BinOp::Div)),
            B::AssignModulo => (true, plain(BinOp::Rem)),
            B::AssignPlus => (true, plain(BinOp::Add)),
            B::AssignMinus => (true, plain(BinOp::Sub)),
            B::AssignShiftLeft => (true, plain(BinOp::Shl)),
            B::AssignShiftRight => (true, plain(BinOp::Shr)),
            B::AssignBitwiseAnd => (true, plain(BinOp::BitAnd)),
            B::AssignBitwiseXor => (true, plain(BinOp::BitXor)),
            B::AssignBitwiseOr => (true, plain(BinOp::BitOr)),
            B::Multiply => (false, plain(BinOp::Mul)),
            B::Divide => (false, plain(BinOp::Div)),
            B::Modulo => (false, plain(BinOp::Rem)),
            B::Plus => (false, plain(BinOp::Add)),
            B::Minus => (false, plain(BinOp::Sub)),
            B::ShiftLeft => (false, plain(BinOp::Shl)),
            B::ShiftRight => (false, plain(BinOp::Shr)),
            B::Less => (false, plain(BinOp::Lt)),
            B::Greater => (false, plain(BinOp::Gt)),
            B::LessOrEqual => (false, plain(BinOp::Le)),
            B::GreaterOrEqual => (false, plain(BinOp::Ge)),
            B::Equals => (false, plain(BinOp::Eq)),
            B::NotEquals => (false, plain(BinOp::Ne)),
            B::BitwiseAnd => (false, plain(BinOp::BitAnd)),
            B::BitwiseXor => (false, plain(BinOp::BitXor)),
            B::BitwiseOr => (false, plain(BinOp::BitOr)),
            B::LogicalAnd => (false, plain(BinOp::And)),
            B::LogicalOr => (false, plain(BinOp::Or)),
        };
        Ok(match (assign, bin) {
            (true, op) => ExprKind::Assign(op, lhs, rhs),
            (false, Some(op)) => ExprKind::Binary(op, lhs, rhs),
            (false, None) => unreachable!("every non-assignment operator has a BinOp"),
        })
    }

    fn type_name(&mut self, t: &Node<c::TypeName>) -> Result<Type> {
        let mut ts = Vec::new();
        let mut is_const = false;
        let mut is_volatile = false;
        for s in &t.node.specifiers {
            match &s.node {
                c::SpecifierQualifier::TypeSpecifier(x) => ts.push(x),
                c::SpecifierQualifier::TypeQualifier(q) => match q.node {
                    c::TypeQualifier::Const => is_const = true,
                    c::TypeQualifier::Volatile => is_volatile = true,
                    _ => {}
                },
                c::SpecifierQualifier::Extension(_) => {}
            }
        }
        let ty = Type {
            base: self.base_type(&ts)?,
            is_const,
            is_volatile,
            pointers: Vec::new(),
            is_ref: false,
        };
        match &t.node.declarator {
            None => Ok(ty),
            Some(d) => {
                let (ty, _, dims) = self.declarator(ty, d)?;
                if !dims.is_empty() {
                    return self.unsupported(d.span, "array type names");
                }
                Ok(ty)
            }
        }
    }

    fn constant(&self, k: &c::Constant, span: lang_c::span::Span) -> Result<ExprKind> {
        Ok(match k {
            c::Constant::Integer(i) => {
                let (radix, prefix) = match i.base {
                    c::IntegerBase::Decimal => (10, ""),
                    c::IntegerBase::Octal => (8, "0"),
                    c::IntegerBase::Hexadecimal => (16, "0x"),
                    c::IntegerBase::Binary => (2, "0b"),
                };
                let digits = i.number.trim_start_matches(prefix);
                let digits = if digits.is_empty() { "0" } else { digits };
                let value = match u64::from_str_radix(&digits.replace('\'', ""), radix) {
                    Ok(v) => v,
                    Err(_) => {
                        return self.err(
                            span,
                            format!("integer literal `{}` does not fit in 64 bits", i.number),
                        )
                    }
                };
                if i.suffix.imaginary {
                    return self.unsupported(span, "imaginary literals");
                }
                let mut text = format!("{prefix}{digits}");
                if i.suffix.unsigned {
                    text.push('u');
                }
                match i.suffix.size {
                    c::IntegerSize::Int => {}
                    c::IntegerSize::Long => text.push('l'),
                    c::IntegerSize::LongLong => text.push_str("ll"),
                }
                ExprKind::Int { value, text }
            }
            c::Constant::Float(f) => {
                let mut text = f.number.to_string();
                match f.suffix.format {
                    c::FloatFormat::Float => text.push('f'),
                    c::FloatFormat::Double => {}
                    _ => {
                        return self.unsupported(span, "`long double` and extended float literals")
                    }
                }
                if f.base == c::FloatBase::Hexadecimal {
                    text = format!("0x{text}");
                }
                ExprKind::Float(text)
            }
            c::Constant::Character(s) => ExprKind::Char(s.clone()),
        })
    }

    /// The macro invocation whose expansion is exactly this node (allowing
    /// for parentheses around it in the expansion).
    fn macro_text(&self, s: lang_c::span::Span) -> Option<String> {
        if s.is_none() {
            return None;
        }
        let text = &self.unit.text;
        // lang-c's spans may take in the whitespace after a node.
        let node = text.get(s.start..s.end)?;
        let (start, end) = (s.start, s.start + node.trim_end().len());
        self.unit.macro_uses.iter().find_map(|m| {
            let (mut a, mut b) = (m.out.start, m.out.end);
            let piece = text.get(a..b)?;
            a += piece.len() - piece.trim_start().len();
            b -= piece.len() - piece.trim_end().len();
            loop {
                if a == start && b == end {
                    return Some(m.invocation.clone());
                }
                let inner = text.get(a..b)?.trim();
                if !(inner.starts_with('(') && inner.ends_with(')') && parens_wrap(inner)) {
                    return None;
                }
                let lead = text[a..b].len() - text[a..b].trim_start().len();
                let trail = text[a..b].len() - text[a..b].trim_end().len();
                a += lead + 1;
                b -= trail + 1;
                a += text[a..b].len() - text[a..b].trim_start().len();
                b -= text[a..b].len() - text[a..b].trim_end().len();
            }
        })
    }
}

/// Whether the first `(` of `s` is closed by its last `)`.
fn parens_wrap(s: &str) -> bool {
    let mut depth = 0i32;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != s.len() - 1 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}
