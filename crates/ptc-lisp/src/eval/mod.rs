//! The evaluator.

use crate::error::Result;
use crate::value::Value;
use arcstr::ArcStr;

pub struct Ctx {}

pub struct Closure {
    name: Option<ArcStr>,
}

impl Closure {
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }
}

pub type NativeBody = dyn Fn(&mut Ctx, &[Value]) -> Result<Value> + Send + Sync;

pub struct NativeFn {
    pub name: ArcStr,
    pub f: Box<NativeBody>,
}
