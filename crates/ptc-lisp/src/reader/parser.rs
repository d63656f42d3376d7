//! Grammar (chumsky).

use super::{Form, ReadLimits};
use crate::error::{Error, ErrorKind, Result};

pub fn parse(_src: &str, _limits: &ReadLimits) -> Result<Vec<Form>> {
    Err(Error::new(ErrorKind::Parse, "the reader is being written"))
}
