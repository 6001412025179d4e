//! Property test: printing any AST and parsing it back gives the same AST.

use copper::cuda::ast::*;
use copper::cuda::parse::parse_source;
use copper::cuda::print;
use copper::source::SourceFile;
use proptest::prelude::*;

fn mk(kind: ExprKind) -> Expr {
    Expr {
        meta: Meta::default(),
        kind,
    }
}

fn st(kind: StmtKind) -> Stmt {
    Stmt {
        meta: Meta::default(),
        kind,
    }
}

fn leaf() -> impl Strategy<Value = Expr> {
    prop_oneof![
        prop::sample::select(vec!["a", "b", "i", "n", "x"])
            .prop_map(|n| mk(ExprKind::Ident(n.into()))),
        (0u64..100_000).prop_map(|v| mk(ExprKind::Int {
            value: v,
            text: v.to_string()
        })),
        prop::sample::select(vec!["1.5f", "0.25", "2e3f"])
            .prop_map(|f| mk(ExprKind::Float(f.into()))),
        any::<bool>().prop_map(|b| mk(ExprKind::Bool(b))),
        prop::sample::select(vec!["x", "y", "z"]).prop_map(|f| mk(ExprKind::Member {
            base: Box::new(mk(ExprKind::Ident("threadIdx".into()))),
            field: f.into(),
            arrow: false,
        })),
    ]
}

const BINOPS: [BinOp; 18] = [
    BinOp::Mul,
    BinOp::Div,
    BinOp::Rem,
    BinOp::Add,
    BinOp::Sub,
    BinOp::Shl,
    BinOp::Shr,
    BinOp::Lt,
    BinOp::Gt,
    BinOp::Le,
    BinOp::Ge,
    BinOp::Eq,
    BinOp::Ne,
    BinOp::BitAnd,
    BinOp::BitXor,
    BinOp::BitOr,
    BinOp::And,
    BinOp::Or,
];
/// The operators of a compound assignment (`+=`, …): all but the
/// comparisons and `&&`, `||`.
fn compound_ops() -> Vec<BinOp> {
    BINOPS
        .into_iter()
        .filter(|op| !op.is_comparison() && !matches!(op, BinOp::And | BinOp::Or))
        .collect()
}
const UNOPS: [UnOp; 10] = [
    UnOp::Neg,
    UnOp::Plus,
    UnOp::Not,
    UnOp::BitNot,
    UnOp::Deref,
    UnOp::AddrOf,
    UnOp::PreInc,
    UnOp::PreDec,
    UnOp::PostInc,
    UnOp::PostDec,
];

fn expr() -> impl Strategy<Value = Expr> {
    leaf().prop_recursive(5, 48, 3, |inner| {
        let lvalue = prop_oneof![
            prop::sample::select(vec!["a", "x"]).prop_map(|n| mk(ExprKind::Ident(n.into()))),
            inner.clone().prop_map(|i| mk(ExprKind::Index(
                Box::new(mk(ExprKind::Ident("arr".into()))),
                Box::new(i)
            ))),
        ];
        prop_oneof![
            (prop::sample::select(UNOPS.to_vec()), inner.clone())
                .prop_map(|(o, e)| mk(ExprKind::Unary(o, Box::new(e)))),
            (
                prop::sample::select(BINOPS.to_vec()),
                inner.clone(),
                inner.clone()
            )
                .prop_map(|(o, l, r)| mk(ExprKind::Binary(
                    o,
                    Box::new(l),
                    Box::new(r)
                ))),
            (
                prop::option::of(prop::sample::select(compound_ops())),
                lvalue,
                inner.clone()
            )
                .prop_map(|(o, l, r)| mk(ExprKind::Assign(
                    o,
                    Box::new(l),
                    Box::new(r)
                ))),
            (inner.clone(), inner.clone(), inner.clone()).prop_map(|(c, a, b)| mk(ExprKind::Cond(
                Box::new(c),
                Box::new(a),
                Box::new(b)
            ))),
            (
                prop::sample::select(vec![
                    BaseType::Int,
                    BaseType::Float,
                    BaseType::UInt,
                    BaseType::UChar
                ]),
                any::<bool>(),
                prop::sample::select(vec![
                    CastStyle::C,
                    CastStyle::Functional,
                    CastStyle::Static,
                    CastStyle::Reinterpret,
                    CastStyle::Const
                ]),
                inner.clone()
            )
                .prop_map(|(b, ptr, style, e)| {
                    let mut t = Type::scalar(b);
                    // A functional cast names a one-word type.
                    let style = match (style, ptr, &t.base) {
                        (CastStyle::Functional, true, _)
                        | (CastStyle::Functional, _, BaseType::UChar) => CastStyle::C,
                        (s, _, _) => s,
                    };
                    if ptr {
                        t.pointers.push(PtrQual::default());
                    }
                    mk(ExprKind::Cast(style, t, Box::new(e)))
                }),
            prop::collection::vec(inner.clone(), 0..3)
                .prop_map(|a| mk(ExprKind::Call("f".into(), a))),
            inner.clone().prop_map(|i| mk(ExprKind::Index(
                Box::new(mk(ExprKind::Ident("arr".into()))),
                Box::new(i)
            ))),
            inner
                .clone()
                .prop_map(|e| mk(ExprKind::SizeofExpr(Box::new(e)))),
            prop::collection::vec(inner, 2..4).prop_map(|xs| mk(ExprKind::Comma(xs))),
        ]
    })
}

fn decl(e: Expr) -> Stmt {
    st(StmtKind::Decl(vec![VarDecl {
        meta: Meta::default(),
        is_constexpr: false,
        space: Space::Local,
        is_extern: false,
        is_static: false,
        ty: Type::scalar(BaseType::Int),
        name: "v".into(),
        dims: vec![],
        init: Some(Init::Expr(e)),
    }]))
}

/// Statements that can stand alone (not declarations).
fn stmt() -> impl Strategy<Value = Stmt> {
    let simple = prop_oneof![
        expr().prop_map(|e| st(StmtKind::Expr(e))),
        Just(st(StmtKind::Break)),
        Just(st(StmtKind::Continue)),
        Just(st(StmtKind::Empty)),
        prop::option::of(expr()).prop_map(|e| st(StmtKind::Return(e))),
    ];
    simple.prop_recursive(4, 32, 4, |inner| {
        let items = prop::collection::vec(prop_oneof![inner.clone(), expr().prop_map(decl)], 0..4);
        prop_oneof![
            items.clone().prop_map(|b| st(StmtKind::Block(b))),
            (expr(), inner.clone(), prop::option::of(inner.clone())).prop_map(|(c, t, e)| {
                // The printer braces a then-branch that ends in an `if`
                // without `else` when an `else` follows; generate that shape
                // already braced.
                let t = if e.is_some() && print::ends_in_open_if(&t) {
                    st(StmtKind::Block(vec![t]))
                } else {
                    t
                };
                st(StmtKind::If {
                    cond: c,
                    then: Box::new(t),
                    els: e.map(Box::new),
                })
            }),
            (
                prop::option::of(prop_oneof![
                    expr().prop_map(decl),
                    expr().prop_map(|e| st(StmtKind::Expr(e)))
                ]),
                prop::option::of(expr()),
                prop::option::of(expr()),
                inner.clone()
            )
                .prop_map(|(i, c, s, b)| st(StmtKind::For {
                    init: i.map(Box::new),
                    cond: c,
                    step: s,
                    body: Box::new(b)
                })),
            (expr(), inner.clone()).prop_map(|(c, b)| st(StmtKind::While {
                cond: c,
                body: Box::new(b)
            })),
            (expr(), inner.clone()).prop_map(|(c, b)| st(StmtKind::DoWhile {
                cond: c,
                body: Box::new(b)
            })),
            (
                expr(),
                prop::collection::vec(
                    (
                        prop::collection::vec(prop::option::of(0u64..9), 1..3),
                        prop::collection::vec(inner, 1..3)
                    ),
                    1..3
                )
            )
                .prop_map(|(c, cases)| st(StmtKind::Switch {
                    cond: c,
                    cases: cases
                        .into_iter()
                        .map(|(labels, body)| SwitchCase {
                            meta: Meta::default(),
                            labels: labels
                                .into_iter()
                                .map(|l| l.map(|v| mk(ExprKind::Int {
                                    value: v,
                                    text: v.to_string()
                                })))
                                .collect(),
                            body,
                        })
                        .collect(),
                })),
        ]
    })
}

fn kernel(body: Vec<Stmt>) -> Function {
    let ptr = |b| Type {
        pointers: vec![PtrQual::default()],
        ..Type::scalar(b)
    };
    Function {
        meta: Meta::default(),
        kind: FnKind::Global,
        qualifiers: vec![],
        ret: Type::scalar(BaseType::Void),
        name: "k".into(),
        params: vec![
            Param {
                meta: Meta::default(),
                ty: ptr(BaseType::Float),
                name: "arr".into(),
                dims: vec![],
                default: None,
            },
            Param {
                meta: Meta::default(),
                ty: Type::scalar(BaseType::Int),
                name: "n".into(),
                dims: vec![],
                default: None,
            },
        ],
        body,
        template: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)))]

    #[test]
    fn print_then_parse_is_identity(body in prop::collection::vec(prop_oneof![stmt(), expr().prop_map(decl)], 1..5)) {
        let k = kernel(body);
        let text = print::function(&k);
        let parsed = parse_source(SourceFile::new("gen.cu", text.clone()));
        let back = match &parsed.functions[0].result {
            Ok(f) => f.clone(),
            Err(d) => panic!("printed kernel does not parse: {}\n{text}", d.render()),
        };
        prop_assert_eq!(&back, &k, "printed:\n{}", text);
        prop_assert_eq!(print::function(&back), text);
    }
}
