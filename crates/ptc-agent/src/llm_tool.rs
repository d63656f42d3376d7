//! LLM tools: a tool whose implementation is one model call with its own prompt and output
//! signature, for classification, extraction and judgement inside a program.
//!
//! A call validates its arguments against the tool's input signature, fills the prompt's
//! `{{name}}` placeholders with them, asks the model for a JSON answer of the output shape,
//! and parses and validates the answer; an answer that does not fit is a tool error the
//! program can handle. The model is the calling run's (by default), one of its registry's by
//! name, or one given to the tool. The calling run finds out about the tool's requests through
//! a task-local value set while its loop awaits a program's tool calls: their usage is added
//! to the turn that made them, as is the usage of the runs of sub-agents called as tools.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use ptc_lisp::{Compact, Value};
use ptc_turn::{Message, Usage};

use crate::agent::expand_mission;
use crate::caller::{CALLER, Caller, LlmToolCall};
use crate::llm::{DEFAULT_MAX_TOKENS, Llm, LlmRequest, RetryPolicy};
use crate::run::call_llm;
use crate::tool::{AsyncTool, ToolError, named_arguments};
use ptc_run::signature::{Mismatch, Signature, SignatureError, Type};

/// A tool answered by one model call: a prompt template whose `{{name}}` placeholders are
/// the tool's arguments, and a signature whose output is the shape of the answer.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// use ptc_agent::{Agent, LlmTool, ScriptedLlm};
/// use ptc_lisp::Value;
///
/// let classify = LlmTool::new(
///     "classify",
///     "(text :string) -> {label :keyword, urgent :bool}",
///     "Classify this support ticket: {{text}}",
/// )
/// .unwrap()
/// .with_description("Labels a ticket as :bug, :feature or :question")
/// .with_field_descriptions([("label", "one of :bug :feature :question")]);
/// // One model for the agent's program and for the tool's question, in that order.
/// let llm = ScriptedLlm::new([
///     "(return (:label (tool/classify \"The app crashes on start\")))",
///     r#"{"label": "bug", "urgent": true}"#,
/// ]);
/// let agent = Agent::builder("Label the ticket")
///     .llm(llm.clone())
///     .tool(classify)
///     .build()
///     .unwrap();
/// let step = agent.run().await.unwrap();
/// assert_eq!(step.value(), Some(&Value::keyword("bug")));
/// // The tool's request counts in the run's usage: two requests in all.
/// assert_eq!(step.usage.llm_requests, 2);
/// assert_eq!(
///     llm.requests()[1].messages[0].content,
///     "Classify this support ticket: The app crashes on start"
/// );
/// # });
/// ```
#[derive(Clone)]
pub struct LlmTool {
    name: String,
    description: Option<String>,
    prompt: String,
    signature: Signature,
    field_descriptions: BTreeMap<String, String>,
    model: ToolModel,
    max_tokens: u32,
    temperature: Option<f32>,
}

/// Which model answers an [`LlmTool`].
#[derive(Clone)]
enum ToolModel {
    /// The model of the run whose program calls the tool.
    Caller,
    /// The model of that name in the calling agent's registry.
    Named(String),
    /// This model, whoever calls.
    Given(Arc<dyn Llm>),
}

/// Why an [`LlmTool`] could not be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum LlmToolError {
    /// The signature does not parse.
    #[error("the signature of tool/{tool} is invalid: {error}")]
    Signature {
        /// The tool's name.
        tool: String,
        /// Why the signature does not parse.
        error: SignatureError,
    },
    /// The prompt is empty.
    #[error("the prompt of tool/{0} is empty; say what the model must answer")]
    EmptyPrompt(String),
    /// The prompt has placeholders that are not parameters of the signature.
    #[error(
        "the prompt of tool/{tool} uses {} but its signature's parameters are ({}); \
         every placeholder must be a parameter",
        .placeholders.iter().map(|p| format!("{{{{{p}}}}}")).collect::<Vec<_>>().join(", "),
        .params.join(" ")
    )]
    UnknownPlaceholders {
        /// The tool's name.
        tool: String,
        /// The placeholders, without braces, that name no parameter.
        placeholders: Vec<String>,
        /// The signature's parameter names.
        params: Vec<String>,
    },
}

impl LlmTool {
    /// An LLM tool called `name`: `signature` gives its arguments and the shape of its answer
    /// (`(text :string) -> {label :keyword}`), and `prompt` is the question, whose
    /// `{{param}}` placeholders are filled with the arguments (a string as it is, another
    /// value as PTC-Lisp text). It asks the calling run's model unless told otherwise.
    pub fn new(
        name: impl Into<String>,
        signature: &str,
        prompt: impl Into<String>,
    ) -> Result<LlmTool, LlmToolError> {
        let name = name.into();
        let prompt = prompt.into();
        let signature = Signature::parse(signature).map_err(|error| LlmToolError::Signature {
            tool: name.clone(),
            error,
        })?;
        if prompt.trim().is_empty() {
            return Err(LlmToolError::EmptyPrompt(name));
        }
        let params: Vec<String> = signature.params().iter().map(|p| p.name.clone()).collect();
        let data: BTreeMap<String, Value> =
            params.iter().map(|p| (p.clone(), Value::Nil)).collect();
        if let Err(placeholders) = expand_mission(&prompt, &data) {
            return Err(LlmToolError::UnknownPlaceholders {
                tool: name,
                placeholders,
                params,
            });
        }
        Ok(LlmTool {
            name,
            description: None,
            prompt,
            signature,
            field_descriptions: BTreeMap::new(),
            model: ToolModel::Caller,
            max_tokens: DEFAULT_MAX_TOKENS,
            temperature: None,
        })
    }

    /// What the tool does, shown to the calling agent's model (by default the prompt's first
    /// line).
    pub fn with_description(mut self, description: impl Into<String>) -> LlmTool {
        self.description = Some(description.into());
        self
    }

    /// What the fields of the answer mean, shown to the tool's model under the answer's shape
    /// (e.g. the labels a classification may give).
    pub fn with_field_descriptions<K, V>(
        mut self,
        descriptions: impl IntoIterator<Item = (K, V)>,
    ) -> LlmTool
    where
        K: Into<String>,
        V: Into<String>,
    {
        self.field_descriptions.extend(
            descriptions
                .into_iter()
                .map(|(name, text)| (name.into(), text.into())),
        );
        self
    }

    /// Ask `llm`, whichever run calls the tool.
    pub fn with_llm(self, llm: impl Llm + 'static) -> LlmTool {
        self.with_llm_arc(Arc::new(llm))
    }

    /// Ask the shared `llm`, whichever run calls the tool.
    pub fn with_llm_arc(mut self, llm: Arc<dyn Llm>) -> LlmTool {
        self.model = ToolModel::Given(llm);
        self
    }

    /// Ask the model called `name` in the calling agent's registry
    /// ([`AgentBuilder::llm_registry`](crate::AgentBuilder::llm_registry)); a call fails with
    /// a tool error if there is none.
    pub fn with_llm_named(mut self, name: impl Into<String>) -> LlmTool {
        self.model = ToolModel::Named(name.into());
        self
    }

    /// The most tokens the answer may have (default [`DEFAULT_MAX_TOKENS`]).
    pub fn with_max_tokens(mut self, max_tokens: u32) -> LlmTool {
        self.max_tokens = max_tokens;
        self
    }

    /// The sampling temperature of the tool's requests (default: the provider's).
    pub fn with_temperature(mut self, temperature: f32) -> LlmTool {
        self.temperature = Some(temperature);
        self
    }

    /// The system prompt of the tool's requests: answer with JSON of the output's shape.
    pub fn system_prompt(&self) -> String {
        let mut text = format!(
            "Answer with one JSON value of the shape below and nothing else: no code fence, no \
             words before or after it.\n\nShape: {}\n",
            self.signature.output()
        );
        if !self.field_descriptions.is_empty() {
            text.push('\n');
            for (name, description) in &self.field_descriptions {
                text.push_str(&format!("{name}: {description}\n"));
            }
        }
        text.push_str(
            "\nHow to read the shape: {name type, ...} is a JSON object with these keys; [type] \
             is an array of that type; :string and :keyword are strings, :int an integer, \
             :float a number, :bool true or false, :map any object, :any any value; a type \
             ending in ? may be null, and such a key may be left out.",
        );
        text
    }

    /// The request a call with these named inputs sends, for turn `turn` of the calling run.
    fn request(&self, inputs: &BTreeMap<String, Value>, turn: Option<u32>) -> LlmRequest {
        let mut filled = inputs.clone();
        // An optional input left out reads as nothing in the prompt.
        for param in self.signature.params() {
            filled
                .entry(param.name.clone())
                .or_insert_with(|| Value::string(""));
        }
        let prompt = expand_mission(&self.prompt, &filled).unwrap_or_else(|_| self.prompt.clone());
        let mut request = LlmRequest::new(self.system_prompt(), vec![Message::user(prompt)])
            .with_max_tokens(self.max_tokens);
        if let Some(temperature) = self.temperature {
            request = request.with_temperature(temperature);
        }
        match turn {
            Some(turn) => request.with_turn(turn, Vec::new()),
            None => request,
        }
    }

    /// The arguments of a call, by name, checked against the input signature.
    fn inputs(&self, args: Vec<Value>) -> Result<BTreeMap<String, Value>, ToolError> {
        let inputs: BTreeMap<String, Value> = named_arguments(self.signature.params(), args)?
            .into_iter()
            .collect();
        self.signature
            .validate_input(|name| inputs.get(name))
            .map_err(|mismatches| {
                ToolError::new(format!(
                    "the arguments do not match {}: {}",
                    self.signature,
                    argument_mismatches(&mismatches)
                ))
            })?;
        Ok(inputs)
    }

    /// The answer in a reply: JSON of the output's shape (in a code fence or not); for a
    /// string output, a reply that is not JSON is the string itself.
    fn answer(&self, reply: &str) -> Result<Value, String> {
        let text = unfenced(reply);
        let value = match ptc_lisp::from_json_str(text) {
            Ok(value) => keywords_where_expected(self.signature.output(), value),
            Err(_) if matches!(self.signature.output().without_optional(), Type::String) => {
                Value::string(text)
            }
            Err(error) => {
                let detail = error.message.strip_prefix("invalid JSON: ");
                return Err(format!(
                    "the model's answer is not JSON ({}); it answered {}",
                    detail.unwrap_or(&error.message),
                    quoted(reply)
                ));
            }
        };
        self.signature.validate(&value).map_err(|mismatches| {
            format!(
                "the model's answer does not match {}: {}; it answered {}",
                self.signature.output(),
                mismatches
                    .iter()
                    .map(Mismatch::to_string)
                    .collect::<Vec<_>>()
                    .join("; "),
                quoted(reply)
            )
        })?;
        Ok(value)
    }

    /// The model to ask: the caller's, one of its registry's, or the tool's own.
    fn model(&self, caller: Option<&Caller>) -> Result<Arc<dyn Llm>, ToolError> {
        match (&self.model, caller) {
            (ToolModel::Given(llm), _) => Ok(llm.clone()),
            (ToolModel::Caller, Some(caller)) => Ok(caller.llm.clone()),
            (ToolModel::Named(name), Some(caller)) => {
                caller.registry.resolve(name).map_err(ToolError::new)
            }
            (_, None) => Err(ToolError::new(
                "this LLM tool asks the model of the agent run that calls it, and no agent run \
                 called it; give it a model with LlmTool::with_llm",
            )),
        }
    }
}

#[async_trait]
impl AsyncTool for LlmTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        match &self.description {
            Some(description) => description,
            None => self.prompt.lines().next().unwrap_or_default(),
        }
    }

    fn signature(&self) -> Option<&str> {
        Some(self.signature.source())
    }

    /// Every call is a model call, so a compiled agent cannot have this tool.
    fn uses_model(&self) -> bool {
        true
    }

    async fn call(&self, args: Vec<Value>) -> Result<Value, ToolError> {
        let inputs = self.inputs(args)?;
        let caller = CALLER.try_with(Caller::clone).ok();
        let llm = self.model(caller.as_ref())?;
        let request = self.request(&inputs, caller.as_ref().map(|c| c.turn));
        let retry = caller
            .as_ref()
            .map_or_else(RetryPolicy::none, |c| c.retry.clone());
        let mut usage = Usage::default();
        let response = call_llm(
            &*llm,
            &retry,
            request.turn.unwrap_or_default(),
            &request,
            &mut usage,
        )
        .await;
        if let Ok(response) = &response {
            usage.tokens += response.usage;
        }
        if let Some(caller) = &caller {
            caller.record(LlmToolCall {
                tool: self.name.clone(),
                request,
                usage,
            });
        }
        let response = response.map_err(|e| ToolError::new(format!("the model failed: {e}")))?;
        if response.is_cut_off() {
            return Err(ToolError::new(format!(
                "the model's answer was cut off at the limit of {} tokens: {}",
                self.max_tokens,
                quoted(&response.content)
            )));
        }
        self.answer(&response.content).map_err(ToolError::new)
    }
}

/// Mismatches of arguments, named as arguments rather than as data.
fn argument_mismatches(mismatches: &[Mismatch]) -> String {
    mismatches
        .iter()
        .map(|m| {
            m.to_string()
                .strip_prefix("data/")
                .map_or_else(|| m.to_string(), str::to_string)
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The reply without the code fence models put around JSON now and then.
fn unfenced(reply: &str) -> &str {
    let text = reply.trim();
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// Strings where the shape expects keywords become keywords (JSON has none).
fn keywords_where_expected(ty: &Type, value: Value) -> Value {
    match (ty, value) {
        (Type::Keyword, Value::Str(s)) => Value::keyword(s.strip_prefix(':').unwrap_or(&s)),
        (Type::Optional(inner), value) => keywords_where_expected(inner, value),
        (Type::List(item), Value::Vector(items)) => Value::vector(
            items
                .iter()
                .map(|v| keywords_where_expected(item, v.clone())),
        ),
        (Type::Record(fields), Value::Map(map)) => Value::map(map.iter().map(|(key, v)| {
            let field = match key {
                Value::Keyword(k) => fields.iter().find(|f| f.name == k.name()),
                _ => None,
            };
            let v = match field {
                Some(field) => keywords_where_expected(&field.ty, v.clone()),
                None => v.clone(),
            };
            (key.clone(), v)
        })),
        (_, value) => value,
    }
}

/// A reply quoted in an error, cut to 200 characters.
fn quoted(reply: &str) -> String {
    let form = Compact {
        chars: Some(200),
        ..Compact::default()
    };
    form.render(&Value::string(reply)).text
}
