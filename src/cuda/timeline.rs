//! The macros in force at each point of a translation unit, as the C
//! preprocessor sees them: a `#define` applies from its line on, a
//! `#undef` ends it, and a header's directives apply where it is
//! included. [`cond::active`](super::cond::active) records the
//! `#define`s and `#undef`s of the text it compiles, in translation-unit
//! order (command line, then the file with each header entered at its
//! `#include`), with a mark after each; [`Timeline::at`] is the table
//! of the events up to an offset: a number into the one [`MacroHistory`]
//! all points share, not a copy of the definitions.

use std::sync::Arc;

use super::lex::CUDA_QUALIFIERS;
use super::macros::{MacroDef, MacroHistory, MacroTable};
use crate::source::{SourceFile, INCLUDED_BASE};

/// One text of the translation unit (the user's file or an included one)
/// and where its directives fall in the event list.
#[derive(Clone, Debug, Default)]
struct FileMarks {
    /// Its offsets: `start..end`.
    start: usize,
    end: usize,
    /// Events read before the walk entered it.
    entry: usize,
    /// After each of its directives that changed the count (offset of the
    /// directive's end, events read by then), in offset order.
    marks: Vec<(usize, usize)>,
}

/// The `#define`s and `#undef`s of a translation unit in order, and the
/// macro table in force at any offset.
#[derive(Clone, Debug, Default)]
pub struct Timeline {
    /// The events (only this timeline holds it while they are recorded).
    events: Arc<MacroHistory>,
    /// The user's file first, then each included file.
    files: Vec<FileMarks>,
}

impl Timeline {
    /// An empty timeline for `source` and what it includes.
    pub fn new(source: &SourceFile) -> Timeline {
        let user = FileMarks {
            start: 0,
            end: source.text.len(),
            ..FileMarks::default()
        };
        let included = source.included().files.iter().map(|f| FileMarks {
            start: f.base,
            end: f.base + f.text.len(),
            ..FileMarks::default()
        });
        Timeline {
            files: std::iter::once(user).chain(included).collect(),
            ..Timeline::default()
        }
    }

    /// The walk enters text `file` (`None`: the user's file; `Some(i)`:
    /// included file `i`).
    pub(crate) fn enter(&mut self, file: Option<usize>) {
        let n = self.events.len();
        if let Some(f) = self.files.get_mut(file.map_or(0, |i| i + 1)) {
            f.entry = n;
        }
    }

    /// A `#define` read in `file`, ending at `end`. A header's definition
    /// of a CUDA qualifier is left out: copper reads those as qualifiers.
    pub(crate) fn define(&mut self, file: Option<usize>, end: usize, def: MacroDef) {
        let qualifier = CUDA_QUALIFIERS.contains(&def.name.as_str()) || def.name == "__restrict__";
        if file.is_some() && qualifier {
            return;
        }
        Arc::make_mut(&mut self.events).define(def);
        self.mark(file, end);
    }

    /// An `#undef NAME` read in `file`, ending at `end`.
    pub(crate) fn undefine(&mut self, file: Option<usize>, end: usize, name: &str) {
        Arc::make_mut(&mut self.events).undefine(name);
        self.mark(file, end);
    }

    /// Marks the end of a directive of `file` (an `#include`, after which
    /// the included text's events count).
    pub(crate) fn mark(&mut self, file: Option<usize>, end: usize) {
        let n = self.events.len();
        if let Some(f) = self.files.get_mut(file.map_or(0, |i| i + 1)) {
            match f.marks.last_mut() {
                Some(last) if last.1 == n => last.0 = end,
                _ => f.marks.push((end, n)),
            }
        }
    }

    /// An expansion added at `start..end` sees the macros in force at
    /// its macro's invocation, `invocation`.
    pub(crate) fn expansion(&mut self, start: usize, end: usize, invocation: usize) {
        let entry = self.count_at(invocation);
        self.files.push(FileMarks {
            start,
            end,
            entry,
            marks: Vec::new(),
        });
    }

    /// How many events come before `offset` in translation-unit order.
    fn count_at(&self, offset: usize) -> usize {
        let file = if offset < INCLUDED_BASE {
            self.files.first()
        } else {
            self.files[1..]
                .iter()
                .find(|f| f.start <= offset && offset <= f.end)
        };
        let Some(f) = file else {
            return self.events.len();
        };
        let before = f.marks.partition_point(|&(end, _)| end <= offset);
        match before {
            0 => f.entry,
            k => f.marks[k - 1].1,
        }
    }

    /// The macros in force at `offset` (in the user's file or an included
    /// one): every `#define` before it in translation-unit order that no
    /// `#undef` ended.
    pub fn at(&self, offset: usize) -> MacroTable {
        MacroTable::at(&self.events, self.count_at(offset))
    }

    /// The macros in force at the end of the translation unit.
    pub fn at_end(&self) -> MacroTable {
        MacroTable::at(&self.events, self.events.len())
    }

    /// Every macro any `#define` makes, the last definition of a name
    /// winning, `#undef`s ignored: what a name may expand to somewhere.
    pub fn union(&self) -> MacroTable {
        self.events.union()
    }
}

impl From<MacroTable> for Timeline {
    /// A timeline whose every point has `table` in force (for callers
    /// without a translation unit).
    fn from(table: MacroTable) -> Timeline {
        let mut events = MacroHistory::default();
        for d in table.visible() {
            events.define(d.clone());
        }
        Timeline {
            events: Arc::new(events),
            files: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::cond::active;
    use super::*;

    fn body(t: &MacroTable, name: &str) -> Option<String> {
        t.get(name).map(|d| d.body.join(" "))
    }

    #[test]
    fn a_define_applies_from_its_line_and_an_undef_ends_it() {
        let src = "__global__ void a(int TILE) {}\n#define TILE 16\n__global__ void b() {}\n\
                   #undef TILE\n#define TILE 32\n__global__ void c() {}\n#undef TILE\n__global__ void d() {}\n";
        let tl = active(&SourceFile::new("t.cu", src)).timeline;
        let at = |f: &str| tl.at(src.find(f).unwrap());
        assert_eq!(body(&at("void a"), "TILE"), None);
        assert_eq!(body(&at("void b"), "TILE").as_deref(), Some("16"));
        assert_eq!(body(&at("void c"), "TILE").as_deref(), Some("32"));
        assert_eq!(body(&at("void d"), "TILE"), None);
        assert_eq!(body(&tl.at_end(), "TILE"), None);
        assert_eq!(body(&tl.union(), "TILE").as_deref(), Some("32"));
    }

    #[test]
    fn branches_not_taken_define_nothing() {
        let src = "#define A 1\n#ifndef A\n#define A 2\n#endif\n#if 0\n#undef A\n#endif\nint x;\n";
        let tl = active(&SourceFile::new("t.cu", src)).timeline;
        assert_eq!(
            body(&tl.at(src.find("int x").unwrap()), "A").as_deref(),
            Some("1")
        );
    }
}
