//! ARCHITECTURE.md's crate table stays the workspace's crate graph.
//!
//! The table between the markers `<!-- crate-table:begin … -->` and `<!-- crate-table:end -->` has one row per
//! workspace member, in an order where every crate comes after the crates it depends on, and its "depends on"
//! column lists the member's direct dependencies (rfx crates by short name, then the external crates; then
//! "build:" and "dev:" for those only used by build scripts or by tests, examples and benches), from
//! `cargo metadata --format-version 1 --no-deps`. The rows and that column are generated; the "holds" column is
//! prose written by hand and kept as it is (a new crate gets a placeholder, which fails the check until it is
//! written). `UPDATE_ARCHITECTURE=1 cargo test -p rfx-tests --test architecture` (or `make architecture`)
//! rewrites the table.
//!
//! The same metadata also shows that every library crate passes the KaTeX header to docs.rs.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const BEGIN: &str = "<!-- crate-table:begin";
const END: &str = "<!-- crate-table:end -->";
const PLACEHOLDER: &str = "(to be described: what this crate holds)";
const FIX: &str =
    "UPDATE_ARCHITECTURE=1 cargo test -p rfx-tests --test architecture   (or: make architecture)";

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// One workspace member as the table shows it.
struct Member {
    name: String,
    /// Folder relative to the workspace root.
    dir: String,
    binaries: Vec<String>,
    has_lib: bool,
    /// Direct dependencies by kind: "" (normal), "dev", "build".
    deps: BTreeMap<String, BTreeSet<String>>,
    docs_rs_args: Vec<String>,
}

/// The standard output of `cargo ARGS` run in `root`; panics with cargo's stderr when it fails.
fn cargo_stdout(root: &Path, args: &[&str]) -> Vec<u8> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(args)
        .current_dir(root)
        .output()
        .expect("cargo runs");
    assert!(
        out.status.success(),
        "cargo {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn metadata(root: &Path) -> Value {
    let out = cargo_stdout(root, &["metadata", "--format-version", "1", "--no-deps"]);
    serde_json::from_slice(&out).expect("cargo metadata prints JSON")
}

/// The workspace members in `[workspace] members` order.
fn members(root: &Path, meta: &Value) -> Vec<Member> {
    let packages = meta["packages"].as_array().expect("packages");
    let ids = meta["workspace_members"]
        .as_array()
        .expect("workspace_members");
    ids.iter()
        .map(|id| {
            let p = packages
                .iter()
                .find(|p| p["id"] == *id)
                .expect("member among packages");
            let manifest = PathBuf::from(p["manifest_path"].as_str().expect("manifest_path"));
            let dir = manifest.parent().expect("manifest folder");
            let dir = dir
                .strip_prefix(root)
                .unwrap_or(dir)
                .to_string_lossy()
                .replace('\\', "/");
            let mut deps: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for d in p["dependencies"].as_array().expect("dependencies") {
                let kind = d["kind"].as_str().unwrap_or("").to_string();
                let name = d["rename"]
                    .as_str()
                    .or(d["name"].as_str())
                    .expect("dependency name");
                deps.entry(kind).or_default().insert(name.to_string());
            }
            let targets = p["targets"].as_array().expect("targets");
            let has_kind = |t: &Value, k: &str| {
                t["kind"]
                    .as_array()
                    .is_some_and(|ks| ks.iter().any(|x| x == k))
            };
            Member {
                name: p["name"].as_str().expect("name").to_string(),
                dir,
                binaries: targets
                    .iter()
                    .filter(|t| has_kind(t, "bin"))
                    .map(|t| t["name"].as_str().expect("target name").to_string())
                    .collect(),
                has_lib: targets.iter().any(|t| has_kind(t, "lib")),
                deps,
                docs_rs_args: p["metadata"]["docs"]["rs"]["rustdoc-args"]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(String::from))
                            .collect()
                    })
                    .unwrap_or_default(),
            }
        })
        .collect()
}

/// Members ordered so that each comes after its workspace dependencies (of any kind), ties in member order.
fn dependency_order(members: &[Member]) -> Result<Vec<&Member>, String> {
    let names: BTreeSet<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let internal = |m: &Member| -> BTreeSet<String> {
        m.deps
            .values()
            .flatten()
            .filter(|d| names.contains(d.as_str()) && **d != m.name)
            .cloned()
            .collect()
    };
    let mut placed: Vec<&Member> = Vec::new();
    while placed.len() < members.len() {
        let next = members.iter().find(|m| {
            !placed.iter().any(|p| p.name == m.name)
                && internal(m)
                    .iter()
                    .all(|d| placed.iter().any(|p| &p.name == d))
        });
        match next {
            Some(m) => placed.push(m),
            None => {
                let rest: Vec<&str> = members
                    .iter()
                    .filter(|m| !placed.iter().any(|p| p.name == m.name))
                    .map(|m| m.name.as_str())
                    .collect();
                return Err(format!(
                    "the workspace crates {rest:?} depend on each other in a circle"
                ));
            }
        }
    }
    Ok(placed)
}

fn short(name: &str) -> &str {
    name.strip_prefix("rfx-").unwrap_or(name)
}

/// "core, sampling, rayon, statrs": workspace crates in table order, then the external crates by name.
fn dep_list(deps: &BTreeSet<String>, order: &[&Member]) -> String {
    let mut out: Vec<String> = order
        .iter()
        .filter(|m| deps.contains(&m.name))
        .map(|m| short(&m.name).into())
        .collect();
    out.extend(
        deps.iter()
            .filter(|d| !order.iter().any(|m| &m.name == *d))
            .cloned(),
    );
    out.join(", ")
}

fn depends_on_cell(m: &Member, order: &[&Member]) -> String {
    let empty = BTreeSet::new();
    let normal = m.deps.get("").unwrap_or(&empty);
    let mut parts = vec![dep_list(normal, order)];
    for (kind, label) in [("build", "build"), ("dev", "dev")] {
        let only: BTreeSet<String> = m
            .deps
            .get(kind)
            .unwrap_or(&empty)
            .difference(normal)
            .cloned()
            .collect();
        if !only.is_empty() {
            parts.push(format!("{label}: {}", dep_list(&only, order)));
        }
    }
    parts.retain(|p| !p.is_empty());
    parts.join("; ")
}

fn crate_cell(m: &Member) -> String {
    let bins = match m.binaries.as_slice() {
        [] => String::new(),
        [one] => format!(", binary `{one}`"),
        many => format!(
            ", binaries {}",
            many.iter()
                .map(|b| format!("`{b}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("`{}` (`{}`{bins})", m.dir, m.name)
}

/// The cells of a Markdown table row, split at unescaped `|`.
fn cells(row: &str) -> Vec<String> {
    let inner = row.trim().trim_start_matches('|').trim_end_matches('|');
    let mut out = vec![String::new()];
    let mut prev = ' ';
    for c in inner.chars() {
        if c == '|' && prev != '\\' {
            out.push(String::new());
        } else {
            out.last_mut().expect("non-empty").push(c);
        }
        prev = c;
    }
    out.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The package name in a row's first cell, "`crates/core` (`rfx-core`)".
fn row_package(first_cell: &str) -> Option<String> {
    let start = first_cell.find("(`")? + 2;
    let len = first_cell[start..].find('`')?;
    Some(first_cell[start..start + len].to_string())
}

/// (text before the table including the begin marker line, the table lines, text from the end marker on).
fn split_document(doc: &str) -> (String, Vec<String>, String) {
    let begin = doc
        .find(BEGIN)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{BEGIN} … -->` marker"));
    let table_start = begin
        + doc[begin..]
            .find("-->")
            .expect("the begin marker is closed by -->")
        + 3;
    let end = doc
        .find(END)
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `{END}` marker"));
    assert!(
        end > table_start,
        "ARCHITECTURE.md: `{END}` comes before the begin marker"
    );
    let table = doc[table_start..end]
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    (
        doc[..table_start].to_string(),
        table,
        doc[end..].to_string(),
    )
}

/// The table generated from the metadata, with the "holds" cells of `current` (by package name).
fn generate(order: &[&Member], current: &[String]) -> Vec<String> {
    let holds: BTreeMap<String, String> = current
        .iter()
        .skip(2)
        .filter_map(|row| {
            let c = cells(row);
            Some((row_package(c.first()?)?, c.get(1)?.clone()))
        })
        .collect();
    let mut table = vec![
        "| crate | holds | depends on |".to_string(),
        "|---|---|---|".to_string(),
    ];
    for m in order {
        let hold = holds
            .get(&m.name)
            .cloned()
            .unwrap_or_else(|| PLACEHOLDER.to_string());
        table.push(format!(
            "| {} | {} | {} |",
            crate_cell(m),
            hold,
            depends_on_cell(m, order)
        ));
    }
    table
}

#[test]
fn architecture_crate_table_is_generated_from_cargo_metadata() {
    let root = workspace_root();
    let meta = metadata(&root);
    let members = members(&root, &meta);
    let order = dependency_order(&members).unwrap_or_else(|e| panic!("{e}"));

    let path = root.join("ARCHITECTURE.md");
    let doc = std::fs::read_to_string(&path).expect("ARCHITECTURE.md readable");
    let (head, current, tail) = split_document(&doc);
    let generated = generate(&order, &current);

    if std::env::var_os("UPDATE_ARCHITECTURE").is_some() {
        let new = format!("{head}\n{}\n{tail}", generated.join("\n"));
        if new != doc {
            std::fs::write(&path, new).expect("ARCHITECTURE.md writable");
            eprintln!("ARCHITECTURE.md: crate table rewritten");
        }
    } else if generated != current {
        let diff: Vec<String> = (0..generated.len().max(current.len()))
            .filter_map(|i| {
                let (g, c) = (generated.get(i), current.get(i));
                if g == c {
                    return None;
                }
                let (gc, cc) = (g.map(|r| cells(r)), c.map(|r| cells(r)));
                match (gc, cc) {
                    // Same crate and prose: show the "depends on" cells only.
                    (Some(gc), Some(cc))
                        if gc.len() == 3 && cc.len() == 3 && gc[..2] == cc[..2] =>
                    {
                        Some(format!(
                            "  {}: depends on\n    now:       {}\n    generated: {}",
                            gc[0], cc[2], gc[2]
                        ))
                    }
                    _ => Some(format!(
                        "  row {i}:\n    now:       {}\n    generated: {}",
                        c.map_or("-", |s| s),
                        g.map_or("-", |s| s)
                    )),
                }
            })
            .collect();
        panic!(
            "ARCHITECTURE.md's crate table differs from the workspace (cargo metadata):\n{}\n\nRegenerate it with\n  {FIX}\nand review the diff.",
            diff.join("\n")
        );
    }
    let undescribed: Vec<&str> = order
        .iter()
        .filter(|m| {
            generated
                .iter()
                .any(|r| r.contains(&crate_cell(m)) && r.contains(PLACEHOLDER))
        })
        .map(|m| m.name.as_str())
        .collect();
    assert!(
        undescribed.is_empty(),
        "ARCHITECTURE.md: write what {undescribed:?} hold(s) in the crate table's \"holds\" column (it says {PLACEHOLDER:?})"
    );
}

#[test]
fn every_library_crate_gives_docs_rs_the_katex_header() {
    let root = workspace_root();
    let members = members(&root, &metadata(&root));
    for m in members
        .iter()
        .filter(|m| m.has_lib && m.name != "rfx-tests")
    {
        assert!(
            m.docs_rs_args.windows(2).any(|w| w[0] == "--html-in-header" && w[1] == "katex-header.html"),
            "{}/Cargo.toml: add\n[package.metadata.docs.rs]\nrustdoc-args = [\"--html-in-header\", \"katex-header.html\"]\n\
             so that docs.rs typesets its formulas",
            m.dir
        );
        let header = root.join(&m.dir).join("katex-header.html");
        assert!(
            std::fs::read_to_string(&header).is_ok_and(|h| h.contains("renderMathInElement")),
            "{}: missing; link it to the workspace's header: ln -s {}katex-header.html {}/",
            header.display(),
            "../".repeat(m.dir.split('/').count()),
            m.dir
        );
    }
}

#[test]
fn table_helpers() {
    assert_eq!(
        cells("| `a` (`rfx-a`) | x \\| y | core, z |"),
        vec!["`a` (`rfx-a`)", "x \\| y", "core, z"]
    );
    assert_eq!(
        row_package("`crates/core` (`rfx-core`)").as_deref(),
        Some("rfx-core")
    );
    let m = |name: &str, deps: &[&str]| Member {
        name: name.into(),
        dir: name.into(),
        binaries: vec![],
        has_lib: true,
        deps: BTreeMap::from([(String::new(), deps.iter().map(|d| d.to_string()).collect())]),
        docs_rs_args: vec![],
    };
    let ms = [m("rfx-b", &["rfx-a", "zeta", "alpha"]), m("rfx-a", &[])];
    let order = dependency_order(&ms).expect("no circle");
    assert_eq!(
        order.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(),
        ["rfx-a", "rfx-b"]
    );
    assert_eq!(depends_on_cell(order[1], &order), "a, alpha, zeta");
    let circle = [m("rfx-a", &["rfx-b"]), m("rfx-b", &["rfx-a"])];
    assert!(dependency_order(&circle).is_err());
}

/// Each package of a `cargo tree -e features` listing with the feature sets it is built with (a package built
/// for the host, by build scripts and proc-macros, and for the target can appear with two sets).
fn resolved_features(root: &Path, args: &[&str]) -> BTreeMap<String, BTreeSet<String>> {
    let mut full = vec!["tree"];
    full.extend_from_slice(args);
    full.extend(["--locked", "--offline", "--prefix", "none", "-f", "{p} {f}"]);
    let out = cargo_stdout(root, &full);
    let mut map: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for line in String::from_utf8_lossy(&out).lines() {
        let words: Vec<&str> = line
            .split_whitespace()
            .filter(|w| !w.starts_with('('))
            .collect();
        if let [name, version, rest @ ..] = words.as_slice() {
            let features = rest.first().copied().unwrap_or("").to_string();
            map.entry(format!("{name} {version}"))
                .or_default()
                .insert(features);
        }
    }
    map
}

/// maturin builds `rfx-python` alone, so Cargo resolves features over that package's graph only. Every
/// dependency it shares with the workspace must be built with a feature set the workspace build (`cargo test
/// --workspace`, which `make test` runs first) also uses: otherwise that dependency and every rfx crate above
/// it are compiled twice (3.4 minutes of CI on 2 cores). pyo3 and numpy are the wheel's own (pyo3's
/// `extension-module` feature is turned on only by maturin). A failure names the dependency to list, with the
/// workspace's features, in the unification block of `crates/python/Cargo.toml`.
#[test]
fn python_build_shares_features() {
    let root = workspace_root();
    let workspace = resolved_features(&root, &["--workspace", "-e", "all"]);
    let python = resolved_features(
        &root,
        &[
            "-p",
            "rfx-python",
            "--features",
            "extension-module",
            "-e",
            "normal,build",
        ],
    );
    let own = [
        "pyo3",
        "pyo3-ffi",
        "pyo3-build-config",
        "pyo3-macros",
        "pyo3-macros-backend",
        "numpy",
    ];
    let mut differ = Vec::new();
    for (package, sets) in &python {
        let name = package.split(' ').next().unwrap_or("");
        if name.starts_with("rfx-") || own.contains(&name) {
            continue;
        }
        let shared = workspace.get(package);
        for set in sets {
            if !shared.is_some_and(|s| s.contains(set)) {
                differ.push(format!(
                    "{package}: maturin's features [{set}], the workspace's {:?}",
                    shared
                        .map(|s| s.iter().collect::<Vec<_>>())
                        .unwrap_or_default()
                ));
            }
        }
    }
    assert!(
        differ.is_empty(),
        "the wheel's build would recompile these dependencies (and the rfx crates above them); list them \
         with the workspace's features in crates/python/Cargo.toml's unification block:\n{}",
        differ.join("\n")
    );
}

/// A package given its own optimisation level in the dev profile (`[profile.dev.package.<name>]` of the
/// workspace's Cargo.toml) must not be a build script's dependency: rustls, reached through openblas-build's
/// ureq, got another build in the wheel's build (maturin, where it is only that) than in `cargo test`'s, so
/// `make python` rebuilt openblas-src and every rfx crate after the tests (2 minutes of CI).
#[test]
fn dev_profile_overrides_name_no_build_dependency() {
    let root = workspace_root();
    let manifest =
        std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let names: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.trim().strip_prefix("[profile.dev.package."))
        .filter_map(|l| l.strip_suffix(']'))
        .map(|n| n.trim_matches('"'))
        .collect();
    assert!(
        !names.is_empty(),
        "the dev profile overrides some packages (Cargo.toml)"
    );
    let mut built_for_scripts = Vec::new();
    for name in &names {
        let tree = cargo_stdout(
            &root,
            &[
                "tree",
                "--workspace",
                "--locked",
                "-e",
                "normal,build",
                "-i",
                name,
            ],
        );
        if String::from_utf8_lossy(&tree).contains("[build-dependencies]") {
            built_for_scripts.push(*name);
        }
    }
    assert!(
        built_for_scripts.is_empty(),
        "dev-profile overrides of build dependencies (take them out of Cargo.toml): {built_for_scripts:?}"
    );
}
