//! Planning a sweep on N workers: the expected wall time from recorded cell times, and the partition of the
//! cells into N shards (issue 28).
//!
//! The partition is *longest processing time first* (LPT, Graham 1969): cells sorted by expected cost, longest
//! first (ties broken by cell key), each given to the worker with the least expected load so far (ties: the
//! lowest index). It is a pure function of the cell keys, their costs and N, so independent machines compute
//! the same partition without talking to each other. Its makespan $T$ satisfies
//! $\max(t_{\max}, \sum_i t_i / N) \le T_{\mathrm{opt}} \le T \le \tfrac43 T_{\mathrm{opt}}$ and
//! $T \le \sum_i t_i / N + t_{\max}$.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// One cell and its expected cost in seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct Job {
    /// The cell key.
    pub key: String,
    /// Expected seconds.
    pub cost: f64,
}

/// The LPT partition: the worker of each job (in the order given) and each worker's expected load.
pub fn lpt(jobs: &[Job], workers: usize) -> (Vec<usize>, Vec<f64>) {
    let workers = workers.max(1);
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by(|&a, &b| {
        jobs[b]
            .cost
            .total_cmp(&jobs[a].cost)
            .then_with(|| jobs[a].key.cmp(&jobs[b].key))
    });
    // Each job goes to the least-loaded worker, ties to the lowest index: a min-heap of (load, index) gives the
    // same choice as a scan of every worker in O(log workers), so that a large worker count (`rfx plan
    // --workers 100000`) costs no more than the jobs. Only workers that ever get a job enter the heap: the
    // idle ones all have load 0 and the lowest of them is the next unused index.
    let mut load = vec![0.0_f64; workers];
    let mut shard = vec![0usize; jobs.len()];
    let mut heap: BinaryHeap<Reverse<(LoadKey, usize)>> = BinaryHeap::new();
    let mut unused = 0usize;
    for j in order {
        let busiest_idle = (unused < workers).then_some(unused);
        let w = match (heap.peek(), busiest_idle) {
            // an idle worker (load 0) wins unless a used one also has load 0 and a lower index
            (Some(Reverse((l, i))), Some(u)) if l.0 > 0.0 || *i > u => {
                unused += 1;
                u
            }
            (None, Some(u)) => {
                unused += 1;
                u
            }
            (Some(_), _) => heap.pop().map(|Reverse((_, i))| i).unwrap_or(0),
            (None, None) => 0,
        };
        load[w] += jobs[j].cost.max(0.0);
        shard[j] = w;
        heap.push(Reverse((LoadKey(load[w]), w)));
    }
    (shard, load)
}

/// A load ordered by `f64::total_cmp` (loads are finite and non-negative).
#[derive(Clone, Copy, Debug, PartialEq)]
struct LoadKey(f64);

impl Eq for LoadKey {}

impl PartialOrd for LoadKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for LoadKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// A cell to plan: its key, the group of cells it shares an expensive computation with
/// ([`crate::Runner::shared_group`]) and the kind's cost model ([`crate::Runner::cost`]).
#[derive(Debug, Clone, PartialEq)]
pub struct PlanCell {
    /// The cell key.
    pub key: String,
    /// Its shared-computation group, if any: a group is planned (and sharded) as one job, so that no two
    /// workers compute the same shared result.
    pub group: Option<String>,
    /// The kind's relative cost estimate, used when no cell time was recorded.
    pub model_cost: f64,
}

/// The plan of one experiment.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Experiment name.
    pub name: String,
    /// Cells in the sweep.
    pub cells: usize,
    /// Cells whose time was recorded by an earlier run (the others are estimated by the recorded median, or
    /// by the kind's cost model when nothing was recorded).
    pub recorded: usize,
    /// The jobs: one per cell, or one per group of cells that share a computation; cost in seconds.
    pub jobs: Vec<Job>,
    /// The cells of each job (parallel to `jobs`): key and expected seconds.
    pub members: Vec<Vec<(String, f64)>>,
}

impl Plan {
    /// The plan of `keys` (a sweep's cell keys, no groups, unit cost model) from the recorded times by key.
    pub fn new(name: &str, keys: Vec<String>, times: Option<&HashMap<String, f64>>) -> Plan {
        let cells = keys
            .into_iter()
            .map(|key| PlanCell {
                key,
                group: None,
                model_cost: 1.0,
            })
            .collect();
        Plan::of_cells(name, cells, times)
    }

    /// The plan of a spec's sweep: groups from [`crate::Runner::shared_group`], costs from the recorded
    /// `times` where there are some, from [`crate::Runner::cost`] otherwise.
    pub fn of_spec(spec: &crate::Spec, times: Option<&HashMap<String, f64>>) -> Plan {
        let cells = spec
            .cells()
            .iter()
            .map(|c| PlanCell {
                key: c.key(),
                group: spec.runner.shared_group(c),
                model_cost: spec.runner.cost(c),
            })
            .collect();
        Plan::of_cells(&spec.name, cells, times)
    }

    /// The plan of `cells`: a cell costs its recorded time; without one, the median recorded time when
    /// any was recorded, its model cost otherwise. Cells of one group form one job (in order of first
    /// appearance), the others one job each.
    pub fn of_cells(
        name: &str,
        cells: Vec<PlanCell>,
        times: Option<&HashMap<String, f64>>,
    ) -> Plan {
        let recorded_time = |k: &str| {
            times
                .and_then(|t| t.get(k))
                .copied()
                .filter(|t| t.is_finite() && *t >= 0.0)
        };
        let mut known: Vec<f64> = cells.iter().filter_map(|c| recorded_time(&c.key)).collect();
        let recorded = known.len();
        known.sort_by(f64::total_cmp);
        let median = known.get(known.len() / 2).copied();
        let mut jobs: Vec<Job> = Vec::new();
        let mut members: Vec<Vec<(String, f64)>> = Vec::new();
        let mut group_job: HashMap<String, usize> = HashMap::new();
        for c in cells {
            let cost = recorded_time(&c.key)
                .or(median)
                .unwrap_or_else(|| c.model_cost.max(0.0));
            let j = match &c.group {
                Some(g) => *group_job.entry(g.clone()).or_insert_with(|| {
                    jobs.push(Job {
                        key: format!("group {g}"),
                        cost: 0.0,
                    });
                    members.push(Vec::new());
                    jobs.len() - 1
                }),
                None => {
                    jobs.push(Job {
                        key: c.key.clone(),
                        cost: 0.0,
                    });
                    members.push(Vec::new());
                    jobs.len() - 1
                }
            };
            jobs[j].cost += cost;
            members[j].push((c.key, cost));
        }
        Plan {
            name: name.to_string(),
            cells: members.iter().map(Vec::len).sum(),
            recorded,
            jobs,
            members,
        }
    }

    /// Every cell of `plans` in one plan (job keys prefixed by the experiment name): the wall time when all
    /// the experiments share the workers.
    pub fn pooled(name: &str, plans: &[Plan]) -> Plan {
        let prefixed = |p: &Plan, k: &str| format!("{}/{k}", p.name);
        Plan {
            name: name.to_string(),
            cells: plans.iter().map(|p| p.cells).sum(),
            recorded: plans.iter().map(|p| p.recorded).sum(),
            jobs: plans
                .iter()
                .flat_map(|p| {
                    p.jobs.iter().map(|j| Job {
                        key: prefixed(p, &j.key),
                        cost: j.cost,
                    })
                })
                .collect(),
            members: plans
                .iter()
                .flat_map(|p| {
                    p.members
                        .iter()
                        .map(|m| m.iter().map(|(k, t)| (prefixed(p, k), *t)).collect())
                })
                .collect(),
        }
    }

    /// The jobs for `n` workers: a group longer than an even share (total / n) is split into its cells,
    /// each shard holding some of them then computing the shared result itself; other groups stay whole.
    fn jobs_for(&self, n: usize) -> (Vec<Job>, Vec<Vec<String>>) {
        let share = self.total() / n.max(1) as f64;
        let mut jobs = Vec::new();
        let mut keys = Vec::new();
        for (job, cells) in self.jobs.iter().zip(&self.members) {
            if cells.len() > 1 && job.cost > share {
                for (k, t) in cells {
                    jobs.push(Job {
                        key: k.clone(),
                        cost: *t,
                    });
                    keys.push(vec![k.clone()]);
                }
            } else {
                jobs.push(job.clone());
                keys.push(cells.iter().map(|(k, _)| k.clone()).collect());
            }
        }
        (jobs, keys)
    }

    /// The shard (0-based) of every cell key and the expected load of each of the `n` shards: the LPT
    /// partition of the jobs, groups kept together unless longer than an even share.
    pub fn partition(&self, n: usize) -> (HashMap<String, usize>, Vec<f64>) {
        let (jobs, keys) = self.jobs_for(n);
        let (shard, load) = lpt(&jobs, n);
        let of_key = keys
            .iter()
            .zip(&shard)
            .flat_map(|(keys, &s)| keys.iter().map(move |k| (k.clone(), s)))
            .collect();
        (of_key, load)
    }

    /// A short digest of the partition into `n` shards (FNV-1a over the cell keys in sorted order and their
    /// shards): shards started from different cost tables, which would not fit together, are told apart.
    pub fn partition_digest(&self, n: usize) -> String {
        let (of_key, _) = self.partition(n);
        let mut pairs: Vec<(&String, &usize)> = of_key.iter().collect();
        pairs.sort();
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for (k, s) in pairs {
            for b in k.bytes().chain(s.to_string().bytes()).chain([0u8]) {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x0100_0000_01b3);
            }
        }
        format!("{h:016x}")
    }

    /// Total expected cell time.
    pub fn total(&self) -> f64 {
        self.jobs.iter().map(|j| j.cost).sum()
    }

    /// The longest cell (the critical path: no number of workers finishes sooner).
    pub fn longest(&self) -> f64 {
        self.members
            .iter()
            .flatten()
            .map(|(_, t)| *t)
            .fold(0.0, f64::max)
    }

    /// Expected wall time on `workers` single-threaded workers (the makespan of [`Plan::partition`]).
    pub fn wall(&self, workers: usize) -> f64 {
        self.partition(workers).1.into_iter().fold(0.0, f64::max)
    }
}

/// Shard `index` of `count` (`--shard K/N`, K in 0..N).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Shard {
    /// K, from 0 to `count − 1`.
    pub index: usize,
    /// N, at least 1.
    pub count: usize,
}

/// The most shards one sweep may be split into (a Slurm array is usually capped far lower).
pub const MAX_SHARDS: usize = 100_000;

impl std::str::FromStr for Shard {
    type Err = String;

    /// `K/N` with `0 ≤ K < N ≤` [`MAX_SHARDS`].
    fn from_str(s: &str) -> Result<Shard, String> {
        let bad = || {
            format!(
                "--shard {s}: expected K/N with 0 ≤ K < N ≤ {MAX_SHARDS} (shard K of N, counted from 0), e.g. --shard 0/4"
            )
        };
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = k.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || count > MAX_SHARDS || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// Seconds as a short human duration (`42 s`, `3.5 min`, `2.1 h`).
pub fn human(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else if s < 5400.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(costs: &[f64]) -> Vec<Job> {
        costs
            .iter()
            .enumerate()
            .map(|(i, &c)| Job {
                key: format!("cell={i}"),
                cost: c,
            })
            .collect()
    }

    #[test]
    fn lpt_respects_the_bounds_and_is_a_pure_function_of_the_cells() {
        // costs from a fixed pseudo-random sequence (heavy-tailed, like real sweeps)
        let mut x = 12345u64;
        let costs: Vec<f64> = (0..200)
            .map(|_| {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let u = (x >> 11) as f64 / (1u64 << 53) as f64;
                (1.0 / (1.0 - u)).powf(1.5)
            })
            .collect();
        let js = jobs(&costs);
        let total: f64 = costs.iter().sum();
        let longest = costs.iter().copied().fold(0.0, f64::max);
        for n in [1, 2, 3, 8, 32, 128, 1000] {
            let (shard, load) = lpt(&js, n);
            let wall = load.iter().copied().fold(0.0, f64::max);
            let lower = longest.max(total / n as f64);
            assert!(wall >= lower - 1e-9, "{n}: {wall} < {lower}");
            assert!(wall <= total / n as f64 + longest + 1e-9, "{n}");
            // every job in exactly one shard, loads add up
            for (w, l) in load.iter().enumerate() {
                let sum: f64 = js
                    .iter()
                    .zip(&shard)
                    .filter(|(_, s)| **s == w)
                    .map(|(j, _)| j.cost)
                    .sum();
                assert!((sum - l).abs() < 1e-9);
            }
            // the partition does not depend on the order the cells are listed in
            let mut rev = js.clone();
            rev.reverse();
            let (shard_rev, _) = lpt(&rev, n);
            for (i, j) in rev.iter().enumerate() {
                let orig = js.iter().position(|o| o.key == j.key).unwrap_or(usize::MAX);
                assert_eq!(shard_rev[i], shard[orig]);
            }
        }
        assert!(
            (Plan::new("x", js.iter().map(|j| j.key.clone()).collect(), None).wall(1) - 200.0)
                .abs()
                < 1e-9
        );
    }

    #[test]
    fn lpt_is_optimal_on_a_case_it_should_solve() {
        // 3,3,2,2,2 on 2 workers: LPT gives {3,2,2} vs {3,2}? OPT = 6 = {3,3} {2,2,2}; LPT yields 7.
        // Graham's bound 4/3 − 1/6 = 7/6: 7 ≤ 7/6 · 6.
        let (_, load) = lpt(&jobs(&[3.0, 3.0, 2.0, 2.0, 2.0]), 2);
        let wall = load.iter().copied().fold(0.0, f64::max);
        assert_eq!(wall, 7.0);
        assert!(wall <= (4.0 / 3.0 - 1.0 / 6.0) * 6.0 + 1e-12);
    }

    #[test]
    fn unrecorded_cells_cost_the_recorded_median() {
        let t: HashMap<String, f64> = [
            ("a".to_string(), 1.0),
            ("b".to_string(), 5.0),
            ("c".to_string(), 9.0),
        ]
        .into_iter()
        .collect();
        let p = Plan::new(
            "x",
            vec!["a".into(), "b".into(), "c".into(), "d".into()],
            Some(&t),
        );
        assert_eq!((p.cells, p.recorded), (4, 3));
        assert_eq!(p.total(), 20.0);
        assert_eq!(p.longest(), 9.0);
        assert_eq!(p.wall(2), 10.0);
    }

    #[test]
    fn groups_stay_in_one_shard_and_the_shard_spec_parses() {
        // 12 cells: 3 groups of 3 (a shared computation each) and 3 lone cells, unit model costs.
        let cells: Vec<PlanCell> = (0..12)
            .map(|i| PlanCell {
                key: format!("c={i}"),
                group: (i < 9).then(|| format!("g{}", i / 3)),
                model_cost: 1.0,
            })
            .collect();
        let p = Plan::of_cells("x", cells, None);
        assert_eq!((p.cells, p.jobs.len()), (12, 6));
        assert_eq!(p.total(), 12.0);
        assert_eq!(p.longest(), 1.0, "the critical path is one cell");
        for n in [1, 2, 3, 4, 7] {
            let (of_key, load) = p.partition(n);
            assert_eq!(of_key.len(), 12);
            let split = (0..3).any(|g| {
                let shards: std::collections::HashSet<usize> = (3 * g..3 * g + 3)
                    .map(|i| of_key[&format!("c={i}")])
                    .collect();
                shards.len() > 1
            });
            // a group (cost 3) stays whole while it is at most an even share 12 / n
            assert_eq!(split, 3.0 > 12.0 / n as f64, "N = {n}");
            assert!((load.iter().sum::<f64>() - 12.0).abs() < 1e-12);
        }
        assert_eq!(p.wall(7), 2.0, "split groups: 12 unit cells on 7 workers");
        // 3 shards: each gets one group of 3 plus one lone cell.
        assert_eq!(p.partition(3).1, vec![4.0, 4.0, 4.0]);
        // Another cost table gives another partition, told apart by the digest.
        let t: HashMap<String, f64> = [("c=9".to_string(), 10.0)].into_iter().collect();
        let q = Plan::of_cells(
            "x",
            (0..12)
                .map(|i| PlanCell {
                    key: format!("c={i}"),
                    group: None,
                    model_cost: 1.0,
                })
                .collect(),
            Some(&t),
        );
        assert_ne!(p.partition_digest(3), q.partition_digest(3));
        assert_eq!(p.partition_digest(3), p.clone().partition_digest(3));

        assert_eq!("2/4".parse::<Shard>(), Ok(Shard { index: 2, count: 4 }));
        for bad in ["4/4", "0/0", "x/2", "1", "-1/2", "1/100001"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
        assert_eq!(Shard { index: 1, count: 8 }.to_string(), "1/8");
    }
}
