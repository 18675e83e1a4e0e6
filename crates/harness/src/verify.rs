//! `rfx verify`: recomputes a seeded, stratified sample of the committed cells of every experiment within a
//! time budget and compares them with the committed rows ([`crate::compare`]), so that a change of the code
//! that moves a committed number is caught in minutes instead of the hours a full reproduction takes.
//!
//! **Plan.** The budget is shared among the experiments by water-filling (an experiment whose cells all fit
//! in less than its share gives the rest to the others). Within an experiment, cells are grouped into
//! strata by their text parameters (method, data set, kernel…; the first parameter when there is none);
//! strata are visited round-robin, cheapest first, each round drawing one cell (from the seeded stream
//! `(seed, "verify;<experiment>")`) among those that still fit. A cell's cost is its recorded `time_s`
//! (divided by the threads when cells run in parallel) plus, for the first cell of a shared computation
//! ([`crate::kind::Runner::shared_group`]), that computation's cost, estimated as the group's largest
//! recorded time less its median (the one cell of the original run that computed it paid for it). An
//! experiment whose every cell costs more than its share is represented by its cheapest cell, and the
//! report says so. Every later experiment's cheapest check is kept back from the equal share of what is
//! left. Experiments are planned in order of that cheapest check (then of need), and costs are
//! scaled by this machine's speed against the recorded times, measured on the experiments run so far: an
//! experiment whose sample would run more than `OVERRUN_S` past the budget left is not checked, and the
//! report says so — on a machine slower than the one that recorded the cells, the most expensive checks
//! are dropped instead of the budget being overrun several times.
//!
//! **Run.** The sample runs through the ordinary runner into a temporary tree (nothing is written into the
//! results tree but `verification.md`), each experiment with a deadline after which no further cell starts.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rand::seq::SliceRandom;

use crate::compare::{compare_rows, comparison_table, diff_details, ExperimentComparison};
use crate::config::Value;
use crate::error::AppError;
use crate::folder::ResultsFolder;
use crate::io::write_atomic;
use crate::kind::Kinds;
use crate::results::{Layout, Row};
use crate::run::{run, RunOptions};
use crate::spec::Spec;

/// Settings of `rfx verify`.
#[derive(Debug, Clone)]
pub struct VerifyOptions {
    /// The results tree whose cells are checked.
    pub root: PathBuf,
    /// Wall-time budget in seconds.
    pub budget_s: f64,
    /// Seed of the sample.
    pub seed: u64,
    /// Worker threads (`None`: all cores).
    pub threads: Option<usize>,
    /// Where the table is written (default `<root>/verification.md`).
    pub report: PathBuf,
    /// Check only these experiments (empty: all).
    pub experiments: Vec<String>,
}

/// Fixed cost assumed per experiment for loading its data and starting its run, in seconds.
const SETUP_S: f64 = 1.0;
/// Smallest cost of a cell, in seconds (recorded times of skipped cells can be 0).
const MIN_CELL_S: f64 = 0.005;
/// Planned seconds run before this machine's speed against the recorded times is trusted.
const SPEED_AFTER_S: f64 = 20.0;
/// An experiment whose sample would need more than the budget left plus this many seconds (at the measured
/// speed) is not checked, so that on a slower machine than the one that recorded the cells one experiment
/// whose cheapest cell is long cannot take the run far past its budget.
const OVERRUN_S: f64 = 15.0;

/// One experiment's sample.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Experiment name.
    pub name: String,
    /// Keys of the sampled cells, in sweep order.
    pub keys: Vec<String>,
    /// Strata of the experiment, and how many have a sampled cell.
    pub strata: usize,
    /// Strata represented in the sample.
    pub strata_sampled: usize,
    /// Planned seconds.
    pub cost_s: f64,
    /// The budget share of this experiment, in seconds.
    pub share_s: f64,
    /// Why the sample is thin, when it is.
    pub note: String,
}

struct Candidate {
    key: String,
    stratum: String,
    group: Option<String>,
    own_s: f64,
}

/// The cost model of an experiment's cells from their recorded rows.
fn candidates(
    spec: &Spec,
    layout: &Layout,
    rows: &[Row],
    threads: usize,
) -> (Vec<Candidate>, HashMap<String, f64>) {
    let by_key: HashMap<String, &Row> = rows.iter().map(|r| (r.key(layout), r)).collect();
    let divisor = if spec.parallel_cells {
        threads.max(1) as f64
    } else {
        1.0
    };
    let mut out = Vec::new();
    let mut group_times: HashMap<String, Vec<f64>> = HashMap::new();
    for cell in spec.cells() {
        let Some(row) = by_key.get(&cell.key()) else {
            continue;
        };
        let t = row.time_s(layout);
        let t = if t.is_finite() {
            t.max(MIN_CELL_S)
        } else {
            MIN_CELL_S
        };
        let text_params: Vec<String> = cell
            .params
            .iter()
            .filter(|(k, v)| k != "seed" && matches!(v, Value::Str(_)))
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let stratum = if text_params.is_empty() {
            cell.params
                .first()
                .map(|(k, v)| format!("{k}={v}"))
                .unwrap_or_default()
        } else {
            text_params.join(";")
        };
        let group = spec.runner.shared_group(&cell);
        if let Some(g) = &group {
            group_times.entry(g.clone()).or_default().push(t);
        }
        out.push(Candidate {
            key: cell.key(),
            stratum,
            group,
            own_s: t / divisor,
        });
    }
    // A group's setup: its largest time less its median; the cell that paid it costs the median itself.
    let mut setup = HashMap::new();
    let mut median_of = HashMap::new();
    for (g, mut ts) in group_times {
        ts.sort_by(f64::total_cmp);
        let median = ts[ts.len() / 2];
        let max = ts[ts.len() - 1];
        setup.insert(g.clone(), max - median);
        median_of.insert(g, (median, max));
    }
    for c in &mut out {
        if let Some((median, max)) = c.group.as_ref().and_then(|g| median_of.get(g)) {
            if c.own_s * divisor >= *max && max > median {
                c.own_s = median / divisor;
            }
        }
    }
    (out, setup)
}

/// Chooses the sample of one experiment within `share_s` seconds.
fn plan_experiment(
    spec: &Spec,
    layout: &Layout,
    rows: &[Row],
    share_s: f64,
    seed: u64,
    threads: usize,
) -> Plan {
    let (cands, setup) = candidates(spec, layout, rows, threads);
    let mut rng = rfx_core::rng_stream(seed, &format!("verify;{}", spec.name));
    let mut strata: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        match strata.iter_mut().find(|(s, _)| *s == c.stratum) {
            Some((_, v)) => v.push(i),
            None => strata.push((c.stratum.clone(), vec![i])),
        }
    }
    let first_cost = |c: &Candidate| c.own_s + c.group.as_ref().map_or(0.0, |g| setup[g]);
    for (_, v) in &mut strata {
        v.shuffle(&mut rng);
    }
    // Cheapest strata first.
    strata.sort_by(|a, b| {
        let ca =
            a.1.iter()
                .map(|&i| first_cost(&cands[i]))
                .fold(f64::INFINITY, f64::min);
        let cb =
            b.1.iter()
                .map(|&i| first_cost(&cands[i]))
                .fold(f64::INFINITY, f64::min);
        ca.total_cmp(&cb)
    });
    let mut paid: HashSet<String> = HashSet::new();
    let mut chosen: Vec<usize> = Vec::new();
    let mut taken = vec![false; cands.len()];
    let mut left = share_s - SETUP_S;
    let cost = |c: &Candidate, paid: &HashSet<String>| {
        c.own_s
            + c.group
                .as_ref()
                .filter(|g| !paid.contains(*g))
                .map_or(0.0, |g| setup[g])
    };
    loop {
        let mut progress = false;
        for (_, members) in &strata {
            let pick = members
                .iter()
                .copied()
                .find(|&i| !taken[i] && cost(&cands[i], &paid) <= left);
            if let Some(i) = pick {
                left -= cost(&cands[i], &paid);
                if let Some(g) = &cands[i].group {
                    paid.insert(g.clone());
                }
                taken[i] = true;
                chosen.push(i);
                progress = true;
            }
        }
        if !progress {
            break;
        }
    }
    let mut note = String::new();
    if chosen.is_empty() {
        if let Some(i) = (0..cands.len())
            .min_by(|&a, &b| first_cost(&cands[a]).total_cmp(&first_cost(&cands[b])))
        {
            note = format!(
                "every cell costs more than the {:.0} s share; only the cheapest ({:.0} s recorded) is checked",
                share_s,
                first_cost(&cands[i])
            );
            left -= first_cost(&cands[i]);
            chosen.push(i);
        }
    }
    let strata_sampled = strata
        .iter()
        .filter(|(_, m)| m.iter().any(|&i| taken[i]) || m.iter().any(|&i| chosen.contains(&i)))
        .count();
    if note.is_empty() && strata_sampled < strata.len() {
        note = format!(
            "{} of {} strata: the others' cells do not fit the {:.0} s share",
            strata_sampled,
            strata.len(),
            share_s
        );
    }
    chosen.sort_unstable();
    Plan {
        name: spec.name.clone(),
        keys: chosen.iter().map(|&i| cands[i].key.clone()).collect(),
        strata: strata.len(),
        strata_sampled,
        cost_s: share_s - left,
        share_s,
        note,
    }
}

/// The total recorded cost of all of an experiment's cells (the most it can use of a budget).
fn full_cost(spec: &Spec, layout: &Layout, rows: &[Row], threads: usize) -> f64 {
    let (cands, setup) = candidates(spec, layout, rows, threads);
    SETUP_S + cands.iter().map(|c| c.own_s).sum::<f64>() + setup.values().sum::<f64>()
}

struct Loaded {
    spec: Spec,
    layout: Layout,
    rows: Vec<Row>,
    stale: Option<String>,
}

/// `rfx verify`: plans, runs and compares; prints and writes the table; an error (exit 1) on a difference.
pub fn verify(opts: &VerifyOptions, kinds: &Kinds) -> Result<(), AppError> {
    let started = Instant::now();
    let threads = opts
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let mut loaded = Vec::new();
    for (name, folder) in crate::compare::experiment_dirs(&opts.root)? {
        if !opts.experiments.is_empty() && !opts.experiments.contains(&name) {
            continue;
        }
        let crate::folder::Loaded {
            spec,
            layout,
            rows,
            fingerprint: fp,
        } = folder.load(kinds)?;
        let stale = (fp != spec.fingerprint()).then(|| {
            format!(
                "its cells were computed with fingerprint {fp}, but today's code gives its config.toml {}: \
                 recompute it (`rfx run --fresh experiments/{name}.toml`)",
                spec.fingerprint()
            )
        });
        loaded.push(Loaded {
            spec,
            layout,
            rows,
            stale,
        });
    }
    for name in &opts.experiments {
        if !loaded.iter().any(|l| &l.spec.name == name) {
            return Err(AppError::usage(format!(
                "rfx verify: no experiment `{name}` under {}",
                opts.root.display()
            )));
        }
    }
    if loaded.is_empty() {
        return Err(AppError::usage(format!(
            "{}: no experiment results to verify",
            opts.root.display()
        )));
    }

    // Experiments in order of their cheapest check, then of need, each planned when its turn comes with an
    // equal share of the budget left: one that needs less than its share, or runs faster than recorded,
    // leaves the rest to those after it (water-filling with the measured times).
    let needs: Vec<f64> = loaded
        .iter()
        .map(|l| full_cost(&l.spec, &l.layout, &l.rows, threads))
        .collect();
    // the least an experiment's check costs: its cheapest cell (the plan of a zero share)
    let floors: Vec<f64> = loaded
        .iter()
        .map(|l| plan_experiment(&l.spec, &l.layout, &l.rows, 0.0, opts.seed, threads).cost_s)
        .collect();
    // cheapest check first, then least need: an experiment that cannot be checked within what is left is one
    // of the most expensive to check, and every cheaper one has been
    let mut order: Vec<usize> = (0..loaded.len()).collect();
    order.sort_by(|&a, &b| {
        floors[a]
            .total_cmp(&floors[b])
            .then(needs[a].total_cmp(&needs[b]))
    });
    println!(
        "rfx verify: {} experiments, {} committed cells ({:.1} h of recorded cell time), budget {:.0} s",
        loaded.len(),
        loaded.iter().map(|l| l.rows.len()).sum::<usize>(),
        needs.iter().sum::<f64>() / 3600.0,
        opts.budget_s
    );
    let work = std::env::temp_dir().join(format!("rfx-verify-{}", std::process::id()));
    let _cleanup = RemoveOnDrop(work.clone());
    let mut results: Vec<(ExperimentComparison, Plan, usize, String)> = Vec::new();
    // identical / within tolerance / different by the machine (kind and kernels) that computed the committed
    // cells, each recomputed on this machine
    let here = crate::run::cpu_field(kinds.kernels_name());
    let mut by_machine: std::collections::BTreeMap<String, [usize; 3]> = Default::default();
    // This machine's wall seconds per recorded second, from the experiments run so far (1 until
    // SPEED_AFTER_S recorded seconds have run): shares, deadlines and the overrun test are in this machine's
    // time. The cells may have been recorded on a faster or slower machine, or on a loaded one.
    let (mut ran_wall, mut ran_planned) = (0.0f64, 0.0f64);
    for (k, &i) in order.iter().enumerate() {
        let l = &loaded[i];
        let speed = if ran_planned >= SPEED_AFTER_S {
            (ran_wall / ran_planned).clamp(0.25, 20.0)
        } else {
            1.0
        };
        let left = opts.budget_s - started.elapsed().as_secs_f64();
        // every later experiment's cheapest check is kept back; the rest is shared equally
        let reserved: f64 = order[k + 1..].iter().map(|&j| floors[j]).sum::<f64>() * speed;
        let equal = ((left - reserved) / (order.len() - k) as f64 / speed).max(0.0);
        let share = needs[i].min(equal.max(floors[i]));
        let mut plan = plan_experiment(&l.spec, &l.layout, &l.rows, share, opts.seed, threads);
        if let Some(why) = &l.stale {
            let mut e = ExperimentComparison {
                name: l.spec.name.clone(),
                total: l.spec.cells().len(),
                ..Default::default()
            };
            e.different = l.rows.len();
            results.push((e, plan, 0, format!("STALE: {why}")));
            continue;
        }
        if plan.cost_s * speed > left.max(0.0) + OVERRUN_S {
            let note = format!(
                "not checked: its sample ({} cell(s)) needs {:.0} s of recorded time, {:.0} s at this machine's \
                 measured speed ({speed:.2}× the recorded times), over the {:.0} s left of the budget",
                plan.keys.len(),
                plan.cost_s,
                plan.cost_s * speed,
                left.max(0.0)
            );
            println!("{}: {note}", l.spec.name);
            let e = ExperimentComparison {
                name: l.spec.name.clone(),
                total: l.spec.cells().len(),
                ..Default::default()
            };
            plan.strata_sampled = 0;
            let not_reached = plan.keys.len();
            results.push((e, plan, not_reached, note));
            continue;
        }
        // No cell starts after the experiment's planned time (with half again as slack for the cost model)
        // has passed, so that one experiment whose cells run slower than recorded cannot take the others'
        // shares.
        let t0 = Instant::now();
        let mut ropts = RunOptions::new(work.clone());
        ropts.threads = opts.threads;
        ropts.progress = false;
        ropts.only = Some(plan.keys.iter().cloned().collect());
        ropts.write_outputs = false;
        ropts.deadline = Some(t0 + Duration::from_secs_f64(plan.cost_s * speed * 1.5 + SETUP_S));
        run(&l.spec, &ropts)?;
        ran_wall += t0.elapsed().as_secs_f64();
        ran_planned += plan.cost_s;
        let text = ResultsFolder::of(&work, &l.spec).read_cells()?;
        let (new_rows, _) = l.layout.read(&text).unwrap_or_default();
        let sampled: HashSet<&String> = plan.keys.iter().collect();
        let recorded: Vec<Row> = l
            .rows
            .iter()
            .filter(|r| sampled.contains(&r.key(&l.layout)))
            .cloned()
            .collect();
        let cmp = compare_rows(&l.spec, &l.layout, &recorded, &new_rows);
        let mut groups: std::collections::BTreeMap<String, Vec<Row>> = Default::default();
        for r in &recorded {
            groups
                .entry(machine_of(r.cpu(&l.layout)))
                .or_default()
                .push(r.clone());
        }
        for (machine, rows) in &groups {
            let c = compare_rows(&l.spec, &l.layout, rows, &new_rows);
            let e = by_machine.entry(machine.clone()).or_default();
            e[0] += c.identical;
            e[1] += c.within;
            e[2] += c.different;
        }
        let not_reached = plan.keys.len() - cmp.compared;
        println!(
            "{}: {} of {} cells checked in {:.1} s (planned {:.1} s): {}{}",
            l.spec.name,
            cmp.compared,
            cmp.total,
            t0.elapsed().as_secs_f64(),
            plan.cost_s,
            cmp.verdict_text(),
            if not_reached > 0 {
                format!("; {not_reached} sampled cell(s) not reached within the budget")
            } else {
                String::new()
            }
        );
        let mut note = plan.note.clone();
        if not_reached > 0 {
            if !note.is_empty() {
                note.push_str("; ");
            }
            let _ = write!(
                note,
                "{not_reached} sampled cell(s) not reached within the budget"
            );
        }
        results.push((cmp, plan, not_reached, note));
    }
    let wall = started.elapsed().as_secs_f64();
    results.sort_by(|a, b| a.0.name.cmp(&b.0.name));

    let comparisons: Vec<ExperimentComparison> = results.iter().map(|r| r.0.clone()).collect();
    let mut md = format!(
        "# Verification of the committed results\n\nWritten by `rfx verify` (seed {}, budget {:.0} min). A seeded, \
         stratified sample of each experiment's committed cells was recomputed from today's code and compared \
         with the committed rows: exact for counts, relative {:.0e} for floating-point metrics unless the kind \
         declares otherwise; wall times are not compared. Strata are the cells' text parameters (method, data \
         set, …).\n\n",
        opts.seed,
        opts.budget_s / 60.0,
        crate::kind::DEFAULT_RELATIVE_TOLERANCE
    );
    md.push_str(&comparison_table(&comparisons));
    md.push_str(&machine_table(&machine_of(&here), &by_machine));
    md.push_str("\n| experiment | strata sampled | note |\n|---|---:|---|\n");
    for (cmp, plan, _, note) in &results {
        let _ = writeln!(
            md,
            "| {} | {} of {} | {} |",
            cmp.name, plan.strata_sampled, plan.strata, note
        );
    }
    md.push_str(&diff_details(&comparisons));
    write_atomic(&opts.report, md.as_bytes()).map_err(|e| AppError::io(&opts.report, e))?;
    let checked: usize = comparisons.iter().map(|c| c.compared).sum();
    let different: usize = comparisons.iter().map(|c| c.different).sum();
    println!(
        "rfx verify: {checked} cells checked in {wall:.0} s, {} identical, {} within tolerance, {different} different -> {}",
        comparisons.iter().map(|c| c.identical).sum::<usize>(),
        comparisons.iter().map(|c| c.within).sum::<usize>(),
        opts.report.display()
    );
    println!(
        "{}",
        machine_table(&machine_of(&here), &by_machine).trim_end()
    );
    let failing: Vec<&str> = results
        .iter()
        .filter(|r| r.0.different > 0)
        .map(|r| r.0.name.as_str())
        .collect();
    if !failing.is_empty() {
        return Err(AppError::Failed(format!(
            "committed results no longer come from the code: {} (see {})",
            failing.join(", "),
            opts.report.display()
        )));
    }
    Ok(())
}

struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `kind (kernels kernels)` of a `cpu` field ([`crate::results::machine_name`]); `not recorded` when empty.
fn machine_of(cpu: &str) -> String {
    match crate::results::machine_name(cpu) {
        m if m.is_empty() => KIND_NOT_RECORDED.to_string(),
        m => m,
    }
}

/// The counts by the machine that computed the committed cells, all recomputed on `here`.
fn machine_table(
    here: &str,
    by_machine: &std::collections::BTreeMap<String, [usize; 3]>,
) -> String {
    let mut md = format!(
        "\nBy the machine that computed the committed cells, each recomputed on this machine, {here}:\n\n\
         | committed cells computed on | identical | within tolerance | different |\n|---|---:|---:|---:|\n"
    );
    for (machine, [i, w, d]) in by_machine {
        let _ = writeln!(md, "| {machine} | {i} | {w} | {d} |");
    }
    md
}

/// The rows of `spec`'s experiment under `root` when its folder holds cells of the same settings (its
/// fingerprint is today's), read with `kinds`.
fn current_rows(spec: &Spec, root: &Path, kinds: &Kinds) -> Option<(Layout, Vec<Row>)> {
    let crate::folder::Loaded {
        layout,
        rows,
        fingerprint: fp,
        ..
    } = ResultsFolder::of(root, spec).load(kinds).ok()?;
    (fp == spec.fingerprint()).then_some((layout, rows))
}

/// The name [`recorded_times_of_kind`] gives the cells computed before the `cpu` column was recorded.
pub const KIND_NOT_RECORDED: &str = "not recorded";

/// The recorded cell times of `spec`'s experiment under `root` from one machine kind only
/// ([`crate::results::Row::machine_kind`]; cells computed before the kind was recorded form the kind
/// [`KIND_NOT_RECORDED`]): `kind` when given, otherwise the kind with the most timed cells. Returns the kind
/// chosen, its times by cell key, and how many timed cells of other kinds were left out (their times are
/// another machine's and do not add up with these). `None` as for [`recorded_times`]; an empty map when the
/// folder has no cell of that kind.
pub fn recorded_times_of_kind(
    spec: &Spec,
    root: &Path,
    kinds: &Kinds,
    kind: Option<&str>,
) -> Option<(String, HashMap<String, f64>, usize)> {
    let (layout, rows) = current_rows(spec, root, kinds)?;
    let mut by_kind: std::collections::BTreeMap<String, HashMap<String, f64>> = Default::default();
    for r in &rows {
        let t = r.time_s(&layout);
        if !t.is_finite() {
            continue;
        }
        let k = match r.machine_kind(&layout) {
            "" => KIND_NOT_RECORDED,
            k => k,
        };
        by_kind
            .entry(k.to_string())
            .or_default()
            .insert(r.key(&layout), t);
    }
    let chosen = match kind {
        Some(k) => k.to_string(),
        None => by_kind
            .iter()
            .max_by_key(|(_, t)| t.len())
            .map(|(k, _)| k.clone())
            .unwrap_or_else(|| KIND_NOT_RECORDED.to_string()),
    };
    let total: usize = by_kind.values().map(HashMap::len).sum();
    let times = by_kind.remove(&chosen).unwrap_or_default();
    let others = total - times.len();
    Some((chosen, times, others))
}

/// The machine kinds `rfx run` records in the `cpu` column ([`crate::run::machine_kind`]: the widest vector
/// extension, or the architecture's name on a machine without AVX2), and [`KIND_NOT_RECORDED`].
pub fn standard_machine_kinds() -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for k in [
        "AVX-512",
        "AVX2",
        crate::run::machine_kind(),
        KIND_NOT_RECORDED,
    ] {
        if !v.iter().any(|x| x == k) {
            v.push(k.to_string());
        }
    }
    v
}

/// The machine kinds of the timed cells of `spec`'s experiment under `root` (empty when there are none).
pub fn recorded_machine_kinds(spec: &Spec, root: &Path, kinds: &Kinds) -> Vec<String> {
    let Some((layout, rows)) = current_rows(spec, root, kinds) else {
        return Vec::new();
    };
    let set: std::collections::BTreeSet<String> = rows
        .iter()
        .filter(|r| r.time_s(&layout).is_finite())
        .map(|r| match r.machine_kind(&layout) {
            "" => KIND_NOT_RECORDED.to_string(),
            k => k.to_string(),
        })
        .collect();
    set.into_iter().collect()
}

/// The recorded cell times (`time_s` by cell key) of `spec`'s experiment under `root`, when its folder holds
/// cells of the same settings (read with `kinds`).
pub fn recorded_times(spec: &Spec, root: &Path, kinds: &Kinds) -> Option<HashMap<String, f64>> {
    let (layout, rows) = current_rows(spec, root, kinds)?;
    Some(
        rows.iter()
            .map(|r| (r.key(&layout), r.time_s(&layout)))
            .filter(|(_, t)| t.is_finite())
            .collect(),
    )
}
