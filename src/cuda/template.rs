//! Function templates: reading a `template <…>` head, and naming and
//! checking an instantiation (`reduce<256>`, `saxpy<float>`).
//!
//! A template is parsed once, with its type parameters declared as type
//! names; its AST keeps the parameters by name. Each instantiation is the
//! same AST under another name with its arguments attached, and lowering
//! binds the parameters to them.

use super::ast::{BaseType, TemplateParam, Type};
use super::launch::expand_all;
use super::lex::tokenize;
use super::macros::{token_texts, MacroTable};
use super::template_names::collapse;
pub use super::template_names::{instance_name, split_args};

/// Why a template head or an instantiation's arguments are refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TemplateError {
    /// A head that is not `template <…>`.
    #[error("expected `template <…>`")]
    NotAHead,
    /// A parameter that is neither a type nor an integer value.
    #[error("template parameter `{0}` is not supported (copper reads `typename T`, `class T` and integer parameters such as `int BS`)")]
    UnsupportedParam(String),
    /// A value parameter of a type other than an integer or `bool`.
    #[error("template parameter `{0}`: only integer and `bool` value parameters are supported")]
    ValueType(String),
    /// More arguments than parameters.
    #[error("{given} template arguments given where {declared} parameters are declared")]
    TooManyArguments {
        /// Arguments given.
        given: usize,
        /// Parameters declared.
        declared: usize,
    },
    /// A parameter with neither an argument nor a default.
    #[error("no argument for template parameter `{0}`")]
    MissingArgument(String),
    /// Two launch arguments that deduce different types for one parameter
    /// (see [`super::deduce`]).
    #[error("template parameter `{name}` is deduced as both `{first}` and `{second}`")]
    Conflict {
        /// The parameter.
        name: String,
        /// The type deduced first.
        first: String,
        /// The other type deduced.
        second: String,
    },
}

error_message!(TemplateError);

/// Reads the parameters of a head `template <typename T, int BS = 256>`.
pub fn parse_head(head: &str) -> Result<Vec<TemplateParam>, TemplateError> {
    parse_head_with(head, &[])
}

/// [`parse_head`], where a value parameter may also have one of the
/// enumerations `enums` as its type (`template <Op O>`).
pub fn parse_head_with(head: &str, enums: &[String]) -> Result<Vec<TemplateParam>, TemplateError> {
    // Comments inside the list (`typename T, // element type`) go.
    let head = token_texts(head).join(" ");
    let inner = head
        .trim()
        .strip_prefix("template")
        .map(str::trim)
        .and_then(|s| s.strip_prefix('<'))
        .and_then(|s| s.strip_suffix('>'))
        .ok_or(TemplateError::NotAHead)?;
    split_args(inner).iter().map(|p| param(p, enums)).collect()
}

fn param(text: &str, enums: &[String]) -> Result<TemplateParam, TemplateError> {
    let (decl, default) = match text.split_once('=') {
        Some((d, v)) => (d.trim(), Some(collapse(v))),
        None => (text.trim(), None),
    };
    let toks = tokenize(decl);
    let all: Vec<&str> = toks.iter().map(|t| t.text(decl)).collect();
    let words = without_std(&all);
    let words_are_names = words.iter().all(|w| super::lex::is_identifier(w));
    if !words_are_names || words.len() < 2 {
        return Err(TemplateError::UnsupportedParam(text.to_string()));
    }
    let (name, ty) = (words[words.len() - 1], &words[..words.len() - 1]);
    if let ["typename" | "class"] = ty {
        return Ok(TemplateParam {
            value_type: None,
            keyword: ty[0].to_string(),
            name: name.to_string(),
            default,
        });
    }
    let enumeration = match ty {
        [e] if enums.iter().any(|n| n == e) => Some(BaseType::Named(e.to_string())),
        _ => None,
    };
    let base = integer_type(ty)
        .or(enumeration)
        .ok_or_else(|| TemplateError::ValueType(text.to_string()))?;
    Ok(TemplateParam {
        value_type: Some(Type::scalar(base)),
        keyword: String::new(),
        name: name.to_string(),
        default,
    })
}

/// The words of a type without the `std::` (or global `::`) before a
/// name: `std :: uint32_t BS` is `uint32_t BS`, as `<cstdint>` declares
/// both.
pub fn without_std<'w>(words: &[&'w str]) -> Vec<&'w str> {
    words
        .iter()
        .enumerate()
        .filter(|&(i, w)| {
            let std_scope = *w == "std" && words.get(i + 1) == Some(&"::");
            let scope = *w == "::" && (i == 0 || words[i - 1] == "std");
            !(std_scope || scope)
        })
        .map(|(_, w)| *w)
        .collect()
}

/// The integer type named by `words` (`unsigned int`, `signed char`,
/// `long long int`, `short unsigned`, `size_t`, …), in any order C allows;
/// `const` is ignored.
pub fn integer_type(words: &[&str]) -> Option<BaseType> {
    let words: Vec<&str> = words.iter().copied().filter(|w| *w != "const").collect();
    match words.as_slice() {
        ["bool"] => return Some(BaseType::Bool),
        [n @ ("size_t" | "int8_t" | "uint8_t" | "int16_t" | "uint16_t" | "int32_t" | "uint32_t"
        | "int64_t" | "uint64_t")] => return Some(BaseType::Named(n.to_string())),
        _ => {}
    }
    let count = |w: &str| words.iter().filter(|x| **x == w).count();
    let (signed, unsigned, int) = (count("signed"), count("unsigned"), count("int"));
    let (char_, short, long) = (count("char"), count("short"), count("long"));
    let known = signed + unsigned + int + char_ + short + long;
    let sizes = usize::from(char_ > 0) + usize::from(short > 0) + usize::from(long > 0);
    if words.is_empty()
        || known != words.len()
        || signed + unsigned > 1
        || int > 1
        || char_ > 1
        || short > 1
        || long > 2
        || sizes > 1
        || (char_ > 0 && int > 0)
    {
        return None;
    }
    let u = unsigned > 0;
    Some(match (char_, short, long) {
        (1, _, _) if u => BaseType::UChar,
        (1, _, _) if signed > 0 => BaseType::SChar,
        (1, _, _) => BaseType::Char,
        (_, 1, _) if u => BaseType::UShort,
        (_, 1, _) => BaseType::Short,
        (_, _, 1) if u => BaseType::ULong,
        (_, _, 1) => BaseType::Long,
        (_, _, 2) if u => BaseType::ULongLong,
        (_, _, 2) => BaseType::LongLong,
        _ if u => BaseType::UInt,
        _ => BaseType::Int,
    })
}

/// `reduce<256>` → (`reduce`, `256`); `None` for a name without arguments.
pub fn split_name(name: &str) -> Option<(&str, &str)> {
    let open = name.find('<')?;
    let args = name[open + 1..].strip_suffix('>')?;
    Some((name[..open].trim(), args))
}

/// The arguments of an instantiation, one per parameter: `args` as written
/// (macros expanded, integer expressions evaluated), then the defaults.
pub fn arguments(
    params: &[TemplateParam],
    args: &str,
    macros: &MacroTable,
) -> Result<Vec<String>, TemplateError> {
    let given = split_args(args);
    if given.len() > params.len() {
        return Err(TemplateError::TooManyArguments {
            given: given.len(),
            declared: params.len(),
        });
    }
    let mut out = Vec::new();
    for (i, p) in params.iter().enumerate() {
        let Some(text) = given.get(i).or(p.default.as_ref()) else {
            return Err(TemplateError::MissingArgument(p.name.clone()));
        };
        let toks = token_texts(text);
        let value = p
            .value_type
            .as_ref()
            .and_then(|_| super::host::constant(&toks, macros));
        let toks = expand_all(&toks, macros).unwrap_or(toks);
        out.push(match value {
            Some(v) => v.to_string(),
            None => collapse(&toks.join(" ")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_and_arguments() {
        let p = parse_head("template <typename T, unsigned int BS = 256>").unwrap();
        assert_eq!(p.len(), 2);
        assert_eq!(p[0].value_type, None);
        assert_eq!(p[1].value_type, Some(Type::scalar(BaseType::UInt)));
        assert_eq!(p[1].default.as_deref(), Some("256"));
        let m = MacroTable::new(&crate::cuda::extract::extract("#define B 64\n").macros);
        assert_eq!(arguments(&p, "float", &m).unwrap(), ["float", "256"]);
        assert_eq!(
            arguments(&p, "double, 2 * B", &m).unwrap(),
            ["double", "128"]
        );
        assert!(arguments(&p, "", &m).is_err());
        assert!(parse_head("template <template <class> class C>").is_err());
        assert_eq!(
            split_name("reduce<float, 256>"),
            Some(("reduce", "float, 256"))
        );
        assert_eq!(instance_name("r", &["1".into()]), "r<1>");
    }

    #[test]
    fn integer_types_in_any_order_c_allows() {
        let t = |s: &str| integer_type(&s.split_whitespace().collect::<Vec<_>>());
        assert_eq!(t("signed char"), Some(BaseType::SChar));
        assert_eq!(t("char"), Some(BaseType::Char));
        assert_eq!(t("unsigned char"), Some(BaseType::UChar));
        assert_eq!(t("short unsigned int"), Some(BaseType::UShort));
        assert_eq!(t("long long int"), Some(BaseType::LongLong));
        assert_eq!(t("unsigned long long"), Some(BaseType::ULongLong));
        assert_eq!(t("long unsigned"), Some(BaseType::ULong));
        assert_eq!(t("const int"), Some(BaseType::Int));
        assert_eq!(t("signed"), Some(BaseType::Int));
        assert_eq!(t("size_t"), Some(BaseType::Named("size_t".into())));
        for bad in [
            "",
            "float",
            "char int",
            "short long",
            "long long long",
            "signed unsigned",
            "int int",
            "T",
        ] {
            assert_eq!(t(bad), None, "{bad}");
        }
    }
}
