//! Parses every kernel and device function of a file into copper's AST.
//!
//! Each function is parsed on its own (prelude + the file-scope declarations
//! it uses + its text), so one broken function never stops the others.

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::path::Path;

use lang_c::ast as c;
use lang_c::driver::{parse_preprocessed, Config, Flavor};
use lang_c::span::Node;

use super::ast::{BaseType, FnKind, Function, Template, Type, VarDecl};
use super::convert::Converter;
use super::coop_groups::Group;
use super::coop_params::GroupParams;
use super::declarations_used::DeclarationIndex;
use super::extract::{extract_with, Extracted, FunctionItem, GlobalItem, TypeDeclItem};
use super::include::{self, Preprocess};
use super::instantiate::instantiate;
use super::launch::{resolve_launches, Launch};
use super::lex::{tokenize, TokKind};
use super::limits::MAX_FILE_EXPANSION;
use super::macro_kernels;
use super::macros::MacroTable;
use super::methods;
use super::pointer_aliases;
use super::qualifier_macros::QualifierMacros;
use super::template;
use super::template_structs::{self, Instances};
use super::timeline::Timeline;
use super::undefined_kernels::undefined_kernels;
use super::unit::{is_builtin_type_name, prelude, Names, Unit, UnitError};
use super::unknown_type;
use super::unread_cxx;
use super::{cond, default_args, enums, host};
use crate::diag::{Diagnostic, Severity};
use crate::source::{IncludedFile, IncludedKind, SourceFile, Span};

/// Node ids of each function start at a multiple of this, so ids are unique
/// in a file and stable when other functions change. (Ids are 64-bit: a
/// file of any size numbers all its functions without wrapping.)
pub const IDS_PER_FUNCTION: u64 = 1 << 20;

pub use super::parsed_function::ParsedFunction;

mod unread;
use unread::{invalid_bytes_in_code, unread_kernels};

/// A parsed file: its functions, device globals, launches and diagnostics.
#[derive(Clone, Debug)]
pub struct ParsedFile {
    /// The source.
    pub source: SourceFile,
    /// What extraction found in the user's file.
    pub extracted: Extracted,
    /// Kernels and device functions in file order, then the kernels of the
    /// headers it includes, then the headers' device functions its
    /// functions call (their spans are past
    /// [`crate::source::INCLUDED_BASE`]), then the instantiations of
    /// template kernels (`reduce<256>`: the template's span and AST under
    /// that name, with the arguments in [`Function::template`]).
    pub functions: Vec<ParsedFunction>,
    /// `__constant__`/`__device__` globals that parsed.
    pub globals: Vec<VarDecl>,
    /// Launch sites with their shapes when literal.
    pub launches: Vec<Launch>,
    /// File-scope typedefs that copper could read (`typedef unsigned u32;`).
    pub typedefs: HashMap<String, Type>,
    /// File-scope struct definitions copper could read, by tag and by
    /// typedef name: their fields in order.
    pub structs: HashMap<String, Vec<VarDecl>>,
    /// Problems outside any function (globals that do not parse, …).
    pub diagnostics: Vec<Diagnostic>,
    /// The template structs and their instances (lowering reads an
    /// instance a template kernel names through its parameters:
    /// [`Instances::resolve`]).
    pub instances: Instances,
}

impl ParsedFile {
    /// The functions that parsed, in the order of [`ParsedFile::functions`].
    pub fn parsed_functions(&self) -> impl Iterator<Item = &Function> {
        self.functions.iter().filter_map(|f| f.result.as_ref().ok())
    }

    /// The kernels (`__global__` functions) that parsed, template kernels
    /// by their instantiations.
    pub fn kernels(&self) -> impl Iterator<Item = &Function> {
        self.parsed_functions()
            .filter(|f| f.is_kernel() && !f.is_uninstantiated())
    }

    /// Template kernels that parsed but that nothing instantiates.
    pub fn uninstantiated(&self) -> Vec<&Function> {
        self.parsed_functions()
            .filter(|f| {
                f.is_kernel()
                    && f.is_uninstantiated()
                    && !self.functions.iter().any(|g| {
                        g.result.as_ref().is_ok_and(|g| {
                            g.template.as_ref().is_some_and(|t| {
                                !t.args.is_empty() && t.name == f.name && g.meta.span == f.meta.span
                            })
                        })
                    })
            })
            .collect()
    }

    /// The kernel name `wanted` (as a user gives it to `--kernel`) stands
    /// for: an instantiation is named with its defaults filled in and its
    /// arguments spelled as copper spells them (`t<float>` is
    /// `t<float, 32>`); any other name is itself.
    pub fn kernel_name(&self, wanted: &str) -> String {
        let Some((base, args)) = template::split_name(wanted) else {
            return wanted.to_string();
        };
        self.parsed_functions()
            .filter_map(|f| {
                f.template
                    .as_ref()
                    .filter(|t| f.is_kernel() && t.name == base)
            })
            .find_map(|t| template::arguments(&t.params, args, &MacroTable::default()).ok())
            .map_or_else(|| wanted.to_string(), |a| template::instance_name(base, &a))
    }

    /// Where the function named `name` is in the file: for an
    /// instantiation of a template (`reduce<256>`), the template's text.
    pub fn item(&self, name: &str) -> Option<&FunctionItem> {
        self.functions
            .iter()
            .map(|f| &f.item)
            .find(|i| i.name == name && i.owner.is_none())
    }

    /// The function named `name` that parsed (member functions of structs
    /// are not named alone).
    pub fn function(&self, name: &str) -> Option<&Function> {
        (self.functions.iter())
            .filter(|f| f.item.owner.is_none())
            .filter_map(|f| f.result.as_ref().ok())
            .find(|f| f.name == name)
    }

    /// Every diagnostic: file-level ones, then each failed function's
    /// (a header's device function that does not parse counts only where a
    /// kernel calls it; a header's kernel counts).
    pub fn all_diagnostics(&self) -> Vec<Diagnostic> {
        let mut all = self.diagnostics.clone();
        all.extend(
            self.functions
                .iter()
                .filter(|f| include::in_user_file(f.item.span) || f.item.kind == FnKind::Global)
                .filter_map(|f| f.result.as_ref().err().cloned()),
        );
        all
    }
}

/// Reads and parses the file at `path`, following its `#include`s
/// (relative to the file) without other definitions or directories.
pub fn parse_path(path: &Path) -> Result<ParsedFile, Diagnostic> {
    parse_path_with(path, &Preprocess::default())
}

/// Reads the file at `path`, loads what it includes under `opts` (`-D`,
/// `-U`, `-I`), and parses it.
pub fn parse_path_with(path: &Path, opts: &Preprocess) -> Result<ParsedFile, Diagnostic> {
    SourceFile::read(path).map(|s| parse_source(include::load(s, opts)))
}

/// Parses a file already in memory (with what it includes, when it was
/// loaded with [`include::load`]). Only the branches of `#if`s that nvcc
/// compiles are read ([`cond::active`]). A file whose template kernels
/// name template structs through their parameters (`Pair<T>`) is read
/// twice: the second time with the instances their instantiations want
/// ([`Instances::for_instantiation`]).
pub fn parse_source(original: SourceFile) -> ParsedFile {
    let (file, wanted) = parse_with_instances(original, &[]);
    if wanted.is_empty() {
        return file;
    }
    parse_with_instances(file.source, &wanted).0
}

/// [`parse_source`] with the template struct instances `wanted` made
/// too; with the instances the file's instantiations want that it did
/// not make.
fn parse_with_instances(
    original: SourceFile,
    wanted: &[(String, Vec<String>)],
) -> (ParsedFile, Vec<(String, Vec<String>)>) {
    let mut original = original.without_expansions();
    let cond::Active {
        mut source,
        mut timeline,
        diagnostics: cond_diagnostics,
    } = cond::active(&original);
    let qualifiers = QualifierMacros::from_table(&timeline.union());
    let extracted = extract_with(&source.text, &qualifiers);
    let mut scope = Scope::new(&source, &extracted, &qualifiers);
    let written: Vec<(usize, usize)> = (extracted.functions.iter())
        .chain(&scope.header_kernels)
        .chain(&scope.header_functions)
        .map(|f| (f.name_offset, f.span.end))
        .collect();
    let invocations = macro_kernels::invocations(&source, &timeline, &written);
    macro_kernels::add_expansions(&invocations, &mut source, &mut original, &mut timeline);
    let skip = &scope.shared_accessors;
    let instances =
        template_structs::add_instances(&mut source, &mut original, &mut timeline, skip, wanted);
    scope.add_expansions(&source, &qualifiers);
    scope.keep_called_header_functions(&source, &extracted, &timeline.union());
    let ctx = Context::new(&source, &scope, &extracted, timeline, &instances);
    let user_count = extracted.functions.len();
    let mut functions: Vec<ParsedFunction> = extracted
        .functions
        .iter()
        .chain(&scope.header_kernels)
        .chain(&scope.header_functions)
        .enumerate()
        .map(|(i, item)| ParsedFunction {
            item: item.clone(),
            result: ctx.function(item, i as u64),
        })
        .collect();
    // A directive in a branch not taken was blanked: nvcc never reads it.
    let mut diagnostics: Vec<Diagnostic> = (source.included().diagnostics.iter())
        .filter(|(at, _)| source.slice_from(*at).starts_with('#'))
        .map(|(_, d)| d.clone())
        .collect();
    diagnostics.extend(cond_diagnostics);
    let mut typedefs = HashMap::new();
    let mut structs = HashMap::new();
    for t in &scope.types {
        let text = source.slice(t.span);
        if text.starts_with("typedef") || text.starts_with("using") {
            typedefs.extend(ctx.typedef(t.span).unwrap_or_default());
        }
        if defines_struct(text) {
            if let Some((names, fields)) = ctx.struct_definition(t.span) {
                structs.extend(names.into_iter().map(|n| (n, fields.clone())));
            }
        }
    }
    let sizes = host::struct_sizes(&structs, &typedefs);
    let mut launches = resolve_launches(&source.text, &extracted, &ctx.macros, &sizes);
    instantiate(
        &source,
        &extracted.instantiations,
        &ctx.macros,
        &mut functions,
        &mut launches,
        &mut diagnostics,
    );
    for f in functions.iter_mut().filter_map(|f| f.result.as_mut().ok()) {
        pointer_aliases::spell_out(f, &typedefs);
    }
    let mut more: Vec<(String, Vec<String>)> = (functions.iter())
        .filter_map(|f| {
            Some((
                source.slice(f.item.span),
                f.result.as_ref().ok()?.template.as_ref()?,
            ))
        })
        .filter(|(_, t)| !t.args.is_empty())
        .flat_map(|(text, t)| instances.for_instantiation(text, &t.params, &t.args))
        .collect();
    more.sort();
    more.dedup();
    diagnostics.extend(invalid_bytes_in_code(&original));
    diagnostics.extend(extracted.unsupported_members.iter().map(|m| {
        let message = format!(
            "struct `{}`: {} are not read; code that uses them is not analyzed",
            m.owner, m.what
        );
        source.diagnostic(Severity::Warning, "unsupported", m.offset, message)
    }));
    diagnostics.extend(unread_kernels(&source, &functions, &qualifiers));
    diagnostics.extend(macro_kernels::unread(&source, &invocations));
    diagnostics.extend(undefined_kernels(&source, &functions, &launches));
    let mut globals = Vec::new();
    for (i, g) in scope.globals.iter().enumerate() {
        let first_id = IDS_PER_FUNCTION * (functions.len() as u64 + 1 + i as u64);
        match ctx.global(g.span, first_id) {
            Ok(decls) => globals.extend(decls),
            Err(d) if include::in_user_file(g.span) && !g.constant => diagnostics.push(d),
            Err(_) => {}
        }
    }
    let first_id = IDS_PER_FUNCTION * (functions.len() as u64 + 1 + scope.globals.len() as u64);
    globals.extend(enums::constants(&extracted.enums, first_id));
    for name in extracted.enums.iter().filter_map(|e| e.name.as_ref()) {
        typedefs.insert(name.clone(), Type::scalar(BaseType::Int));
    }
    debug_assert!(functions[..user_count]
        .iter()
        .all(|f| include::in_user_file(f.item.span)));
    let file = ParsedFile {
        typedefs,
        structs,
        source: original,
        extracted,
        functions,
        globals,
        launches,
        diagnostics,
        instances: instances.clone(),
    };
    (file, more)
}

/// The declarations a file's functions are parsed against: the file's own
/// and those of the headers and command-line definitions it includes.
struct Scope {
    types: Vec<TypeDeclItem>,
    globals: Vec<GlobalItem>,
    /// Kernels defined in headers (listed and analyzed with the file's).
    header_kernels: Vec<FunctionItem>,
    /// Device functions defined in headers.
    header_functions: Vec<FunctionItem>,
    /// Dynamic shared memory accessors (`SharedMemory<T>`), the headers'
    /// and the file's.
    shared_accessors: HashSet<String>,
}

impl Scope {
    fn new(source: &SourceFile, own: &Extracted, qualifiers: &QualifierMacros) -> Scope {
        let mut scope = Scope {
            types: Vec::new(),
            globals: Vec::new(),
            header_kernels: Vec::new(),
            header_functions: Vec::new(),
            shared_accessors: own.shared_accessors.iter().cloned().collect(),
        };
        for f in (source.included().files.iter()).filter(|f| f.kind == IncludedKind::Header) {
            scope.add(f, qualifiers);
        }
        scope.types.extend(own.types.iter().cloned());
        scope.globals.extend(own.globals.iter().cloned());
        scope
    }

    /// Adds what an included text (a header or an expansion) defines.
    fn add(&mut self, f: &IncludedFile, qualifiers: &QualifierMacros) {
        let mut ex = extract_with(&f.text, qualifiers);
        ex.shift(f.base);
        self.types.extend(ex.types);
        self.globals.extend(ex.globals);
        self.shared_accessors.extend(ex.shared_accessors);
        let (kernels, device): (Vec<_>, Vec<_>) = ex
            .functions
            .into_iter()
            .partition(|f| f.kind == FnKind::Global);
        self.header_kernels.extend(kernels);
        self.header_functions.extend(device);
    }

    /// Adds what the macro expansions of `source` define (read as a
    /// header's functions are).
    fn add_expansions(&mut self, source: &SourceFile, qualifiers: &QualifierMacros) {
        for f in (source.included().files.iter()).filter(|f| f.kind == IncludedKind::Expansion) {
            self.add(f, qualifiers);
        }
    }
}

impl Scope {
    /// Keeps only the headers' functions that the file's functions name
    /// (directly or through other header functions): a large header's
    /// unused helpers are not parsed.
    fn keep_called_header_functions(
        &mut self,
        source: &SourceFile,
        own: &Extracted,
        macros: &MacroTable,
    ) {
        if self.header_functions.is_empty() {
            return;
        }
        let mut used = HashSet::new();
        for f in own.functions.iter().chain(&self.header_kernels) {
            used.extend(identifiers(source.slice(f.span), macros));
        }
        let mut keep = vec![false; self.header_functions.len()];
        loop {
            let mut grew = false;
            for (f, k) in self.header_functions.iter().zip(keep.iter_mut()) {
                if !*k && used.contains(&f.name) {
                    *k = true;
                    grew = true;
                    used.extend(identifiers(source.slice(f.span), macros));
                }
            }
            if !grew {
                break;
            }
        }
        let mut k = keep.into_iter();
        self.header_functions.retain(|_| k.next().unwrap_or(false));
    }
}

/// Function templates of the CUDA runtime a kernel calls with explicit
/// arguments (`tex1Dfetch<float>(t, i)`, `tex2D<float>(t, x, y)`,
/// `surf2Dread<float>(s, x, y)`).
const RUNTIME_TEMPLATES: &[&str] = &[
    "tex1Dfetch",
    "tex2D",
    "tex3D",
    "surf1Dread",
    "surf2Dread",
    "surf1Dwrite",
    "surf2Dwrite",
];

/// What every function of a file is parsed against.
struct Context<'a> {
    source: &'a SourceFile,
    /// The macros in force at each point.
    macros: Timeline,
    type_names: HashSet<String>,
    /// Names of the file's enumerations (`int`s to copper).
    enum_names: Vec<String>,
    /// Names of the device function templates (`f<…>(…)` calls them).
    templates: HashSet<String>,
    /// Tokens macro expansions may still produce for this file (of
    /// [`MAX_FILE_EXPANSION`]).
    expansion_left: Cell<usize>,
    /// The kinds of groups the functions' group parameters are passed.
    group_params: GroupParams,
    /// The file-scope declarations a unit may need before its code.
    declarations: DeclarationIndex,
    /// The function-like members of each struct (by the struct's span
    /// start), which its C text leaves out.
    members: HashMap<usize, Vec<Span>>,
    /// The structs with member functions: by name, the struct's span and
    /// its member functions' names.
    owners: HashMap<String, (Span, HashSet<String>)>,
    /// Dynamic shared memory accessors (`SharedMemory<T>`).
    shared_accessors: &'a HashSet<String>,
    /// The template structs and their instances.
    instances: &'a Instances,
}

impl<'a> Context<'a> {
    fn new(
        source: &'a SourceFile,
        scope: &'a Scope,
        own: &Extracted,
        macros: Timeline,
        instances: &'a Instances,
    ) -> Context<'a> {
        let type_names = scope
            .types
            .iter()
            .flat_map(|t| t.names.iter().cloned())
            .chain(own.enums.iter().filter_map(|e| e.name.clone()))
            .collect();
        let enum_names = own.enums.iter().filter_map(|e| e.name.clone()).collect();
        let templates = own
            .functions
            .iter()
            .chain(&scope.header_functions)
            .filter(|f| f.template.is_some() || f.name.contains('<'))
            .map(|f| f.name.split('<').next().unwrap_or(&f.name).to_string())
            .chain(RUNTIME_TEMPLATES.iter().map(|n| n.to_string()))
            .collect();
        let all = (own.functions.iter())
            .chain(&scope.header_kernels)
            .chain(&scope.header_functions);
        let members = (scope.types.iter())
            .filter(|t| !t.members.is_empty())
            .map(|t| (t.span.start, t.members.clone()))
            .collect();
        let mut owners: HashMap<String, (Span, HashSet<String>)> = HashMap::new();
        for f in all.clone() {
            let Some(owner) = &f.owner else { continue };
            let Some(t) = scope.types.iter().find(|t| t.names.first() == Some(owner)) else {
                continue;
            };
            let entry = owners
                .entry(owner.clone())
                .or_insert((t.span, HashSet::new()));
            entry.1.insert(f.name.clone());
        }
        Context {
            source,
            macros,
            type_names,
            enum_names,
            templates,
            expansion_left: Cell::new(MAX_FILE_EXPANSION),
            group_params: GroupParams::find(source, all),
            declarations: DeclarationIndex::new(source, &scope.types, &scope.globals)
                .with_instances(instances),
            members,
            owners,
            shared_accessors: &scope.shared_accessors,
            instances,
        }
    }

    fn diag(&self, offset: usize, code: &'static str, msg: impl Into<String>) -> Diagnostic {
        self.source.diagnostic(Severity::Error, code, offset, msg)
    }

    fn unit_error(&self, e: UnitError) -> Diagnostic {
        self.diag(e.offset, e.code, e.message)
    }

    /// Builds the parse unit: prelude, declarations used, then `span`
    /// (with `type_params`, a template's type parameters, declared as
    /// type names, and `groups`, its group parameters' kinds).
    /// The unit for the declaration at `span`, with `blanks` (byte ranges
    /// relative to `span`: a function's default arguments) left out.
    fn unit(
        &self,
        span: Span,
        type_params: &[String],
        blanks: &[Range<usize>],
        groups: &[(String, Group)],
    ) -> Result<Unit, Diagnostic> {
        let is_type = |n: &str| {
            is_builtin_type_name(n)
                || self.type_names.contains(n)
                || type_params.iter().any(|p| p == n)
                || self.instances.generic.contains_key(n)
        };
        let is_template = |n: &str| self.templates.contains(n);
        let names = Names {
            is_type: &is_type,
            is_template: &is_template,
            is_shared_accessor: &|n| self.shared_accessors.contains(n),
            instance: &|n, args| self.instances.ident(n, args),
        };
        let used = identifiers(self.source.slice(span), &self.macros.at(span.start));
        let mut spans = self.declarations.needed(span, used, |s| {
            identifiers(self.source.slice(s), &self.macros.at(s.start))
        });
        let mut unit = Unit::with_group_params(groups);
        unit.push_synthetic(&prelude());
        for p in (type_params.iter())
            .chain(&self.enum_names)
            .chain(self.instances.generic.keys())
        {
            unit.push_synthetic(&format!("typedef int {p};\n"));
        }
        // Headers' declarations (included text) come before the file's.
        spans.sort_by_key(|s| (!s.is_included(), *s));
        for s in spans.into_iter().chain([span]) {
            let text = self.source.slice(s);
            // C++: `using X = T;` is C's `typedef T X;`.
            if let Some((name, ty)) = crate::cuda::extract::using_alias(text) {
                unit.push_synthetic("typedef ");
                unit.push_file(
                    &text[ty.clone()],
                    s.start + ty.start,
                    &self.macros.at(s.start),
                    &names,
                    &self.expansion_left,
                )
                .map_err(|e| self.unit_error(e))?;
                unit.push_synthetic(&format!(" {name};\n"));
                continue;
            }
            // A struct's member functions are left out of its C text.
            let mut holes: Vec<Range<usize>> = (self.members.get(&s.start))
                .into_iter()
                .flatten()
                .filter(|m| s.start <= m.start && m.end <= s.end)
                .map(|m| m.start - s.start..m.end - s.start)
                .collect();
            if s == span {
                holes.extend(blanks.iter().cloned());
            }
            let blanked;
            let text = if holes.is_empty() {
                text
            } else {
                blanked = default_args::blanked(text, &holes);
                blanked.as_str()
            };
            unit.push_file(
                text,
                s.start,
                &self.macros.at(s.start),
                &names,
                &self.expansion_left,
            )
            .map_err(|e| self.unit_error(e))?;
            // C++: a struct's tag names its type without `typedef`.
            if let Some(tag) = struct_tag(text).filter(|_| s != span) {
                unit.push_synthetic(&format!(" typedef struct {tag} {tag};\n"));
            }
        }
        Ok(unit)
    }

    /// Runs `lang-c` on a unit and maps a syntax error to the file.
    fn parse_unit(&self, unit: &Unit, fallback: usize) -> Result<c::TranslationUnit, Diagnostic> {
        let config = Config {
            cpp_command: String::new(),
            cpp_options: Vec::new(),
            flavor: Flavor::GnuC11,
        };
        parse_preprocessed(&config, unit.text.clone())
            .map(|p| p.unit)
            .map_err(|e| {
                if let Some((at, name)) = unknown_type::before_declarator(&unit.text, e.offset) {
                    let offset = unit.map.to_file(at).unwrap_or(fallback);
                    return self.diag(offset, "syntax", unknown_type::message(name));
                }
                let offset = unit.map.to_file(e.offset).unwrap_or(fallback);
                let expected = expected_words(e.expected.iter().copied());
                let shown = &expected[..expected.len().min(8)];
                let more = if expected.len() > 8 { ", …" } else { "" };
                let found = self
                    .source
                    .slice_from(offset)
                    .split_whitespace()
                    .next()
                    .map(|w| format!(" at `{}`", w.chars().take(20).collect::<String>()))
                    .unwrap_or_else(|| " at end of input".into());
                self.diag(
                    offset,
                    "syntax",
                    format!("syntax error{found}: expected {}{more}", shown.join(", ")),
                )
            })
    }

    fn function(&self, item: &FunctionItem, index: u64) -> Result<Function, Diagnostic> {
        let template = match item.template {
            Some(t) => Some(Template {
                params: template::parse_head_with(self.source.slice(t), &self.enum_names)
                    .map_err(|e| self.diag(t.start, "unsupported", e))?,
                name: item.name.clone(),
                args: Vec::new(),
            }),
            None => None,
        };
        let type_params: Vec<String> = template
            .iter()
            .flat_map(|t| &t.params)
            .filter(|p| p.value_type.is_none())
            .map(|p| p.name.clone())
            .collect();
        if item.unterminated {
            let (line, _) = self.source.line_col(item.name_offset);
            return Err(self.diag(
                item.span.end,
                "syntax",
                format!(
                    "the file ends inside `{}` (line {line}): a `}}` is missing or the file is truncated",
                    item.name
                ),
            ));
        }
        let defaults = default_args::find(
            self.source.slice(item.span),
            item.name_offset.saturating_sub(item.span.start),
        );
        let locate = |o: usize| {
            let (path, line, col) = self.source.locate(o);
            format!("{}:{line}:{col}", path.display())
        };
        let groups = (self.group_params)
            .of(&item.name, &locate)
            .map_err(|(o, m)| self.diag(o, "unsupported", m))?;
        let mut blanks: Vec<Range<usize>> = defaults.iter().map(|d| d.range.clone()).collect();
        let name_at = item.name_offset.saturating_sub(item.span.start);
        let member_of = item
            .owner
            .as_ref()
            .and_then(|o| self.owners.get(o).map(|x| (o, x)));
        let trailing =
            member_of.and_then(|_| methods::trailing(self.source.slice(item.span), name_at));
        blanks.extend(trailing.iter().map(|t| t.range.clone()));
        let unit = self.unit(item.span, &type_params, &blanks, &groups)?;
        let tu = self.parse_unit(&unit, item.name_offset).map_err(|mut d| {
            let kind = if item.kind == FnKind::Global {
                "kernel"
            } else {
                "function"
            };
            let is_type = |n: &str| is_builtin_type_name(n) || self.type_names.contains(n);
            let function = format!("{kind} `{}`", item.name);
            let line = d.source_line.as_deref().unwrap_or("");
            if let Some(m) = unread_cxx::explain(line, d.col, &is_type, &function) {
                (d.code, d.message) = ("unsupported", m);
            }
            d
        })?;
        let def = tu.0.iter().rev().find_map(|d| match &d.node {
            c::ExternalDeclaration::FunctionDefinition(f) => Some(f),
            _ => None,
        });
        let Some(def) = def else {
            return Err(self.diag(item.name_offset, "syntax", "expected a function definition"));
        };
        let mut conv = Converter::new(&unit, IDS_PER_FUNCTION * index);
        let mut f = conv.function(def, item.span.start).map_err(|e| {
            self.diag(
                e.offset.unwrap_or(item.name_offset),
                "unsupported",
                e.message,
            )
        })?;
        let mut next_id = conv.next_id();
        for d in &defaults {
            let value = default_args::value(&d.value, next_id).ok_or_else(|| {
                self.diag(
                    item.span.start + d.range.start,
                    "unsupported",
                    format!(
                        "default argument `{}`: copper reads a number, `true`/`false` or a name there",
                        d.value
                    ),
                )
            })?;
            next_id += 2;
            if let Some(p) = f.params.get_mut(d.param) {
                p.default = Some(value);
            }
        }
        if let Some((owner, (struct_span, names))) = member_of {
            let fields: HashSet<String> = self
                .struct_definition(*struct_span)
                .map(|(_, fields)| fields.into_iter().map(|f| f.name).collect())
                .unwrap_or_default();
            let member = methods::Member {
                owner,
                is_const: trailing.is_some_and(|t| t.is_const),
                fields: &fields,
                methods: names,
            };
            methods::bind_this(&mut f, &member, next_id)
                .map_err(|(at, m)| self.diag(at, "unsupported", m))?;
            next_id += 1;
        }
        if next_id >= IDS_PER_FUNCTION * (index + 1) {
            return Err(self.diag(
                item.name_offset,
                "too-large",
                "function has too many AST nodes",
            ));
        }
        if item.template.is_none() && item.name.contains('<') {
            // An explicit specialization is named with its arguments.
            f.name = item.name.clone();
        }
        f.template = template;
        Ok(f)
    }

    /// The names a file-scope struct definition can be used by, and its
    /// fields, if copper can read it.
    fn struct_definition(&self, span: Span) -> Option<(Vec<String>, Vec<VarDecl>)> {
        self.read_declaration(span, |cv, decl| cv.struct_definition(decl).ok())
    }

    /// The names and types a file-scope `typedef` defines, if copper can
    /// read it.
    fn typedef(&self, span: Span) -> Option<Vec<(String, Type)>> {
        self.read_declaration(span, |cv, decl| cv.typedefs(decl).ok())
    }

    /// Parses the file-scope declaration at `span` (the last one of its
    /// unit) and reads it with `read`.
    fn read_declaration<T>(
        &self,
        span: Span,
        read: impl FnOnce(&mut Converter, &Node<c::Declaration>) -> Option<T>,
    ) -> Option<T> {
        let unit = self.unit(span, &[], &[], &[]).ok()?;
        let tu = self.parse_unit(&unit, span.start).ok()?;
        let decl = tu.0.iter().rev().find_map(|d| match &d.node {
            c::ExternalDeclaration::Declaration(d) => Some(d),
            _ => None,
        })?;
        read(&mut Converter::new(&unit, 0), decl)
    }

    fn global(&self, span: Span, first_id: u64) -> Result<Vec<VarDecl>, Diagnostic> {
        let unit = self.unit(span, &[], &[], &[])?;
        let tu = self.parse_unit(&unit, span.start)?;
        let Some(decl) = tu.0.iter().rev().find_map(|d| match &d.node {
            c::ExternalDeclaration::Declaration(d) => Some(d),
            _ => None,
        }) else {
            return Err(self.diag(span.start, "syntax", "expected a declaration"));
        };
        let mut conv = Converter::new(&unit, first_id);
        conv.declaration(decl)
            .map_err(|e| self.diag(e.offset.unwrap_or(span.start), "unsupported", e.message))
    }
}

/// Whether a file-scope declaration defines a struct (`struct X { … }`,
/// `typedef struct { … } X;`).
fn defines_struct(text: &str) -> bool {
    let toks = tokenize(text);
    let words: Vec<&str> = toks.iter().take(4).map(|t| t.text(text)).collect();
    let at = usize::from(words.first() == Some(&"typedef"));
    words.get(at) == Some(&"struct") && toks.iter().any(|t| t.is(text, "{"))
}

/// The tag of a file-scope `struct Tag { … }` definition (not a typedef),
/// which C++ makes a type name.
fn struct_tag(text: &str) -> Option<&str> {
    let toks = tokenize(text);
    let mut words = toks.iter().map(|t| t.text(text));
    if words.next() != Some("struct") {
        return None;
    }
    let tag = toks.get(1).filter(|t| t.kind == TokKind::Ident)?.text(text);
    toks.iter().any(|t| t.is(text, "{")).then_some(tag)
}

/// Identifiers of a piece of text, macros expanded one level.
fn identifiers(text: &str, macros: &MacroTable) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut stack = vec![text.to_string()];
    let mut seen_macros = HashSet::new();
    while let Some(t) = stack.pop() {
        for tok in tokenize(&t) {
            if tok.kind != TokKind::Ident {
                continue;
            }
            let name = tok.text(&t);
            if let Some(def) = macros.get(name) {
                if seen_macros.insert(name.to_string()) {
                    stack.push(def.body.join(" "));
                }
            }
            out.insert(name.to_string());
        }
    }
    out
}

/// What `lang-c` expected at a syntax error, in plain words: tokens in
/// backticks, and its character classes as what they begin (`[_a-zA-Z]`
/// is "a name", `[0-9]` "a number"); whitespace and classes inside a token
/// are left out. Words come first, then tokens, each sorted, without
/// repeats.
fn expected_words<'a>(raw: impl Iterator<Item = &'a str>) -> Vec<String> {
    let mut words = std::collections::BTreeSet::new();
    let mut tokens = std::collections::BTreeSet::new();
    for t in raw {
        let word = match t {
            "[_a-zA-Z]" | "[_a-zA-Z0-9]" | "<typedef_name>" => Some("a name"),
            "[0-9]" | "[1-9]" | "[0-9.]" | "[0-7]" | "[0-1]" | "[0-9a-fA-F]" => Some("a number"),
            "\"" => Some("a string"),
            "'" => Some("a character"),
            _ if t.starts_with('[') || t.starts_with('<') || t.contains(' ') => None,
            _ => {
                tokens.insert(format!("`{t}`"));
                continue;
            }
        };
        words.extend(word.map(str::to_string));
    }
    words.into_iter().chain(tokens).collect()
}

#[cfg(test)]
mod tests;
