//! Building collections inside builtins: lists and vectors charged to the memory budget, and
//! adding one item the way `conj` does. Below every family, so that the families that build
//! collections (sequences, transducers, grouping) need not use each other for it.

use super::args::Call;
use crate::error::{Error, Result};
use crate::eval::{Ctx, EvalResult, got};
use crate::value::{Seq, Value};

/// A list of `items`, charged to the memory budget.
pub(crate) fn list_of(ctx: &mut Ctx, items: Vec<Value>) -> EvalResult {
    ctx.charge_items(items.len())?;
    Ok(Value::List(Seq::from(items)))
}

pub(crate) fn vector_of(ctx: &mut Ctx, items: Vec<Value>) -> EvalResult {
    ctx.charge_items(items.len())?;
    Ok(Value::Vector(Seq::from(items)))
}

/// Add one item to a collection the way `conj` does.
pub(crate) fn conj_one(call: Call, coll: &mut Value, item: Value) -> Result<()> {
    match coll {
        Value::Vector(s) => s.push_back(item),
        Value::List(s) => s.push_front(item),
        Value::Set(s) => s.insert_mut(item),
        Value::Map(m) => match item {
            Value::Vector(pair) if pair.len() == 2 => m.assoc_mut(pair[0].clone(), pair[1].clone()),
            Value::Map(other) => {
                for (k, v) in other.iter() {
                    m.assoc_mut(k.clone(), v.clone());
                }
            }
            Value::Nil => {}
            other => {
                return Err(Error::type_error(format!(
                    "only [key value] vectors or maps can be added to a map, got {}",
                    got(&other)
                )));
            }
        },
        Value::Nil => *coll = Value::list([item]),
        other => return Err(call.expected("a collection", other)),
    }
    Ok(())
}
