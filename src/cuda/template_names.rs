//! Names of template instantiations and their argument lists, as text
//! (`reduce<float, 256>`): what reading a file, resolving launches and
//! instantiating templates all need, with no dependence on any of them.

/// Top-level comma-separated pieces of `text`, each with its whitespace
/// collapsed.
pub fn split_args(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut cur = String::new();
    for ch in text.chars() {
        match ch {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                out.push(collapse(&cur));
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(ch);
    }
    if !cur.trim().is_empty() || !out.is_empty() {
        out.push(collapse(&cur));
    }
    out
}

/// `s` with its whitespace collapsed to single spaces, and none around
/// `::` (`std :: int32_t` is `std::int32_t`).
pub fn collapse(s: &str) -> String {
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .replace(" ::", "::")
        .replace(":: ", "::")
}

/// The name of an instantiation: `reduce<float, 256>`.
pub fn instance_name(name: &str, args: &[String]) -> String {
    format!("{name}<{}>", args.join(", "))
}
