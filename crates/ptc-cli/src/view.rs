//! `ptc view`: a recorded run (a serialized step) as one self-contained HTML page.

use clap::Args;
use ptc_compression::{CompressionConfig, PricingProfile};
use ptc_turn::Step;
use ptc_view::{PageOptions, run_page};
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct ViewArgs {
    /// A step serialized as JSON (what `ptc run --dump-step` or `ptc-bench --steps` writes).
    #[arg(value_name = "STEP.json")]
    pub step: PathBuf,

    /// Where to write the page [default: the step's path with `.html` for `.json`].
    #[arg(short, long, value_name = "FILE.html")]
    pub output: Option<PathBuf>,

    /// Open the page in the desktop's browser once written.
    #[arg(long)]
    pub open: bool,

    /// The strategy the bill is modelled with, e.g. `on` or `off` (the full history; the
    /// default): the step does not record which one the run used.
    #[arg(long, value_name = "SPEC", default_value = "off")]
    pub compression: CompressionConfig,

    /// The pricing profile(s) of the bill: `anthropic`, `openai`, `ideal`, optionally with
    /// prices such as `openai?read=0.25` (repeatable; all three by default).
    #[arg(long, value_name = "PROFILE")]
    pub pricing: Vec<PricingProfile>,
}

pub fn run(args: &ViewArgs) -> Result<(), String> {
    let text = std::fs::read_to_string(&args.step)
        .map_err(|e| format!("cannot read {}: {e}", args.step.display()))?;
    let step: Step = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not a serialized step: {e}. Pass the JSON a run saved (its `outcome`, `task` \
             and `turns`)",
            args.step.display()
        )
    })?;
    let mut options = PageOptions {
        compression: args.compression,
        ..PageOptions::default()
    };
    if !args.pricing.is_empty() {
        options.profiles = args.pricing.clone();
    }
    let page = run_page(&step, &options);
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| args.step.with_extension("html"));
    std::fs::write(&output, page).map_err(|e| format!("cannot write {}: {e}", output.display()))?;
    println!("{}", output.display());
    if args.open {
        open(&output)?;
    }
    Ok(())
}

/// Hands `page` to the desktop's opener.
fn open(page: &Path) -> Result<(), String> {
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    std::process::Command::new(opener)
        .arg(page)
        .status()
        .map_err(|e| format!("cannot start `{opener}` to open {}: {e}", page.display()))
        .and_then(|status| {
            if status.success() {
                Ok(())
            } else {
                Err(format!(
                    "`{opener} {}` failed ({status}); the page is written, open it yourself",
                    page.display()
                ))
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use ptc_lisp::Value;
    use ptc_turn::{StepOutcome, Task, Turn, Turns};

    fn args(step: PathBuf, output: Option<PathBuf>) -> ViewArgs {
        ViewArgs {
            step,
            output,
            open: false,
            compression: CompressionConfig::parse("on").expect("a spec"),
            pricing: vec!["openai".parse().expect("a profile")],
        }
    }

    #[test]
    fn writes_the_page_beside_the_step() {
        let dir = std::env::temp_dir().join(format!("ptc-view-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creates the directory");
        let mut turns = Turns::new();
        turns
            .push(Turn::success(1, "(return 1)", Value::Int(1)))
            .expect("in order");
        let step = Step {
            outcome: StepOutcome::Returned {
                value: Value::Int(1),
            },
            task: Task::new("One."),
            turns,
            usage: Default::default(),
        };
        let path = dir.join("run.json");
        std::fs::write(&path, serde_json::to_string(&step).expect("serializes"))
            .expect("writes the step");
        run(&args(path.clone(), None)).expect("writes the page");
        let written = std::fs::read_to_string(dir.join("run.html")).expect("the page");
        let options = PageOptions {
            compression: CompressionConfig::parse("on").expect("a spec"),
            profiles: vec!["openai".parse().expect("a profile")],
            title: None,
        };
        assert_eq!(written, run_page(&step, &options));
        std::fs::remove_dir_all(&dir).expect("removes the directory");
    }

    #[test]
    fn a_file_that_is_not_a_step_is_refused_by_name() {
        let dir = std::env::temp_dir().join(format!("ptc-view-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("creates the directory");
        let path = dir.join("notes.json");
        std::fs::write(&path, "{\"turns\": 3}").expect("writes");
        let error = run(&args(path.clone(), None)).expect_err("not a step");
        assert!(
            error.starts_with(&format!("{} is not a serialized step: ", path.display())),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).expect("removes the directory");
    }
}
