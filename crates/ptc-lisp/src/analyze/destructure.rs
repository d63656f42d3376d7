//! Destructuring: binding patterns become plain bindings over `nth`, `nthnext` and `get`.
//!
//! `(let [[a & more] xs {:keys [id] :or {id 0}} m] ...)` binds `a` to `(nth xs 0 nil)`, `more`
//! to `(nthnext xs 1)` and `id` to `(get m :id 0)`. `get` finds a string key when given a keyword
//! and vice versa, so `{:keys [id]}` works on JSON objects with string keys.

use super::{Analyzer, internal};
use crate::context::Builtin;
use crate::error::{Error, Result};
use crate::ir::{Expr, Slot};
use crate::reader::{Form, FormKind};
use crate::span::Span;
use crate::value::Value;

impl<'s, 'a> Analyzer<'s, 'a> {
    /// The builtin `name` destructuring expands to.
    fn core(&self, name: &str, span: Span) -> Result<&'static Builtin> {
        self.scope.library.builtin(name).ok_or_else(|| {
            Error::syntax(
                span,
                format!("destructuring needs the builtin {name}, which is not available"),
            )
        })
    }

    /// Bind `pattern` to the value in `slot`, appending the bindings it needs to `out`.
    pub(crate) fn bind_pattern(
        &mut self,
        pattern: &Form,
        slot: Slot,
        out: &mut Vec<(Slot, Expr)>,
    ) -> Result<()> {
        match &pattern.kind {
            FormKind::Symbol(name) => {
                if name.as_str() == "&" || (name.contains('/') && name.as_str() != "/") {
                    return Err(Error::syntax(
                        pattern.span,
                        format!("cannot bind {name}: bind a plain name"),
                    ));
                }
                self.bind(name, slot);
                Ok(())
            }
            FormKind::Vector(items) => self.bind_vector(pattern.span, items, slot, out),
            FormKind::Map(items) => self.bind_map(pattern.span, items, slot, out),
            _ => Err(Error::syntax(
                pattern.span,
                format!(
                    "cannot bind to {}: a binding is a symbol, a vector pattern or a map pattern",
                    crate::reader::with_article(pattern.describe())
                ),
            )),
        }
    }

    fn bind_vector(
        &mut self,
        span: Span,
        items: &[Form],
        slot: Slot,
        out: &mut Vec<(Slot, Expr)>,
    ) -> Result<()> {
        let mut i = 0;
        let mut position = 0i64;
        while i < items.len() {
            let item = &items[i];
            if item.as_symbol() == Some("&") {
                let rest = items.get(i + 1).ok_or_else(|| {
                    Error::syntax(
                        item.span,
                        "& in a vector pattern must be followed by a name",
                    )
                })?;
                let value = internal(
                    self.core("nthnext", span)?,
                    vec![Expr::Local(slot), Expr::Const(Value::Int(position))],
                    span,
                );
                self.bind_value(rest, value, out)?;
                i += 2;
                continue;
            }
            if matches!(&item.kind, FormKind::Keyword(k) if k == "as") {
                let name = items.get(i + 1).ok_or_else(|| {
                    Error::syntax(
                        item.span,
                        ":as in a vector pattern must be followed by a name",
                    )
                })?;
                self.bind_pattern(name, slot, out)?;
                i += 2;
                continue;
            }
            let value = internal(
                self.core("nth", span)?,
                vec![
                    Expr::Local(slot),
                    Expr::Const(Value::Int(position)),
                    Expr::Const(Value::Nil),
                ],
                span,
            );
            self.bind_value(item, value, out)?;
            position += 1;
            i += 1;
        }
        Ok(())
    }

    fn bind_map(
        &mut self,
        span: Span,
        items: &[Form],
        slot: Slot,
        out: &mut Vec<(Slot, Expr)>,
    ) -> Result<()> {
        let map_slot = self.new_slot();
        out.push((
            map_slot,
            internal(
                self.scope.library.destructure_map(),
                vec![Expr::Local(slot)],
                span,
            ),
        ));
        let defaults: Vec<(&str, &Form)> = items
            .chunks(2)
            .find(|pair| matches!(&pair[0].kind, FormKind::Keyword(k) if k == "or"))
            .map(|pair| match pair.get(1).map(|f| &f.kind) {
                Some(FormKind::Map(entries)) => entries
                    .chunks(2)
                    .filter_map(|e| Some((e[0].as_symbol()?, e.get(1)?)))
                    .collect(),
                _ => Vec::new(),
            })
            .unwrap_or_default();
        for pair in items.chunks(2) {
            let [key, value] = pair else {
                return Err(Error::syntax(span, "map pattern needs pairs"));
            };
            match &key.kind {
                FormKind::Keyword(k) if k == "or" => {
                    if !matches!(value.kind, FormKind::Map(_)) {
                        return Err(Error::syntax(
                            value.span,
                            ":or takes a map from names to default values, e.g. {:or {a 1}}",
                        ));
                    }
                }
                FormKind::Keyword(k) if k == "as" => self.bind_pattern(value, map_slot, out)?,
                FormKind::Keyword(k)
                    if k == "keys" || k == "strs" || k == "syms" || k.ends_with("/keys") =>
                {
                    let FormKind::Vector(names) = &value.kind else {
                        return Err(Error::syntax(
                            value.span,
                            format!(":{k} takes a vector of names, e.g. {{:{k} [a b]}}"),
                        ));
                    };
                    let ns = k.strip_suffix("/keys");
                    for name_form in names {
                        let (full, local) = match &name_form.kind {
                            FormKind::Symbol(s) => (
                                s.to_string(),
                                s.rsplit_once('/')
                                    .map_or(s.as_str(), |(_, n)| n)
                                    .to_string(),
                            ),
                            FormKind::Keyword(s) => (
                                s.clone(),
                                s.rsplit_once('/')
                                    .map_or(s.as_str(), |(_, n)| n)
                                    .to_string(),
                            ),
                            _ => {
                                return Err(Error::syntax(
                                    name_form.span,
                                    format!(":{k} names must be symbols"),
                                ));
                            }
                        };
                        let key_value = match (k.as_str(), ns) {
                            ("strs", _) => Value::string(&full),
                            ("syms", _) => Value::symbol(&full),
                            (_, Some(ns)) => Value::keyword(&format!("{ns}/{full}")),
                            _ => Value::keyword(&full),
                        };
                        let get = self.keyed_get(map_slot, key_value, &local, &defaults, span)?;
                        let local_form = Form::new(
                            FormKind::Symbol(arcstr::ArcStr::from(local)),
                            name_form.span,
                        );
                        self.bind_value(&local_form, get, out)?;
                    }
                }
                _ => {
                    // `{name :key}`: the binding comes first, the key it is looked up by second.
                    let key_value = Value::from_form(value)?;
                    let local = key.as_symbol().unwrap_or("");
                    let get = self.keyed_get(map_slot, key_value, local, &defaults, span)?;
                    self.bind_value(key, get, out)?;
                }
            }
        }
        Ok(())
    }

    fn keyed_get(
        &mut self,
        map_slot: Slot,
        key: Value,
        local: &str,
        defaults: &[(&str, &Form)],
        span: Span,
    ) -> Result<Expr> {
        let mut args = vec![Expr::Local(map_slot), Expr::Const(key)];
        if let Some((_, default)) = defaults.iter().find(|(name, _)| *name == local) {
            args.push(self.analyze(default, false)?);
        }
        Ok(internal(self.core("get", span)?, args, span))
    }
}
