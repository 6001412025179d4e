//! Conversion from `lang-c`'s C AST to copper's CUDA AST.
//!
//! Spans are mapped back to the user's file, CUDA qualifiers recorded by the
//! unit builder are re-attached, `#pragma` lines are re-inserted as
//! statements, and expressions that are exactly one macro expansion remember
//! the invocation. Anything outside copper's C subset becomes an error naming
//! the construct.

mod decl;
mod expr;
mod stmt;

use std::collections::VecDeque;

use lang_c::ast as c;
use lang_c::span::Node;

use super::ast::*;
use super::unit::Unit;
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
    /// Where each macro expansion starts in the unit's text, with its
    /// index in [`Unit::macro_uses`], sorted by start.
    macro_starts: Vec<(usize, usize)>,
}

impl<'a> Converter<'a> {
    /// A converter for `unit`, numbering nodes from `first_id`.
    pub fn new(unit: &'a Unit, first_id: u64) -> Converter<'a> {
        Converter {
            unit,
            next_id: first_id,
            pragmas: unit.pragmas.iter().cloned().collect(),
            macro_starts: {
                let mut starts: Vec<(usize, usize)> = unit
                    .macro_uses
                    .iter()
                    .enumerate()
                    .map(|(i, m)| (m.out.start, i))
                    .collect();
                starts.sort_unstable();
                starts
            },
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
        // A name from a macro (`KERNEL(foo)`) maps to the invocation, where
        // the qualifiers it expands to are recorded: the head holds it.
        let name_at = self.file_span(name_span).start;
        let head = Span::new(meta.span.start, name_at.max(meta.span.start + 1));
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
                default: None,
            });
        }
        Ok(out)
    }
}
