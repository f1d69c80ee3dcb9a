//! The house's dependencies point down (STYLE 12): no cycle between `routes`, `services`,
//! `middleware` (`auth`, `api_keys`, `csp`), `state` and `identify`, and nothing under
//! `services/` or `identify/` uses axum (they know no HTTP; routes map their errors at the
//! edge). Read from the source text, so a new `use` that breaks either rule fails here with
//! the file and line that made it.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The modules whose graph must stay acyclic.
const LAYERS: &[&str] = &["routes", "services", "middleware", "state", "identify"];
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
fn routes_services_middleware_state_and_identify_form_no_cycle() {
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

/// The Library engine's modules (`src/library/`): each file one module, named by its path
/// below the folder (`still`, `index::entries`); `mod.rs` is the folder itself.
fn library_files() -> BTreeMap<String, PathBuf> {
    let root = src().join("library");
    let mut out = BTreeMap::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let rel = p.strip_prefix(&root).unwrap().with_extension("");
                let name: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
                let name = name.join("::");
                let name = name.strip_suffix("::mod").map(str::to_owned).unwrap_or(name);
                out.insert(if name == "mod" { String::new() } else { name }, p);
            }
        }
    }
    out
}

/// A file's production code: comments blanked (see [`code_lines`]) and every item under
/// `#[cfg(test)]` left out (a test may reach anything).
fn production_lines(text: &str) -> Vec<String> {
    let lines = code_lines(text);
    let mut out = Vec::new();
    let mut skipping = false;
    let mut depth = 0i32;
    let mut opened = false;
    for line in lines {
        if !skipping && line.trim() == "#[cfg(test)]" {
            (skipping, depth, opened) = (true, 0, false);
            continue;
        }
        if skipping {
            for c in line.chars() {
                match c {
                    '{' => (depth, opened) = (depth + 1, true),
                    '}' => depth -= 1,
                    _ => {}
                }
            }
            // An item ends at its closing brace, or at a `;` when it has no body.
            if (opened && depth == 0) || (!opened && line.trim_end().ends_with(';')) {
                skipping = false;
            }
            continue;
        }
        out.push(line);
    }
    out
}

/// The paths a piece of code names from the Library's root (`crate::library::a::B`) or from
/// `levels` modules up (`super::a::{b, c::D}`), each as its segments; groups expanded.
fn library_paths(code: &str, levels: usize) -> Vec<(usize, Vec<String>)> {
    fn tokens(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut word = String::new();
        let mut chars = s.chars().peekable();
        while let Some(c) = chars.next() {
            if c.is_alphanumeric() || c == '_' {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                out.push(std::mem::take(&mut word));
            }
            match c {
                ':' if chars.peek() == Some(&':') => {
                    chars.next();
                    out.push("::".into());
                }
                '{' | '}' | ',' => out.push(c.to_string()),
                c if c.is_whitespace() => {}
                _ => break,
            }
        }
        if !word.is_empty() {
            out.push(word);
        }
        out
    }
    /// Expands `a::b::{c, d::{e}}` from `at`; returns the paths and where it stopped.
    fn expand(t: &[String], mut at: usize, prefix: Vec<String>, out: &mut Vec<Vec<String>>) -> usize {
        let mut path = prefix;
        while at < t.len() {
            match t[at].as_str() {
                "{" => {
                    at += 1;
                    while at < t.len() && t[at] != "}" {
                        at = expand(t, at, path.clone(), out);
                        if at < t.len() && t[at] == "," {
                            at += 1;
                        }
                    }
                    return at + 1;
                }
                "::" => at += 1,
                "," | "}" => break,
                word => {
                    path.push(word.to_owned());
                    at += 1;
                    if t.get(at).map(String::as_str) != Some("::") {
                        break;
                    }
                }
            }
        }
        out.push(path);
        at
    }
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    for prefix in ["crate::library::", "super::"] {
        let mut from = 0;
        while let Some(i) = code[from..].find(prefix).map(|i| i + from) {
            from = i + prefix.len();
            let before = code[..i].chars().next_back();
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') || (prefix == "super::" && before == Some(':')) {
                continue; // `mysuper::`, or the second `super::` of `super::super::`
            }
            let mut up = if prefix == "super::" { levels } else { usize::MAX };
            let mut rest = from;
            while prefix == "super::" && code[rest..].starts_with("super::") {
                up += 1;
                rest += "super::".len();
            }
            let end = (rest..bytes.len()).find(|&k| bytes[k] == b';' || bytes[k] == b'(').unwrap_or(bytes.len());
            let mut paths = Vec::new();
            expand(&tokens(&code[rest..end]), 0, Vec::new(), &mut paths);
            found.extend(paths.into_iter().filter(|p| !p.is_empty()).map(|p| (up, p)));
        }
    }
    found
}

/// Module -> (Library module it imports -> the first line that does), production code only.
/// A path is the module it names (the longest prefix that is a file); a name the Library's
/// `mod.rs` re-exports (`super::LibraryIndex`) counts as the module that defines it.
fn library_graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let files = library_files();
    let root_text = production_lines(&std::fs::read_to_string(&files[""]).unwrap()).join("\n");
    let mut reexported: BTreeMap<String, String> = BTreeMap::new();
    for (_, path) in library_paths(&root_text.replace("pub use ", "pub use super::"), 1) {
        if let [module, .., name] = path.as_slice() {
            reexported.insert(name.clone(), module.clone());
        }
    }
    let mut graph = BTreeMap::new();
    for (module, file) in &files {
        if module.is_empty() {
            continue;
        }
        let lines = production_lines(&std::fs::read_to_string(file).unwrap());
        let own: Vec<&str> = module.split("::").collect();
        let mut deps = BTreeMap::new();
        for (up, path) in library_paths(&lines.join("\n"), 0) {
            // `super::` from `a::b` is `a`; from `still` the Library's root.
            let base: Vec<&str> =
                if up == usize::MAX { Vec::new() } else { own[..own.len().saturating_sub(up + 1)].to_vec() };
            let full: Vec<&str> = base.iter().copied().chain(path.iter().map(String::as_str)).collect();
            let named =
                (1..=full.len()).rev().map(|k| full[..k].join("::")).find(|m| files.contains_key(m) && !m.is_empty());
            let target = named.or_else(|| (full.len() == 1).then(|| reexported.get(full[0]).cloned()).flatten());
            let Some(target) = target.filter(|t| t != module) else { continue };
            let first = path[0].as_str();
            let at = lines.iter().position(|l| l.contains(first)).map(|n| n + 1).unwrap_or(0);
            deps.entry(target).or_insert_with(|| format!("{}:{at}", file.strip_prefix(src()).unwrap().display()));
        }
        graph.insert(module.clone(), deps);
    }
    graph
}

#[test]
fn the_library_modules_import_each_other_in_no_circle() {
    let owned = library_graph();
    assert!(
        owned.get("still").is_some_and(|d| d.contains_key("still::query")),
        "the reader found no imports: {owned:?}"
    );
    let graph: BTreeMap<&str, BTreeMap<&str, String>> = owned
        .iter()
        .map(|(m, deps)| (m.as_str(), deps.iter().map(|(d, at)| (d.as_str(), at.clone())).collect()))
        .collect();
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> =
            cycle.windows(2).map(|w| format!("{} -> {} (src/{})", w[0], w[1], graph[w[0]][w[1]])).collect();
        panic!("the Library's modules import each other in a circle:\n  {}", steps.join("\n  "));
    }
}

/// The wings (a module's first segment: `picture`, `index`, `still`, `clip`, `audio`, and each
/// module of the root) import each other in no circle either: the arrows between the floors of
/// the engine run one way (src/library/README.md, "Where things are").
#[test]
fn the_library_wings_import_each_other_in_no_circle() {
    let wing = |m: &str| m.split("::").next().unwrap_or_default().to_owned();
    let mut wings: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (module, deps) in library_graph() {
        let arrows = wings.entry(wing(&module)).or_default();
        for (dep, at) in deps {
            if wing(&dep) != wing(&module) {
                arrows.entry(wing(&dep)).or_insert(at);
            }
        }
    }
    assert!(wings.get("still").is_some_and(|d| d.contains_key("picture")), "the reader found no wings: {wings:?}");
    let graph: BTreeMap<&str, BTreeMap<&str, String>> = wings
        .iter()
        .map(|(w, deps)| (w.as_str(), deps.iter().map(|(d, at)| (d.as_str(), at.clone())).collect()))
        .collect();
    if let Some(cycle) = find_cycle(&graph) {
        let steps: Vec<String> =
            cycle.windows(2).map(|w| format!("{} -> {} (src/{})", w[0], w[1], graph[w[0]][w[1]])).collect();
        panic!("the Library's wings import each other in a circle:\n  {}", steps.join("\n  "));
    }
}

/// Most lines of production code (not blank, not a comment, not under `#[cfg(test)]`) a file
/// of the Library may have: past it, a file holds a second idea that wants a name of its own.
const MAX_LIBRARY_FILE_LINES: usize = 500;
/// Files allowed past it, and why.
const LARGE_LIBRARY_FILES: &[(&str, &str)] = &[];

#[test]
fn no_library_file_holds_more_than_500_lines_of_production_code() {
    let mut over = Vec::new();
    for file in library_files().values() {
        let rel = file.strip_prefix(src()).unwrap().display().to_string();
        let text = std::fs::read_to_string(file).unwrap();
        let lines = production_lines(&text).iter().filter(|l| !l.trim().is_empty()).count();
        if lines > MAX_LIBRARY_FILE_LINES && !LARGE_LIBRARY_FILES.iter().any(|(f, _)| *f == rel) {
            over.push(format!("src/{rel}: {lines} lines"));
        }
    }
    assert!(over.is_empty(), "one idea a file (STYLE 12); these hold more:\n{}", over.join("\n"));
}

#[test]
fn the_library_readers_see_paths_groups_and_tests() {
    let paths = library_paths("use super::{a, b::{c, d::E}};\nlet x = crate::library::f::g(1);", 0);
    let got: Vec<(usize, String)> = paths.into_iter().map(|(u, p)| (u, p.join("::"))).collect();
    assert_eq!(got, vec![(usize::MAX, "f::g".into()), (0, "a".into()), (0, "b::c".into()), (0, "b::d::E".into())]);
    assert_eq!(library_paths("use super::super::hash::Rect;", 0), vec![(1, vec!["hash".into(), "Rect".into()])]);
    let text =
        "use super::a;\n#[cfg(test)]\nuse super::b;\nfn f() {}\n#[cfg(test)]\nmod tests {\n    use super::c;\n}\n";
    let code = production_lines(text).join("\n");
    assert!(code.contains("super::a") && !code.contains("super::b") && !code.contains("super::c"));
    assert!(code.contains("fn f()"));
}
