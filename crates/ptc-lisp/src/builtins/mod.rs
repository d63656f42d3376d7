//! The builtin registry.

use crate::error::Result;
use crate::eval::Ctx;
use crate::value::Value;

pub type BuiltinFn = fn(&mut Ctx, &[Value]) -> Result<Value>;

/// One builtin function: its name, arity, documentation, example and implementation.
pub struct Builtin {
    pub name: &'static str,
    pub f: BuiltinFn,
}
