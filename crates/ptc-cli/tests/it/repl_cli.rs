//! `ptc repl` as a process: Ctrl-C (SIGINT) during an evaluation ends that evaluation, not the
//! REPL; the definitions made before stay, and end of input (Ctrl-D) saves the history.

use crate::support::{Scratch, ptc_command};
use pretty_assertions::assert_eq;
use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_during_an_evaluation_keeps_the_repl_its_definitions_and_its_history() {
    let scratch = Scratch::new("repl-ctrl-c");
    let mut child = ptc_command(&[
        "repl",
        "--timeout-ms",
        "600000",
        "--max-steps",
        "1000000000000",
    ])
    .env("XDG_DATA_HOME", &scratch.0)
    .stdin(Stdio::piped())
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("start ptc repl");
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines, received) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let line = line.unwrap();
            lines.send(line.clone()).unwrap();
        }
    });
    stdin.write_all(b"(def x 41)\n").unwrap();
    stdin.flush().unwrap();
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.contains("#'user/x")) {
        seen.push(
            received
                .recv_timeout(Duration::from_secs(60))
                .expect("the REPL answers"),
        );
    }
    stdin.write_all(b"(loop [] (recur))\n").unwrap();
    stdin.flush().unwrap();
    // Long enough for the loop to be running; it would run for minutes otherwise.
    std::thread::sleep(Duration::from_millis(500));
    let pid = libc::pid_t::try_from(child.id()).unwrap();
    // SAFETY: signalling the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    stdin.write_all(b"(inc x)\n").unwrap();
    drop(stdin);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    seen.extend(received.try_iter());
    assert_eq!(
        status.code(),
        Some(0),
        "the REPL ends normally at end of input"
    );
    assert_eq!(
        seen.join("\n").replace("user=> ", ""),
        "PTC-Lisp REPL. :help for commands, Ctrl-C to stop an evaluation, Ctrl-D to leave.\n\
         #'user/x\n\
         error[timeout]: interrupted by Ctrl-C; the definitions made before this input are kept\n \
         --> <repl>:1:1\n  |\n1 | (loop [] (recur))\n  | ^^^^^^^^^^^^^^^^^\n\
         42"
    );
    let history = std::fs::read_to_string(scratch.0.join("ptc/repl_history")).unwrap();
    assert_eq!(
        history
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>(),
        ["(def x 41)", "(loop [] (recur))", "(inc x)"]
    );
}
