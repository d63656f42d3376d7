//! Checking a compiled agent against cases: inputs with the answers expected for them.

use std::collections::BTreeMap;

use ptc_lisp::Value;
use ptc_turn::StepOutcome;
use serde::Serialize;

use super::CompiledAgent;
use crate::agent::data_from_serialize;
use crate::error::RunError;

impl CompiledAgent {
    /// Runs the program on each case's input (concurrently, as [`run_batch`](Self::run_batch))
    /// and compares its answer with the expected one: a report of which cases passed and,
    /// for the others, why not.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use ptc_agent::{Agent, Case, ScriptedLlm};
    /// use ptc_lisp::Value;
    ///
    /// let agent = Agent::builder("Double it")
    ///     .llm(ScriptedLlm::new(["(return (* 2 data/n))"]))
    ///     .data(&serde_json::json!({"n": 1}))
    ///     .build()
    ///     .unwrap();
    /// let compiled = agent.compile().await.unwrap();
    /// let report = compiled
    ///     .validate(vec![
    ///         Case::new(&serde_json::json!({"n": 4}), Value::Int(8)).unwrap(),
    ///         Case::new(&serde_json::json!({"n": 5}), Value::Int(11)).unwrap(),
    ///     ])
    ///     .await;
    /// assert_eq!(report.passed(), 1);
    /// assert_eq!(report.to_string(), "1 of 2 cases passed\ncase 2: expected 11, got 10\n");
    /// # });
    /// ```
    pub async fn validate(&self, cases: Vec<Case>) -> ValidationReport {
        let inputs = cases.iter().map(|c| c.input.clone()).collect();
        let results = self.run_batch(inputs).await;
        let outcomes = cases
            .into_iter()
            .zip(results)
            .map(|(case, result)| {
                let failure = match result {
                    Err(error) => Some(format!("could not run: {error}")),
                    Ok(step) => match step.outcome {
                        StepOutcome::Returned { value } if value == case.expected => None,
                        StepOutcome::Returned { value } => Some(format!(
                            "expected {}, got {}",
                            ptc_lisp::print_str(&case.expected),
                            ptc_lisp::print_str(&value)
                        )),
                        StepOutcome::Failed { kind, reason, .. } => {
                            Some(format!("failed ({}): {reason}", kind.as_str()))
                        }
                    },
                };
                CaseOutcome { case, failure }
            })
            .collect();
        ValidationReport { outcomes }
    }
}

/// An input and the answer expected for it, for [`CompiledAgent::validate`].
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// The whole of `data/`.
    pub input: BTreeMap<String, Value>,
    /// The value the program must return (compared with `=`).
    pub expected: Value,
}

impl Case {
    /// A case from anything serializing to a JSON object (the input) and the expected value.
    pub fn new<D: Serialize + ?Sized>(input: &D, expected: Value) -> Result<Case, RunError> {
        let input = data_from_serialize(input).map_err(RunError::Data)?;
        Ok(Case {
            input: input.into_iter().collect(),
            expected,
        })
    }
}

/// One case of a [`ValidationReport`].
#[derive(Debug, Clone, PartialEq)]
pub struct CaseOutcome {
    /// The case.
    pub case: Case,
    /// Why it did not pass; `None` when it did.
    pub failure: Option<String>,
}

/// Which cases a compiled agent passed: `Display` shows the count and each failed case
/// (numbered from 1) with its reason.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationReport {
    /// The cases, in the order given.
    pub outcomes: Vec<CaseOutcome>,
}

impl ValidationReport {
    /// How many cases passed.
    pub fn passed(&self) -> usize {
        self.outcomes.iter().filter(|o| o.failure.is_none()).count()
    }

    /// Whether every case passed.
    pub fn all_passed(&self) -> bool {
        self.passed() == self.outcomes.len()
    }
}

impl std::fmt::Display for ValidationReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "{} of {} cases passed",
            self.passed(),
            self.outcomes.len()
        )?;
        for (index, outcome) in self.outcomes.iter().enumerate() {
            if let Some(failure) = &outcome.failure {
                writeln!(f, "case {}: {failure}", index + 1)?;
            }
        }
        Ok(())
    }
}
