//! Which file-scope declarations a parse unit needs before the code it
//! parses: the type declarations (`typedef`, `using`, `struct`) whose
//! names it mentions, and theirs in turn, so that `lang-c` can tell a
//! type name from a variable. Variables and constants are not needed to
//! parse (C's grammar needs only type names), so a global is taken only
//! when it may declare a type name itself (`struct S { … } g;`).
//!
//! The closure is a worklist over an index by name: each declaration's
//! identifiers are read once per unit, so a chain of a thousand
//! declarations that each name the one before costs a thousand steps,
//! not a thousand passes over the file.

use std::collections::{HashMap, HashSet};

use super::extract::{GlobalItem, TypeDeclItem};
use super::lex::{tokenize, TokKind};
use super::template_structs::{struct_tag, Instances};
use crate::source::{SourceFile, Span};

/// The file-scope declarations a unit may need, indexed by the names
/// they declare.
pub(super) struct DeclarationIndex {
    /// Each declaration's place: the type declarations in file order,
    /// then the globals that may declare a type name.
    spans: Vec<Span>,
    /// The declarations that declare each name.
    by_name: HashMap<String, Vec<usize>>,
}

impl DeclarationIndex {
    /// The index of `types` and of the `globals` that may declare a type
    /// name, in `source`.
    pub(super) fn new(
        source: &SourceFile,
        types: &[TypeDeclItem],
        globals: &[GlobalItem],
    ) -> DeclarationIndex {
        let typed = globals
            .iter()
            .filter(|g| declares_a_type(source.slice(g.span)))
            .map(|g| (&g.names, g.span));
        let mut index = DeclarationIndex {
            spans: Vec::new(),
            by_name: HashMap::new(),
        };
        for (names, span) in types.iter().map(|t| (&t.names, t.span)).chain(typed) {
            let at = index.spans.len();
            index.spans.push(span);
            for n in names {
                index.by_name.entry(n.clone()).or_default().push(at);
            }
        }
        index
    }

    /// The index where code naming a template struct (`Pair`) needs
    /// every instance of it made (`Pair__float`, see
    /// [`super::template_structs`]).
    pub(super) fn with_instances(mut self, instances: &Instances) -> DeclarationIndex {
        for (name, ident) in instances.made.iter().filter_map(|i| {
            let name = i.written.split('<').next()?;
            Some((name.to_string(), struct_tag(&i.text)?))
        }) {
            let at = self.by_name.get(ident).cloned().unwrap_or_default();
            self.by_name.entry(name).or_default().extend(at);
        }
        self
    }

    /// The declarations (other than `span` itself) that code mentioning
    /// `used` needs, and those they need in turn, in index order;
    /// `identifiers_of` reads the names a declaration mentions.
    pub(super) fn needed(
        &self,
        span: Span,
        mut used: HashSet<String>,
        identifiers_of: impl Fn(Span) -> HashSet<String>,
    ) -> Vec<Span> {
        let mut taken = vec![false; self.spans.len()];
        let mut todo: Vec<String> = used.iter().cloned().collect();
        while let Some(name) = todo.pop() {
            for &i in self.by_name.get(&name).into_iter().flatten() {
                if taken[i] || self.spans[i] == span {
                    continue;
                }
                taken[i] = true;
                for id in identifiers_of(self.spans[i]) {
                    if used.insert(id.clone()) {
                        todo.push(id);
                    }
                }
            }
        }
        (self.spans.iter().zip(taken))
            .filter(|(_, t)| *t)
            .map(|(s, _)| *s)
            .collect()
    }
}

/// Whether a file-scope declaration may declare a type name (it
/// mentions `struct`, `union`, `class` or `enum`).
fn declares_a_type(text: &str) -> bool {
    tokenize(text).iter().any(|t| {
        t.kind == TokKind::Ident && matches!(t.text(text), "struct" | "union" | "class" | "enum")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cuda::extract::extract;

    fn spans_needed(src: &str, used: &[&str]) -> Vec<String> {
        let source = SourceFile::new("t.cu", src);
        let ex = extract(src);
        let index = DeclarationIndex::new(&source, &ex.types, &ex.globals);
        let used = used.iter().map(|s| s.to_string()).collect();
        let ids = |s: Span| {
            tokenize(source.slice(s))
                .iter()
                .filter(|t| t.kind == TokKind::Ident)
                .map(|t| t.text(source.slice(s)).to_string())
                .collect()
        };
        index
            .needed(Span::new(0, 0), used, ids)
            .into_iter()
            .map(|s| source.slice(s).to_string())
            .collect()
    }

    #[test]
    fn types_are_taken_through_the_types_they_name() {
        let src =
            "typedef float real;\ntypedef real pair[2];\ntypedef int unused;\nconst int N = 4;\n";
        assert_eq!(
            spans_needed(src, &["pair"]),
            ["typedef float real;", "typedef real pair[2];"]
        );
    }

    #[test]
    fn constants_are_not_needed_to_parse() {
        let src = "const int A = 1;\nconst int B = A + A;\n";
        assert!(spans_needed(src, &["B"]).is_empty());
    }
}
