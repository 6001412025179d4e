//! Array members of structs (`struct Cell { float v[4]; int n; }`): an
//! index into one, constant (a fixed component, checked at compile time)
//! or run-time (an access whose index is the lane's address in units,
//! [`crate::ir::Member`], checked by the simulator); and the locals of
//! such a struct, kept in a one-element local array so that a run-time
//! index reaches its components.

use std::sync::Arc;

use super::records::{Dim, Place};
use super::*;
use crate::ir::record::FieldType;
use crate::ir::{Member, MemberDim};

impl Lowerer<'_> {
    /// Whether `e` is an array member (`cells[i].v`, `c.m[r]`).
    pub(super) fn is_array_member(&mut self, e: &ast::Expr) -> bool {
        matches!(self.static_field_type(e), Some(FieldType::Array { .. }))
    }

    /// The place of `base[i]`, `base` an array member; index side effects
    /// are emitted. A constant index must be in bounds; a run-time index
    /// is held in a variable for the access to check.
    pub(super) fn index_member(
        &mut self,
        base: &ast::Expr,
        i: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Result<(Place, FieldType)> {
        let (place, ty) = self.place(base, out)?;
        let FieldType::Array { elem, len } = ty else {
            return fail(base.meta.span, "expected an array member");
        };
        let name = crate::cuda::print::expression(base);
        let k = self.expr(i, out)?;
        if k.ty.is_float() {
            return fail(i.meta.span, "array index is not an integer");
        }
        let (bytes, _) = elem.size_align();
        let slots = elem.slots();
        let len = u64::from(len);
        if let ExprKind::Const(v) = &k.kind {
            let c = v.as_i64();
            if c < 0 || c as u64 >= len {
                return fail(
                    i.meta.span,
                    format!("index {c} is out of the bounds of `{name}` ({len} elements)"),
                );
            }
            let c = c as usize;
            return Ok((place.part(c * slots, slots, c as u32 * bytes), *elem));
        }
        let Place::Mem {
            array,
            index,
            slot,
            offset,
            mut member,
        } = place
        else {
            return fail(
                i.meta.span,
                format!("a run-time index into `{name}`, an array member of a value held in registers (a struct a function returned), is not supported; copy the struct to a local first"),
            );
        };
        let var = match k.kind {
            ExprKind::Var(v) => v,
            _ => {
                let t = self.temp(k.ty, i.meta.span);
                out.push(Stmt::Assign {
                    var: t,
                    value: k,
                    span: i.meta.span,
                });
                t
            }
        };
        member.push(Dim {
            var,
            name,
            len,
            slots,
            bytes,
        });
        let place = Place::Mem {
            array,
            index,
            slot,
            offset,
            member,
        };
        Ok((place, *elem))
    }

    /// A new site of `width` bytes at `offset` in the elements of `array`,
    /// for accesses at element `index` with the run-time member indices
    /// `member`: the site, the accesses' index and their [`Member`]. With
    /// member indices the index is the lane's address in units of the
    /// largest size dividing the element's and each member element's (the
    /// site's `unit`), so the cost and the analysis see the real bytes.
    pub(super) fn member_site(
        &mut self,
        array: ArrayId,
        is_write: bool,
        meta: &ast::Meta,
        (offset, width): (u32, u32),
        index: Expr,
        member: &[Dim],
    ) -> (SiteId, Expr, Option<Box<Member>>) {
        let site = self.site(array, is_write, meta, offset, width);
        if member.is_empty() {
            return (site, index, None);
        }
        let size = self.k.arrays[array].layout.size;
        let unit = member.iter().fold(size, |u, d| gcd(u, d.bytes));
        self.k.sites[site].unit = Some(unit);
        let scaled = |e: Expr, n: u32| match n / unit {
            1 => e,
            m => bin(BinOp::Mul, e, int(m.into(), Scalar::I64), Scalar::I64),
        };
        let mut at = scaled(convert(index, Scalar::I64), size);
        for d in member {
            let k = convert(var_expr(&self.k, d.var), Scalar::I64);
            at = bin(BinOp::Add, at, scaled(k, d.bytes), Scalar::I64);
        }
        let dims = member
            .iter()
            .map(|d| MemberDim {
                var: d.var,
                name: d.name.clone(),
                len: d.len,
                slots: d.slots,
                units: u64::from(d.bytes / unit),
            })
            .collect();
        (site, at, Some(Box::new(Member { dims })))
    }

    /// A local of a struct with an array member (`Cell c = cells[i];`): a
    /// one-element local array, so that `c.v[k]` reaches its components.
    pub(super) fn record_cell(
        &mut self,
        d: &ast::VarDecl,
        rec: Arc<Record>,
        out: &mut Vec<Stmt>,
    ) -> Result<()> {
        let span = d.meta.span;
        let (place, binding) = self.record_storage(&d.name, &rec, span);
        let ty = FieldType::Record(rec.clone());
        match &d.init {
            None => {}
            Some(ast::Init::Expr(e)) => {
                let (from, vals) = self.record_value(e, out)?;
                records::check_compatible(&rec, &from, span)?;
                self.write_place(place, &ty, vals, &d.meta, out);
            }
            Some(list @ ast::Init::List(_)) => {
                let mut flat = Vec::new();
                globals::flatten_init(list, &mut flat);
                if flat.len() > rec.types.len() {
                    return fail(span, format!("too many initializers for `{}`", rec.name));
                }
                let mut vals = Vec::new();
                for (i, &t) in rec.types.iter().enumerate() {
                    let value = match flat.get(i) {
                        Some(e) => self.expr(e, out)?,
                        None => int(0, Scalar::I32),
                    };
                    vals.push(convert(value, t));
                }
                self.write_place(place, &ty, vals, &d.meta, out);
            }
        }
        self.bind(&d.name, binding);
        Ok(())
    }

    /// Where a new local named `name` of struct or vector type `rec`
    /// lives, and its binding: one variable per component, or a
    /// one-element local array when the struct has an array member.
    pub(super) fn record_storage(
        &mut self,
        name: &str,
        rec: &Arc<Record>,
        span: Span,
    ) -> (Place, Binding) {
        if !rec.has_array() {
            let vars = self.record_vars(name, rec, VarKind::Local, span);
            let binding = Binding::Rec {
                vars: vars.clone(),
                rec: rec.clone(),
            };
            return (Place::Vars(vars), binding);
        }
        let name = self.unique(name);
        let id = self.new_array(Array {
            name,
            space: Space::Local,
            elem: rec.types[0],
            layout: rec.layout(),
            dims: vec![1],
            param: None,
            init: Vec::new(),
            span,
        });
        self.records.insert(id, rec.clone());
        let place = Place::Mem {
            array: id,
            index: int(0, Scalar::I64),
            slot: 0,
            offset: 0,
            member: Vec::new(),
        };
        (place, Binding::Cell(id))
    }
}

/// The greatest common divisor.
fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}
