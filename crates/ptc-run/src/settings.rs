//! The settings of a run that shape its requests and its answer, as data: what an agent's
//! builder sets for its runs, and what a compiled agent keeps of them.

use ptc_lisp::Limits;

use crate::model::{DEFAULT_MAX_TOKENS, Sampling};
use crate::reply_form::ReplyForm;

/// The most a run keeps between turns (its definitions), unless the agent says otherwise.
pub const DEFAULT_MAX_KEPT_BYTES: usize = 16 << 20;

/// How a run's programs run, how its model is asked, and how its answer is shaped.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSettings {
    /// The sandbox's limits for every program (and the timeout of one tool call).
    pub limits: Limits,
    /// The most tokens a reply may have.
    pub max_tokens: u32,
    /// Sampling temperature; the provider's default when `None`.
    pub temperature: Option<f32>,
    /// The other sampling parameters.
    pub sampling: Sampling,
    /// How the model hands over its program.
    pub reply_form: ReplyForm,
    /// The most the `user/` namespace may hold after a turn, in estimated bytes.
    pub max_kept_bytes: usize,
    /// Decimals the floats of a returned value are rounded to.
    pub float_precision: Option<u32>,
}

impl Default for RunSettings {
    fn default() -> RunSettings {
        RunSettings {
            limits: Limits::default(),
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
            sampling: Sampling::default(),
            reply_form: ReplyForm::default(),
            max_kept_bytes: DEFAULT_MAX_KEPT_BYTES,
            float_precision: None,
        }
    }
}
