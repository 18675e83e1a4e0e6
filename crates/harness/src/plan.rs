//! Planning a sweep on N workers: the expected wall time from recorded cell times, and the partition of the
//! cells into N shards (issue 28).
//!
//! The partition is *longest processing time first* (LPT, Graham 1969): cells sorted by expected cost, longest
//! first (ties broken by cell key), each given to the worker with the least expected load so far (ties: the
//! lowest index). It is a pure function of the cell keys, their costs and N, so independent machines compute
//! the same partition without talking to each other. Its makespan $T$ satisfies
//! $\max(t_{\max}, \sum_i t_i / N) \le T_{\mathrm{opt}} \le T \le \tfrac43 T_{\mathrm{opt}}$ and
//! $T \le \sum_i t_i / N + t_{\max}$.

use std::collections::HashMap;

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
    let mut load = vec![0.0_f64; workers];
    let mut shard = vec![0usize; jobs.len()];
    for j in order {
        let w = (0..workers)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[w] += jobs[j].cost.max(0.0);
        shard[j] = w;
    }
    (shard, load)
}

/// The plan of one experiment.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Experiment name.
    pub name: String,
    /// Cells in the sweep.
    pub cells: usize,
    /// Cells whose time was recorded by an earlier run (the others are estimated by the recorded median, or
    /// 1 s when nothing was recorded).
    pub recorded: usize,
    /// The expected cost of every cell.
    pub jobs: Vec<Job>,
}

impl Plan {
    /// The plan of `keys` (a sweep's cell keys) from the recorded times by key.
    pub fn new(name: &str, keys: Vec<String>, times: Option<&HashMap<String, f64>>) -> Plan {
        let known: Vec<f64> = keys
            .iter()
            .filter_map(|k| times.and_then(|t| t.get(k)).copied())
            .filter(|t| t.is_finite() && *t >= 0.0)
            .collect();
        let fallback = if known.is_empty() {
            1.0
        } else {
            let mut v = known.clone();
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let jobs: Vec<Job> = keys
            .into_iter()
            .map(|key| {
                let cost = times
                    .and_then(|t| t.get(&key))
                    .copied()
                    .filter(|t| t.is_finite() && *t >= 0.0)
                    .unwrap_or(fallback);
                Job { key, cost }
            })
            .collect();
        Plan {
            name: name.to_string(),
            cells: jobs.len(),
            recorded: known.len(),
            jobs,
        }
    }

    /// Every cell of `plans` in one plan (cell keys prefixed by the experiment name): the wall time when all
    /// the experiments share the workers.
    pub fn pooled(name: &str, plans: &[Plan]) -> Plan {
        Plan {
            name: name.to_string(),
            cells: plans.iter().map(|p| p.cells).sum(),
            recorded: plans.iter().map(|p| p.recorded).sum(),
            jobs: plans
                .iter()
                .flat_map(|p| {
                    p.jobs.iter().map(|j| Job {
                        key: format!("{}/{}", p.name, j.key),
                        cost: j.cost,
                    })
                })
                .collect(),
        }
    }

    /// Total expected cell time.
    pub fn total(&self) -> f64 {
        self.jobs.iter().map(|j| j.cost).sum()
    }

    /// The longest cell (the critical path: no number of workers finishes sooner).
    pub fn longest(&self) -> f64 {
        self.jobs.iter().map(|j| j.cost).fold(0.0, f64::max)
    }

    /// Expected wall time on `workers` single-threaded workers (the LPT makespan).
    pub fn wall(&self, workers: usize) -> f64 {
        lpt(&self.jobs, workers).1.into_iter().fold(0.0, f64::max)
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
}
