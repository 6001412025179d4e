//! Host function templates that launch kernel templates: `template
//! <typename T> void run(T *d, int n) { k<T><<<g, b>>>(d, n); }` called as
//! `run<float>(…)` or `run(d_float, n)` launches `k<float>`.
//!
//! The host code is scanned, not parsed: a host template is a `template
//! <…>` head followed by a function definition without a CUDA qualifier.
//! Its instantiations are read from its calls, with arguments written
//! (`run<float>`) or deduced from the call's arguments as
//! [`super::deduce`] does for launches; a call inside another host
//! template is instantiated once per instantiation of that one. A launch
//! inside a host template is then one launch per instantiation, its
//! template arguments written in the host template's parameters
//! substituted.

use std::ops::Range;

use super::ast::{BaseType, Meta, Param, PtrQual, TemplateParam, Type};
use super::deduce;
use super::extract::matching;
use super::lex::{is_identifier, tokenize, TokKind, Token};
use super::template::parse_head;
use super::template_names::split_args;

/// Most instantiations of one host template followed.
const MAX_INSTANCES: usize = 64;

/// Rounds of following calls through host templates (a template calling
/// another, calling another, …).
const MAX_ROUNDS: usize = 8;

/// One host function template of the file.
#[derive(Clone, Debug)]
struct HostTemplate {
    /// Its name.
    name: String,
    /// Its template parameters.
    params: Vec<TemplateParam>,
    /// Its function parameters, as far as deduction needs them (base type
    /// name and pointer levels).
    fn_params: Vec<Param>,
    /// Byte range of its head, name and parameters (no call is there).
    head: Range<usize>,
    /// Byte range of its body.
    body: Range<usize>,
    /// The argument lists it is instantiated with.
    instances: Vec<Vec<String>>,
}

/// A call of a host template: where it is and its arguments.
struct Call {
    /// The template called (index).
    callee: usize,
    /// Where the call's name starts.
    at: usize,
    /// Template arguments written (`run<float, 4>`).
    written: Vec<String>,
    /// The call's arguments.
    args: Vec<String>,
}

/// The host function templates of a file and their instantiations.
#[derive(Clone, Debug, Default)]
pub struct HostTemplates {
    templates: Vec<HostTemplate>,
}

impl HostTemplates {
    /// Reads the host templates of the file text `text` whose bodies hold
    /// one of the offsets `launches` (the others do not matter), and their
    /// instantiations from the calls in `text`.
    pub fn read(text: &str, launches: &[usize]) -> HostTemplates {
        if launches.is_empty() || !text.contains("template") {
            return HostTemplates::default();
        }
        let toks = tokenize(text);
        let mut templates = find_templates(text, &toks);
        if templates.is_empty() {
            return HostTemplates::default();
        }
        // Keep those that launch, and those that call them (to any depth
        // followed).
        let calls = find_calls(text, &toks, &templates);
        let mut wanted: Vec<bool> = templates
            .iter()
            .map(|t| launches.iter().any(|l| t.body.contains(l)))
            .collect();
        for _ in 0..MAX_ROUNDS {
            let mut more = false;
            for c in &calls {
                if !wanted[c.callee] {
                    continue;
                }
                if let Some(g) = enclosing(&templates, c.at) {
                    more |= !wanted[g];
                    wanted[g] = true;
                }
            }
            if !more {
                break;
            }
        }
        if !wanted.iter().any(|&w| w) {
            return HostTemplates::default();
        }
        for _ in 0..MAX_ROUNDS {
            let mut grew = false;
            for c in &calls {
                if !wanted[c.callee] {
                    continue;
                }
                let lists = match enclosing(&templates, c.at) {
                    // Instantiated once per instantiation of the caller.
                    Some(g) => {
                        let g = &templates[g];
                        g.instances
                            .iter()
                            .map(|inst| instance_args(text, c, &templates, Some((g, inst))))
                            .collect()
                    }
                    None => vec![instance_args(text, c, &templates, None)],
                };
                let t = &mut templates[c.callee];
                for list in lists.into_iter().flatten() {
                    if !t.instances.contains(&list) && t.instances.len() < MAX_INSTANCES {
                        t.instances.push(list);
                        grew = true;
                    }
                }
            }
            if !grew {
                break;
            }
        }
        templates
            .retain(|t| !t.instances.is_empty() || launches.iter().any(|l| t.body.contains(l)));
        HostTemplates { templates }
    }

    /// Whether `offset` is inside a host template's body.
    pub fn encloses(&self, offset: usize) -> bool {
        self.templates.iter().any(|t| t.body.contains(&offset))
    }

    /// For code at `offset` inside a host template's body: each of that
    /// template's instantiations, as the text `args` with the template's
    /// parameters replaced by that instantiation's arguments. `None` when
    /// `offset` is in no host template or `args` names none of its
    /// parameters (the text stands as it is); an empty list when the
    /// template is never instantiated.
    pub fn substituted(&self, offset: usize, args: &str) -> Option<Vec<String>> {
        let t = self
            .templates
            .iter()
            .filter(|t| t.body.contains(&offset))
            .min_by_key(|t| t.body.len())?;
        let names: Vec<&str> = t.params.iter().map(|p| p.name.as_str()).collect();
        let toks = tokenize(args);
        if !toks.iter().any(|k| names.contains(&k.text(args))) {
            return None;
        }
        Some(
            t.instances
                .iter()
                .map(|inst| substitute(args, &toks, &names, inst))
                .collect(),
        )
    }
}

/// `text` (tokens `toks`) with each identifier among `names` replaced by the
/// argument at its position in `args`.
fn substitute(text: &str, toks: &[Token], names: &[&str], args: &[String]) -> String {
    let mut out = String::new();
    let mut last = 0;
    for t in toks {
        if let Some(i) = names.iter().position(|n| *n == t.text(text)) {
            if let Some(a) = args.get(i) {
                out.push_str(&text[last..t.start]);
                out.push_str(a);
                last = t.end;
            }
        }
    }
    out.push_str(&text[last..]);
    out
}

/// The innermost host template whose body holds `offset`.
fn enclosing(templates: &[HostTemplate], offset: usize) -> Option<usize> {
    (0..templates.len())
        .filter(|&i| templates[i].body.contains(&offset))
        .min_by_key(|&i| templates[i].body.len())
}

/// The template arguments of the call `c`, written then deduced, then
/// defaults; inside the instantiation `caller` of another host template,
/// that one's parameters replaced by its arguments. `None` when one stays
/// unknown or still names the caller's parameters.
fn instance_args(
    text: &str,
    c: &Call,
    templates: &[HostTemplate],
    caller: Option<(&HostTemplate, &Vec<String>)>,
) -> Option<Vec<String>> {
    let t = &templates[c.callee];
    let mut list = c.written.clone();
    if list.len() > t.params.len() {
        return None;
    }
    if list.len() < t.params.len() {
        let deduced = deduce::deduce(&t.params, &t.fn_params, &c.args, &text[..c.at]).ok()?;
        for (p, d) in t.params.iter().zip(deduced).skip(list.len()) {
            list.push(d.or_else(|| p.default.clone())?);
        }
    }
    if let Some((g, inst)) = caller {
        let names: Vec<&str> = g.params.iter().map(|p| p.name.as_str()).collect();
        list = list
            .iter()
            .map(|a| substitute(a, &tokenize(a), &names, inst))
            .collect();
    }
    // A parameter of an enclosing template left over: not an instance.
    let open = templates
        .iter()
        .filter(|g| g.body.contains(&c.at))
        .flat_map(|g| g.params.iter().map(|p| p.name.as_str()))
        .collect::<Vec<_>>();
    let named = |a: &String| tokenize(a).iter().any(|k| open.contains(&k.text(a)));
    (!list.iter().any(named)).then_some(list)
}

/// Words before a host template's name that make it something else.
const NOT_HOST: &[&str] = &[
    "__global__",
    "__device__",
    "struct",
    "class",
    "union",
    "using",
    "operator",
];

/// The host function templates defined in `text` (tokens `toks`).
fn find_templates(text: &str, toks: &[Token]) -> Vec<HostTemplate> {
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if !t.is(text, "template") || !toks.get(i + 1).is_some_and(|n| n.is(text, "<")) {
            continue;
        }
        let Some(close) = angle_close(text, toks, i + 1) else {
            continue;
        };
        let Ok(params) = parse_head(&text[t.start..toks[close].end]) else {
            continue;
        };
        let Some(paren) = (close + 1..toks.len().min(close + 64)).find(|&j| {
            let w = toks[j].text(text);
            w == "(" || matches!(w, ";" | "{" | "}" | "=")
        }) else {
            continue;
        };
        if !toks[paren].is(text, "(") || paren < close + 3 {
            continue;
        }
        let head = &toks[close + 1..paren];
        if head.iter().any(|k| NOT_HOST.contains(&k.text(text))) {
            continue;
        }
        let name = toks[paren - 1];
        if name.kind != TokKind::Ident {
            continue;
        }
        let Some(rparen) = matching(text, toks, paren) else {
            continue;
        };
        let Some(open) = (rparen + 1..toks.len().min(rparen + 4))
            .find(|&j| !toks[j].is(text, "const") && !toks[j].is(text, "noexcept"))
        else {
            continue;
        };
        if !toks[open].is(text, "{") {
            continue;
        }
        let Some(end) = matching(text, toks, open) else {
            continue;
        };
        out.push(HostTemplate {
            name: name.text(text).to_string(),
            params,
            fn_params: fn_params(&text[toks[paren].end..toks[rparen].start]),
            head: t.start..toks[open].start,
            body: toks[open].start..toks[end].end,
            instances: Vec::new(),
        });
    }
    out
}

/// Index of the `>` closing the `<` at `open` (angle brackets counted,
/// parentheses skipped over).
fn angle_close(text: &str, toks: &[Token], open: usize) -> Option<usize> {
    let mut depth = 0i32;
    for (j, t) in toks.iter().enumerate().skip(open).take(512) {
        match t.text(text) {
            "<" => depth += 1,
            ">" => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            ">>" => {
                depth -= 2;
                if depth <= 0 {
                    return (depth == 0).then_some(j);
                }
            }
            ";" | "{" | "}" => return None,
            _ => {}
        }
    }
    None
}

/// A function's parameters for deduction, from the text between its
/// parentheses: each one's last word before its name as the base type,
/// and its `*`s.
fn fn_params(list: &str) -> Vec<Param> {
    split_args(list)
        .iter()
        .map(|p| {
            let decl = p.split('=').next().unwrap_or_default();
            let toks = tokenize(decl);
            let words: Vec<&str> = toks.iter().map(|k| k.text(decl)).collect();
            let stars = words.iter().filter(|w| **w == "*").count();
            let idents: Vec<&&str> = words
                .iter()
                .filter(|w| {
                    is_identifier(w) && !matches!(**w, "const" | "__restrict__" | "volatile")
                })
                .collect();
            let base = match idents.as_slice() {
                [.., ty, _name] => ty.to_string(),
                [ty] => ty.to_string(),
                [] => String::new(),
            };
            let mut ty = Type::scalar(BaseType::Named(base));
            ty.pointers = vec![PtrQual::default(); stars];
            Param {
                meta: Meta::default(),
                ty,
                name: String::new(),
                dims: Vec::new(),
                default: None,
            }
        })
        .collect()
}

/// The calls of the templates in `text`: `name(…)` or `name<…>(…)` where
/// the token before is not part of a declaration.
fn find_calls(text: &str, toks: &[Token], templates: &[HostTemplate]) -> Vec<Call> {
    let mut out = Vec::new();
    for (i, t) in toks.iter().enumerate() {
        if t.kind != TokKind::Ident || i == 0 {
            continue;
        }
        let Some(callee) = templates.iter().position(|h| t.is(text, &h.name)) else {
            continue;
        };
        if templates.iter().any(|h| h.head.contains(&t.start)) {
            continue;
        }
        let before = toks[i - 1].text(text);
        if !matches!(
            before,
            ";" | "{" | "}" | "(" | "," | "=" | ")" | "return" | "else" | ":"
        ) {
            continue;
        }
        let mut paren = i + 1;
        let mut written = Vec::new();
        if toks.get(paren).is_some_and(|k| k.is(text, "<")) {
            let Some(close) = angle_close(text, toks, paren) else {
                continue;
            };
            written = split_args(&text[toks[paren].end..toks[close].start]);
            paren = close + 1;
        }
        if !toks.get(paren).is_some_and(|k| k.is(text, "(")) {
            continue;
        }
        let Some(rparen) = matching(text, toks, paren) else {
            continue;
        };
        let args = split_args_parens(&text[toks[paren].end..toks[rparen].start]);
        out.push(Call {
            callee,
            at: t.start,
            written,
            args,
        });
    }
    out
}

/// Top-level comma-separated arguments of a call (only brackets nest:
/// `a < b` is no template list here).
fn split_args_parens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in text.chars() {
        match ch {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() {
        out.push(cur.trim().to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVER: &str = "template <typename T> __global__ void k(T *a, int n) {}\n\
        template <typename T>\nvoid run(T *d, int n) { k<T><<<1, 32>>>(d, n); }\n\
        template <typename T>\nvoid bench(int n) { T *p; run<T>(p, n); }\n\
        int main() { float *f; double *g; run(f, 4); run<int>(0, 4); bench<double>(4); run(g, 1); }\n";

    fn launch_offset() -> usize {
        DRIVER.find("k<T><<<").unwrap_or(0)
    }

    #[test]
    fn calls_written_deduced_and_through_another_template_instantiate() {
        let h = HostTemplates::read(DRIVER, &[launch_offset()]);
        let got = h.substituted(launch_offset(), "k<T>");
        assert_eq!(
            got,
            Some(vec![
                "k<float>".to_string(),
                "k<int>".to_string(),
                "k<double>".to_string(),
            ])
        );
        // Text that names no parameter stands as it is.
        assert_eq!(h.substituted(launch_offset(), "k<int>"), None);
    }

    #[test]
    fn a_host_template_never_called_has_no_instance() {
        let src = "template <typename T>\nvoid run(T *d) { k<T><<<1, 1>>>(d); }\n";
        let at = src.find("k<T>").unwrap_or(0);
        let h = HostTemplates::read(src, &[at]);
        assert_eq!(h.substituted(at, "k<T>"), Some(Vec::new()));
    }
}
