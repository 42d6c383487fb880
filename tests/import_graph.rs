//! No import circles: in every crate of the workspace, no source file
//! reaches itself through the paths it names (`use crate::…`, `super::…`,
//! `crate::…` in code), directly or round a loop. A file's tests
//! (`#[cfg(test)]` items) do not count; a re-export (`pub use`) is followed
//! to the file that defines the item, and is no import of the file that
//! re-exports. A folder's entry file (`lib.rs`, `main.rs`, `mod.rs`) sits
//! above the files of its folder: what it names of them is its tree, not
//! an import (its files may use its items).

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;

/// `source` without comments, the contents of string and char literals,
/// and its `#[cfg(test)]` items.
pub(crate) fn code_of(source: &str) -> String {
    let s = source.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let rest = &source[i..];
        if rest.starts_with("//") {
            i += rest.find('\n').unwrap_or(rest.len());
        } else if rest.starts_with("/*") {
            i += rest.find("*/").map_or(rest.len(), |e| e + 2);
        } else if let Some((prefix, hashes)) = raw_string_start(rest) {
            let close = format!("\"{}", "#".repeat(hashes));
            let open = prefix + hashes + 1;
            i += open
                + rest[open..]
                    .find(&close)
                    .map_or(rest.len() - open, |e| e + close.len());
            out.push_str("\"\"");
        } else if rest.starts_with('"') {
            let mut j = 1;
            while j < rest.len() && s[i + j] != b'"' {
                j += if s[i + j] == b'\\' { 2 } else { 1 };
            }
            i += j + 1;
            out.push_str("\"\"");
        } else if let Some(len) = char_literal(rest) {
            i += len;
            out.push_str("' '");
        } else {
            let c = rest.chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    without_tests(&out)
}

/// The length of `r`/`br` and the number of `#`s of a raw string literal
/// starting `text`.
fn raw_string_start(text: &str) -> Option<(usize, usize)> {
    let after_r = text.strip_prefix("br").or_else(|| text.strip_prefix('r'))?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    after_r[hashes..]
        .starts_with('"')
        .then_some((text.len() - after_r.len(), hashes))
}

/// The length of a char literal starting `text` (not a lifetime).
fn char_literal(text: &str) -> Option<usize> {
    let rest = text.strip_prefix('\'')?;
    if let Some(escaped) = rest.strip_prefix('\\') {
        let c = escaped.chars().next()?;
        return escaped[c.len_utf8()..]
            .find('\'')
            .map(|e| 3 + c.len_utf8() + e);
    }
    let c = rest.chars().next()?;
    rest[c.len_utf8()..]
        .starts_with('\'')
        .then_some(2 + c.len_utf8())
}

/// `code` without its `#[cfg(test)]` items (a `mod tests { … }`, a
/// function, a `use …;`).
fn without_tests(code: &str) -> String {
    let mut out = String::new();
    let mut rest = code;
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        let item = &rest[at..];
        let semi = item.find(';').unwrap_or(item.len());
        let Some(open) = item.find('{').filter(|&b| b < semi) else {
            rest = &item[(semi + 1).min(item.len())..];
            continue;
        };
        let mut depth = 0;
        let mut end = item.len();
        for (k, c) in item[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = open + k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The paths a `use` tree names: `a::{b, c::{d as e, self}}` is `a::b`,
/// `a::c::d`, `a::c`.
fn expand(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap().trim();
        return if path.is_empty() {
            vec![]
        } else {
            vec![path.to_string()]
        };
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut parts = vec![];
    let (mut depth, mut start) = (0, 0);
    for (k, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..k]);
                start = k + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    parts
        .into_iter()
        .flat_map(expand)
        .map(|p| match p.as_str() {
            "self" => prefix.trim_end_matches("::").to_string(),
            _ => format!("{prefix}{p}"),
        })
        .collect()
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The `use` statements of `code`, (re-exported, path) for each path, and
/// `code` without them.
fn use_paths(code: &str) -> (Vec<(bool, Vec<String>)>, String) {
    let mut found = vec![];
    let mut rest = String::new();
    let mut copied = 0;
    for (at, _) in code.match_indices("use") {
        if at < copied {
            continue;
        }
        let before = code[..at].chars().next_back();
        let after = code[at + 3..].chars().next();
        if before.is_some_and(is_ident) || !after.is_some_and(char::is_whitespace) {
            continue;
        }
        let statement = &code[at + 3..];
        let statement = &statement[..statement.find(';').unwrap_or(statement.len())];
        rest.push_str(&code[copied..at]);
        copied = at + 3 + statement.len();
        let lead = code[..at].trim_end();
        let public = lead.ends_with("pub") || (lead.ends_with(')') && lead.contains("pub("));
        let public = public && {
            let line_start = lead.rfind(['\n', ';', '{', '}']).map_or(0, |k| k + 1);
            lead[line_start..].trim_start().starts_with("pub")
        };
        for path in expand(statement) {
            found.push((public, segments(&path)));
        }
    }
    rest.push_str(&code[copied..]);
    (found, rest)
}

fn segments(path: &str) -> Vec<String> {
    path.split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The paths `code` names outside `use` statements that start at
/// `crate`, `super`, `self` or one of `children` (modules the file declares).
fn code_paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut found = vec![];
    let mut k = 0;
    let chars: Vec<(usize, char)> = code.char_indices().collect();
    while k < chars.len() {
        let (at, c) = chars[k];
        let starts_word = (c.is_ascii_alphabetic() || c == '_')
            && (k == 0
                || !(is_ident(chars[k - 1].1) || chars[k - 1].1 == '$' || chars[k - 1].1 == ':'));
        if !starts_word {
            k += 1;
            continue;
        }
        let end = code[at..]
            .find(|c: char| !is_ident(c) && c != ':')
            .map_or(code.len(), |e| at + e);
        let path = segments(&code[at..end]);
        let first = path[0].as_str();
        if path.len() > 1
            && (["crate", "super", "self"].contains(&first) || children.contains(first))
        {
            found.push(path);
        }
        while k < chars.len() && chars[k].0 < end {
            k += 1;
        }
    }
    found
}

/// The file-import graph of the crate whose sources are under `src`: each
/// file (relative to `src`) with the files it imports.
pub fn import_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = BTreeMap::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let rel = path
                    .strip_prefix(src)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                files.insert(rel, code_of(&fs::read_to_string(&path).unwrap()));
            }
        }
    }
    let module_of = |rel: &str| -> Vec<String> {
        let mut parts = segments(&rel.trim_end_matches(".rs").replace('/', "::"));
        if ["mod", "lib", "main"].contains(&parts.last().unwrap().as_str()) {
            parts.pop();
        }
        parts
    };
    // The file that holds `path`, with how many segments name modules.
    let file_of = |path: &[String]| -> Option<(String, usize)> {
        (0..=path.len()).rev().find_map(|n| {
            let base = path[..n].join("/");
            let candidates = if n == 0 {
                vec!["lib.rs".to_string(), "main.rs".to_string()]
            } else {
                vec![format!("{base}.rs"), format!("{base}/mod.rs")]
            };
            candidates
                .into_iter()
                .find(|c| files.contains_key(c))
                .map(|c| (c, n))
        })
    };
    let absolute = |module: &[String], path: &[String]| -> Option<Vec<String>> {
        match path[0].as_str() {
            "crate" => Some(path[1..].to_vec()),
            "self" | "super" => {
                let mut at = module.to_vec();
                let mut rest = path;
                while let Some(first) = rest.first().filter(|s| *s == "self" || *s == "super") {
                    if first == "super" {
                        at.pop();
                    }
                    rest = &rest[1..];
                }
                at.extend_from_slice(rest);
                Some(at)
            }
            _ => {
                // A child module of this one (uniform paths), else another crate.
                let mut child = module.to_vec();
                child.push(path[0].clone());
                file_of(&child).filter(|(_, n)| *n == child.len())?;
                let mut at = module.to_vec();
                at.extend_from_slice(path);
                Some(at)
            }
        }
    };
    let mut reexports: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let mut imports: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
    for (rel, code) in &files {
        let module = module_of(rel);
        let children: BTreeSet<String> = code
            .match_indices("mod ")
            .filter_map(|(at, _)| {
                let name: String = code[at + 4..]
                    .chars()
                    .take_while(|c| is_ident(*c))
                    .collect();
                code[at + 4 + name.len()..]
                    .trim_start()
                    .starts_with(';')
                    .then_some(name)
            })
            .collect();
        let mut named = vec![];
        let (uses, code) = use_paths(code);
        for (public, path) in uses {
            let Some(abs) = absolute(&module, &path) else {
                continue;
            };
            if public {
                let name = path.last().unwrap().clone();
                reexports.entry(rel.clone()).or_default().insert(name, abs);
            } else {
                named.push(abs);
            }
        }
        named.extend(
            code_paths(&code, &children)
                .iter()
                .filter_map(|p| absolute(&module, p)),
        );
        imports.insert(rel.clone(), named);
    }
    let resolve = |path: &[String]| -> Option<String> {
        let mut path = path.to_vec();
        for _ in 0..8 {
            let (file, n) = file_of(&path)?;
            match path.get(n).and_then(|item| reexports.get(&file)?.get(item)) {
                Some(target) => path = target.clone(),
                None => return Some(file),
            }
        }
        None
    };
    imports
        .into_iter()
        .map(|(rel, named)| {
            let entry = ["lib.rs", "main.rs", "mod.rs"]
                .iter()
                .any(|e| rel == *e || rel.ends_with(&format!("/{e}")));
            let module = module_of(&rel);
            let targets = named
                .iter()
                .filter_map(|p| resolve(p))
                .filter(|t| *t != rel)
                .filter(|t| !(entry && module_of(t).starts_with(&module)))
                .collect();
            (rel, targets)
        })
        .collect()
}

/// The circles of `graph`: its strongly connected components of more than
/// one file (Tarjan's algorithm), each with one loop through them.
pub fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct Walk<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        found: Vec<Vec<String>>,
    }
    impl<'g> Walk<'g> {
        fn visit(&mut self, v: &'g str) {
            let i = self.index.len();
            self.index.insert(v, i);
            self.low.insert(v, i);
            self.stack.push(v);
            for w in self.graph.get(v).into_iter().flatten() {
                if !self.index.contains_key(w.as_str()) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w.as_str()]);
                    self.low.insert(v, low);
                } else if self.stack.contains(&w.as_str()) {
                    let low = self.low[v].min(self.index[w.as_str()]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let at = self.stack.iter().position(|u| *u == v).unwrap();
                let component: Vec<String> = self.stack.drain(at..).map(String::from).collect();
                if component.len() > 1 {
                    self.found.push(component);
                }
            }
        }
    }
    let mut walk = Walk {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: vec![],
        found: vec![],
    };
    for v in graph.keys() {
        if !walk.index.contains_key(v.as_str()) {
            walk.visit(v);
        }
    }
    walk.found
        .into_iter()
        .map(|mut c| {
            c.sort();
            c
        })
        .collect()
}

/// The files of a circle in one loop: from its first file, along imports
/// inside the circle, back to it.
fn one_loop(graph: &BTreeMap<String, BTreeSet<String>>, circle: &[String]) -> String {
    let inside: BTreeSet<&str> = circle.iter().map(String::as_str).collect();
    // Breadth-first from the first file back to itself.
    let start = circle[0].as_str();
    let mut from: BTreeMap<&str, &str> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in graph[v]
            .iter()
            .map(String::as_str)
            .filter(|w| inside.contains(w))
        {
            if w == start {
                let mut path = vec![start, v];
                let mut at = v;
                while at != start {
                    at = from[at];
                    path.push(at);
                }
                path.reverse();
                return path.join(" → ");
            }
            if !from.contains_key(w) {
                from.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    circle.join(", ")
}

/// The levels of an acyclic `graph`: a file that imports none of the
/// others is on level 1, any other one level above the highest it imports.
fn levels(graph: &BTreeMap<String, BTreeSet<String>>) -> usize {
    fn level<'g>(
        v: &'g str,
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        memo: &mut BTreeMap<&'g str, usize>,
    ) -> usize {
        if let Some(&l) = memo.get(v) {
            return l;
        }
        let l = 1 + graph[v]
            .iter()
            .filter(|w| graph.contains_key(w.as_str()) && w.as_str() != v)
            .map(|w| level(w, graph, memo))
            .max()
            .unwrap_or(0);
        memo.insert(v, l);
        l
    }
    let mut memo = BTreeMap::new();
    graph
        .keys()
        .map(|v| level(v, graph, &mut memo))
        .max()
        .unwrap_or(0)
}

fn assert_no_circles(src: &str) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent");
    let graph = import_graph(&root.join(src));
    let edges: usize = graph.values().map(BTreeSet::len).sum();
    assert!(
        graph.len() > 5 && edges > 5,
        "{src}: {} files, {edges} imports",
        graph.len()
    );
    let loops: Vec<String> = circles(&graph)
        .iter()
        .map(|c| format!("{} (in a circle of {})", one_loop(&graph, c), c.join(", ")))
        .collect();
    assert!(
        loops.is_empty(),
        "{src}: files that import each other (move what they share to the lower file): {loops:#?}"
    );
    // The figures of the import graph, for `-- --nocapture`.
    println!(
        "{src}: {} files, {edges} imports, {} levels, 0 circles",
        graph.len(),
        levels(&graph)
    );
}

#[test]
fn the_plugin_has_no_import_circle() {
    assert_no_circles("crates/tract-onnx-scatter/src");
}

#[test]
fn the_kernels_have_no_import_circle() {
    assert_no_circles("crates/scatter-kernels/src");
}

#[test]
fn onnx_golden_has_no_import_circle() {
    assert_no_circles("crates/onnx-golden/src");
}

#[test]
fn scatter_bench_has_no_import_circle() {
    assert_no_circles("crates/scatter-bench/src");
}

#[test]
fn the_command_line_has_no_import_circle() {
    assert_no_circles("crates/tract-scatter-cli/src");
}

#[test]
fn xtask_has_no_import_circle() {
    assert_no_circles("xtask/src");
}

#[test]
fn a_circle_through_a_re_export_and_super_is_found() {
    let dir = std::env::temp_dir().join(format!("import_graph_{}", std::process::id()));
    fs::create_dir_all(dir.join("ops")).unwrap();
    let write = |file: &str, text: &str| fs::write(dir.join(file), text).unwrap();
    write(
        "lib.rs",
        "mod ops;\nmod plan;\npub use plan::Plan;\nfn f() { plan::g() }\n",
    );
    write("ops/mod.rs", "mod a;\nmod b;\npub use a::A;\n");
    // a → plan (through lib.rs's re-export) → b (a path in code) → a.
    write(
        "ops/a.rs",
        "use crate::Plan;\n/* use crate::ops::b; */\npub struct A;\n",
    );
    write(
        "plan.rs",
        "pub struct Plan(crate::ops::b::B);\n#[cfg(test)]\nmod tests { use crate::ops::A; }\n",
    );
    write(
        "ops/b.rs",
        "use super::{A, a::{self}};\npub struct B;\n// crate::plan::Plan\n",
    );
    let graph = import_graph(&dir);
    fs::remove_dir_all(&dir).unwrap();
    assert_eq!(graph["ops/a.rs"], BTreeSet::from(["plan.rs".to_string()]));
    assert_eq!(graph["plan.rs"], BTreeSet::from(["ops/b.rs".to_string()]));
    assert_eq!(graph["ops/b.rs"], BTreeSet::from(["ops/a.rs".to_string()]));
    assert!(
        graph["lib.rs"].is_empty() && graph["ops/mod.rs"].is_empty(),
        "{graph:?}"
    );
    assert_eq!(circles(&graph), [["ops/a.rs", "ops/b.rs", "plan.rs"]]);
    assert_eq!(
        one_loop(&graph, &circles(&graph)[0]),
        "ops/a.rs → plan.rs → ops/b.rs → ops/a.rs"
    );
}

/// ARCHITECTURE.md's invariant of the benchmark: `ort` (onnxruntime's and
/// PyTorch's side) reads only the cases, the server protocol, the timing
/// budget and the crate root; `report` sits on top, imported by no module.
#[test]
fn the_bench_s_ort_reads_only_case_server_timing_and_nothing_imports_report() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent");
    let graph = import_graph(&root.join("crates/scatter-bench/src"));
    let ort = &graph["ort.rs"];
    assert!(ort.contains("case.rs"), "ort.rs imports {ort:?}");
    let allowed = ["case.rs", "server.rs", "timing.rs", "lib.rs"];
    let other: Vec<&String> = ort
        .iter()
        .filter(|f| !allowed.contains(&f.as_str()))
        .collect();
    assert!(other.is_empty(), "ort.rs imports {other:?}");
    let importers: Vec<&String> = graph
        .iter()
        .filter(|(_, imports)| imports.contains("report.rs"))
        .map(|(file, _)| file)
        .collect();
    assert!(
        importers.is_empty(),
        "report.rs is imported by {importers:?}"
    );
}
