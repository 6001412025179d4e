//! Template structs (`template <typename T, int N> struct Pair { T a[N];
//! … };`) instantiated by their uses. Each distinct argument list the
//! file names (`Pair<float, 2>`, in a kernel, a parameter, an alias, a
//! struct, another instance) is the struct [`instance_ident`]
//! (`Pair__float__2`): the template's body with the arguments in place of
//! the parameters (and the template's own name, bare or with arguments,
//! in place of itself), read as an expansion of its own whose every
//! position is reported at the template's name. Its data members and
//! member functions are then read as a plain struct's are, with the same
//! sizes and layout.
//!
//! An instance whose arguments name a function template's parameters
//! (`Pair<T>` in `template <typename T> __global__ void k`) is read as
//! the placeholder `Pair__T`, one of [`Instances::generic`]: each
//! instantiation of the kernel (`k<float>`) wants the instance its
//! arguments give ([`Instances::for_instantiation`], made by a second
//! reading of the file), and lowering, where the parameters are bound,
//! reads the placeholder as that instance ([`Instances::resolve`]).

use std::collections::{BTreeMap, HashMap, HashSet};

use super::ast::TemplateParam;
use super::lex::{tokenize, TokKind, Token};
use super::template::parse_head;
use super::template_names::{collapse, instance_name, split_args};
use super::timeline::Timeline;
use super::unit::angle_close;
use crate::source::{IncludedKind, SourceFile};

/// Most instances made for one file (a template naming itself with
/// growing arguments would otherwise never end).
const MAX_INSTANCES: usize = 256;

/// A `template <…> struct NAME { … };` definition.
#[derive(Clone, Debug)]
pub struct Definition {
    /// The struct's name.
    pub name: String,
    /// Its parameters.
    pub params: Vec<TemplateParam>,
    /// The body's text, from `{` through `}`.
    pub body: String,
    /// File offset of the name (where an instance's text is reported).
    pub offset: usize,
}

/// An instance to read: its struct's text and where it is reported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Instance {
    /// The instance as written (`Pair<float>`).
    pub written: String,
    /// `struct Pair__float { … };`.
    pub text: String,
    /// File offset of the template's name.
    pub offset: usize,
}

/// The template structs of a file and the instances it names.
#[derive(Clone, Debug, Default)]
pub struct Instances {
    /// The template structs, by name.
    pub definitions: HashMap<String, Definition>,
    /// The instances made, in the order they were first named.
    pub made: Vec<Instance>,
    /// Instance names made ([`instance_ident`]).
    idents: HashSet<String>,
    /// The placeholders of instances whose arguments name function
    /// template parameters (`Pair__T` for `Pair<T>`): the template and
    /// the arguments as written.
    pub generic: BTreeMap<String, (String, Vec<String>)>,
    /// The names of the function templates' parameters.
    params: HashSet<String>,
}

/// The struct name an instance is read as: the template's name and each
/// argument, joined by `__`, with `*` written `p`, a `-` written `m` and
/// other characters that cannot be in a name written `_`
/// (`Pair<float *, 4>` is `Pair__float_p__4`).
pub fn instance_ident(name: &str, args: &[String]) -> String {
    let mut out = name.to_string();
    for a in args {
        out.push_str("__");
        for c in a.chars() {
            out.push(match c {
                c if c.is_ascii_alphanumeric() || c == '_' => c,
                '*' => 'p',
                '-' => 'm',
                _ => '_',
            });
        }
    }
    out
}

impl Instances {
    /// The template structs defined in `texts` (each a text and the file
    /// offset of its first byte), skipping `skip` (the shared memory
    /// accessors), the instances named outside their definitions, and
    /// those in `wanted` (template and concrete arguments).
    pub fn read(
        texts: &[(&str, usize)],
        skip: &HashSet<String>,
        wanted: &[(String, Vec<String>)],
    ) -> Instances {
        let mut out = Instances::default();
        let mut spans = Vec::new();
        for &(text, base) in texts {
            let toks = tokenize(text);
            for (def, range) in definitions(text, &toks, base) {
                if !skip.contains(&def.name) && !out.definitions.contains_key(&def.name) {
                    spans.push((base, range));
                    out.definitions.insert(def.name.clone(), def);
                }
            }
        }
        let mut todo: Vec<(String, Vec<String>)> = (wanted.iter())
            .filter(|(name, _)| out.definitions.contains_key(name))
            .cloned()
            .collect();
        out.params = function_template_params(texts);
        for &(text, base) in texts {
            let toks = tokenize(text);
            let outside = |k: usize| {
                !(spans.iter())
                    .any(|(b, r): &(usize, std::ops::Range<usize>)| *b == base && r.contains(&k))
            };
            for k in (0..toks.len()).filter(|&k| outside(k)) {
                let Some((name, args, _)) = out.use_at(text, &toks, k) else {
                    continue;
                };
                if out.is_concrete(&args) {
                    todo.push((name, args));
                } else {
                    let ident = instance_ident(&name, &args);
                    out.generic.insert(ident, (name, args));
                }
            }
        }
        while let Some((name, args)) = todo.pop() {
            if out.made.len() >= MAX_INSTANCES {
                break;
            }
            let ident = instance_ident(&name, &args);
            if !out.idents.insert(ident.clone()) {
                continue;
            }
            let def = &out.definitions[&name];
            let text = out.substituted(def, &args, &ident, &mut todo);
            out.made.push(Instance {
                written: instance_name(&name, &args),
                text: format!("struct {ident} {text} ;"),
                offset: def.offset,
            });
        }
        out
    }

    /// Whether `args` name no function template parameter.
    fn is_concrete(&self, args: &[String]) -> bool {
        (args.iter()).all(|a| tokenize(a).iter().all(|t| !self.params.contains(t.text(a))))
    }

    /// The instances that the instantiation of the function template
    /// with `params` and `args` (as [`super::template::arguments`] gives
    /// them) wants for the placeholders its `text` names (`Pair<T>` in
    /// `k<float>` wants `Pair<float>`), those already made left out.
    pub fn for_instantiation(
        &self,
        text: &str,
        params: &[TemplateParam],
        args: &[String],
    ) -> Vec<(String, Vec<String>)> {
        let named: HashSet<&str> = tokenize(text).iter().map(|t| t.text(text)).collect();
        let bound: HashMap<&str, &String> =
            params.iter().map(|p| p.name.as_str()).zip(args).collect();
        let mut out: Vec<(String, Vec<String>)> = (self.generic.values())
            .filter(|(name, _)| named.contains(name.as_str()))
            .map(|(name, written)| {
                let args = bind_args(written, |w| bound.get(w).map(|a| canonical_arg(a)));
                (name.clone(), args)
            })
            .filter(|(name, args)| {
                self.is_concrete(args) && !self.idents.contains(&instance_ident(name, args))
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// The struct the placeholder `ident` stands for where each template
    /// parameter has the argument `bound` gives (a type's C spelling, a
    /// value): `None` when `ident` is no placeholder or some parameter is
    /// unbound.
    pub fn resolve(&self, ident: &str, bound: impl Fn(&str) -> Option<String>) -> Option<String> {
        let (name, written) = self.generic.get(ident)?;
        let args = bind_args(written, bound);
        self.is_concrete(&args).then(|| instance_ident(name, &args))
    }

    /// The template struct named at token `k` with its arguments (the
    /// parameters' defaults filling those left out) and the index of the
    /// `>` closing them.
    pub fn use_at(
        &self,
        text: &str,
        toks: &[Token],
        k: usize,
    ) -> Option<(String, Vec<String>, usize)> {
        let t = toks[k];
        let def = self
            .definitions
            .get(t.text(text))
            .filter(|_| t.kind == TokKind::Ident)?;
        toks.get(k + 1).filter(|n| n.is(text, "<"))?;
        if k > 0 && matches!(toks[k - 1].text(text), "struct" | "." | "->") {
            return None;
        }
        let close = angle_close(text, toks, k + 1)?;
        let mut args: Vec<String> = (split_args(&text[toks[k + 1].end..toks[close].start]).iter())
            .map(|a| substitute(a, &HashMap::new()))
            .collect();
        for p in def.params.iter().skip(args.len()) {
            args.push(p.default.clone()?);
        }
        (args.len() == def.params.len()).then(|| (def.name.clone(), args, close))
    }

    /// The struct name of the instance `name<args>` (as written between
    /// the angle brackets); `Err` with the reason when the file's uses
    /// made no such instance (its arguments name a template parameter).
    pub fn ident(&self, name: &str, args: &str) -> Option<Result<String, String>> {
        let def = self.definitions.get(name)?;
        let mut args: Vec<String> = (split_args(args).iter())
            .map(|a| substitute(a, &HashMap::new()))
            .collect();
        for p in def.params.iter().skip(args.len()) {
            args.extend(p.default.clone());
        }
        let ident = instance_ident(name, &args);
        Some(
            if self.idents.contains(&ident) || self.generic.contains_key(&ident) {
                Ok(ident)
            } else {
                Err(format!(
                    "`{}` is an instance of a template struct whose arguments are not known \
                 where the file names it (a template parameter): copper reads instances \
                 with concrete arguments such as `{name}<float>`",
                    instance_name(name, &args)
                ))
            },
        )
    }

    /// The body of `def` with `args` for its parameters and `ident` for
    /// its own name; instances it names are added to `todo`.
    fn substituted(
        &self,
        def: &Definition,
        args: &[String],
        ident: &str,
        todo: &mut Vec<(String, Vec<String>)>,
    ) -> String {
        let bound: HashMap<&str, String> = (def.params.iter())
            .zip(args)
            .map(|(p, a)| {
                let a = match p.value_type {
                    Some(_) if tokenize(a).len() > 1 => format!("({a})"),
                    _ => a.clone(),
                };
                (p.name.as_str(), a)
            })
            .collect();
        let body = &def.body;
        let toks = tokenize(body);
        let mut words: Vec<String> = Vec::new();
        let mut k = 0;
        while k < toks.len() {
            let t = toks[k];
            let w = t.text(body);
            k += 1;
            if t.kind == TokKind::Directive {
                continue;
            }
            if t.kind != TokKind::Ident {
                words.push(w.to_string());
                continue;
            }
            if let Some(a) = bound.get(w) {
                words.push(a.clone());
            } else if w == def.name && toks.get(k).is_some_and(|n| n.is(body, "<")) {
                match angle_close(body, &toks, k) {
                    Some(close) => {
                        let inner = &body[toks[k].end..toks[close].start];
                        let inner: Vec<String> = (split_args(inner).iter())
                            .map(|a| substitute(a, &bound))
                            .collect();
                        words.push(instance_ident(w, &inner));
                        todo.push((def.name.clone(), inner));
                        k = close + 1;
                    }
                    None => words.push(w.to_string()),
                }
            } else if w == def.name {
                words.push(ident.to_string());
            } else if let Some((name, inner, close)) = self.use_at(body, &toks, k - 1) {
                let inner: Vec<String> = inner.iter().map(|a| substitute(a, &bound)).collect();
                words.push(instance_ident(&name, &inner));
                todo.push((name, inner));
                k = close + 1;
            } else {
                words.push(w.to_string());
            }
        }
        collapse(&words.join(" "))
    }
}

/// The arguments `written` with each parameter `bound` gives replaced by
/// its argument, integer types spelled one way (`unsigned` is
/// `unsigned int`), so that an instance is named alike from the text and
/// from lowering's bound types.
fn bind_args(written: &[String], bound: impl Fn(&str) -> Option<String>) -> Vec<String> {
    (written.iter())
        .map(|a| {
            let words: Vec<String> = (tokenize(a).iter())
                .map(|t| {
                    let w = t.text(a);
                    bound(w).unwrap_or_else(|| w.to_string())
                })
                .collect();
            canonical_arg(&collapse(&words.join(" ")))
        })
        .collect()
}

/// A template argument with an integer type spelled as C spells it
/// (`unsigned` and `unsigned int` are `unsigned int`); others as given.
fn canonical_arg(a: &str) -> String {
    let spaced = a.replace("::", " :: ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    match super::template::integer_type(&super::template::without_std(&words)) {
        Some(b) => b.c_name().to_string(),
        None => a.to_string(),
    }
}

/// `text` with each parameter of `bound` replaced by its argument, its
/// tokens spaced one apart (`float*` is `float *`).
fn substitute(text: &str, bound: &HashMap<&str, String>) -> String {
    let words: Vec<String> = (tokenize(text).iter())
        .map(|t| {
            let w = t.text(text);
            bound.get(w).cloned().unwrap_or_else(|| w.to_string())
        })
        .collect();
    collapse(&words.join(" "))
}

/// The names of the parameters of the function templates in `texts`
/// (an instance naming one, `Pair<T>`, has no concrete arguments).
fn function_template_params(texts: &[(&str, usize)]) -> HashSet<String> {
    let mut out = HashSet::new();
    for &(text, _) in texts {
        let toks = tokenize(text);
        for i in 0..toks.len() {
            if !toks[i].is(text, "template") || !toks.get(i + 1).is_some_and(|n| n.is(text, "<")) {
                continue;
            }
            let Some(close) = angle_close(text, &toks, i + 1) else {
                continue;
            };
            if (toks.get(close + 1)).is_some_and(|k| k.is(text, "struct") || k.is(text, "class")) {
                continue;
            }
            let head = parse_head(&text[toks[i].start..toks[close].end]);
            out.extend(head.into_iter().flatten().map(|p| p.name));
        }
    }
    out
}

/// The `template <…> struct NAME { … };` definitions of `text` (tokens
/// `toks`, first byte at file offset `base`) with their token ranges;
/// specializations (`struct NAME<double>`) and heads copper does not
/// read are left out.
fn definitions(
    text: &str,
    toks: &[Token],
    base: usize,
) -> Vec<(Definition, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let found = (toks[i].is(text, "template")
            && toks.get(i + 1).is_some_and(|n| n.is(text, "<")))
        .then(|| definition(text, toks, i, base))
        .flatten();
        match found {
            Some((def, end)) => {
                out.push((def, i..end));
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

/// The definition whose `template` is token `i`, and the index after its `;`.
fn definition(text: &str, toks: &[Token], i: usize, base: usize) -> Option<(Definition, usize)> {
    let head_close = angle_close(text, toks, i + 1)?;
    let keyword = toks.get(head_close + 1)?;
    if !keyword.is(text, "struct") && !keyword.is(text, "class") {
        return None;
    }
    let name = toks
        .get(head_close + 2)
        .filter(|t| t.kind == TokKind::Ident)?;
    let open = head_close + 3;
    if !toks.get(open)?.is(text, "{") {
        return None;
    }
    let close = super::extract::matching(text, toks, open)?;
    toks.get(close + 1).filter(|t| t.is(text, ";"))?;
    let params = parse_head(&text[toks[i].start..toks[head_close].end]).ok()?;
    let def = Definition {
        name: name.text(text).to_string(),
        params,
        body: text[toks[open].start..toks[close].end].to_string(),
        offset: base + name.start,
    };
    Some((def, close + 2))
}

/// Reads the template structs of `source` (and its headers) and adds
/// each instance it names or that is `wanted` to `source` and `original`
/// as an expansion at the template's name (seeing the macros there in
/// `macros`).
pub(crate) fn add_instances(
    source: &mut SourceFile,
    original: &mut SourceFile,
    macros: &mut Timeline,
    skip: &HashSet<String>,
    wanted: &[(String, Vec<String>)],
) -> Instances {
    let headers = (source.included().files.iter())
        .filter(|f| f.kind == IncludedKind::Header)
        .map(|f| (f.text.as_str(), f.base));
    let texts: Vec<(&str, usize)> = std::iter::once((source.text.as_str(), 0))
        .chain(headers)
        .collect();
    let instances = Instances::read(&texts, skip, wanted);
    for inst in &instances.made {
        let base = source.push_expansion(&inst.written, inst.offset, inst.text.clone());
        original.push_expansion(&inst.written, inst.offset, inst.text.clone());
        macros.expansion(base, base + inst.text.len(), inst.offset);
    }
    instances
}

/// The tag of an instance's text `struct TAG { … };`.
pub(crate) fn struct_tag(text: &str) -> Option<&str> {
    text.strip_prefix("struct ")?.split_whitespace().next()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(src: &str) -> Instances {
        Instances::read(&[(src, 0)], &HashSet::new(), &[])
    }

    #[test]
    fn each_argument_list_named_is_one_struct() {
        let src = "template <typename T, int N = 2> struct Pair { T v[N]; \
                   __device__ T first() const { return v[0]; } };\n\
                   using FP = Pair<float>;\n\
                   struct Outer { Pair<int, 4> p; };\n\
                   __global__ void k(Pair<float> *ps) { Pair<float, 2> q; }\n";
        let inst = read(src);
        let mut texts: Vec<&str> = inst.made.iter().map(|i| i.text.as_str()).collect();
        texts.sort();
        assert_eq!(
            texts,
            [
                "struct Pair__float__2 { float v [ 2 ] ; __device__ float first ( ) const { return v [ 0 ] ; } } ;",
                "struct Pair__int__4 { int v [ 4 ] ; __device__ int first ( ) const { return v [ 0 ] ; } } ;",
            ]
        );
        assert_eq!(
            inst.ident("Pair", "float"),
            Some(Ok("Pair__float__2".into()))
        );
        assert!(inst.ident("Pair", "T").is_some_and(|r| r.is_err()));
        assert_eq!(inst.ident("Other", "float"), None);
        let src = format!("{src}template <typename T> __global__ void t(Pair<T> *p) {{}}\n");
        assert_eq!(read(&src).made.len(), 2, "no `Pair<T, 2>` made");
    }

    #[test]
    fn an_instance_named_through_a_kernels_parameters_is_a_placeholder() {
        let src = "template <typename T, int N = 2> struct Pair { T v[N]; };\n\
                   template <typename T, int W> __global__ void k(Pair<T, W> *p) \
                   { Pair<T> q; }\n";
        let inst = read(src);
        assert!(inst.made.is_empty());
        let keys: Vec<&str> = inst.generic.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, ["Pair__T__2", "Pair__T__W"]);
        assert_eq!(inst.ident("Pair", "T, W"), Some(Ok("Pair__T__W".into())));
        let head = parse_head("template <typename T, int W>").unwrap_or_default();
        let wanted = inst.for_instantiation(src, &head, &["unsigned".into(), "8".into()]);
        let want = |a: &str, b: &str| ("Pair".to_string(), vec![a.to_string(), b.to_string()]);
        assert_eq!(
            wanted,
            [want("unsigned int", "2"), want("unsigned int", "8")]
        );
        let bound = |w: &str| match w {
            "T" => Some("unsigned int".to_string()),
            "W" => Some("8".to_string()),
            _ => None,
        };
        assert_eq!(
            inst.resolve("Pair__T__W", bound),
            Some("Pair__unsigned_int__8".into())
        );
        assert_eq!(inst.resolve("Pair__T__W", |_| None), None, "unbound");
        let made = Instances::read(&[(src, 0)], &HashSet::new(), &wanted);
        assert_eq!(made.made.len(), 2);
    }

    #[test]
    fn an_instance_naming_another_makes_it_too() {
        let src = "template <typename T> struct Cx { T re, im; \
                   __device__ Cx conj() const { Cx r = {re, -im}; return r; } };\n\
                   template <typename T> struct Acc { Cx<T> sum; int n; };\n\
                   __global__ void k() { Acc<double> a; }\n";
        let inst = read(src);
        let names: Vec<&str> = inst.made.iter().map(|i| i.written.as_str()).collect();
        assert_eq!(names, ["Acc<double>", "Cx<double>"]);
        assert!(
            inst.made[1].text.contains("__device__ Cx__double conj"),
            "{}",
            inst.made[1].text
        );
        assert_eq!(
            instance_ident("P", &["float *".into(), "-1".into()]),
            "P__float_p__m1"
        );
    }
}
