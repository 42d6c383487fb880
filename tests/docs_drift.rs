//! What the docs say that the code also says, checked against the code so the two cannot drift
//! apart:
//!
//! - the tract operators the plugin overrides, `TractOverride::ALL`: the lists in README.md,
//!   the plugin's crate documentation, ARCHITECTURE.md and docs/contract.md name every one of
//!   them and nothing else, and no doc counts them otherwise;
//! - the opsets the contract covers, `opset::NEWEST_OPSET` and `opset::op_version`: the docs'
//!   "up to opset N" and each op's list of versions, such as "`ScatterND` (11, 13, 16, 18)";
//! - the speed mechanisms, `scatter_kernels::mechanisms::Mechanism::ALL`: docs/performance.md
//!   has one ablation row per switch.
//!
//! ARCHITECTURE.md also carries no measurements: figures go to docs/performance.md; the
//! plugin's imports between folders run the one way it states; and every module doc but a
//! crate root's is short, the rules living in docs/contract.md.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

use tract_onnx_scatter::TractOverride;
use tract_onnx_scatter::opset::{NEWEST_OPSET, ScatterOp, op_version};

const README: &str = "README.md";
const CRATE_DOC: &str = "crates/tract-onnx-scatter/src/lib.rs";
const CRATE_README: &str = "crates/tract-onnx-scatter/README.md";
const ARCHITECTURE: &str = "ARCHITECTURE.md";
const CONTRACT: &str = "docs/contract.md";

/// The file at `path`, relative to the repository's root.
fn read(path: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent");
    fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// `text` as one line of words: each line's comment marker (`//!`, `///`)
/// dropped and every run of whitespace one space, so a sentence reads the
/// same wherever its lines break.
fn prose(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(|line| {
            let line = line.trim_start();
            line.strip_prefix("//!")
                .or_else(|| line.strip_prefix("///"))
                .unwrap_or(line)
        })
        .collect();
    lines
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The op types of `TractOverride::ALL`.
fn overridden() -> BTreeSet<String> {
    TractOverride::ALL
        .iter()
        .map(|o| o.op_type().to_string())
        .collect()
}

/// The words between backticks in `text` that are spelled like an ONNX op
/// type (`ReverseSequence`; not `TractOverride::ALL`, `onnx()` or
/// `tract_overrides`).
fn op_types_in(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| {
            word.starts_with(|c: char| c.is_ascii_uppercase())
                && word.chars().all(|c| c.is_ascii_alphanumeric())
        })
        .map(str::to_string)
        .collect()
}

/// The text of `doc` from `lead` to the end of its sentence (the next
/// ". " or the end of `doc`). `lead` must occur exactly once.
fn sentence_from<'a>(doc: &'a str, path: &str, lead: &str) -> &'a str {
    assert_eq!(
        doc.matches(lead).count(),
        1,
        "{path} must say {lead:?} exactly once, where it lists them"
    );
    let rest = &doc[doc.find(lead).unwrap()..];
    let end = rest.find(". ").map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// Panics unless `listed` names every op type of `TractOverride::ALL` once,
/// and nothing else.
fn assert_lists_the_overrides(path: &str, listed: &[String]) {
    let named: BTreeSet<String> = listed.iter().cloned().collect();
    let expected = overridden();
    let missing: Vec<&String> = expected.difference(&named).collect();
    let not_overridden: Vec<&String> = named.difference(&expected).collect();
    assert!(
        missing.is_empty() && not_overridden.is_empty(),
        "{path}'s list of overridden tract operators is not TractOverride::ALL: \
         missing {missing:?}, not overridden {not_overridden:?}"
    );
}

/// The sentence that lists the overridden tract operators, in the same
/// words in each doc.
const OVERRIDE_LIST_LEAD: &str = "overrides these tract operators";

#[test]
fn readme_crate_doc_and_architecture_list_exactly_the_overridden_tract_operators() {
    for path in [README, CRATE_DOC, ARCHITECTURE] {
        let doc = prose(&read(path));
        let listed = op_types_in(sentence_from(&doc, path, OVERRIDE_LIST_LEAD));
        let once: BTreeSet<&String> = listed.iter().collect();
        assert_eq!(
            once.len(),
            listed.len(),
            "{path} names an operator twice: {listed:?}"
        );
        assert_lists_the_overrides(path, &listed);
    }
}

#[test]
fn the_contract_has_a_row_for_each_overridden_tract_operator_and_no_other() {
    let contract = read(CONTRACT);
    let header = "| operator | stock tract 0.23.9 |";
    assert!(
        contract.lines().any(|l| l.starts_with(header)),
        "{CONTRACT} has no table headed {header:?}"
    );
    // The rows after the header and its `|---|` line, up to the table's end.
    let rows = contract
        .lines()
        .skip_while(|l| !l.starts_with(header))
        .skip(2)
        .take_while(|l| l.starts_with('|'));
    let mut listed = vec![];
    for row in rows {
        let first_cell = row.split('|').nth(1).unwrap_or("");
        listed.extend(op_types_in(first_cell));
    }
    assert_lists_the_overrides(CONTRACT, &listed);
}

/// The number a word spells, from "one" to "twenty", or in digits.
fn count_in(word: &str) -> Option<usize> {
    const WORDS: [&str; 20] = [
        "one",
        "two",
        "three",
        "four",
        "five",
        "six",
        "seven",
        "eight",
        "nine",
        "ten",
        "eleven",
        "twelve",
        "thirteen",
        "fourteen",
        "fifteen",
        "sixteen",
        "seventeen",
        "eighteen",
        "nineteen",
        "twenty",
    ];
    let word = word.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    WORDS
        .iter()
        .position(|w| *w == word)
        .map(|i| i + 1)
        .or_else(|| word.parse().ok())
}

#[test]
fn no_doc_counts_the_overridden_tract_operators_otherwise_than_tract_override_all() {
    for path in [README, CRATE_DOC, CRATE_README, ARCHITECTURE, CONTRACT] {
        let doc = prose(&read(path)).to_lowercase();
        let words: Vec<&str> = doc.split(' ').collect();
        for w in words.windows(3) {
            let counts_them =
                w[1] == "tract" && (w[2].starts_with("operators") || w[2].starts_with("overrides"));
            if !counts_them {
                continue;
            }
            if let Some(n) = count_in(w[0]) {
                assert_eq!(
                    n,
                    TractOverride::ALL.len(),
                    "{path} says \"{} {} {}\", but TractOverride::ALL has {}",
                    w[0],
                    w[1],
                    w[2],
                    TractOverride::ALL.len()
                );
            }
        }
    }
}

/// The digits at the start of `text` ("24" of "24; a model ...").
fn leading_digits(text: &str) -> &str {
    let end = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    &text[..end]
}

#[test]
fn readme_contract_and_architecture_state_the_newest_opset_of_the_table() {
    for path in [README, CONTRACT, ARCHITECTURE] {
        let doc = prose(&read(path));
        let stated: Vec<&str> = doc
            .match_indices("up to opset ")
            .map(|(i, lead)| leading_digits(&doc[i + lead.len()..]))
            .collect();
        assert!(
            !stated.is_empty(),
            "{path} does not say \"up to opset {NEWEST_OPSET}\""
        );
        for opset in stated {
            assert_eq!(
                opset,
                NEWEST_OPSET.to_string(),
                "{path} says \"up to opset {opset}\", but opset::NEWEST_OPSET is {NEWEST_OPSET}"
            );
        }
    }
}

/// How the docs list the versions of `op`: its `since` versions, oldest
/// first ("`ScatterND` (11, 13, 16, 18)"); for `Scatter`, whose one version
/// 9 also governs opset 10 before its removal at 11, the opsets it exists
/// at ("`Scatter` (9, 10)").
fn versions(op: ScatterOp) -> Vec<i64> {
    let opsets = (1..=NEWEST_OPSET).filter(|&opset| op_version(op, opset).is_ok());
    if op == ScatterOp::Scatter {
        return opsets.collect();
    }
    let mut versions: Vec<i64> = opsets
        .map(|opset| op_version(op, opset).unwrap().since)
        .collect();
    versions.dedup();
    versions
}

/// The lists of integers in parentheses right after the op name `name` in
/// `doc` (with or without backticks): "(11, 13, 16, 18)" of "`ScatterND`
/// (11, 13, 16, 18)". A parenthesis holding anything else is no such list.
fn version_lists(doc: &str, name: &str) -> Vec<Vec<i64>> {
    let mut lists = vec![];
    for (i, _) in doc.match_indices(name) {
        let before = doc[..i].chars().next_back();
        if before.is_some_and(|c| c.is_ascii_alphanumeric()) {
            continue; // `Scatter` inside `TensorScatter`
        }
        let after = doc[i + name.len()..].trim_start_matches('`');
        let Some((inside, _)) = after.strip_prefix(" (").and_then(|a| a.split_once(')')) else {
            continue;
        };
        let numbers: Option<Vec<i64>> = inside.split(',').map(|n| n.trim().parse().ok()).collect();
        if let Some(numbers) = numbers {
            lists.push(numbers);
        }
    }
    lists
}

#[test]
fn every_list_of_an_op_s_versions_in_the_docs_is_the_opset_table_s() {
    let ops = [
        ScatterOp::Scatter,
        ScatterOp::ScatterElements,
        ScatterOp::ScatterNd,
        ScatterOp::TensorScatter,
    ];
    for path in [README, CRATE_DOC, CRATE_README, ARCHITECTURE, CONTRACT] {
        let doc = prose(&read(path));
        for op in ops {
            for listed in version_lists(&doc, op.onnx_name()) {
                assert_eq!(
                    listed,
                    versions(op),
                    "{path} lists the versions of {} otherwise than opset::op_version",
                    op.onnx_name()
                );
            }
        }
    }
}

#[test]
fn architecture_holds_no_measurements() {
    let doc = read(ARCHITECTURE);
    for unit in [" ms", " µs", " ns", " s)", " GB/s", "×"] {
        for (i, _) in doc.match_indices(unit) {
            let before = doc[..i].chars().next_back();
            assert!(
                !before.is_some_and(|c| c.is_ascii_digit()),
                "{ARCHITECTURE} carries a measurement ({unit:?} after a number): figures go to docs/performance.md"
            );
        }
    }
}

/// The plugin's top-level modules, lowest first, as ARCHITECTURE.md
/// layers them: a module imports only modules of a lower layer (the crate
/// root, `lib.rs`, excepted). `ops` and `tract_overrides` share a layer:
/// neither imports the other.
const IMPORT_LAYERS: &[&[&str]] = &[&["parse"], &["ops", "tract_overrides"], &["load"]];

fn layer_of(module: &str) -> Option<usize> {
    IMPORT_LAYERS.iter().position(|l| l.contains(&module))
}

/// A source file's code as the import tests read it: its tests and its
/// `//` comments cut.
fn product_code(source: &str) -> String {
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every `crate::<module>` a source file names outside comments and its
/// tests.
fn crate_imports(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in product_code(source).lines() {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            if !name.is_empty() && !line[..i].ends_with('$') {
                found.insert(name);
            }
        }
    }
    found
}

#[test]
fn the_plugin_s_imports_between_folders_run_down_the_architecture_s_layers() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join("crates/tract-onnx-scatter/src");
    let mut files = vec![root.clone()];
    let mut upward = vec![];
    let mut checked = 0;
    while let Some(path) = files.pop() {
        if path.is_dir() {
            files.extend(fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
            continue;
        }
        let relative = path.strip_prefix(&root).unwrap();
        let top = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy()
            .trim_end_matches(".rs")
            .to_string();
        // `test_graph.rs` is the tests' graph builder, a `#[cfg(test)]`
        // module: no product code imports it, nor does it import internals.
        if top == "lib" || top == "test_graph" || path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let own = layer_of(&top).unwrap_or_else(|| panic!("{top}: not in IMPORT_LAYERS"));
        for import in crate_imports(&fs::read_to_string(&path).unwrap()) {
            let Some(layer) = layer_of(&import) else {
                continue; // the crate root's items: `crate::onnx()` and the like
            };
            checked += 1;
            if import != top && layer >= own {
                upward.push(format!("{} imports crate::{import}", relative.display()));
            }
        }
    }
    assert!(checked > 30, "only {checked} imports found");
    assert!(
        upward.is_empty(),
        "imports running up or across: {upward:#?}"
    );
}

/// The `.rs` files of `ops/` and its folders, as paths relative to it.
fn ops_files(ops: &Path) -> Vec<String> {
    let mut found = vec![];
    let mut dirs = vec![ops.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(ops).unwrap();
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

/// ops/'s folders, as ARCHITECTURE.md's code map describes them: the run
/// path's machinery (`run/`) and the declutter rewrites (`rewrite/`) import
/// no op home, and neither folder imports the other.
#[test]
fn the_run_path_and_the_rewrites_import_no_home_and_not_each_other() {
    let ops = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join("crates/tract-onnx-scatter/src/ops");
    let registry = fs::read_to_string(ops.join("mod.rs")).unwrap();
    let homes: Vec<&str> = registry
        .lines()
        .filter_map(|l| l.trim().strip_suffix("::HOME,"))
        .collect();
    assert!(homes.len() >= 5, "HOMES lists {homes:?}");
    let files = ops_files(&ops);
    let mut checked = 0;
    let mut wrong = vec![];
    for (folder, other) in [("run/", "rewrite"), ("rewrite/", "run")] {
        for name in files.iter().filter(|f| f.starts_with(folder)) {
            checked += 1;
            let code = product_code(&fs::read_to_string(ops.join(name)).unwrap());
            let mut forbidden: Vec<String> = homes
                .iter()
                .flat_map(|h| [format!("crate::ops::{h}"), format!("super::{h}")])
                .collect();
            forbidden.push(format!("crate::ops::{other}"));
            forbidden.push(format!("super::{other}"));
            // Through ops/mod.rs's re-exports, a home's type or `HOMES`.
            forbidden.push("crate::ops::{".into());
            forbidden.push("crate::ops::HOMES".into());
            for path in forbidden {
                if code.contains(&path) {
                    wrong.push(format!("{name} imports {path}"));
                }
            }
            for (at, _) in code.match_indices("crate::ops::") {
                let rest = &code[at + "crate::ops::".len()..];
                if rest.starts_with(|c: char| c.is_ascii_uppercase()) {
                    wrong.push(format!(
                        "{name} imports crate::ops::{}",
                        &rest[..20.min(rest.len())]
                    ));
                }
            }
        }
    }
    assert!(
        checked >= 12,
        "only {checked} files in ops/run/ and ops/rewrite/"
    );
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn op_homes_import_only_the_base_homes_they_lower_to() {
    let ops = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .join("crates/tract-onnx-scatter/src/ops");
    let registry = fs::read_to_string(ops.join("mod.rs")).unwrap();
    let homes: Vec<&str> = registry
        .lines()
        .filter_map(|l| l.trim().strip_suffix("::HOME,"))
        .collect();
    assert!(homes.len() >= 5, "HOMES lists {homes:?}");
    let code_of = |file: &str| product_code(&fs::read_to_string(ops.join(file)).unwrap());
    // A home reached through `ops/mod.rs`'s re-exports would hide an
    // import from this test, so no file of ops/ takes a type from there.
    let mut through_registry = vec![];
    for name in ops_files(&ops) {
        // nnef.rs assembles the NNEF registry from `HOMES`, above them.
        if name == "mod.rs" || name == "nnef.rs" {
            continue;
        }
        let code = code_of(&name);
        for (at, _) in code.match_indices("crate::ops::") {
            let rest = &code[at + "crate::ops::".len()..];
            if rest.starts_with(|c: char| c.is_ascii_uppercase() || c == '{') {
                let shown: String = rest.chars().take(30).collect();
                through_registry.push(format!("{name}: crate::ops::{shown}"));
            }
        }
    }
    assert!(
        through_registry.is_empty(),
        "imports through ops/mod.rs: {through_registry:#?}"
    );
    // Each home with the other homes it names.
    let imports: BTreeMap<&str, Vec<&str>> = homes
        .iter()
        .map(|&home| {
            let code = code_of(&format!("{home}.rs"));
            let named = homes
                .iter()
                .copied()
                .filter(|other| *other != home)
                .filter(|other| {
                    code.contains(&format!("crate::ops::{other}::"))
                        || code.contains(&format!("super::{other}::"))
                })
                .collect();
            (home, named)
        })
        .collect();
    // Derived families (OpenVINO's update, the gradients) lower to the
    // base ones; a base family imports no home, so homes never circle.
    let mut layered = vec![];
    for (home, bases) in &imports {
        for base in bases {
            if !imports[base].is_empty() {
                layered.push(format!(
                    "{home} imports {base}, which imports {:?}",
                    imports[base]
                ));
            }
        }
    }
    assert!(
        layered.is_empty(),
        "homes importing homes that import homes: {layered:#?}"
    );
    let derived: Vec<&str> = imports
        .iter()
        .filter(|(_, bases)| !bases.is_empty())
        .map(|(home, _)| *home)
        .collect();
    assert_eq!(derived, ["scatter_elements_update", "scatter_grad"]);
}

#[test]
fn the_performance_doc_has_one_ablation_row_per_speed_mechanism() {
    use scatter_kernels::mechanisms::Mechanism;
    let doc = read("docs/performance.md");
    let start = doc
        .find("### Each mechanism switched off")
        .expect("docs/performance.md has the ablation section");
    let section = &doc[start..];
    let section = &section[..section.find("\n### ").unwrap_or(section.len())];
    let switches: Vec<&str> = section
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| mechanism"))
        .filter_map(|l| l.split('|').nth(2))
        .map(|cell| cell.trim().trim_matches('`'))
        .collect();
    let names: Vec<&str> = Mechanism::ALL.map(Mechanism::name).to_vec();
    assert_eq!(
        switches, names,
        "one row per mechanism, in Mechanism::ALL's order"
    );
}

/// The most lines of `//!` a module's documentation may have.
const MODULE_DOC_LINES: usize = 15;

/// The `.rs` files below `dir` (a path relative to the repository's root), as such paths;
/// `target/` directories skipped.
fn rust_files(dir: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent");
    let mut found = vec![];
    let mut dirs = vec![root.join(dir)];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.unwrap().path();
            if path.is_dir() {
                if path.file_name().is_some_and(|n| n != "target") {
                    dirs.push(path);
                }
            } else if path.extension().is_some_and(|e| e == "rs") {
                let relative = path.strip_prefix(root).unwrap();
                found.push(relative.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    found.sort();
    found
}

/// Whether `path` is a library crate's root, `crates/<crate>/src/lib.rs`: the front page
/// rustdoc shows a user of the crate, which may be as long as that page needs.
///
/// A binary's `src/main.rs` is held to the limit like any module: no command here takes its
/// help from the rustdoc (`tract-scatter` and `xtask` print their own, `scatter-bench`'s
/// options are on its `Options`), so its module doc is read only by those who read the code.
fn is_library_crate_root(path: &str) -> bool {
    let parts: Vec<&str> = path.split('/').collect();
    parts.len() == 4 && parts[0] == "crates" && parts[2] == "src" && parts[3] == "lib.rs"
}

/// A module doc says what the module holds and why, in a few sentences naming its key types;
/// the rules (semantics tables, per-op rules, error wording) are docs/contract.md's, the
/// figures docs/performance.md's, and why an item is written as it is goes on that item's
/// `///`. Counted: the file's lines that start with `//!` (a nested module's indented `//!`
/// is its own doc), in `crates/`, `xtask/` and `tests/`, library crate roots excepted
/// ([`is_library_crate_root`]).
#[test]
fn module_docs_are_at_most_fifteen_lines() {
    let mut checked = 0;
    let mut long = vec![];
    for dir in ["crates", "xtask", "tests"] {
        for path in rust_files(dir) {
            if is_library_crate_root(&path) {
                continue;
            }
            checked += 1;
            let lines = read(&path).lines().filter(|l| l.starts_with("//!")).count();
            if lines > MODULE_DOC_LINES {
                long.push(format!("{path}: {lines} lines of //!"));
            }
        }
    }
    assert!(checked > 100, "only {checked} files found");
    assert!(
        long.is_empty(),
        "module docs longer than {MODULE_DOC_LINES} lines (say what the module holds and why; \
         move rules to docs/contract.md, figures to docs/performance.md, explanations to the \
         items they concern): {long:#?}"
    );
}
