//! Models by name: an agent picks one with `llm_named`, its sub-agents inherit the registry,
//! and a run can ask for another.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use crate::llm::Llm;

/// Names for models, e.g. `fast` and `smart`.
///
/// ```
/// use ptc_agent::{Agent, LlmRegistry, ScriptedLlm};
///
/// let registry = LlmRegistry::new()
///     .with("fast", ScriptedLlm::new(["(return 1)"]))
///     .with("smart", ScriptedLlm::new(["(return 2)"]));
/// let agent = Agent::builder("Go").llm_registry(registry).llm_named("fast").build().unwrap();
/// assert_eq!(agent.llm().describe(), "scripted");
/// ```
#[derive(Clone, Default)]
pub struct LlmRegistry {
    models: BTreeMap<String, Arc<dyn Llm>>,
}

impl LlmRegistry {
    /// A registry with no models.
    pub fn new() -> LlmRegistry {
        LlmRegistry::default()
    }

    /// Adds (or replaces) the model called `name`.
    pub fn with(self, name: impl Into<String>, llm: impl Llm + 'static) -> LlmRegistry {
        self.with_arc(name, Arc::new(llm))
    }

    /// Adds (or replaces) the shared model called `name`.
    pub fn with_arc(mut self, name: impl Into<String>, llm: Arc<dyn Llm>) -> LlmRegistry {
        self.models.insert(name.into(), llm);
        self
    }

    /// The model called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Llm>> {
        self.models.get(name).cloned()
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<String> {
        self.models.keys().cloned().collect()
    }

    /// The model called `name`, or why there is none, for errors.
    pub(crate) fn resolve(&self, name: &str) -> Result<Arc<dyn Llm>, String> {
        self.get(name).ok_or_else(|| {
            if self.models.is_empty() {
                format!(
                    "no model is called `{name}`: the agent has no model registry; give one \
                     with .llm_registry(...)"
                )
            } else {
                format!(
                    "no model is called `{name}`; the registry has {}",
                    self.names()
                        .iter()
                        .map(|n| format!("`{n}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        })
    }
}

impl fmt::Debug for LlmRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.models.iter().map(|(name, llm)| (name, llm.describe())))
            .finish()
    }
}
