//! Declarations and types: specifiers and base types, declarators,
//! file-scope `typedef`s and struct definitions, variable declarations with
//! their initializers, and type names.

use super::*;
use crate::cuda::unit::AUTO_STAND_IN;

/// Why a union is refused, with what to write instead.
const UNIONS: &str = "unions are not supported in kernels: copper keeps one typed value per \
                      field, so reading a member other than the one last written (type \
                      punning) cannot be simulated exactly; for a float's bits write \
                      `__float_as_uint(x)` and `__uint_as_float(u)` (`__double_as_longlong` for \
                      doubles), which copper reads";

impl Converter<'_> {
    /// Base type and storage-class words (`static`, `extern`, `inline`).
    pub(super) fn specifiers(
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
        let base_macro = self.base_macro(&ts, &base);
        Ok((
            Type {
                base,
                is_const,
                is_volatile,
                pointers: Vec::new(),
                is_ref: false,
                base_macro,
            },
            storage,
        ))
    }

    /// The object-like macro whose expansion is exactly the type
    /// specifiers `ts` (`DATA_TYPE` for `#define DATA_TYPE unsigned int`),
    /// not the qualifiers or a pointer beside them.
    fn base_macro(&self, ts: &[&Node<c::TypeSpecifier>], base: &BaseType) -> BaseMacro {
        let start = ts.iter().map(|t| t.span.start).min();
        let end = ts.iter().map(|t| t.span.end).max();
        let name = match (start, end) {
            (Some(start), Some(end)) => self.macro_text(lang_c::span::Span::span(start, end)),
            _ => None,
        };
        BaseMacro(
            name.filter(|n| {
                n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                    && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            })
            .map(|n| (n, base.clone())),
        )
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
                        _ if kw == "union" => self.err(st.span, UNIONS),
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

    pub(super) fn ptr_qual(&self, q: &[Node<c::PointerQualifier>]) -> PtrQual {
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
    pub(super) fn declarator(
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
            return self.err(st.span, UNIONS);
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

    pub(super) fn type_name(&mut self, t: &Node<c::TypeName>) -> Result<Type> {
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
        let base = self.base_type(&ts)?;
        let ty = Type {
            base_macro: self.base_macro(&ts, &base),
            base,
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
}
