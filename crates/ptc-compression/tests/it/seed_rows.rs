//! docs/seed-requirements.md lists every requirement ID of the seed design once, each `met` or
//! a `deviation` with its reason, and every file it names exists and names the ID (a test of
//! it, or a range such as `TRN-001..TRN-005` that holds it).

use pretty_assertions::assert_eq;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each group of the seed's requirements and how many IDs it has, in its order.
const GROUPS: [(&str, u32); 15] = [
    ("PRE", 1),
    ("API", 7),
    ("ARC", 7),
    ("NS", 12),
    ("FMT", 18),
    ("TYP", 12),
    ("TRN", 11),
    ("SAM", 3),
    ("DEF", 9),
    ("TC", 7),
    ("MSG", 7),
    ("CMP", 4),
    ("ERR", 3),
    ("SS", 2),
    ("DBG", 5),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

struct Row {
    id: String,
    status: String,
    files: Vec<String>,
    note: String,
}

fn rows() -> Vec<Row> {
    let page = std::fs::read_to_string(root().join("docs/seed-requirements.md"))
        .expect("docs/seed-requirements.md");
    page.lines()
        .filter(|line| line.starts_with("| ") && !line.starts_with("| ID "))
        .map(|line| {
            let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
            let files = cells
                .get(2)
                .map(|cell| {
                    cell.split(", ")
                        .map(|f| f.trim_matches('`').to_string())
                        .filter(|f| !f.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            Row {
                id: cells[0].to_string(),
                status: cells.get(1).map_or(String::new(), |s| s.to_string()),
                files,
                note: cells.get(3).map_or(String::new(), |s| s.to_string()),
            }
        })
        .collect()
}

/// Whether `text` names `id`, alone or inside a range `A-001..A-009` (spaces allowed).
fn names(text: &str, id: &str) -> bool {
    if text.contains(id) {
        return true;
    }
    let (group, number) = id.split_once('-').expect("an ID");
    let number: u32 = number.parse().expect("a number");
    let start = format!("{group}-");
    text.match_indices(&start).any(|(at, _)| {
        let rest = &text[at + start.len()..];
        let Some(first) = rest.get(..3).and_then(|n| n.parse::<u32>().ok()) else {
            return false;
        };
        let after = rest[3..].trim_start();
        let Some(after) = after.strip_prefix("..") else {
            return false;
        };
        let Some(last) = after
            .trim_start()
            .strip_prefix(&start)
            .and_then(|r| r.get(..3))
            .and_then(|n| n.parse::<u32>().ok())
        else {
            return false;
        };
        (first..=last).contains(&number)
    })
}

#[test]
fn every_seed_requirement_is_met_or_a_deviation_with_its_reason() {
    let rows = rows();
    let expected: Vec<String> = GROUPS
        .iter()
        .flat_map(|(group, n)| (1..=*n).map(move |i| format!("{group}-{i:03}")))
        .collect();
    assert_eq!(
        rows.iter().map(|r| r.id.clone()).collect::<Vec<_>>(),
        expected
    );
    let mut statuses: BTreeMap<&str, usize> = BTreeMap::new();
    for row in &rows {
        *statuses.entry(row.status.as_str()).or_default() += 1;
        assert!(
            row.status == "met" || (row.status == "deviation" && row.note.len() > 20),
            "{}: a row is met, or a deviation with its reason",
            row.id
        );
        assert!(
            !row.files.is_empty(),
            "{}: names where it is checked",
            row.id
        );
        for file in &row.files {
            let text = std::fs::read_to_string(root().join(file))
                .unwrap_or_else(|e| panic!("{}: {file}: {e}", row.id));
            assert!(names(&text, &row.id), "{}: {file} does not name it", row.id);
        }
    }
    assert_eq!(statuses, BTreeMap::from([("deviation", 6), ("met", 102)]));
}

#[test]
fn ranges_name_the_ids_between_their_ends() {
    assert_eq!(
        ["TRN-003", "TRN-006", "NS-009", "NS-010"]
            .map(|id| names("TRN-001..TRN-005 and NS-001 .. NS-009", id)),
        [true, false, true, false]
    );
}
