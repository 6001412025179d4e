//! Types, literals and template arguments: CUDA type names to IR scalars
//! (typedefs, template type parameters), pointer depth, the type of an
//! integer or character literal, and binding a template's arguments.

use super::*;

/// The scalar type a builtin typedef name stands for.
fn builtin_typedef(name: &str) -> Option<Scalar> {
    Some(match name {
        "size_t" | "uint64_t" | "ulong" => Scalar::U64,
        "ptrdiff_t" | "int64_t" | "clock_t" => Scalar::I64,
        "uint" | "uint32_t" => Scalar::U32,
        "int32_t" => Scalar::I32,
        "ushort" | "uint16_t" => Scalar::U16,
        "int16_t" => Scalar::I16,
        "uchar" | "uint8_t" => Scalar::U8,
        "int8_t" => Scalar::I8,
        _ => return crate::ir::half::type_named(name),
    })
}

/// What a template parameter is bound to.
#[derive(Clone, Debug)]
pub(super) enum TemplateArg {
    /// A type (`T` → `float`).
    Type(BaseType),
    /// An integer constant of the parameter's type.
    Value(Value, Scalar),
}

pub(super) fn char_value(c: &str) -> Option<i64> {
    let inner = c.strip_prefix('\'')?.strip_suffix('\'')?;
    let mut chars = inner.chars();
    let first = chars.next()?;
    if first != '\\' {
        return (chars.next().is_none() && first.is_ascii()).then_some(first as i64);
    }
    let rest: String = chars.collect();
    Some(match rest.as_str() {
        "n" => 10,
        "t" => 9,
        "r" => 13,
        "0" => 0,
        "\\" => 92,
        "'" => 39,
        "\"" => 34,
        "a" => 7,
        "b" => 8,
        "f" => 12,
        "v" => 11,
        r if r.starts_with('x') => i64::from_str_radix(&r[1..], 16).ok()? as i8 as i64,
        r if r.chars().all(|c| c.is_digit(8)) => i64::from_str_radix(r, 8).ok()? as i8 as i64,
        _ => return None,
    })
}

impl Lowerer<'_> {
    pub(super) fn scalar(&self, t: &ast::Type, span: Span) -> Result<Scalar> {
        self.base_scalar(&t.base, span, 0)
    }

    fn base_scalar(&self, b: &BaseType, span: Span, depth: usize) -> Result<Scalar> {
        Ok(match b {
            BaseType::Bool => Scalar::Bool,
            BaseType::Char | BaseType::SChar => Scalar::I8,
            BaseType::UChar => Scalar::U8,
            BaseType::Short => Scalar::I16,
            BaseType::UShort => Scalar::U16,
            BaseType::Int => Scalar::I32,
            BaseType::UInt => Scalar::U32,
            BaseType::Long | BaseType::LongLong => Scalar::I64,
            BaseType::ULong | BaseType::ULongLong => Scalar::U64,
            BaseType::Float => Scalar::F32,
            BaseType::Double => Scalar::F64,
            BaseType::Void => return fail(span, "`void` values"),
            BaseType::Auto => return fail(span, "`auto` without an initializer to deduce from"),
            BaseType::Named(n) => {
                let n = ast::type_key(n);
                if let Some(s) = builtin_typedef(n) {
                    return Ok(s);
                }
                if let Some(t) = self.template_types.get(n) {
                    return self.base_scalar(&t.clone(), span, depth + 1);
                }
                match self.file.typedefs.get(n) {
                    Some(t) if t.pointers.is_empty() && depth < 16 => {
                        return self.base_scalar(&t.base, span, depth + 1)
                    }
                    _ => {
                        let what =
                            if Record::vector(n).is_some() || self.file.structs.contains_key(n) {
                                "a struct or vector type, used where copper needs a scalar"
                            } else {
                                "not a type copper knows"
                            };
                        return fail(span, format!("type `{n}` is {what}"));
                    }
                }
            }
        })
    }

    /// Pointer levels of a type, typedefs included.
    pub(super) fn pointer_depth(&self, t: &ast::Type) -> usize {
        let mut n = t.pointers.len();
        if let BaseType::Named(name) = &t.base {
            let key = ast::type_key(name);
            if let Some(td) = (!self.template_types.contains_key(key))
                .then(|| self.file.typedefs.get(key))
                .flatten()
            {
                n += td.pointers.len();
            }
        }
        n
    }

    pub(super) fn int_literal_type(&self, value: u64, text: &str) -> Scalar {
        let lower = text.to_ascii_lowercase();
        let unsigned = lower.contains('u');
        let long = lower.ends_with('l');
        let decimal = !lower.starts_with('0')
            || lower == "0"
            || lower.starts_with("0u")
            || lower.starts_with("0l");
        match (unsigned, long) {
            (true, true) => Scalar::U64,
            (false, true) => {
                if value <= i64::MAX as u64 {
                    Scalar::I64
                } else {
                    Scalar::U64
                }
            }
            (true, false) => {
                if value <= u32::MAX as u64 {
                    Scalar::U32
                } else {
                    Scalar::U64
                }
            }
            (false, false) => {
                if value <= i32::MAX as u64 {
                    Scalar::I32
                } else if !decimal && value <= u32::MAX as u64 {
                    Scalar::U32
                } else if value <= i64::MAX as u64 {
                    Scalar::I64
                } else {
                    Scalar::U64
                }
            }
        }
    }

    /// The parameter bindings of a template instantiated with `args`:
    /// types for type parameters, constants for value parameters.
    pub(super) fn template_bindings(
        &self,
        t: &ast::Template,
        args: &[String],
        span: Span,
    ) -> Result<Vec<(String, TemplateArg)>> {
        if args.len() != t.params.len() {
            return fail(
                span,
                format!(
                    "`{}` takes {} template arguments but {} were given",
                    t.name,
                    t.params.len(),
                    args.len()
                ),
            );
        }
        let mut out = Vec::new();
        for (p, a) in t.params.iter().zip(args) {
            let arg = match &p.value_type {
                None => TemplateArg::Type(self.type_argument(a, span)?),
                Some(ty) => {
                    let scalar = self.scalar(ty, span)?;
                    let v = self.value_argument(a).ok_or_else(|| LowerError {
                        offset: span.start,
                        message: if crate::cuda::lex::is_identifier(a) {
                            format!(
                                "template argument `{a}` for `{}` needs a value: {}",
                                p.name,
                                crate::cuda::include::define_hint(a)
                            )
                        } else {
                            format!(
                                "template argument `{a}` for `{}` is not an integer constant copper can evaluate",
                                p.name
                            )
                        },
                    })?;
                    TemplateArg::Value(v.convert(scalar), scalar)
                }
            };
            out.push((p.name.clone(), arg));
        }
        Ok(out)
    }

    /// A type argument as written (`float`, `unsigned int`, `T`, a typedef).
    fn type_argument(&self, a: &str, span: Span) -> Result<BaseType> {
        let spaced = a.replace("::", " :: ");
        let written: Vec<&str> = spaced.split_whitespace().collect();
        let words = crate::cuda::template::without_std(&written);
        let integer = crate::cuda::template::integer_type(&words);
        let base = match words.as_slice() {
            ["float"] => BaseType::Float,
            ["double"] => BaseType::Double,
            _ if integer.is_some() => integer.unwrap_or(BaseType::Int),
            [n] if n.chars().all(|c| c.is_alphanumeric() || c == '_') => {
                match self.template_types.get(*n) {
                    Some(t) => t.clone(),
                    None => BaseType::Named(n.to_string()),
                }
            }
            _ => {
                return fail(
                    span,
                    format!("template type argument `{a}` is not supported"),
                )
            }
        };
        self.base_scalar(&base, span, 0)?;
        Ok(base)
    }

    /// A value argument: an integer literal or a constant in scope.
    fn value_argument(&self, a: &str) -> Option<Value> {
        let a = a.trim();
        if let Ok(v) = a.trim_end_matches(['u', 'U', 'l', 'L']).parse::<i64>() {
            return Some(Value::I(v));
        }
        if let Some(v) = self.consts.iter().rev().find_map(|c| c.get(a)) {
            return Some(Value::I(*v));
        }
        match a {
            "true" => Some(Value::I(1)),
            "false" => Some(Value::I(0)),
            _ => self.file_constant(a).map(|(v, _)| v),
        }
    }

    /// The instance a template struct named through template parameters
    /// stands for (`Pair__T` is `Pair__float` where `T` is `float`:
    /// [`crate::cuda::template_structs::Instances::resolve`]).
    pub(super) fn bound_instance(&self, name: &str) -> Option<String> {
        self.file.instances.resolve(name, |w| {
            (self.template_types.get(w).map(|t| t.c_name().to_string())).or_else(|| {
                self.consts
                    .iter()
                    .rev()
                    .find_map(|c| c.get(w))
                    .map(|v| v.to_string())
            })
        })
    }

    /// Binds template parameters in the current scope.
    pub(super) fn bind_template(&mut self, bindings: Vec<(String, TemplateArg)>) {
        for (name, arg) in bindings {
            match arg {
                TemplateArg::Type(t) => {
                    self.template_types.insert(name, t);
                }
                TemplateArg::Value(v, ty) => {
                    if let (Value::I(i), Some(m)) = (v, self.consts.last_mut()) {
                        m.insert(name.clone(), i);
                    }
                    self.bind(&name, Binding::Const(v, ty));
                }
            }
        }
    }
}
