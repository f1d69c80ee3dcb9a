//! The house's dependencies point down (STYLE 12): no cycle between `routes`, `services`,
//! `auth`, `state` and `identify`, and nothing under `services/` or `identify/` uses axum
//! (they know no HTTP; routes map their errors at the edge). Read from the source text, so
//! a new `use` that breaks either rule fails here with the file and line that made it.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules whose graph must stay acyclic.
const LAYERS: &[&str] = &["routes", "services", "auth", "state", "identify"];
/// The modules that must not use axum.
const NO_HTTP: &[&str] = &["services", "identify"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `src/{module}.rs` and every file below `src/{module}/`.
fn module_files(module: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "rs") {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    let file = src().join(format!("{module}.rs"));
    if file.exists() {
        out.push(file);
    }
    walk(&src().join(module), &mut out);
    out.sort();
    out
}

/// The code of a file, line by line, with comments blanked (doc comments may name any path).
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            if t.starts_with("//") { String::new() } else { l.to_owned() }
        })
        .collect()
}

/// The top-level modules a piece of code names through `crate::`: `crate::auth::X`,
/// `crate::{auth, state::AppState}` (a group may span lines, so the text is read whole).
fn crate_references(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().next_back();
        rest = &rest[i + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `mycrate::`, not ours
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level names of the group: the first segment of each item at depth 0.
            let mut depth = 0;
            let mut item_start = true;
            let mut name = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if depth == 0 && item_start && (c.is_alphanumeric() || c == '_') => name.push(c),
                    _ if depth == 0 && item_start && !name.is_empty() => {
                        found.insert(std::mem::take(&mut name));
                        item_start = false;
                    }
                    _ => {}
                }
            }
            if !name.is_empty() {
                found.insert(name);
            }
        } else {
            let name: String = rest.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            found.insert(name);
        }
    }
    found
}

/// Module -> (module it uses -> the first place that uses it).
fn layer_graph() -> BTreeMap<&'static str, BTreeMap<&'static str, String>> {
    let mut graph = BTreeMap::new();
    for &module in LAYERS {
        let mut deps = BTreeMap::new();
        for file in module_files(module) {
            let lines = code_lines(&std::fs::read_to_string(&file).unwrap());
            let rel = file.strip_prefix(src()).unwrap().display().to_string();
            // The whole file at once: a `use crate::{..}` group may span lines.
            for dep in crate_references(&lines.join("\n")) {
                let Some(&d) = LAYERS.iter().find(|l| **l == dep) else { continue };
                if d == module {
                    continue;
                }
                let direct = format!("crate::{d}");
                let at = lines.iter().position(|l| l.contains(&direct)).map(|n| format!(":{}", n + 1));
                deps.entry(d).or_insert_with(|| format!("src/{rel}{}", at.unwrap_or_default()));
            }
        }
        graph.insert(module, deps);
    }
    graph
}

/// A cycle of the graph as the path that closes it (`a -> b -> a`), if there is one.
fn find_cycle<'a>(graph: &BTreeMap<&'a str, BTreeMap<&'a str, String>>) -> Option<Vec<&'a str>> {
    fn visit<'a>(
        node: &'a str,
        graph: &BTreeMap<&'a str, BTreeMap<&'a str, String>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<&'a str>> {
        if let Some(at) = path.iter().position(|n| *n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node);
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node);
        for next in graph.get(node).into_iter().flat_map(|d| d.keys()) {
            if let Some(c) = visit(next, graph, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node);
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|n| visit(n, graph, &mut Vec::new(), &mut done))
}

#[test]
fn routes_services_auth_state_and_identify_form_no_cycle() {
    let graph = layer_graph();
    assert!(!graph["routes"].is_empty(), "the reader found no imports at all: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> =
            cycle.windows(2).map(|w| format!("{} -> {} ({})", w[0], w[1], graph[w[0]][w[1]])).collect();
        panic!("the modules depend on each other in a circle:\n  {}", steps.join("\n  "));
    }
}

#[test]
fn services_and_identify_know_no_axum() {
    let mut found = Vec::new();
    for &module in NO_HTTP {
        for file in module_files(module) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (n, line) in code_lines(&text).iter().enumerate() {
                let mentions = line
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .any(|word| word == "axum" || word == "axum_extra" || word == "askama_web");
                if mentions {
                    found.push(format!("{}:{}: {}", file.display(), n + 1, line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "HTTP belongs to routes/, not here:\n{}", found.join("\n"));
}

/// The HTTP layers (`error` turns errors into responses and imports axum): code under
/// `services/` and `identify/` names the plain `error_code` instead.
const HTTP_MODULES: &[&str] = &["error", "routes", "auth", "csp", "app"];

#[test]
fn services_and_identify_reach_no_http_module() {
    let mut found = Vec::new();
    for &module in NO_HTTP {
        for file in module_files(module) {
            let code = code_lines(&std::fs::read_to_string(&file).unwrap()).join("\n");
            for dep in crate_references(&code) {
                if HTTP_MODULES.contains(&dep.as_str()) {
                    found.push(format!("{} uses crate::{dep}", file.display()));
                }
            }
        }
    }
    assert!(found.is_empty(), "services/ and identify/ must not lean on the HTTP layers:\n{}", found.join("\n"));
}

#[test]
fn the_readers_see_groups_and_cycles() {
    let refs = crate_references("use crate::{auth::MaybeUser, state::{AppState, X}, error};");
    assert_eq!(refs, BTreeSet::from(["auth".to_owned(), "error".to_owned(), "state".to_owned()]));
    assert_eq!(crate_references("let x = crate::routes::y(); mycrate::state::z();"), BTreeSet::from(["routes".into()]));
    let mut g: BTreeMap<&str, BTreeMap<&str, String>> = BTreeMap::new();
    g.entry("a").or_default().insert("b", "a.rs:1".into());
    g.entry("b").or_default().insert("c", "b.rs:1".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c").or_default().insert("a", "c.rs:1".into());
    assert_eq!(find_cycle(&g), Some(vec!["a", "b", "c", "a"]));
}
