//! The public items of each published library crate, one path per line, as
//! snapshots: a change to what users can name shows in review as a change
//! to `tests/snapshots/integration__public_api__*.snap`.
//!
//! rustdoc's JSON output would give this exactly, but only on nightly; this
//! reads the source with `syn` instead. From `lib.rs` it follows `mod`
//! declarations and `pub use` re-exports and lists every item a user can
//! name: a `pub` item in a module public from the root, each path it is
//! re-exported at, the `pub` fields of public structs and the `pub`
//! functions and constants of their inherent impls (in the type's module).
//! `#[cfg(test)]` and `#[cfg(doctest)]` items are left out; `#[doc(hidden)]`
//! ones are listed, marked, since a user can still name them.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use syn::{Attribute, Item, UseTree, Visibility};

/// The most items (fields and inherent-impl members not counted) the plugin
/// may expose: issue #52's bound, so a new public item is a decision.
const PLUGIN_ITEM_BUDGET: usize = 80;

/// One module of the crate: its items.
struct Module {
    items: Vec<Item>,
}

/// What a path names, followed through `use`.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Target {
    Module(Vec<String>),
    /// An item: its module, its name and its kind (`fn`, `struct`, ...).
    Item(Vec<String>, String, &'static str),
    /// Something of another crate, spelled as written.
    External(String),
}

struct Crate {
    modules: BTreeMap<Vec<String>, Module>,
}

fn is_cfg_test(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let tokens = a.meta.require_list().map(|l| l.tokens.to_string());
            matches!(tokens.as_deref(), Ok("test") | Ok("doctest"))
        }
    })
}

fn is_doc_hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("doc")
            && a.meta
                .require_list()
                .is_ok_and(|l| l.tokens.to_string() == "hidden")
    })
}

fn path_attr(attrs: &[Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| {
        let nv = a.meta.require_name_value().ok()?;
        if !a.path().is_ident("path") {
            return None;
        }
        match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        }
    })
}

fn parse(path: &Path) -> Vec<Item> {
    let text = fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    syn::parse_file(&text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .items
}

impl Crate {
    fn read(lib: &Path) -> Crate {
        let mut modules = BTreeMap::new();
        let dir = lib.parent().unwrap().to_path_buf();
        Crate::read_module(&mut modules, vec![], parse(lib), dir);
        Crate { modules }
    }

    fn read_module(
        modules: &mut BTreeMap<Vec<String>, Module>,
        path: Vec<String>,
        items: Vec<Item>,
        child_dir: PathBuf,
    ) {
        for item in &items {
            let Item::Mod(m) = item else { continue };
            if is_cfg_test(&m.attrs) {
                continue;
            }
            let mut child = path.clone();
            child.push(m.ident.to_string());
            let name = m.ident.to_string();
            if let Some((_, inline)) = &m.content {
                let dir = child_dir.join(&name);
                Crate::read_module(modules, child, inline.clone(), dir);
                continue;
            }
            let (file, dir) = match path_attr(&m.attrs) {
                Some(p) => (child_dir.join(&p), child_dir.join(&name)),
                None if child_dir.join(format!("{name}.rs")).exists() => {
                    (child_dir.join(format!("{name}.rs")), child_dir.join(&name))
                }
                None => (child_dir.join(&name).join("mod.rs"), child_dir.join(&name)),
            };
            Crate::read_module(modules, child, parse(&file), dir);
        }
        modules.insert(path, Module { items });
    }

    /// What `name` names in module `at`, when `at` defines or imports it:
    /// in the type namespace first (modules, types), as a path does.
    fn name_in(&self, at: &[String], name: &str, seen: &mut BTreeSet<String>) -> Option<Target> {
        let module = &self.modules[at];
        let mut child = at.to_vec();
        child.push(name.to_string());
        if self.modules.contains_key(&child) {
            return Some(Target::Module(child));
        }
        for item in &module.items {
            if let Some((ident, kind)) = named(item)
                && ident == name
            {
                return Some(Target::Item(at.to_vec(), name.to_string(), kind));
            }
        }
        for item in &module.items {
            let Item::Use(u) = item else { continue };
            if is_cfg_test(&u.attrs) {
                continue;
            }
            for (segments, alias) in leaves(&u.tree, vec![]) {
                if alias == name && alias != "*" {
                    let key = format!("{at:?}::{name}");
                    if !seen.insert(key) {
                        return None;
                    }
                    return Some(self.resolve(at, &segments, seen));
                }
            }
        }
        None
    }

    /// What `segments` names, read from module `at` as a `use` path is.
    fn resolve(&self, at: &[String], segments: &[String], seen: &mut BTreeSet<String>) -> Target {
        let mut current: Vec<String> = at.to_vec();
        let mut rest = segments;
        match rest.first().map(String::as_str) {
            Some("crate") => {
                current = vec![];
                rest = &rest[1..];
            }
            Some("self") => rest = &rest[1..],
            Some("super") => {
                while rest.first().map(String::as_str) == Some("super") {
                    current.pop();
                    rest = &rest[1..];
                }
            }
            _ => {}
        }
        let external = || Target::External(segments.join("::"));
        if rest.is_empty() {
            return Target::Module(current);
        }
        let mut target = match self.name_in(&current, &rest[0], seen) {
            Some(t) => t,
            None => return external(),
        };
        for segment in &rest[1..] {
            target = match target {
                Target::Module(m) => match self.name_in(&m, segment, seen) {
                    Some(t) => t,
                    None => return external(),
                },
                // An associated item or variant of a type: not followed.
                Target::Item(..) | Target::External(_) => return external(),
            };
        }
        target
    }
}

/// The name and kind of an item that defines a name.
fn named(item: &Item) -> Option<(String, &'static str)> {
    Some(match item {
        Item::Fn(i) => (i.sig.ident.to_string(), "fn"),
        Item::Struct(i) => (i.ident.to_string(), "struct"),
        Item::Enum(i) => (i.ident.to_string(), "enum"),
        Item::Trait(i) => (i.ident.to_string(), "trait"),
        Item::Type(i) => (i.ident.to_string(), "type"),
        Item::Const(i) => (i.ident.to_string(), "const"),
        Item::Static(i) => (i.ident.to_string(), "static"),
        Item::Union(i) => (i.ident.to_string(), "union"),
        Item::Macro(i) => (i.ident.as_ref()?.to_string(), "macro"),
        _ => return None,
    })
}

fn vis_and_attrs(item: &Item) -> Option<(&Visibility, &[Attribute])> {
    Some(match item {
        Item::Fn(i) => (&i.vis, &i.attrs),
        Item::Struct(i) => (&i.vis, &i.attrs),
        Item::Enum(i) => (&i.vis, &i.attrs),
        Item::Trait(i) => (&i.vis, &i.attrs),
        Item::Type(i) => (&i.vis, &i.attrs),
        Item::Const(i) => (&i.vis, &i.attrs),
        Item::Static(i) => (&i.vis, &i.attrs),
        Item::Union(i) => (&i.vis, &i.attrs),
        Item::Mod(i) => (&i.vis, &i.attrs),
        Item::Use(i) => (&i.vis, &i.attrs),
        _ => return None,
    })
}

/// Each leaf of a use tree: its full path and the name it binds (`*` for
/// a glob).
fn leaves(tree: &UseTree, prefix: Vec<String>) -> Vec<(Vec<String>, String)> {
    let with = |s: String| {
        let mut p = prefix.clone();
        p.push(s);
        p
    };
    match tree {
        UseTree::Path(p) => leaves(&p.tree, with(p.ident.to_string())),
        UseTree::Name(n) if n.ident == "self" => {
            let alias = prefix.last().cloned().unwrap_or_default();
            vec![(prefix, alias)]
        }
        UseTree::Name(n) => vec![(with(n.ident.to_string()), n.ident.to_string())],
        UseTree::Rename(r) => vec![(with(r.ident.to_string()), r.rename.to_string())],
        UseTree::Glob(_) => vec![(prefix, "*".into())],
        UseTree::Group(g) => g
            .items
            .iter()
            .flat_map(|t| leaves(t, prefix.clone()))
            .collect(),
    }
}

/// The public API of the crate at `lib`: one line per path, sorted.
fn public_api(krate: &str, lib: &str) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let c = Crate::read(&root.join(lib));
    let mut lines = BTreeSet::new();
    let mut walked = BTreeSet::new();
    walk(&c, &[], krate, &mut lines, &mut walked);
    lines.into_iter().collect()
}

/// Lists module `at`'s public items under the public path `shown`.
fn walk(
    c: &Crate,
    at: &[String],
    shown: &str,
    lines: &mut BTreeSet<String>,
    walked: &mut BTreeSet<String>,
) {
    if !walked.insert(shown.to_string()) {
        return;
    }
    for item in &c.modules[at].items {
        let Some((vis, attrs)) = vis_and_attrs(item) else {
            continue;
        };
        let exported = matches!(vis, Visibility::Public(_))
            || matches!(item, Item::Macro(m) if m.mac.path.is_ident("macro_rules")
                && m.attrs.iter().any(|a| a.path().is_ident("macro_export")));
        if !exported || is_cfg_test(attrs) {
            continue;
        }
        let hidden = if is_doc_hidden(attrs) {
            "#[doc(hidden)] "
        } else {
            ""
        };
        match item {
            Item::Mod(m) => {
                let mut child = at.to_vec();
                child.push(m.ident.to_string());
                let path = format!("{shown}::{}", m.ident);
                lines.insert(format!("{hidden}mod {path}"));
                walk(c, &child, &path, lines, walked);
            }
            Item::Use(u) => {
                for (segments, alias) in leaves(&u.tree, vec![]) {
                    let target = c.resolve(at, &segments, &mut BTreeSet::new());
                    let path = format!("{shown}::{alias}");
                    show(c, target, &path, hidden, lines, walked);
                }
            }
            _ => {
                let (name, kind) = named(item).unwrap();
                let target = Target::Item(at.to_vec(), name.clone(), kind);
                show(
                    c,
                    target,
                    &format!("{shown}::{name}"),
                    hidden,
                    lines,
                    walked,
                );
            }
        }
    }
}

/// Lists `target` at the public path `path`, and what it makes public.
fn show(
    c: &Crate,
    target: Target,
    path: &str,
    hidden: &str,
    lines: &mut BTreeSet<String>,
    walked: &mut BTreeSet<String>,
) {
    match target {
        Target::Module(m) => {
            lines.insert(format!("{hidden}mod {path}"));
            walk(c, &m, path, lines, walked);
        }
        Target::External(from) => {
            lines.insert(format!("{hidden}use {path} (= {from})"));
        }
        Target::Item(module, name, kind) => {
            let hidden = if hidden.is_empty() && item_hidden(c, &module, &name) {
                "#[doc(hidden)] "
            } else {
                hidden
            };
            lines.insert(format!("{hidden}{kind} {path}"));
            members(c, &module, &name, path, hidden, lines);
        }
    }
}

fn item_hidden(c: &Crate, module: &[String], name: &str) -> bool {
    c.modules[module].items.iter().any(|item| {
        named(item).is_some_and(|(n, _)| n == name)
            && vis_and_attrs(item).is_some_and(|(_, a)| is_doc_hidden(a))
    })
}

/// The `pub` fields of struct `name` and the `pub` functions and constants
/// of its inherent impls in its module.
fn members(
    c: &Crate,
    module: &[String],
    name: &str,
    path: &str,
    hidden: &str,
    lines: &mut BTreeSet<String>,
) {
    for item in &c.modules[module].items {
        match item {
            Item::Struct(s) if s.ident == name => {
                for (i, field) in s.fields.iter().enumerate() {
                    if matches!(field.vis, Visibility::Public(_)) {
                        let field_name = field
                            .ident
                            .as_ref()
                            .map_or_else(|| i.to_string(), ToString::to_string);
                        lines.insert(format!("{hidden}field {path}::{field_name}"));
                    }
                }
            }
            Item::Impl(i) if i.trait_.is_none() && !is_cfg_test(&i.attrs) => {
                let syn::Type::Path(ty) = &*i.self_ty else {
                    continue;
                };
                if ty.path.segments.last().is_none_or(|s| s.ident != name) {
                    continue;
                }
                for member in &i.items {
                    let (vis, ident, kind, attrs) = match member {
                        syn::ImplItem::Fn(f) => (&f.vis, &f.sig.ident, "fn", &f.attrs),
                        syn::ImplItem::Const(k) => (&k.vis, &k.ident, "const", &k.attrs),
                        _ => continue,
                    };
                    if matches!(vis, Visibility::Public(_)) && !is_cfg_test(attrs) {
                        lines.insert(format!("{hidden}{kind} {path}::{ident}"));
                    }
                }
            }
            _ => {}
        }
    }
}

/// A line's kind and path: `fn a::b` is `("fn", "a::b")`.
fn kind_and_path(line: &str) -> (&str, &str) {
    let line = line.trim_start_matches("#[doc(hidden)] ");
    let (kind, rest) = line.split_once(' ').unwrap();
    (kind, rest.split(' ').next().unwrap())
}

/// The lines that name an item (not a field nor a type's member).
fn items(api: &[String]) -> Vec<&String> {
    let types: BTreeSet<&str> = api
        .iter()
        .map(|l| kind_and_path(l))
        .filter(|(kind, _)| matches!(*kind, "struct" | "enum" | "union"))
        .map(|(_, path)| path)
        .collect();
    api.iter()
        .filter(|l| {
            let (kind, path) = kind_and_path(l);
            let parent = &path[..path.rfind("::").unwrap()];
            kind != "field" && !(types.contains(parent) && matches!(kind, "fn" | "const"))
        })
        .collect()
}

#[test]
fn the_plugin_s_public_api_is_the_snapshot_s_and_within_its_budget() {
    let api = public_api("tract_onnx_scatter", "crates/tract-onnx-scatter/src/lib.rs");
    let items = items(&api);
    assert!(
        items.len() <= PLUGIN_ITEM_BUDGET,
        "{} public items, more than {PLUGIN_ITEM_BUDGET}:\n{}",
        items.len(),
        items
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    snap!("tract_onnx_scatter", api.join("\n"));
}

#[test]
fn the_kernels_public_api_is_the_snapshot_s() {
    let api = public_api("scatter_kernels", "crates/scatter-kernels/src/lib.rs");
    snap!("scatter_kernels", api.join("\n"));
}

#[test]
fn onnx_golden_s_public_api_is_the_snapshot_s() {
    let api = public_api("onnx_golden", "crates/onnx-golden/src/lib.rs");
    snap!("onnx_golden", api.join("\n"));
}

/// The walk itself, on a crate written here: what it must list and leave
/// out, so a mistake in it cannot hide a change to the real crates.
#[test]
fn the_walk_follows_public_modules_and_re_exports_and_skips_the_rest() {
    let dir = std::env::temp_dir().join(format!("public_api_walk_{}", std::process::id()));
    fs::create_dir_all(dir.join("inner")).unwrap();
    fs::write(
        dir.join("lib.rs"),
        "pub mod open;\nmod inner;\npub use inner::deep::Shown;\n\
         pub use inner::Renamed as Alias;\npub use std::fmt;\n\
         #[doc(hidden)]\npub use inner::Backdoor;\n\
         pub fn root() {}\nfn private() {}\n#[cfg(test)]\npub fn test_only() {}\n",
    )
    .unwrap();
    fs::write(
        dir.join("open.rs"),
        "pub struct Open { pub field: u8, kept: u8 }\n\
         impl Open { pub fn method(&self) {} pub(crate) fn internal(&self) {} }\n\
         pub(crate) fn crate_only() {}\n",
    )
    .unwrap();
    fs::write(
        dir.join("inner/mod.rs"),
        "pub mod deep;\npub enum Renamed { A }\npub struct Backdoor;\npub fn unreachable() {}\n",
    )
    .unwrap();
    fs::write(dir.join("inner/deep.rs"), "pub trait Shown {}\n").unwrap();
    let c = Crate::read(&dir.join("lib.rs"));
    let mut lines = BTreeSet::new();
    walk(&c, &[], "k", &mut lines, &mut BTreeSet::new());
    fs::remove_dir_all(&dir).unwrap();
    let api: Vec<String> = lines.into_iter().collect();
    assert_eq!(
        api,
        [
            "#[doc(hidden)] struct k::Backdoor",
            "enum k::Alias",
            "field k::open::Open::field",
            "fn k::open::Open::method",
            "fn k::root",
            "mod k::open",
            "struct k::open::Open",
            "trait k::Shown",
            "use k::fmt (= std::fmt)",
        ]
    );
    let counted: Vec<&str> = items(&api).into_iter().map(String::as_str).collect();
    assert_eq!(
        counted,
        [
            "#[doc(hidden)] struct k::Backdoor",
            "enum k::Alias",
            "fn k::root",
            "mod k::open",
            "struct k::open::Open",
            "trait k::Shown",
            "use k::fmt (= std::fmt)",
        ]
    );
}
