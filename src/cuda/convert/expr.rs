//! Expressions: operators, constants, and the macro invocation an
//! expression is exactly the expansion of.

use super::*;

impl Converter<'_> {
    fn bx(&mut self, e: &Node<c::Expression>) -> Result<Box<Expr>> {
        self.expr(e).map(Box::new)
    }

    /// Converts an expression.
    pub fn expr(&mut self, e: &Node<c::Expression>) -> Result<Expr> {
        let mut meta = self.meta(e.span);
        meta.macro_text = self.macro_text(e.span);
        let kind = match &e.node {
            c::Expression::Identifier(id) => match id.node.name.as_str() {
                "true" => ExprKind::Bool(true),
                "false" => ExprKind::Bool(false),
                n => ExprKind::Ident(self.qualified(id.span, n)),
            },
            c::Expression::Constant(k) => self.constant(&k.node, k.span)?,
            c::Expression::StringLiteral(s) => ExprKind::Str(s.node.join(" ")),
            c::Expression::Member(m) => ExprKind::Member {
                base: self.bx(&m.node.expression)?,
                field: m.node.identifier.node.name.clone(),
                arrow: m.node.operator.node == c::MemberOperator::Indirect,
            },
            c::Expression::Call(call) => {
                let name = match &call.node.callee.node {
                    c::Expression::Identifier(id) => {
                        let mut name = self.qualified(id.span, &id.node.name);
                        if let Some((_, args)) = self
                            .unit
                            .template_args
                            .iter()
                            .find(|(o, _)| *o == id.span.start)
                        {
                            name.push_str(&format!("<{args}>"));
                        }
                        name
                    }
                    c::Expression::Member(m) => {
                        let base = self.bx(&m.node.expression)?;
                        let mut args = Vec::new();
                        for a in &call.node.arguments {
                            args.push(self.expr(a)?);
                        }
                        return Ok(Expr {
                            meta,
                            kind: ExprKind::Method {
                                base,
                                name: m.node.identifier.node.name.clone(),
                                arrow: m.node.operator.node == c::MemberOperator::Indirect,
                                args,
                            },
                        });
                    }
                    _ => return self.unsupported(call.span, "calls through function pointers"),
                };
                let mut args = Vec::new();
                for a in &call.node.arguments {
                    args.push(self.expr(a)?);
                }
                ExprKind::Call(name, args)
            }
            c::Expression::SizeOfTy(t) => ExprKind::SizeofType(self.type_name(&t.node.0)?),
            c::Expression::SizeOfVal(v) => ExprKind::SizeofExpr(self.bx(&v.node.0)?),
            c::Expression::UnaryOperator(u) => {
                let op = match u.node.operator.node {
                    c::UnaryOperator::PostIncrement => UnOp::PostInc,
                    c::UnaryOperator::PostDecrement => UnOp::PostDec,
                    c::UnaryOperator::PreIncrement => UnOp::PreInc,
                    c::UnaryOperator::PreDecrement => UnOp::PreDec,
                    c::UnaryOperator::Address => UnOp::AddrOf,
                    c::UnaryOperator::Indirection => UnOp::Deref,
                    c::UnaryOperator::Plus => UnOp::Plus,
                    c::UnaryOperator::Minus => UnOp::Neg,
                    c::UnaryOperator::Complement => UnOp::BitNot,
                    c::UnaryOperator::Negate => UnOp::Not,
                };
                ExprKind::Unary(op, self.bx(&u.node.operand)?)
            }
            c::Expression::Cast(cast) => {
                // lang-c's span may start at parentheses around the cast.
                let lead = self.unit.text[e.span.start.min(self.unit.text.len())..]
                    .find(|c: char| c != '(' && !c.is_whitespace())
                    .unwrap_or(0);
                let style = self
                    .unit
                    .casts
                    .iter()
                    .find(|(o, _)| (e.span.start..e.span.start + lead).contains(o))
                    .map_or(CastStyle::C, |(_, s)| *s);
                let ty = self.type_name(&cast.node.type_name)?;
                if style == CastStyle::Functional && (ty.is_pointer() || ty.is_ref) {
                    return self.unsupported(e.span, "functional casts to pointer types");
                }
                ExprKind::Cast(style, ty, self.bx(&cast.node.expression)?)
            }
            c::Expression::BinaryOperator(b) => self.binary(b)?,
            c::Expression::Conditional(k) => ExprKind::Cond(
                self.bx(&k.node.condition)?,
                self.bx(&k.node.then_expression)?,
                self.bx(&k.node.else_expression)?,
            ),
            c::Expression::Comma(list) => {
                let mut out = Vec::new();
                for x in list.iter() {
                    out.push(self.expr(x)?);
                }
                ExprKind::Comma(out)
            }
            c::Expression::CompoundLiteral(_) => {
                return self.unsupported(e.span, "compound literals")
            }
            c::Expression::GenericSelection(_) => {
                return self.unsupported(e.span, "`_Generic` selections")
            }
            c::Expression::AlignOf(_) => return self.unsupported(e.span, "`_Alignof` expressions"),
            c::Expression::OffsetOf(_) => {
                return self.unsupported(e.span, "`offsetof` expressions")
            }
            c::Expression::VaArg(_) => return self.unsupported(e.span, "`va_arg` expressions"),
            c::Expression::Statement(_) => {
                return self.unsupported(e.span, "statement expressions")
            }
        };
        Ok(Expr { meta, kind })
    }

    fn binary(&mut self, b: &Node<c::BinaryOperatorExpression>) -> Result<ExprKind> {
        use c::BinaryOperator as B;
        let op = b.node.operator.node.clone();
        let lhs = self.bx(&b.node.lhs)?;
        let rhs = self.bx(&b.node.rhs)?;
        let plain = |o| Some(o);
        let (assign, bin) = match op {
            B::Index => return Ok(ExprKind::Index(lhs, rhs)),
            B::Assign => (true, None),
            B::AssignMultiply => (true, plain(BinOp::Mul)),
            B::AssignDivide => (true, plain(BinOp::Div)),
            B::AssignModulo => (true, plain(BinOp::Rem)),
            B::AssignPlus => (true, plain(BinOp::Add)),
            B::AssignMinus => (true, plain(BinOp::Sub)),
            B::AssignShiftLeft => (true, plain(BinOp::Shl)),
            B::AssignShiftRight => (true, plain(BinOp::Shr)),
            B::AssignBitwiseAnd => (true, plain(BinOp::BitAnd)),
            B::AssignBitwiseXor => (true, plain(BinOp::BitXor)),
            B::AssignBitwiseOr => (true, plain(BinOp::BitOr)),
            B::Multiply => (false, plain(BinOp::Mul)),
            B::Divide => (false, plain(BinOp::Div)),
            B::Modulo => (false, plain(BinOp::Rem)),
            B::Plus => (false, plain(BinOp::Add)),
            B::Minus => (false, plain(BinOp::Sub)),
            B::ShiftLeft => (false, plain(BinOp::Shl)),
            B::ShiftRight => (false, plain(BinOp::Shr)),
            B::Less => (false, plain(BinOp::Lt)),
            B::Greater => (false, plain(BinOp::Gt)),
            B::LessOrEqual => (false, plain(BinOp::Le)),
            B::GreaterOrEqual => (false, plain(BinOp::Ge)),
            B::Equals => (false, plain(BinOp::Eq)),
            B::NotEquals => (false, plain(BinOp::Ne)),
            B::BitwiseAnd => (false, plain(BinOp::BitAnd)),
            B::BitwiseXor => (false, plain(BinOp::BitXor)),
            B::BitwiseOr => (false, plain(BinOp::BitOr)),
            B::LogicalAnd => (false, plain(BinOp::And)),
            B::LogicalOr => (false, plain(BinOp::Or)),
        };
        Ok(match (assign, bin) {
            (true, op) => ExprKind::Assign(op, lhs, rhs),
            (false, Some(op)) => ExprKind::Binary(op, lhs, rhs),
            (false, None) => unreachable!("every non-assignment operator has a BinOp"),
        })
    }

    fn constant(&self, k: &c::Constant, span: lang_c::span::Span) -> Result<ExprKind> {
        Ok(match k {
            c::Constant::Integer(i) => {
                let (radix, prefix) = match i.base {
                    c::IntegerBase::Decimal => (10, ""),
                    c::IntegerBase::Octal => (8, "0"),
                    c::IntegerBase::Hexadecimal => (16, "0x"),
                    c::IntegerBase::Binary => (2, "0b"),
                };
                let digits = i.number.trim_start_matches(prefix);
                let digits = if digits.is_empty() { "0" } else { digits };
                let value = match u64::from_str_radix(&digits.replace('\'', ""), radix) {
                    Ok(v) => v,
                    Err(_) => {
                        return self.err(
                            span,
                            format!("integer literal `{}` does not fit in 64 bits", i.number),
                        )
                    }
                };
                if i.suffix.imaginary {
                    return self.unsupported(span, "imaginary literals");
                }
                let mut text = format!("{prefix}{digits}");
                if i.suffix.unsigned {
                    text.push('u');
                }
                match i.suffix.size {
                    c::IntegerSize::Int => {}
                    c::IntegerSize::Long => text.push('l'),
                    c::IntegerSize::LongLong => text.push_str("ll"),
                }
                ExprKind::Int { value, text }
            }
            c::Constant::Float(f) => {
                let mut text = f.number.to_string();
                match f.suffix.format {
                    c::FloatFormat::Float => text.push('f'),
                    c::FloatFormat::Double => {}
                    _ => {
                        return self.unsupported(span, "`long double` and extended float literals")
                    }
                }
                if f.base == c::FloatBase::Hexadecimal {
                    text = format!("0x{text}");
                }
                ExprKind::Float(text)
            }
            c::Constant::Character(s) => ExprKind::Char(s.clone()),
        })
    }

    /// The macro invocation whose expansion is exactly this node (allowing
    /// for parentheses around it in the expansion, and around the
    /// invocation: `(N)`).
    pub(super) fn macro_text(&self, s: lang_c::span::Span) -> Option<String> {
        if s.is_none() {
            return None;
        }
        let text = &self.unit.text;
        // lang-c's spans may take in the whitespace after a node, and a
        // parenthesized node's span takes in its parentheses.
        let node = text.get(s.start..s.end)?;
        let (mut start, mut end) = (s.start, s.start + node.trim_end().len());
        while let Some(inner) = text.get(start..end) {
            if !(inner.starts_with('(') && inner.ends_with(')') && parens_wrap(inner)) {
                break;
            }
            let core = &inner[1..inner.len() - 1];
            start += 1 + (core.len() - core.trim_start().len());
            end -= 1 + (core.len() - core.trim_end().len());
        }
        // Only `(` and blanks may lie between an expansion's start and the
        // node: the candidates start in `lo..=start` (found by binary
        // search, so a function of many macro statements is not searched
        // once per node of every statement).
        let lo = text
            .get(..start)?
            .trim_end_matches(|c: char| c == '(' || c.is_whitespace())
            .len();
        let from = self.macro_starts.partition_point(|&(o, _)| o < lo);
        let to = self.macro_starts.partition_point(|&(o, _)| o <= start);
        let mut candidates: Vec<usize> = self.macro_starts[from..to]
            .iter()
            .map(|&(_, i)| i)
            .collect();
        // The first in the order of the uses wins, as before.
        candidates.sort_unstable();
        candidates
            .into_iter()
            .map(|i| &self.unit.macro_uses[i])
            .find_map(|m| {
                let (mut a, mut b) = (m.out.start, m.out.end);
                let piece = text.get(a..b)?;
                a += piece.len() - piece.trim_start().len();
                b -= piece.len() - piece.trim_end().len();
                // Peeling parentheses below only steps over `(`, `)` and
                // space: a node with anything else between it and the ends of
                // the expansion is not the expansion (checked first, so that
                // each node of a huge expansion is not peeled to the bottom).
                let wraps = |gap: Option<&str>, paren: char| {
                    gap.is_some_and(|g| g.chars().all(|c| c == paren || c.is_whitespace()))
                };
                if !(wraps(text.get(a..start), '(') && wraps(text.get(end..b), ')')) {
                    return None;
                }
                loop {
                    if a == start && b == end {
                        return Some(m.invocation.clone());
                    }
                    let inner = text.get(a..b)?.trim();
                    if !(inner.starts_with('(') && inner.ends_with(')') && parens_wrap(inner)) {
                        return None;
                    }
                    let lead = text[a..b].len() - text[a..b].trim_start().len();
                    let trail = text[a..b].len() - text[a..b].trim_end().len();
                    a += lead + 1;
                    b -= trail + 1;
                    a += text[a..b].len() - text[a..b].trim_start().len();
                    b -= text[a..b].len() - text[a..b].trim_end().len();
                }
            })
    }
}

/// Whether the first `(` of `s` is closed by its last `)`.
fn parens_wrap(s: &str) -> bool {
    let mut depth = 0i32;
    for (i, ch) in s.char_indices() {
        match ch {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 && i != s.len() - 1 {
                    return false;
                }
            }
            _ => {}
        }
    }
    depth == 0
}
