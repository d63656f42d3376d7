//! Runs kept as JSON lines in one file.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use async_trait::async_trait;
use ptc_turn::{StepOutcome, Task, Turn, Turns, Usage};
use serde::{Deserialize, Serialize};

use super::in_process::push_turn;
use super::{Checkpoint, Lease, RunStore, StoreError, Writable, may_write, run_blocking};

/// A [`RunStore`] in one file of JSON lines: a line when a run starts (its task), one per
/// completed turn, and one when it ends (outcome and usage), each naming its run.
///
/// Every line is written with one write and flushed to the disk before the call returns, so
/// after a crash the file holds every turn recorded before it, and at most a last line cut
/// short. [`JsonlStore::open`] finds such a line, cuts it off the file and reports it in
/// [`JsonlStore::torn`]; the run then resumes after its last whole turn.
///
/// One process at a time may write a file. It suits a run or a few per file, as `ptc run
/// --checkpoint` uses it; a service with many runs is better served by `ptc_store::SqliteStore`.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use ptc_agent::store::{JsonlStore, RunStore};
/// use ptc_turn::{Task, Turn};
///
/// let path = std::env::temp_dir().join(format!("doc-{}.jsonl", std::process::id()));
/// let store = JsonlStore::open(&path).unwrap();
/// store.start("run-1", &Task::new("Count the users")).await.unwrap();
/// store.append(None, "run-1", &Turn::success(1, "(count data/users)", 2.into())).await.unwrap();
/// let checkpoint = store.load("run-1").await.unwrap().unwrap();
/// assert_eq!(checkpoint.turns.len(), 1);
/// # std::fs::remove_file(&path).unwrap();
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct JsonlStore {
    path: PathBuf,
    state: Arc<Mutex<State>>,
    torn: Option<TornRecord>,
}

/// A last line that was cut short when the file was last written (the process stopped while
/// writing it), and that [`JsonlStore::open`] removed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TornRecord {
    /// Its 1-based line number.
    pub line: usize,
    /// How many bytes of it were written.
    pub bytes: usize,
}

#[derive(Debug)]
struct State {
    file: File,
    /// For each run: the number its next turn must have, and whether it ended.
    runs: HashMap<String, RunIndex>,
}

#[derive(Debug, Clone, Copy)]
struct RunIndex {
    next_turn: u32,
    ended: bool,
}

/// One line of the file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    run: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start: Option<Task>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    turn: Option<Turn>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end: Option<End>,
    /// The run's end is taken back: it takes turns again (see [`RunStore::reopen`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    reopened: bool,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct End {
    outcome: StepOutcome,
    #[serde(default)]
    usage: Usage,
}

impl JsonlStore {
    /// Opens the file at `path`, creating it if it does not exist. Every line is read and
    /// checked here, so a damaged file is reported before a run starts; a last line cut short
    /// is removed (see [`JsonlStore::torn`]).
    pub fn open(path: impl AsRef<Path>) -> Result<JsonlStore, StoreError> {
        let path = path.as_ref().to_path_buf();
        let io = |what: &str, e: std::io::Error| {
            StoreError::Io(format!("cannot {what} {}: {e}", path.display()))
        };
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io("open", e))?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(|e| io("read", e))?;
        let whole = text.rfind('\n').map_or(0, |i| i + 1);
        let torn = (whole < text.len()).then(|| TornRecord {
            line: text[..whole].lines().count() + 1,
            bytes: text.len() - whole,
        });
        if torn.is_some() {
            file.set_len(whole as u64)
                .and_then(|()| file.sync_data())
                .map_err(|e| io("repair", e))?;
        }
        let mut runs: HashMap<String, RunIndex> = HashMap::new();
        for (index, line) in parse(&path, &text[..whole])? {
            let line_no = index + 1;
            let known = runs.get(&line.run).copied();
            match (&line.start, &line.turn, &line.end, known) {
                (None, None, None, Some(run)) if line.reopened && run.ended => {
                    runs.insert(
                        line.run,
                        RunIndex {
                            ended: false,
                            ..run
                        },
                    );
                }
                _ if line.reopened => {
                    return Err(StoreError::Corrupt(format!(
                        "{} line {line_no}: a run reopened that had not ended",
                        path.display()
                    )));
                }
                (Some(_), None, None, None) => {
                    runs.insert(
                        line.run,
                        RunIndex {
                            next_turn: 1,
                            ended: false,
                        },
                    );
                }
                (None, Some(turn), None, Some(run)) if turn.number() == run.next_turn => {
                    runs.insert(
                        line.run,
                        RunIndex {
                            next_turn: run.next_turn + 1,
                            ..run
                        },
                    );
                }
                (None, None, Some(_), Some(run)) => {
                    runs.insert(line.run, RunIndex { ended: true, ..run });
                }
                _ => {
                    return Err(StoreError::Corrupt(format!(
                        "{} line {line_no}: a record that does not follow from the lines \
                         before it (a second start, a turn out of order, or a record of a run \
                         that was never started)",
                        path.display()
                    )));
                }
            }
        }
        file.seek(SeekFrom::End(0)).map_err(|e| io("seek in", e))?;
        Ok(JsonlStore {
            path,
            state: Arc::new(Mutex::new(State { file, runs })),
            torn,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The line cut short that [`open`](JsonlStore::open) removed, if there was one.
    pub fn torn(&self) -> Option<TornRecord> {
        self.torn
    }

    /// Writes `line` after checking it against the run's index with `check`, which returns the
    /// index after the line, or `None` when the line changes nothing and is not written.
    async fn write(
        &self,
        id: &str,
        line: &Line,
        check: impl FnOnce(Option<RunIndex>) -> Result<Option<RunIndex>, StoreError> + Send + 'static,
    ) -> Result<(), StoreError> {
        let mut text = serde_json::to_string(line)
            .map_err(|e| StoreError::Io(format!("cannot encode the record: {e}")))?;
        text.push('\n');
        let state = self.state.clone();
        let path = self.path.clone();
        let id = id.to_string();
        let write = move || {
            let mut state = state.lock().unwrap_or_else(PoisonError::into_inner);
            let Some(next) = check(state.runs.get(&id).copied())? else {
                return Ok(());
            };
            state
                .file
                .write_all(text.as_bytes())
                .and_then(|()| state.file.sync_data())
                .map_err(|e| StoreError::Io(format!("cannot write to {}: {e}", path.display())))?;
            state.runs.insert(id, next);
            Ok(())
        };
        run_blocking(write).await
    }
}

/// The index of run `id` when `writer` may write it ([`may_write`]: a run in a file is one
/// process's, never a fleet's).
fn writable(
    id: &str,
    known: Option<RunIndex>,
    writer: Option<&Lease>,
) -> Result<RunIndex, StoreError> {
    let run = known.map(|run| Writable {
        ended: run.ended,
        ..Writable::LOCAL
    });
    may_write(id, run, writer)?;
    known.ok_or_else(|| StoreError::Missing(id.to_string()))
}

/// The lines of `text` (whole lines only), parsed.
fn parse(path: &Path, text: &str) -> Result<Vec<(usize, Line)>, StoreError> {
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(index, line)| {
            serde_json::from_str::<Line>(line)
                .map(|parsed| (index, parsed))
                .map_err(|e| {
                    StoreError::Corrupt(format!(
                        "{} line {}: not a run record ({e})",
                        path.display(),
                        index + 1
                    ))
                })
        })
        .collect()
}

#[async_trait]
impl RunStore for JsonlStore {
    async fn start(&self, id: &str, task: &Task) -> Result<(), StoreError> {
        let line = Line {
            run: id.to_string(),
            start: Some(task.clone()),
            turn: None,
            end: None,
            reopened: false,
        };
        let owned = id.to_string();
        self.write(id, &line, move |known| match known {
            Some(_) => Err(StoreError::Exists(owned)),
            None => Ok(Some(RunIndex {
                next_turn: 1,
                ended: false,
            })),
        })
        .await
    }

    async fn append(&self, lease: Option<&Lease>, id: &str, turn: &Turn) -> Result<(), StoreError> {
        let number = turn.number();
        let lease = lease.cloned();
        let line = Line {
            run: id.to_string(),
            start: None,
            turn: Some(turn.clone()),
            end: None,
            reopened: false,
        };
        let owned = id.to_string();
        self.write(id, &line, move |known| {
            let run = writable(&owned, known, lease.as_ref())?;
            if number != run.next_turn {
                return Err(StoreError::OutOfOrder {
                    id: owned,
                    expected: run.next_turn,
                    found: number,
                });
            }
            Ok(Some(RunIndex {
                next_turn: number + 1,
                ..run
            }))
        })
        .await
    }

    async fn finish(
        &self,
        lease: Option<&Lease>,
        id: &str,
        outcome: &StepOutcome,
        usage: &Usage,
    ) -> Result<(), StoreError> {
        let lease = lease.cloned();
        let line = Line {
            run: id.to_string(),
            start: None,
            turn: None,
            end: Some(End {
                outcome: outcome.clone(),
                usage: usage.clone(),
            }),
            reopened: false,
        };
        let owned = id.to_string();
        self.write(id, &line, move |known| {
            let run = writable(&owned, known, lease.as_ref())?;
            Ok(Some(RunIndex { ended: true, ..run }))
        })
        .await
    }

    async fn load(&self, id: &str) -> Result<Option<Checkpoint>, StoreError> {
        let state = self.state.clone();
        let path = self.path.clone();
        let id = id.to_string();
        let read = move || -> Result<Option<Checkpoint>, StoreError> {
            let _writing = state.lock().unwrap_or_else(PoisonError::into_inner);
            let text = std::fs::read_to_string(&path)
                .map_err(|e| StoreError::Io(format!("cannot read {}: {e}", path.display())))?;
            let whole = text.rfind('\n').map_or(0, |i| i + 1);
            let mut found: Option<Checkpoint> = None;
            for (_, line) in parse(&path, &text[..whole])? {
                if line.run != id {
                    continue;
                }
                match (line.start, line.turn, line.end, found.as_mut()) {
                    (None, None, None, Some(run)) if line.reopened => run.end = None,
                    (Some(task), _, _, None) => {
                        found = Some(Checkpoint {
                            task,
                            turns: Turns::new(),
                            end: None,
                        });
                    }
                    (_, Some(turn), _, Some(run)) => push_turn(&id, &mut run.turns, turn)?,
                    (_, _, Some(end), Some(run)) => run.end = Some((end.outcome, end.usage)),
                    _ => {
                        return Err(StoreError::Corrupt(format!(
                            "{}: the records of run `{id}` are not in order",
                            path.display()
                        )));
                    }
                }
            }
            Ok(found)
        };
        run_blocking(read).await
    }

    async fn reopen(&self, id: &str) -> Result<(), StoreError> {
        let line = Line {
            run: id.to_string(),
            start: None,
            turn: None,
            end: None,
            reopened: true,
        };
        let owned = id.to_string();
        self.write(id, &line, move |known| {
            let run = known.ok_or(StoreError::Missing(owned))?;
            // A run that has not ended has nothing to take back: no line is written.
            Ok(run.ended.then_some(RunIndex {
                ended: false,
                ..run
            }))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn temp(name: &str) -> PathBuf {
        std::env::temp_dir().join(format!("ptc-jsonl-{}-{name}.jsonl", std::process::id()))
    }

    fn turn(n: u32) -> Turn {
        Turn::success(n, format!("(def x{n} {n})"), ptc_lisp::Value::Int(n.into()))
    }

    #[tokio::test]
    async fn a_line_cut_short_is_removed_and_reported() {
        let path = temp("torn");
        let store = JsonlStore::open(&path).unwrap();
        store.start("a", &Task::new("m")).await.unwrap();
        store.append(None, "a", &turn(1)).await.unwrap();
        store.append(None, "a", &turn(2)).await.unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        // The process stopped while writing the line of turn 2.
        let cut = text.len() - 20;
        std::fs::write(&path, &text[..cut]).unwrap();

        let store = JsonlStore::open(&path).unwrap();
        let first_two_lines = text.lines().take(2).map(str::len).sum::<usize>() + 2;
        assert_eq!(
            store.torn(),
            Some(TornRecord {
                line: 3,
                bytes: cut - first_two_lines
            })
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap().len(),
            first_two_lines
        );
        let loaded = store.load("a").await.unwrap().unwrap();
        assert_eq!(
            loaded.turns.iter().map(Turn::number).collect::<Vec<_>>(),
            [1]
        );
        // The run goes on from there.
        store.append(None, "a", &turn(2)).await.unwrap();
        assert_eq!(store.load("a").await.unwrap().unwrap().turns.len(), 2);
        assert_eq!(JsonlStore::open(&path).unwrap().torn(), None);
        std::fs::remove_file(&path).unwrap();
    }

    #[tokio::test]
    async fn misuse_and_damage_are_errors() {
        let path = temp("errors");
        let store = JsonlStore::open(&path).unwrap();
        assert_eq!(
            store.append(None, "nope", &turn(1)).await,
            Err(StoreError::Missing("nope".into()))
        );
        store.start("a", &Task::new("m")).await.unwrap();
        assert_eq!(
            store.start("a", &Task::new("m")).await,
            Err(StoreError::Exists("a".into()))
        );
        assert_eq!(
            store.append(None, "a", &turn(2)).await,
            Err(StoreError::OutOfOrder {
                id: "a".into(),
                expected: 1,
                found: 2
            })
        );
        assert_eq!(store.load("b").await, Ok(None));
        std::fs::write(
            &path,
            "{\"run\":\"a\",\"start\":{\"mission\":\"m\"}}\nnot json\n",
        )
        .unwrap();
        let error = JsonlStore::open(&path).unwrap_err().to_string();
        assert!(
            error.ends_with("line 2: not a run record (expected ident at line 1 column 2)"),
            "{error}"
        );
        std::fs::remove_file(&path).unwrap();
    }
}
