//! Read and run arbitrary text under tight limits, twice (the second run sees the definitions
//! of the first). Nothing may panic, every run must end, and whatever a run hands back (its
//! value, its error, the arguments of its tool calls) must be safe for the host to print and
//! serialize.

#![no_main]

use libfuzzer_sys::fuzz_target;
use ptc_lisp::{Compact, pr_str};
use ptc_lisp::{
    Limits, Outcome, RunOutcome, Runtime, ToolError, ToolOutcome, ToolSpec, Tools, UserNamespace,
    Value, };
use std::sync::OnceLock;
use std::time::Duration;

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        let tools = Tools::new()
            .with(
                ToolSpec::new("echo", "Returns its arguments").with_params(["x"]),
                |args: &[Value]| Ok(Value::vector(args.iter().cloned())),
            )
            .with(
                ToolSpec::new("fails", "Always fails"),
                |_args: &[Value]| Err(ToolError::new("the service is down")),
            );
        let data = ptc_lisp::from_json_str(
            r#"{"items": [{"id": 1, "name": "a", "tags": ["x"]}, {"id": 2, "name": "b"}],
                "count": 2, "config": {"mode": "strict"}}"#,
        )
        .expect("fixture JSON");
        Runtime::new()
            .with_tools(tools)
            .with_data_map(&data)
            .expect("fixture data is a map")
            .with_limits(Limits {
                timeout: Duration::from_millis(100),
                max_steps: 20_000,
                max_memory_bytes: 4 << 20,
                max_tool_calls: 20,
                tool_timeout: Some(Duration::from_millis(50)),
                max_output_bytes: 4096,
                ..Limits::default()
            })
    })
}

/// Everything a host does with a run's results.
fn use_results(out: &RunOutcome) {
    let shown = |v: &Value| {
        let _ = pr_str(v);
        let _ = Compact::new(20, 100).render(v);
        let _ = ptc_lisp::to_json(v);
    };
    match &out.outcome {
        Outcome::Value(v) | Outcome::Returned(v) | Outcome::Failed(v) => shown(v),
        Outcome::Error(e) => {
            assert!(!e.message.is_empty());
            let _ = e.to_string();
            if let Some(data) = &e.data {
                shown(data);
            }
        }
    }
    for call in &out.tool_calls {
        call.args.iter().for_each(shown);
        if let ToolOutcome::Ok(v) = &call.result {
            shown(v);
        }
    }
    for definition in out.namespace.definitions() {
        shown(&definition.value);
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(source) = std::str::from_utf8(data) else {
        return;
    };
    let first = runtime().run_str(source, &UserNamespace::new());
    use_results(&first);
    let second = runtime().run_str(source, &first.namespace);
    use_results(&second);
});
