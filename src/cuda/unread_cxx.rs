//! C++ in a function's text that copper does not read, said as the
//! construct and the function instead of as a syntax error: a struct
//! built by a constructor (`Vec3 v(1, 2, 3);`) and an instance of a
//! template struct copper has no definition of (`Pair<float> p;`).

use super::lex::{tokenize, TokKind};

/// The message for a syntax error in `function` (`kernel \`k\``) at
/// column `col` (1-based) of `line`, when the statement there is a
/// construct copper does not read; `is_type` says which names are types.
pub fn explain(
    line: &str,
    col: usize,
    is_type: &dyn Fn(&str) -> bool,
    function: &str,
) -> Option<String> {
    let toks = tokenize(line);
    let at = col.saturating_sub(1);
    let start = toks
        .iter()
        .rposition(|t| t.start < at && matches!(t.text(line), ";" | "{" | "}"))
        .map_or(0, |p| p + 1);
    let words: Vec<(&str, bool)> = toks[start..]
        .iter()
        .map(|t| (t.text(line), t.kind == TokKind::Ident))
        .skip_while(|(w, _)| *w == "const")
        .collect();
    match words.as_slice() {
        [(ty, true), (var, true), ("(", _), ..]
        | [(_, true), (var, true), ("=", _), (ty, true), ("(", _), ..]
            if is_type(ty) =>
        {
            Some(format!(
                "`{ty} {var}(…)` builds a `{ty}` with a constructor: constructors are not read \
             (initialize the struct with `{{…}}`), so {function} is not analyzed"
            ))
        }
        [(name, true), ("<", _), ..] if !is_type(name) => Some(format!(
            "`{name}<…>` is an instance of a template struct copper has no definition of \
             (the definition is in no file it read, or is a partial specialization), \
             so {function} is not analyzed"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_and_template_structs_are_named_with_the_function() {
        let is_type = |n: &str| n == "Vec3";
        let m = explain("    Vec3 u(a[3 * i], 1, 2);", 12, &is_type, "kernel `k`");
        let m = m.expect("a constructor");
        assert!(m.starts_with("`Vec3 u(…)` builds a `Vec3`"), "{m}");
        assert!(m.ends_with("so kernel `k` is not analyzed"), "{m}");
        let m = explain("  x = 1; Pair<float> p;", 19, &is_type, "kernel `k`");
        assert!(m.expect("a template struct").starts_with("`Pair<…>`"));
        let m = explain("  Vec3 v = Vec3(1, 2, 3);", 16, &is_type, "kernel `k`");
        assert!(m.expect("a temporary").starts_with("`Vec3 v(…)`"));
        assert_eq!(explain("  int u(a[3]);", 9, &is_type, "kernel `k`"), None);
    }
}
