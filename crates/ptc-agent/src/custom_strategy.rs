//! A compression strategy written outside `ptc-compression`, given to an agent with its
//! options.

use std::fmt;
use std::sync::Arc;

use ptc_compression::{Activated, Compression, CompressionOptions, RenderOptions, Rendered};
use ptc_lisp::Definition;
use ptc_turn::Turn;

/// Any [`Compression`] implementation and the options it renders with.
#[derive(Clone)]
pub(crate) struct CustomStrategy {
    strategy: Arc<dyn Compression>,
    options: CompressionOptions,
}

impl CustomStrategy {
    pub(crate) fn new(strategy: Arc<dyn Compression>, options: CompressionOptions) -> Self {
        CustomStrategy { strategy, options }
    }

    pub(crate) fn options(&self) -> &CompressionOptions {
        &self.options
    }

    /// The strategy for one run: the shared one, applied only above the options' activation
    /// thresholds when they are set (as for the built-in strategies).
    pub(crate) fn build(&self) -> Box<dyn Compression> {
        let shared: Box<dyn Compression> = Box::new(Shared(self.strategy.clone()));
        let o = &self.options;
        if o.activate_after_turns.is_none() && o.activate_above_tokens.is_none() {
            return shared;
        }
        Box::new(Activated {
            inner: shared,
            after_turns: o.activate_after_turns,
            above_tokens: o.activate_above_tokens,
        })
    }
}

impl fmt::Display for CustomStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (custom)", self.strategy.name())
    }
}

/// One strategy shared by every run of an agent.
struct Shared(Arc<dyn Compression>);

impl Compression for Shared {
    fn name(&self) -> &str {
        self.0.name()
    }

    fn to_messages(
        &self,
        turns: &[Turn],
        memory: &[Definition],
        opts: &RenderOptions<'_>,
    ) -> Rendered {
        self.0.to_messages(turns, memory, opts)
    }
}
