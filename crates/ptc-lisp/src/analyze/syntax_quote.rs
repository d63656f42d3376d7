//! Syntax-quote: `` `(f ~x ~@xs) `` as the form that builds that list.
//!
//! PTC-Lisp has no macros, so a syntax-quote is only a template for data: it is rewritten into
//! calls that build the same value Clojure's reader would (`(user/f 1 2 3)` for `x` = 1 and
//! `xs` = [2 3]). As in Clojure, symbols are qualified: special forms stay bare, `clojure.core`
//! names (every builtin and language form) become `clojure.core/name`, other names
//! `user/name`, and `name#` becomes the same generated `name__N__auto__` everywhere in one
//! template.

use super::Analyzer;
use super::catalogue::{self, Listed};
use super::macros::{list, sym};
use super::special::unquote_outside;
use crate::error::{Error, Result};
use crate::reader::{Form, FormKind};
use crate::span::Span;
use rustc_hash::FxHashMap;

fn call(head: &str, args: Vec<Form>, span: Span) -> Form {
    let mut items = vec![sym(head, span)];
    items.extend(args);
    list(items, span)
}

/// The expansion of one syntax-quote, with its auto-gensyms.
struct Template<'x, 's, 'a> {
    analyzer: &'x mut Analyzer<'s, 'a>,
    gensyms: FxHashMap<String, String>,
}

impl Analyzer<'_, '_> {
    /// The form that builds the value of `` `form ``.
    pub(super) fn expand_syntax_quote(&mut self, form: &Form) -> Result<Form> {
        let mut template = Template {
            analyzer: self,
            gensyms: FxHashMap::default(),
        };
        template.expand(form)
    }
}

impl Template<'_, '_, '_> {
    fn expand(&mut self, form: &Form) -> Result<Form> {
        let span = form.span;
        Ok(match &form.kind {
            FormKind::Symbol(name) => Form::new(
                FormKind::Quote(Box::new(sym(&self.qualify(name), span))),
                span,
            ),
            FormKind::Unquote(inner) => (**inner).clone(),
            FormKind::UnquoteSplicing(_) => {
                return Err(Error::syntax(
                    span,
                    "~@ splices items into the list, vector, map or set around it, as in `(f ~@xs); \
                     it cannot stand alone",
                ));
            }
            FormKind::List(items) if items.is_empty() => {
                call("clojure.core/list", Vec::new(), span)
            }
            FormKind::List(items)
            | FormKind::Vector(items)
            | FormKind::Set(items)
            | FormKind::Map(items) => {
                let joined = call("clojure.core/concat", self.parts(items)?, span);
                match form.kind {
                    FormKind::List(_) => call("clojure.core/seq", vec![joined], span),
                    FormKind::Vector(_) => call("clojure.core/vec", vec![joined], span),
                    FormKind::Set(_) => call("clojure.core/set", vec![joined], span),
                    _ => call(
                        "clojure.core/apply",
                        vec![sym("clojure.core/hash-map", span), joined],
                        span,
                    ),
                }
            }
            // `'x` and `@x` inside the template are the lists they are read as.
            FormKind::Quote(inner) => self.expand(&Form::new(
                FormKind::List(vec![sym("quote", span), (**inner).clone()]),
                span,
            ))?,
            FormKind::Deref(inner) => self.expand(&Form::new(
                FormKind::List(vec![sym("clojure.core/deref", span), (**inner).clone()]),
                span,
            ))?,
            FormKind::Var(name) => self.expand(&Form::new(
                FormKind::List(vec![sym("var", span), sym(name, span)]),
                span,
            ))?,
            FormKind::SyntaxQuote(_) => {
                return Err(Error::syntax(
                    span,
                    "a syntax-quote inside a syntax-quote is not supported; build the inner form \
                     with list, or quote it with '",
                ));
            }
            FormKind::AnonFn(_) => {
                return Err(Error::syntax(
                    span,
                    "#(...) cannot stand inside a syntax-quote; write (fn [x] ...) instead",
                ));
            }
            // Literals, keywords, regexes and tagged literals stand for themselves.
            _ => Form {
                meta: None,
                ..form.clone()
            },
        })
    }

    /// The pieces `concat` joins for the items of a collection: `(list item)` for each item, the
    /// collection itself for `~@coll`.
    fn parts(&mut self, items: &[Form]) -> Result<Vec<Form>> {
        items
            .iter()
            .map(|item| {
                Ok(match &item.kind {
                    FormKind::UnquoteSplicing(inner) => (**inner).clone(),
                    _ => call("clojure.core/list", vec![self.expand(item)?], item.span),
                })
            })
            .collect()
    }

    /// `name` as a syntax-quote writes it.
    fn qualify(&mut self, name: &str) -> String {
        if let Some(base) = name.strip_suffix('#')
            && !base.is_empty()
            && !base.contains('/')
        {
            if let Some(generated) = self.gensyms.get(base) {
                return generated.clone();
            }
            self.analyzer.gensym += 1;
            let generated = format!("{base}__{}__auto__", self.analyzer.gensym);
            self.gensyms.insert(base.to_owned(), generated.clone());
            return generated;
        }
        if name.starts_with('.')
            || name.ends_with('.')
            || catalogue::CLOJURE_SPECIAL_FORMS.contains(&name)
        {
            return name.to_owned();
        }
        let defined = self.analyzer.scope.global_index.contains_key(name);
        if !defined && name != "/" {
            // A builtin under any of its names (`str/join`, `s/join` after a require, `inc`) is
            // written with its namespace in full, as Clojure resolves aliases.
            let resolved = self.analyzer.dealias(name);
            let lookup = resolved.as_deref().unwrap_or(name);
            if let Some(builtin) = self.analyzer.scope.library.builtin(lookup) {
                return if builtin.name.contains('/') {
                    builtin.name.to_owned()
                } else {
                    format!("clojure.core/{}", builtin.name)
                };
            }
        }
        if name.contains('/') && name != "/" {
            return name.to_owned();
        }
        if name == "/" {
            return "clojure.core//".to_owned();
        }
        let core = matches!(
            catalogue::lookup(name),
            Some(Listed::Form(_) | Listed::Refused(_))
        );
        if core && !defined {
            format!("clojure.core/{name}")
        } else {
            format!("user/{name}")
        }
    }
}

/// The error for `~x` or `~@xs` met outside any syntax-quote.
pub(super) fn unquote_form_outside(form: &Form) -> Error {
    let name = match form.kind {
        FormKind::UnquoteSplicing(_) => "unquote-splicing",
        _ => "unquote",
    };
    unquote_outside(name, form.span)
}
