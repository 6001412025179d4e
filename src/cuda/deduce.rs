//! Template argument deduction at a launch: `scale<<<g, b>>>(d_a, 2.0f, n)`
//! of `template <typename T> __global__ void scale(T *a, T s, int n)`
//! instantiates `scale<float>` when `d_a` is declared `float *d_a` before
//! the launch.
//!
//! Like C++, a type parameter is deduced from a kernel parameter written
//! `T`, `T *`, `const T *`, … and the type of the argument passed for it:
//! a literal's type from its suffix, a variable's from its declaration
//! (the last one before the launch, in the host code). Only what is
//! certain is deduced; anything else is left to the defaults.

use super::ast::{BaseType, Param, TemplateParam};
use super::lex::{is_identifier, tokenize};
use super::template::TemplateError;

/// The type arguments deduced for `params` (`None` where nothing says),
/// from the kernel's parameters `kernel_params` and the launch's argument
/// texts `args`, with `head` the file's text before the launch; an error
/// when two arguments deduce different types for one parameter.
pub fn deduce(
    params: &[TemplateParam],
    kernel_params: &[Param],
    args: &[String],
    head: &str,
) -> Result<Vec<Option<String>>, TemplateError> {
    let mut out: Vec<Option<String>> = vec![None; params.len()];
    let toks: Vec<&str> = tokenize(head).iter().map(|t| t.text(head)).collect();
    for (p, arg) in kernel_params.iter().zip(args) {
        let BaseType::Named(name) = &p.ty.base else {
            continue;
        };
        let Some(i) = params
            .iter()
            .position(|t| t.value_type.is_none() && &t.name == name)
        else {
            continue;
        };
        let Some((base, stars)) = type_of(arg, &toks) else {
            continue;
        };
        // `T *a` given a `float **`: T is `float *`.
        let Some(extra) = stars.checked_sub(p.ty.pointers.len()) else {
            continue;
        };
        let deduced = format!("{base}{}", " *".repeat(extra));
        match &out[i] {
            Some(d) if d != &deduced => {
                return Err(TemplateError::Conflict {
                    name: name.clone(),
                    first: d.clone(),
                    second: deduced,
                })
            }
            _ => out[i] = Some(deduced),
        }
    }
    Ok(out)
}

/// The type of the argument `arg`: its base type's spelling and pointer
/// levels, for a literal or a variable declared in `head` (tokens).
fn type_of(arg: &str, head: &[&str]) -> Option<(String, usize)> {
    let arg = arg.trim();
    if arg.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return literal_type(arg).map(|t| (t.to_string(), 0));
    }
    if !is_identifier(arg) {
        return None;
    }
    declared_type(arg, head)
}

/// The type of a numeric literal, from its form and suffix.
fn literal_type(lit: &str) -> Option<&'static str> {
    let lower = lit.to_ascii_lowercase();
    let hex = lower.starts_with("0x");
    let floating = !hex && (lower.contains('.') || lower.contains('e'));
    if floating {
        return Some(if lower.ends_with('f') {
            "float"
        } else {
            "double"
        });
    }
    let suffix = lower.trim_start_matches(|c: char| c.is_ascii_hexdigit() || c == 'x');
    Some(match suffix {
        "" => "int",
        "u" => "unsigned int",
        "l" => "long",
        "ul" | "lu" => "unsigned long",
        "ll" => "long long",
        "ull" | "llu" => "unsigned long long",
        _ => return None,
    })
}

/// Words that qualify a declaration without being its type.
const QUALIFIERS: &[&str] = &["const", "volatile", "static", "__restrict__", "register"];

/// The type of the variable `name` as its last declaration in the tokens
/// `toks` gives it (`float *d_a`, `float *d_a, *d_b;`, `double x = 0`).
fn declared_type(name: &str, toks: &[&str]) -> Option<(String, usize)> {
    let at = (1..toks.len().saturating_sub(1)).rev().find(|&i| {
        toks[i] == name
            && matches!(toks[i + 1], "," | ";" | "=" | ")" | "[")
            && (toks[i - 1] == "*" || is_identifier(toks[i - 1]) || toks[i - 1] == ",")
    })?;
    let mut i = at;
    let mut stars = 0;
    while i > 0 && matches!(toks[i - 1], "*" | "const" | "__restrict__") {
        stars += usize::from(toks[i - 1] == "*");
        i -= 1;
    }
    if toks.get(i.wrapping_sub(1)) == Some(&",") {
        // A later declarator of `float *a, *b`: the type starts the
        // statement (a parameter list has one type per name, seen above).
        i = (0..i).rev().find(|&j| matches!(toks[j], ";" | "{" | "}"))? + 1;
        let words: Vec<&str> = toks[i..]
            .iter()
            .copied()
            .take_while(|w| is_identifier(w))
            .filter(|w| !QUALIFIERS.contains(w))
            .collect();
        return type_words(&words).map(|t| (t, stars));
    }
    let words: Vec<&str> = toks[..i]
        .iter()
        .rev()
        .copied()
        .take_while(|w| is_identifier(w) && !matches!(*w, "return" | "case"))
        .filter(|w| !QUALIFIERS.contains(w))
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    type_words(&words).map(|t| (t, stars))
}

/// The type the words of a declaration name (`unsigned int`, `float`, a
/// typedef or struct name); `None` for none.
fn type_words(words: &[&str]) -> Option<String> {
    match words {
        [] => None,
        [one] => Some((*one).to_string()),
        _ if words.iter().all(|w| {
            matches!(
                *w,
                "unsigned" | "signed" | "int" | "long" | "short" | "char"
            )
        }) =>
        {
            Some(words.join(" "))
        }
        // `struct Node *g`: the tag names the type.
        ["struct", tag] => Some((*tag).to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_have_their_suffixes_types() {
        for (lit, ty) in [
            ("2.0f", "float"),
            ("2.0", "double"),
            ("1e3", "double"),
            ("7", "int"),
            ("7u", "unsigned int"),
            ("7ULL", "unsigned long long"),
            ("0x1f", "int"),
        ] {
            assert_eq!(literal_type(lit), Some(ty), "{lit}");
        }
    }

    fn declared_type_in(name: &str, head: &str) -> Option<(String, usize)> {
        let toks: Vec<&str> = tokenize(head).iter().map(|t| t.text(head)).collect();
        declared_type(name, &toks)
    }

    #[test]
    fn declarations_give_base_type_and_pointer_levels() {
        let head = "void run(float *d_in, int n) {\n  double *d_a, *d_b;\n  unsigned int count = 3;\n  Node **g = 0;\n  float x;\n";
        assert_eq!(declared_type_in("d_in", head), Some(("float".into(), 1)));
        assert_eq!(declared_type_in("d_b", head), Some(("double".into(), 1)));
        assert_eq!(declared_type_in("d_a", head), Some(("double".into(), 1)));
        assert_eq!(
            declared_type_in("count", head),
            Some(("unsigned int".into(), 0))
        );
        assert_eq!(declared_type_in("g", head), Some(("Node".into(), 2)));
        assert_eq!(declared_type_in("x", head), Some(("float".into(), 0)));
        assert_eq!(declared_type_in("y", head), None);
    }
}
