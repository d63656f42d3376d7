//! The `user/` namespace: one line per definition, with what its functions return.

use super::parts::{
    DefinitionStyle, Detail, Rules, SHORT_RESULT, open_comment, push_doc, shows_text,
};
use super::sample::{push_sample, sample_adds_information};
use crate::output::push_one_line;
use crate::render_options::RenderLimits;
use crate::vocabulary::TypeVocabulary;
use ptc_lisp::is_firewalled_name;
use ptc_lisp::{Definition, ValueShape};
use ptc_turn::Turn;

/// Return shapes of functions the final namespace does not know a return for, found in earlier
/// turns' namespaces: a function called in turn 2 keeps its `-> type` in turn 4. Only
/// an identical definition (same parameters and docstring) counts, so a redefinition never
/// inherits its predecessor's return type.
pub(crate) struct ReturnShapes<'t> {
    found: Vec<(&'t str, ValueShape)>,
}

impl<'t> ReturnShapes<'t> {
    pub(crate) fn find(memory: &'t [Definition], turns: &'t [Turn]) -> ReturnShapes<'t> {
        // Usually empty: the evaluator keeps a function's last return across turns.
        let mut wanted: Vec<&'t Definition> = memory
            .iter()
            .filter(|d| d.is_function() && d.last_return.is_none())
            .collect();
        let mut found = Vec::new();
        // Newest turn first, and each turn's namespace at most once.
        for turn in turns.iter().rev() {
            if wanted.is_empty() {
                break;
            }
            for old in turn.memory() {
                let Some(shape) = old.last_return else {
                    continue;
                };
                if let Some(i) = wanted.iter().position(|current| {
                    current.name == old.name
                        && current.params == old.params
                        && current.doc == old.doc
                }) {
                    found.push((old.name.as_str(), shape));
                    wanted.swap_remove(i);
                }
            }
        }
        ReturnShapes { found }
    }

    pub(crate) fn none() -> ReturnShapes<'t> {
        ReturnShapes { found: Vec::new() }
    }

    fn of(&self, def: &Definition) -> Option<ValueShape> {
        def.last_return.or_else(|| {
            self.found
                .iter()
                .find(|(name, _)| *name == def.name)
                .map(|(_, shape)| *shape)
        })
    }
}

/// One line of the `user/` namespace: a function or a value.
fn write_definition(
    out: &mut String,
    def: &Definition,
    returns: &ReturnShapes<'_>,
    style: DefinitionStyle,
    limits: &RenderLimits,
) {
    let DefinitionStyle {
        samples: show_samples,
        detail,
        rules,
    } = style;
    let line = out.len();
    let doc = match detail {
        Detail::Full => def.doc.as_deref().filter(|d| shows_text(d, rules)),
        Detail::Minimal => None,
    };
    if def.is_function() && !def.params.is_empty() {
        out.push('(');
        out.push_str(&def.name);
        for params in &def.params {
            out.push(' ');
            push_one_line(out, params);
        }
        out.push(')');
        let returns = returns.of(def);
        if doc.is_none() && returns.is_none() {
            return;
        }
        open_comment(out, line);
        if let Some(doc) = doc {
            out.push('"');
            push_doc(out, doc, rules);
            out.push('"');
            if returns.is_some() {
                out.push(' ');
            }
        }
        if let Some(shape) = returns {
            out.push_str("-> ");
            TypeVocabulary::write_label(out, shape);
        }
    } else {
        // Values, and functions whose parameters are unknown (`(def f inc)`): `f ; = #fn[...]`.
        out.push_str(&def.name);
        open_comment(out, line);
        if let Some(doc) = doc {
            out.push('"');
            push_doc(out, doc, rules);
            out.push_str("\" ");
        }
        out.push_str("= ");
        TypeVocabulary::write_label(out, ValueShape::of(&def.value));
        if is_firewalled_name(&def.name) {
            // A firewalled definition, like a firewalled input: its name and type only.
            out.push_str(", hidden");
        } else if detail == Detail::Full && sample_adds_information(&def.value) {
            // Under the default rules a small value is shown whatever the turn printed:
            // `rate ; = float 0.2`.
            let start = out.len();
            if rules == Rules::Default {
                out.push(' ');
                push_sample(out, &def.value, limits);
                if out[start..].chars().count() <= SHORT_RESULT {
                    return;
                }
                out.truncate(start);
            }
            if show_samples {
                out.push_str(", sample: ");
                push_sample(out, &def.value, limits);
            }
        }
    }
}

/// A `user/` section under `header` with `defs` in the given order.
pub(crate) fn write_user<'d>(
    out: &mut String,
    header: &str,
    defs: impl IntoIterator<Item = &'d Definition>,
    returns: &ReturnShapes<'_>,
    style: DefinitionStyle,
    limits: &RenderLimits,
) {
    let mut defs = defs.into_iter().peekable();
    if defs.peek().is_none() {
        return;
    }
    out.push_str(header);
    for def in defs {
        out.push('\n');
        write_definition(out, def, returns, style, limits);
    }
}
