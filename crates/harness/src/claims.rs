//! Claims: a paper's sentence turned into a rule that is decided on the cells by a test over the seeds.
//!
//! A `[[claim]]` orders groups of values of one sweep parameter (`by`, e.g. `method`) by a metric and is
//! checked at every combination of the other parameters (its *contexts*), restricted by `where`. Each
//! comparison of two values is decided by a test over the seeds — paired where both values have cells for the
//! same seeds, Welch's otherwise — at level `alpha`, with three outcomes: the claim **holds** there, it is
//! **reversed** (significantly the other way), or the comparison is **inconclusive** (within noise).
//!
//! * `test = "order"` (default): the first group is better than the second, and so on. Two-sided $t$-test of
//!   the difference of the means.
//! * `test = "equivalent"` with a `margin` (or `margin_rel`, relative to the second group's mean): the means
//!   differ by less than the margin — two one-sided tests (TOST): the $(1-2\alpha)$ confidence interval of the
//!   difference lies inside $(-\delta, \delta)$; reversed when it lies wholly outside.
//! * `test = "not-worse"` with a margin: the first group is worse than the second by less than the margin
//!   (non-inferiority: the one-sided $(1-\alpha)$ upper bound of the loss is below $\delta$); reversed when the
//!   lower bound is above $\delta$.
//! * `test = "ratio"` with `factor` and `factor_reading` (`up-to`, `at-least` or `about`): an order claim whose
//!   size is a factor; the measured factor (worse mean / better mean per comparison; its maximum, minimum or
//!   geometric mean) is printed beside the paper's and agrees when within `factor_tolerance` (default 2) of it.
//!
//! Groups: `group = "all"` (default: every member of a group must beat every member of the next), `"any"`
//! (the group's best member by mean stands for it) or `"mean"` (the members' mean per seed).
//!
//! Equal budget: with `at = "<metric>"` and `along = "<parameter>"` the curves traced along `along` (e.g. the
//! feature count) are compared at equal values of the metric `at` (e.g. memory in bits): each seed's curve is
//! interpolated linearly on log–log axes between measured points, only inside the range where every compared
//! curve has points (never extrapolated), at the measured values of `at` in that range; the range is reported.
//!
//! Paired over test items: with `items = "<column>"` (a per-item outcome the kind records, e.g. `correct`:
//! whether each test image was classified correctly, [`Point::items`]) two classifiers are compared on the
//! same test items. Each side's outcomes are averaged over its seeds item by item ($a_i$, $b_i$), and the
//! difference of the accuracies $\bar d = \frac1N\sum_i (a_i - b_i)$ gets the variance
//! $s_d^2/N + \mathrm{se}_{\mathrm{seeds}}^2$: the test-set sampling variance estimated from the paired
//! per-item differences (McNemar's test in its large-sample form when each side has one seed), plus the
//! seeds' spread of the accuracy difference as in the tests above. A $z$-test; far sharper than the unpaired
//! binomial spread (`binomial_n`) when the two classifiers agree on most items.
//!
//! Timing claims (`timing = true`, default for metrics ending in `_s`) use only cells whose load average at
//! start and end was below the number of CPUs; cells timed on a busy machine are dropped, and cells whose load
//! was not recorded are used with the verdict saying the timings are unverified.
//!
//! Log scale: with `scale = "log"` (for multiplicative metrics: kernel errors, condition numbers, times) every
//! test runs on $\ln$ of the metric — paired differences of logs, i.e. ratios — and the means shown are
//! geometric means; a claim whose cells include a value $\le 0$ is not evaluated (the remark says so).
//!
//! # From comparisons to the verdict
//!
//! *Multiple comparisons.* A claim is one family: the p-values of its tested comparisons (all but `exact` ones
//! and those with one value each side) are adjusted together by Holm's step-down
//! ([`crate::stats::holm_adjust`]), and a comparison holds or is reversed only where its adjusted p-value is
//! below $\alpha$. For the interval tests a comparison's p-value is that of its decided direction: the TOST
//! (resp. non-inferiority) p-value for *holds*, the one-sided test of the difference beyond the margin for
//! *reversed*, whichever is smaller; the printed interval is the unadjusted $(1-2\alpha)$ one.
//!
//! *Direction.* An inconclusive comparison *leans against* the claim when its point estimate is on the wrong
//! side: for `order` and `ratio` the claimed-better side's mean is worse; for `equivalent` the difference of the
//! means is at least the margin; for `not-worse` the loss is at least the margin. The others lean *for* it.
//! With $H$ holds, $R$ reversed, $L$ leaning against and $F$ leaning for, of $n$ comparisons:
//!
//! * **not evaluated** when $n = 0$; **holds** when $H = n$; **within noise** when $H = R = 0$;
//! * **holds in part** when $H > R + L$ (the significant holds outweigh the reversals and the leaning-against
//!   ones together), with the qualifier "; leaning against in $L$" when $L > 0$;
//! * **does not hold** when $R > H + F$ (symmetrically), or when nothing holds ($H = 0$) and the reversals
//!   with the leaning-against ones outweigh the leaning-for ones ($R + L > F$);
//! * **mixed** otherwise: the evidence points both ways (with $H = 0$: some reversed, but at least as many
//!   inconclusive comparisons lean for the claim). A claim needs more to be said to hold in part than to be
//!   said not to hold: the burden is on the claim.
//!
//! *Factor.* A `ratio` claim whose measured factor does not agree with the paper's within `factor_tolerance`
//! is never **holds**: a verdict of holds or holds in part on the order becomes "holds in part; factor differs"
//! (the direction holds, the size does not).
//!
//! *Best.* With `best = true` (two groups: each member of the first is claimed best against the second) the
//! units counted above are not the comparisons but each (context, member of the first group): it is *best*
//! (holds) there when every one of its comparisons holds, *beaten* (reversed) when one is reversed, and
//! otherwise inconclusive, leaning against the claim when some member of the second group has the better
//! mean. "Best in 4 of 18 contexts" rather than "holds in 88 of 144 pairs"; the pair counts are printed beside.
//!
//! *Power.* When every comparison is a $t$-test with at most 2 degrees of freedom (e.g. 2 or 3 seeds), or has
//! one value each side, the claim is *underpowered*: "within noise" reads "underpowered (df = 1)" and a decided
//! word gets the qualifier " (underpowered: df = 1)" (df the largest of the comparisons').

use std::collections::BTreeMap;
use std::fmt::Write as _;

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::config::Value;

/// Whether lower or higher metric values are better.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Better {
    /// Errors, times.
    Lower,
    /// Accuracies.
    Higher,
}

impl Better {
    /// The sign that turns a difference of means (claimed-better side minus the other) into a loss: positive
    /// when the claimed-better side is worse.
    fn loss_sign(self) -> f64 {
        match self {
            Better::Lower => 1.0,
            Better::Higher => -1.0,
        }
    }
}

/// How a group of values counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupMode {
    /// Every member must win against every member of the next group.
    All,
    /// The group's best member (by mean) stands for it.
    Any,
    /// The members' mean, per seed.
    Mean,
}

/// The scale the tests run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// The metric itself (default).
    Linear,
    /// The metric's natural logarithm (multiplicative metrics: errors, condition numbers, times).
    Log,
}

/// An equivalence or non-inferiority margin $\delta$.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Margin {
    /// In the metric's units.
    Abs(f64),
    /// Relative to the mean of the second group's member in each comparison.
    Rel(f64),
}

impl Margin {
    fn of(self, reference: f64) -> f64 {
        match self {
            Margin::Abs(d) => d,
            Margin::Rel(r) => r * reference.abs(),
        }
    }

    fn describe(self) -> String {
        match self {
            Margin::Abs(d) => format!("margin {d}"),
            Margin::Rel(r) => format!("margin {}% of the reference", r * 100.0),
        }
    }
}

/// How the paper states a factor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactorReading {
    /// "Up to F×": compared with the largest measured factor.
    UpTo,
    /// "At least F×": compared with the smallest measured factor.
    AtLeast,
    /// "About F×": compared with the geometric mean of the measured factors.
    About,
}

/// The rule a claim is decided by.
#[derive(Debug, Clone, PartialEq)]
pub enum ClaimTest {
    /// Strict order of the groups.
    Order,
    /// The groups' means differ by less than the margin (TOST).
    Equivalent(Margin),
    /// Each group is worse than the next by less than the margin (non-inferiority).
    NotWorse(Margin),
    /// An order whose size is a factor.
    Ratio {
        /// The paper's factor $F$.
        factor: f64,
        /// How the paper states it.
        reading: FactorReading,
        /// The measured factor agrees when within $[F/\tau, F\tau]$ (at-least: above $F/\tau$).
        tolerance: f64,
    },
}

impl ClaimTest {
    /// A short name for the report.
    pub fn name(&self) -> String {
        match self {
            ClaimTest::Order => "order".into(),
            ClaimTest::Equivalent(m) => format!("equivalent ({})", m.describe()),
            ClaimTest::NotWorse(m) => format!("not worse ({})", m.describe()),
            ClaimTest::Ratio {
                factor, reading, ..
            } => format!(
                "ratio ({} {factor}×)",
                match reading {
                    FactorReading::UpTo => "up to",
                    FactorReading::AtLeast => "at least",
                    FactorReading::About => "about",
                }
            ),
        }
    }
}

/// Compare curves at equal values of a metric.
#[derive(Debug, Clone, PartialEq)]
pub struct EqualBudget {
    /// The metric on the common axis (e.g. memory in bits, output dimension).
    pub at: String,
    /// The sweep parameter that traces each curve (e.g. the feature count).
    pub along: String,
}

/// `[[claim]]`: a paper's claim as a rule on groups of a parameter's values.
#[derive(Debug, Clone)]
pub struct ClaimSpec {
    /// The claim in our words.
    pub text: String,
    /// The paper's sentence, quoted, with where it stands (section, figure, table).
    pub quote: String,
    /// Metric compared.
    pub metric: String,
    /// Lower or higher is better.
    pub better: Better,
    /// The parameter whose values are ordered.
    pub by: String,
    /// Groups from best to worst (for equivalence: groups claimed equal).
    pub order: Vec<Vec<String>>,
    /// Restrictions on other parameters.
    pub filter: Vec<(String, Vec<Value>)>,
    /// How a group counts.
    pub group: GroupMode,
    /// The rule.
    pub test: ClaimTest,
    /// Significance level of each comparison.
    pub alpha: f64,
    /// The metric is computed without randomness (e.g. a series' error): single values compare directly.
    pub exact: bool,
    /// The metric is a proportion (an accuracy) over this many test points drawn once: the test set's binomial
    /// sampling variance $p_a(1-p_a)/N + p_b(1-p_b)/N$ is added to the seeds' (a $z$-test; with one value on
    /// each side, the two-proportion $z$-test). Unpaired, so conservative when both classify the same points.
    pub binomial_n: Option<u64>,
    /// The item column (per-item 0/1 outcomes, e.g. `correct`) whose paired differences give the test-set
    /// sampling variance (see the module documentation); the metric must be the items' mean.
    pub items: Option<String>,
    /// The parameter whose values are the replicates a test pairs over (default `seed`; e.g. `dataset` for a
    /// claim about the mean over data sets, each data set's value being its mean over seeds).
    pub replicate: String,
    /// Compare curves at equal values of a metric rather than at equal parameter values.
    pub budget: Option<EqualBudget>,
    /// A timing claim (only cells timed on a quiet machine count).
    pub timing: bool,
    /// The scale of the tests (`scale = "log"`: on $\ln$ of the metric).
    pub scale: Scale,
    /// `best = true`: each member of the first of two groups is claimed best, judged per context (see the
    /// module documentation) rather than pair by pair.
    pub best: bool,
}

/// One computed cell as the claims see it.
#[derive(Debug, Clone)]
pub struct Point {
    /// Every sweep parameter's value, `seed` included.
    pub params: Vec<(String, Value)>,
    /// The claim's metric.
    pub value: f64,
    /// The equal-budget metric (NaN without one).
    pub at: f64,
    /// Whether the cell was timed on a quiet machine ([`crate::results::Row::quiet`]; `None`: not recorded).
    pub quiet: Option<bool>,
    /// The machine kind the cell ran on ([`crate::results::Row::machine_kind`]; empty: not recorded). A
    /// timing claim compares the times of one kind only.
    pub machine: String,
    /// The cell's per-item outcomes in the claim's item column (empty without one).
    pub items: Vec<bool>,
}

impl Point {
    fn get(&self, name: &str) -> Option<&Value> {
        self.params.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }
}

/// The outcome of one comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The claimed relation holds, significantly.
    Holds,
    /// The opposite holds, significantly.
    Reversed,
    /// Within noise.
    Inconclusive,
}

/// One decided comparison.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Where (the other parameters' values, and the budget value).
    pub context: String,
    /// The better-claimed side.
    pub a: String,
    /// The other side.
    pub b: String,
    /// Means of the two sides.
    pub means: (f64, f64),
    /// The outcome.
    pub outcome: Outcome,
    /// The test and its numbers.
    pub detail: String,
    /// Worse mean / better mean (ratio claims).
    pub factor: Option<f64>,
    /// The point estimate is on the wrong side of the claim (see the module documentation).
    pub against: bool,
    /// The p-value of the test before Holm's adjustment (`None`: exact values or no test).
    pub p: Option<f64>,
    /// The degrees of freedom of a $t$-test (`Some(0.0)`: one value each side, no test; `None`: a $z$-test or
    /// exact values).
    pub df: Option<f64>,
}

/// The verdict on a claim.
#[derive(Debug, Clone)]
pub struct ClaimVerdict {
    /// `holds`, `holds in part`, `within noise`, `mixed`, `does not hold` or `not evaluated`.
    pub word: String,
    /// Comparisons that hold.
    pub holds: usize,
    /// Comparisons reversed.
    pub reversed: usize,
    /// Comparisons within noise.
    pub inconclusive: usize,
    /// Of the comparisons within noise, those whose means lean against the claim.
    pub leaning_against: usize,
    /// The number of tested comparisons whose p-values were Holm-adjusted together.
    pub family: usize,
    /// For a `best` claim, the pair counts (holds, reversed, inconclusive) beside the per-context ones above.
    pub pairs: Option<(usize, usize, usize)>,
    /// Every comparison.
    pub comparisons: Vec<Comparison>,
    /// Sentences the reader needs: the compared ranges, the measured factor, timing caveats.
    pub remarks: Vec<String>,
}

impl ClaimVerdict {
    /// Number of comparisons.
    pub fn total(&self) -> usize {
        self.holds + self.reversed + self.inconclusive
    }

    /// "holds in 12, reversed in 1, inconclusive in 17 of 30 (5 of them leaning against the claim)"; for a
    /// `best` claim the same per context, then the pairs.
    pub fn counts(&self) -> String {
        let leaning = if self.leaning_against > 0 {
            format!(
                " ({} of them leaning against the claim)",
                self.leaning_against
            )
        } else {
            String::new()
        };
        match self.pairs {
            None => format!(
                "holds in {}, reversed in {}, inconclusive in {} of {}{leaning}",
                self.holds,
                self.reversed,
                self.inconclusive,
                self.total()
            ),
            Some((h, r, i)) => format!(
                "best in {}, beaten in {}, inconclusive in {} of {} contexts{leaning}; pair by pair: holds in {h}, \
                 reversed in {r}, inconclusive in {i} of {}",
                self.holds,
                self.reversed,
                self.inconclusive,
                self.total(),
                h + r + i
            ),
        }
    }
}

type Sample = BTreeMap<String, f64>;

/// One side of a comparison: its name, its values by replicate, and its per-item outcomes averaged over its
/// cells (`None` without an item column).
type Side = (String, Sample, Option<Vec<f64>>);

/// The variance of the mean of the paired per-item differences $a_i - b_i$: $s_d^2 / N$.
fn item_variance(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let m = d.iter().sum::<f64>() / n;
    d.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0) / n
}

fn mean(s: &Sample) -> f64 {
    s.values().sum::<f64>() / s.len() as f64
}

/// The difference of two samples' means with its standard error and degrees of freedom.
#[derive(Debug, Clone, Copy)]
struct DiffStat {
    mean: f64,
    se: f64,
    df: f64,
}

/// Paired when both samples have the same (≥ 2) seeds; Welch when both have ≥ 2 values; a one-sample test
/// against a single value; `None` when both are single values.
fn diff_stat(a: &Sample, b: &Sample) -> Option<(DiffStat, &'static str)> {
    let var = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() as f64 - 1.0)
    };
    if a.len() >= 2 && a.len() == b.len() && a.keys().all(|k| b.contains_key(k)) {
        let d: Vec<f64> = a.iter().map(|(k, x)| x - b[k]).collect();
        let n = d.len() as f64;
        return Some((
            DiffStat {
                mean: d.iter().sum::<f64>() / n,
                se: (var(&d) / n).sqrt(),
                df: n - 1.0,
            },
            "paired t",
        ));
    }
    let av: Vec<f64> = a.values().copied().collect();
    let bv: Vec<f64> = b.values().copied().collect();
    let (na, nb) = (av.len() as f64, bv.len() as f64);
    let m = mean(a) - mean(b);
    match (av.len(), bv.len()) {
        (x, y) if x >= 2 && y >= 2 => {
            let (qa, qb) = (var(&av) / na, var(&bv) / nb);
            let se2 = qa + qb;
            // Welch–Satterthwaite degrees of freedom.
            let df = if se2 > 0.0 {
                se2 * se2 / (qa * qa / (na - 1.0) + qb * qb / (nb - 1.0))
            } else {
                na + nb - 2.0
            };
            Some((
                DiffStat {
                    mean: m,
                    se: se2.sqrt(),
                    df,
                },
                "Welch t",
            ))
        }
        (x, 1) if x >= 2 => Some((
            DiffStat {
                mean: m,
                se: (var(&av) / na).sqrt(),
                df: na - 1.0,
            },
            "one-sample t",
        )),
        (1, y) if y >= 2 => Some((
            DiffStat {
                mean: m,
                se: (var(&bv) / nb).sqrt(),
                df: nb - 1.0,
            },
            "one-sample t",
        )),
        _ => None,
    }
}

/// Two-sided p-value of $t = \bar d / \mathrm{se}$ with `df` degrees of freedom; zero spread decides any
/// non-zero difference.
fn p_two_sided(d: DiffStat) -> f64 {
    if d.se == 0.0 || !d.se.is_finite() {
        return if d.mean == 0.0 { 1.0 } else { 0.0 };
    }
    let t = d.mean / d.se;
    if d.df >= LARGE_DF {
        return 2.0 * (1.0 - standard_normal().cdf(t.abs()));
    }
    match StudentsT::new(0.0, 1.0, d.df) {
        Ok(dist) => 2.0 * (1.0 - dist.cdf(t.abs())),
        Err(_) => 1.0,
    }
}

/// Above this many degrees of freedom Student's $t$ is replaced by the standard normal (their quantiles
/// differ by less than $10^{-4}$ relative; statrs' $t$ inverse is slow for huge `df`).
const LARGE_DF: f64 = 1e5;

fn standard_normal() -> statrs::distribution::Normal {
    statrs::distribution::Normal::standard()
}

/// The $q$-quantile of Student's $t$ with `df` degrees of freedom.
fn t_quantile(q: f64, df: f64) -> f64 {
    if df >= LARGE_DF {
        return standard_normal().inverse_cdf(q);
    }
    StudentsT::new(0.0, 1.0, df).map_or(f64::INFINITY, |d| d.inverse_cdf(q))
}

/// $P(T > x / \mathrm{se})$ for Student's $t$ with `df` degrees of freedom: a one-sided p-value; zero spread
/// decides any positive `x`.
fn p_above(x: f64, se: f64, df: f64) -> f64 {
    if se == 0.0 || !se.is_finite() {
        return if x > 0.0 { 0.0 } else { 1.0 };
    }
    let t = x / se;
    if df >= LARGE_DF {
        return 1.0 - standard_normal().cdf(t);
    }
    match StudentsT::new(0.0, 1.0, df) {
        Ok(dist) => 1.0 - dist.cdf(t),
        Err(_) => 1.0,
    }
}

/// One comparison decided before the claim's p-values are adjusted together.
#[derive(Debug, Clone)]
struct Decision {
    /// The outcome when the (adjusted) p-value is below $\alpha$ — or the final outcome when `p` is `None`.
    direction: Outcome,
    /// The p-value of `direction` (`None`: exact values, or no test possible).
    p: Option<f64>,
    detail: String,
    factor: Option<f64>,
    /// The point estimate is on the wrong side of the claim.
    against: bool,
    /// Degrees of freedom of a $t$-test (`Some(0.0)`: no test possible; `None`: $z$ or exact).
    df: Option<f64>,
}

/// Decides one comparison of `a` (claimed better, or equal) against `b`; `items` are both sides' per-item
/// outcomes averaged over their cells, when the claim pairs over test items. On the log scale the samples
/// hold $\ln$ of the metric.
fn decide(claim: &ClaimSpec, a: &Sample, b: &Sample, items: Option<(&[f64], &[f64])>) -> Decision {
    let (ma, mb) = (mean(a), mean(b));
    // loss > 0: a is worse than b.
    let sign = claim.better.loss_sign();
    let factor = match claim.test {
        ClaimTest::Ratio { .. } => Some(match (claim.better, claim.scale) {
            (Better::Lower, Scale::Linear) => mb / ma,
            (Better::Higher, Scale::Linear) => ma / mb,
            (Better::Lower, Scale::Log) => (mb - ma).exp(),
            (Better::Higher, Scale::Log) => (ma - mb).exp(),
        }),
        _ => None,
    };
    // An accuracy over a test set drawn once: the seeds vary the features, not the test set, so its binomial
    // sampling variance is added (alone, the two-proportion z-test of two single values).
    let binomial = claim
        .binomial_n
        .map(|n| ((ma * (1.0 - ma) + mb * (1.0 - mb)) / n as f64).max(0.0));
    // Paired over the same test items: the per-item differences' variance replaces the binomial spread.
    let paired_items = items
        .filter(|(x, y)| x.len() == y.len() && x.len() >= 2)
        .map(|(x, y)| (item_variance(x, y), x.len()));
    if let Some((var, n)) = paired_items {
        let (seeds, se2) = match diff_stat(a, b) {
            Some((d, _)) => (" + seed spread", d.se * d.se),
            None => (
                " (one cell each: the features' randomness is not in the test)",
                0.0,
            ),
        };
        let d = DiffStat {
            mean: ma - mb,
            se: (var + se2).sqrt(),
            df: LARGE_DF,
        };
        return judge(
            claim,
            d,
            mb,
            &format!("z paired over {n} test items{seeds}"),
            factor,
        );
    }
    let stat = match (diff_stat(a, b), binomial) {
        (Some((d, _)), Some(bin)) => Some((
            DiffStat {
                mean: d.mean,
                se: (d.se * d.se + bin).sqrt(),
                df: LARGE_DF,
            },
            "z (seed spread + test-set binomial spread)",
        )),
        (None, Some(bin)) => Some((
            DiffStat {
                mean: ma - mb,
                se: bin.sqrt(),
                df: LARGE_DF,
            },
            "two-proportion z",
        )),
        (stat, None) => stat,
    };
    let loss = sign * (ma - mb);
    let against = match &claim.test {
        ClaimTest::Order | ClaimTest::Ratio { .. } => loss > 0.0,
        ClaimTest::Equivalent(m) => (ma - mb).abs() >= m.of(mb),
        ClaimTest::NotWorse(m) => loss >= m.of(mb),
    };
    let Some((d, how)) = stat else {
        // One value on each side.
        if !claim.exact {
            return Decision {
                direction: Outcome::Inconclusive,
                p: None,
                detail: "one value each: no test possible".into(),
                factor,
                against,
                df: Some(0.0),
            };
        }
        let outcome = match &claim.test {
            ClaimTest::Order | ClaimTest::Ratio { .. } => {
                if loss < 0.0 {
                    Outcome::Holds
                } else if loss > 0.0 {
                    Outcome::Reversed
                } else {
                    Outcome::Inconclusive
                }
            }
            ClaimTest::Equivalent(m) => {
                if (ma - mb).abs() < m.of(mb) {
                    Outcome::Holds
                } else {
                    Outcome::Reversed
                }
            }
            ClaimTest::NotWorse(m) => {
                if loss < m.of(mb) {
                    Outcome::Holds
                } else {
                    Outcome::Reversed
                }
            }
        };
        return Decision {
            direction: outcome,
            p: None,
            detail: "exact values".into(),
            factor,
            against,
            df: None,
        };
    };
    let how = match claim.scale {
        Scale::Linear => how.to_string(),
        Scale::Log => format!("{how} on ln({})", claim.metric),
    };
    judge(claim, d, mb, &how, factor)
}

/// Decides a comparison whose difference of means `d` (claimed-better side minus the other, whose mean is
/// `mb`: the reference of a relative margin) has a standard error: the claim's test, as a direction and the
/// p-value that decides it (compared with $\alpha$ after the claim's Holm adjustment).
fn judge(claim: &ClaimSpec, d: DiffStat, mb: f64, how: &str, factor: Option<f64>) -> Decision {
    let loss = claim.better.loss_sign() * d.mean;
    let df = (d.df < LARGE_DF).then_some(d.df);
    // The smaller of the one-sided p-values for holds and for reversed decides the direction.
    let pick = |p_hold: f64, p_rev: f64| {
        if p_hold <= p_rev {
            (Outcome::Holds, p_hold)
        } else {
            (Outcome::Reversed, p_rev)
        }
    };
    match &claim.test {
        ClaimTest::Order | ClaimTest::Ratio { .. } => {
            let (direction, p) = if loss == 0.0 {
                (Outcome::Inconclusive, 1.0)
            } else if loss < 0.0 {
                (Outcome::Holds, p_two_sided(d))
            } else {
                (Outcome::Reversed, p_two_sided(d))
            };
            Decision {
                direction,
                p: Some(p),
                detail: format!("{how}, p = {p:.2e}"),
                factor,
                against: loss > 0.0,
                df,
            }
        }
        ClaimTest::Equivalent(m) => {
            let delta = m.of(mb);
            let half = t_quantile(1.0 - claim.alpha, d.df) * d.se;
            let (lo, hi) = (d.mean - half, d.mean + half);
            // TOST: both one-sided tests reject |difference| ≥ δ; reversed: one rejects |difference| ≤ δ.
            let p_hold =
                p_above(d.mean + delta, d.se, d.df).max(p_above(delta - d.mean, d.se, d.df));
            let p_rev =
                p_above(d.mean - delta, d.se, d.df).min(p_above(-delta - d.mean, d.se, d.df));
            let (direction, p) = pick(p_hold, p_rev);
            Decision {
                direction,
                p: Some(p),
                detail: format!(
                    "{how}, {:.0}% CI of the difference [{lo:.3e}, {hi:.3e}], δ = {delta:.3e}, p = {p:.2e}",
                    100.0 * (1.0 - 2.0 * claim.alpha)
                ),
                factor,
                against: d.mean.abs() >= delta,
                df,
            }
        }
        ClaimTest::NotWorse(m) => {
            let delta = m.of(mb);
            let half = t_quantile(1.0 - claim.alpha, d.df) * d.se;
            let (direction, p) = pick(
                p_above(delta - loss, d.se, d.df),
                p_above(loss - delta, d.se, d.df),
            );
            Decision {
                direction,
                p: Some(p),
                detail: format!(
                    "{how}, loss {loss:.3e}, one-sided {:.0}% bounds [{:.3e}, {:.3e}], δ = {delta:.3e}, p = {p:.2e}",
                    100.0 * (1.0 - claim.alpha),
                    loss - half,
                    loss + half
                ),
                factor,
                against: loss >= delta,
                df,
            }
        }
    }
}

/// Interpolates a curve (points sorted by x) at `x` on log–log axes (linear where a value is not positive);
/// `None` outside the curve's range.
fn interpolate(curve: &[(f64, f64)], x: f64) -> Option<f64> {
    let first = curve.first()?;
    let last = curve.last()?;
    let tol = 1e-9 * x.abs().max(f64::MIN_POSITIVE);
    if x < first.0 - tol || x > last.0 + tol {
        return None;
    }
    for w in curve.windows(2) {
        let ((x0, y0), (x1, y1)) = (w[0], w[1]);
        if (x - x0).abs() <= tol {
            return Some(y0);
        }
        if (x - x1).abs() <= tol {
            return Some(y1);
        }
        if x0 < x && x < x1 {
            let logx = x0 > 0.0 && x1 > 0.0;
            let logy = y0 > 0.0 && y1 > 0.0;
            let (u0, u1, u) = if logx {
                (x0.ln(), x1.ln(), x.ln())
            } else {
                (x0, x1, x)
            };
            let t = (u - u0) / (u1 - u0);
            return Some(if logy {
                (y0.ln() + t * (y1.ln() - y0.ln())).exp()
            } else {
                y0 + t * (y1 - y0)
            });
        }
    }
    (curve.len() == 1 && (x - first.0).abs() <= tol).then_some(first.1)
}

fn describe(ctx: &[(String, Value)]) -> String {
    if ctx.is_empty() {
        "everywhere".into()
    } else {
        ctx.iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The members that stand for one group in a comparison ([`GroupMode`]): all of them, the best by mean, or
/// one sample of their mean over the replicates every member has (none when they share no replicate; its
/// per-item outcomes the members' mean where every member has them).
fn representatives(claim: &ClaimSpec, side: &[Side]) -> Vec<Side> {
    match claim.group {
        GroupMode::All => side.to_vec(),
        GroupMode::Any => side
            .iter()
            .min_by(|x, y| {
                let (a, b) = (mean(&x.1), mean(&y.1));
                match claim.better {
                    Better::Lower => a.total_cmp(&b),
                    Better::Higher => b.total_cmp(&a),
                }
            })
            .cloned()
            .into_iter()
            .collect(),
        GroupMode::Mean if side.len() == 1 => side.to_vec(),
        GroupMode::Mean => {
            let s: Sample = side[0]
                .1
                .keys()
                .filter(|k| side.iter().all(|(_, s, _)| s.contains_key(*k)))
                .map(|k| {
                    let sum: f64 = side.iter().map(|(_, s, _)| s[k]).sum();
                    (k.clone(), sum / side.len() as f64)
                })
                .collect();
            let items = side
                .iter()
                .map(|(_, _, i)| i.as_ref())
                .collect::<Option<Vec<_>>>()
                .filter(|all| all.iter().all(|i| i.len() == all[0].len()))
                .map(|all| {
                    (0..all[0].len())
                        .map(|j| all.iter().map(|i| i[j]).sum::<f64>() / all.len() as f64)
                        .collect()
                });
            let names: Vec<&str> = side.iter().map(|(n, _, _)| n.as_str()).collect();
            if s.is_empty() {
                Vec::new()
            } else {
                vec![(format!("mean({})", names.join(", ")), s, items)]
            }
        }
    }
}

/// Decides a claim on the computed cells.
pub fn evaluate(claim: &ClaimSpec, points: &[Point]) -> ClaimVerdict {
    let mut remarks = Vec::new();
    let passes = |p: &Point| {
        claim
            .filter
            .iter()
            .all(|(k, vals)| p.get(k).is_some_and(|v| vals.contains(v)))
            && p.value.is_finite()
            && claim
                .order
                .iter()
                .flatten()
                .any(|g| p.get(&claim.by).is_some_and(|v| v.to_string() == *g))
    };
    let mut selected: Vec<&Point> = points.iter().filter(|p| passes(p)).collect();
    if claim.timing {
        let busy = selected.iter().filter(|p| p.quiet == Some(false)).count();
        let unknown = selected.iter().filter(|p| p.quiet.is_none()).count();
        let n = selected.len();
        selected.retain(|p| p.quiet != Some(false));
        if busy > 0 {
            remarks.push(format!(
                "{busy} of {n} cells were timed on a busy machine (load average at or above the CPU count, or above \
                 the run's own threads plus one) and are left out."
            ));
        }
        if unknown > 0 {
            remarks.push(format!(
                "Timings unverified: the load was not recorded for {unknown} of {n} cells (computed before \
                 per-cell load was recorded), so they may come from a busy machine."
            ));
        }
        // Times of two machine kinds differ 2–3×: only the kind with the most cells is compared (cells whose
        // kind was not recorded count as one kind of their own).
        let mut kinds: Vec<(&str, usize)> = Vec::new();
        for p in &selected {
            match kinds.iter_mut().find(|(k, _)| *k == p.machine) {
                Some((_, c)) => *c += 1,
                None => kinds.push((p.machine.as_str(), 1)),
            }
        }
        if kinds.len() > 1 {
            kinds.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let kept = kinds[0].0.to_string();
            let n = selected.len();
            selected.retain(|p| p.machine == kept);
            remarks.push(format!(
                "Times of one machine kind only: {} of {n} cells, on {}; the other {} ran on another kind and \
                 are left out.",
                selected.len(),
                if kept.is_empty() { "a kind not recorded" } else { kept.as_str() },
                n - selected.len()
            ));
        }
    }
    if claim.scale == Scale::Log {
        let bad: Vec<&&Point> = selected.iter().filter(|p| p.value <= 0.0).collect();
        if let Some(first) = bad.first() {
            remarks.push(format!(
                "scale = \"log\" needs positive values of {}: {} of {} cells have a value ≤ 0 (e.g. {}: {}); not \
                 tested.",
                claim.metric,
                bad.len(),
                selected.len(),
                describe(&first.params),
                first.value
            ));
            return ClaimVerdict {
                word: "not evaluated".into(),
                holds: 0,
                reversed: 0,
                inconclusive: 0,
                leaning_against: 0,
                family: 0,
                pairs: None,
                comparisons: Vec::new(),
                remarks,
            };
        }
    }
    let along = claim.budget.as_ref().map(|b| b.along.as_str());
    let rep = claim.replicate.as_str();
    let skip = |k: &str| k == claim.by || k == "seed" || k == rep || Some(k) == along;
    // Contexts in first-seen order.
    let mut contexts: Vec<Vec<(String, Value)>> = Vec::new();
    for p in &selected {
        let ctx: Vec<(String, Value)> =
            p.params.iter().filter(|(k, _)| !skip(k)).cloned().collect();
        if !contexts.contains(&ctx) {
            contexts.push(ctx);
        }
    }
    // (context, a, b, means of the samples, decision) of every comparison, decided after Holm's adjustment.
    type Pending = (String, String, String, (f64, f64), Decision);
    let mut decided: Vec<Pending> = Vec::new();
    for ctx in &contexts {
        let members: Vec<&&Point> = selected
            .iter()
            .filter(|p| ctx.iter().all(|(k, v)| p.get(k) == Some(v)))
            .collect();
        let replicate_of = |p: &Point| p.get(rep).map_or_else(String::new, |v| v.to_string());
        let by_of = |p: &Point| p.get(&claim.by).map(|v| v.to_string()).unwrap_or_default();
        for pair in claim.order.windows(2) {
            let names: Vec<&String> = pair.iter().flatten().collect();
            // Samples of each member at each comparison point (one point, or one per budget value), and
            // each member's per-item outcomes averaged over its cells (claims paired over items).
            let mut at_points: Vec<(String, BTreeMap<String, Sample>)> = Vec::new();
            let mut member_items: BTreeMap<String, Vec<f64>> = BTreeMap::new();
            match &claim.budget {
                None => {
                    // member -> replicate -> (sum, count): several seeds of one replicate are averaged
                    let mut sums: BTreeMap<String, BTreeMap<String, (f64, usize)>> =
                        BTreeMap::new();
                    // member -> (per-item sums, cells), or None once two cells' item counts differ
                    let mut item_sums: BTreeMap<String, Option<(Vec<f64>, usize)>> =
                        BTreeMap::new();
                    for p in &members {
                        let v = by_of(p);
                        if !names.contains(&&v) {
                            continue;
                        }
                        if claim.items.is_some() {
                            let e = item_sums
                                .entry(v.clone())
                                .or_insert_with(|| Some((vec![0.0; p.items.len()], 0)));
                            match e {
                                Some((sum, n)) if sum.len() == p.items.len() => {
                                    for (s, &x) in sum.iter_mut().zip(&p.items) {
                                        *s += f64::from(u8::from(x));
                                    }
                                    *n += 1;
                                }
                                _ => *e = None,
                            }
                        }
                        let e = sums
                            .entry(v)
                            .or_default()
                            .entry(replicate_of(p))
                            .or_insert((0.0, 0));
                        e.0 += p.value;
                        e.1 += 1;
                    }
                    let samples: BTreeMap<String, Sample> = sums
                        .into_iter()
                        .map(|(m, reps)| {
                            (
                                m,
                                reps.into_iter()
                                    .map(|(r, (sum, n))| (r, sum / n as f64))
                                    .collect(),
                            )
                        })
                        .collect();
                    at_points.push((describe(ctx), samples));
                    for (m, sums) in item_sums {
                        match sums {
                            Some((sum, n)) if n > 0 && !sum.is_empty() => {
                                member_items
                                    .insert(m, sum.into_iter().map(|x| x / n as f64).collect());
                            }
                            _ => remarks.push(format!(
                                "{}: the cells of {m} record no item outcomes or different numbers of them; \
                                 compared without pairing over items.",
                                describe(ctx)
                            )),
                        }
                    }
                }
                Some(b) => {
                    // member -> seed -> curve (x, y), and member -> along value -> x values
                    let mut curves: BTreeMap<String, BTreeMap<String, Vec<(f64, f64)>>> =
                        BTreeMap::new();
                    let mut xs: BTreeMap<String, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
                    for p in &members {
                        let v = by_of(p);
                        if !names.contains(&&v) || !p.at.is_finite() {
                            continue;
                        }
                        curves
                            .entry(v.clone())
                            .or_default()
                            .entry(replicate_of(p))
                            .or_default()
                            .push((p.at, p.value));
                        let a = p.get(&b.along).map(|x| x.to_string()).unwrap_or_default();
                        xs.entry(v).or_default().entry(a).or_default().push(p.at);
                    }
                    for c in curves.values_mut().flat_map(|m| m.values_mut()) {
                        c.sort_by(|x, y| x.0.total_cmp(&y.0));
                    }
                    // The common range: inside every seed's curve of every member present.
                    let (mut lo, mut hi) = (f64::NEG_INFINITY, f64::INFINITY);
                    for c in curves.values().flat_map(|m| m.values()) {
                        if let (Some(f), Some(l)) = (c.first(), c.last()) {
                            lo = lo.max(f.0);
                            hi = hi.min(l.0);
                        }
                    }
                    if curves.len() < 2 || lo > hi {
                        remarks.push(format!(
                            "{}: the curves of {} share no range of {}; not compared there.",
                            describe(ctx),
                            pair.iter()
                                .map(|g| g.join("/"))
                                .collect::<Vec<_>>()
                                .join(" vs "),
                            b.at
                        ));
                        continue;
                    }
                    let mut grid: Vec<f64> = xs
                        .values()
                        .flat_map(|m| m.values())
                        .map(|v| v.iter().sum::<f64>() / v.len() as f64)
                        .filter(|x| *x >= lo * (1.0 - 1e-12) && *x <= hi * (1.0 + 1e-12))
                        .collect();
                    grid.sort_by(f64::total_cmp);
                    grid.dedup_by(|x, y| (*x - *y).abs() <= 1e-9 * y.abs());
                    remarks.push(format!(
                        "{}: compared at {} equal values of {} in [{lo:.4e}, {hi:.4e}] (the range where every curve has points).",
                        describe(ctx),
                        grid.len(),
                        b.at
                    ));
                    for x in grid {
                        let mut samples: BTreeMap<String, Sample> = BTreeMap::new();
                        for (member, seeds) in &curves {
                            for (seed, curve) in seeds {
                                if let Some(y) = interpolate(curve, x) {
                                    samples
                                        .entry(member.clone())
                                        .or_default()
                                        .insert(seed.clone(), y);
                                }
                            }
                        }
                        at_points.push((format!("{}, {}={x:.4e}", describe(ctx), b.at), samples));
                    }
                }
            }
            for (where_, samples) in at_points {
                let sides: Vec<Vec<Side>> = pair
                    .iter()
                    .map(|g| {
                        g.iter()
                            .filter_map(|m| {
                                samples.get(m).filter(|s| !s.is_empty()).map(|s| {
                                    let s = match claim.scale {
                                        Scale::Linear => s.clone(),
                                        Scale::Log => {
                                            s.iter().map(|(k, v)| (k.clone(), v.ln())).collect()
                                        }
                                    };
                                    (m.clone(), s, member_items.get(m).cloned())
                                })
                            })
                            .collect()
                    })
                    .collect();
                if sides.iter().any(Vec::is_empty) {
                    continue;
                }
                let (left, right) = (
                    representatives(claim, &sides[0]),
                    representatives(claim, &sides[1]),
                );
                for (na, sa, ia) in &left {
                    for (nb, sb, ib) in &right {
                        let items = ia.as_deref().zip(ib.as_deref());
                        decided.push((
                            where_.clone(),
                            na.clone(),
                            nb.clone(),
                            (mean(sa), mean(sb)),
                            decide(claim, sa, sb, items),
                        ));
                    }
                }
            }
        }
    }
    // Holm's step-down over the claim's tested comparisons.
    let tested: Vec<usize> = (0..decided.len())
        .filter(|&i| decided[i].4.p.is_some())
        .collect();
    let family = tested.len();
    let adjusted = crate::stats::holm_adjust(
        &tested
            .iter()
            .map(|&i| decided[i].4.p.unwrap_or(1.0))
            .collect::<Vec<_>>(),
    );
    let mut adjusted_of = vec![None; decided.len()];
    for (&i, &q) in tested.iter().zip(&adjusted) {
        adjusted_of[i] = Some(q);
    }
    let comparisons: Vec<Comparison> = decided
        .into_iter()
        .zip(adjusted_of)
        .map(|((context, a, b, means, d), q)| {
            let outcome = match q {
                Some(q) if q < claim.alpha => d.direction,
                Some(_) => Outcome::Inconclusive,
                None => d.direction,
            };
            let detail = match q {
                Some(q) if family > 1 => format!("{}, Holm-adjusted p = {q:.2e}", d.detail),
                _ => d.detail,
            };
            let means = match claim.scale {
                Scale::Linear => means,
                Scale::Log => (means.0.exp(), means.1.exp()),
            };
            Comparison {
                context,
                a,
                b,
                means,
                outcome,
                detail,
                factor: d.factor,
                against: d.against,
                p: d.p,
                df: d.df,
            }
        })
        .collect();
    let count = |o: Outcome| comparisons.iter().filter(|c| c.outcome == o).count();
    let pair_counts = (
        count(Outcome::Holds),
        count(Outcome::Reversed),
        count(Outcome::Inconclusive),
    );
    // The units the word counts: the comparisons, or for a `best` claim each (context, claimed-best member).
    let units: Vec<(Outcome, bool)> = if claim.best {
        let mut keys: Vec<(&str, &str)> = Vec::new();
        for c in &comparisons {
            if !keys.contains(&(c.context.as_str(), c.a.as_str())) {
                keys.push((c.context.as_str(), c.a.as_str()));
            }
        }
        keys.iter()
            .map(|(ctx, a)| {
                let here: Vec<&Comparison> = comparisons
                    .iter()
                    .filter(|c| c.context == *ctx && c.a == *a)
                    .collect();
                let outcome = if here.iter().all(|c| c.outcome == Outcome::Holds) {
                    Outcome::Holds
                } else if here.iter().any(|c| c.outcome == Outcome::Reversed) {
                    Outcome::Reversed
                } else {
                    Outcome::Inconclusive
                };
                (outcome, here.iter().any(|c| c.against))
            })
            .collect()
    } else {
        comparisons.iter().map(|c| (c.outcome, c.against)).collect()
    };
    let unit_count = |o: Outcome| units.iter().filter(|u| u.0 == o).count();
    let (holds, reversed, inconclusive) = (
        unit_count(Outcome::Holds),
        unit_count(Outcome::Reversed),
        unit_count(Outcome::Inconclusive),
    );
    let leaning_against = units
        .iter()
        .filter(|u| u.0 == Outcome::Inconclusive && u.1)
        .count();
    let leaning_for = inconclusive - leaning_against;
    let n = units.len();
    let mut word = if n == 0 {
        "not evaluated".to_string()
    } else if holds == n {
        "holds".into()
    } else if holds == 0 && reversed == 0 {
        "within noise".into()
    } else if holds > reversed + leaning_against {
        if leaning_against > 0 {
            format!("holds in part; leaning against in {leaning_against}")
        } else {
            "holds in part".into()
        }
    } else if reversed > holds + leaning_for
        || (holds == 0 && reversed + leaning_against > leaning_for)
    {
        "does not hold".into()
    } else {
        "mixed".into()
    };
    if let ClaimTest::Ratio {
        factor,
        reading,
        tolerance,
    } = claim.test
    {
        let fs: Vec<f64> = comparisons
            .iter()
            .filter_map(|c| c.factor)
            .filter(|f| f.is_finite() && *f > 0.0)
            .collect();
        if !fs.is_empty() {
            let (measured, what) = match reading {
                FactorReading::UpTo => (fs.iter().copied().fold(f64::MIN, f64::max), "largest"),
                FactorReading::AtLeast => (fs.iter().copied().fold(f64::MAX, f64::min), "smallest"),
                FactorReading::About => (
                    (fs.iter().map(|f| f.ln()).sum::<f64>() / fs.len() as f64).exp(),
                    "geometric mean",
                ),
            };
            let agrees = match reading {
                FactorReading::AtLeast => measured >= factor / tolerance,
                _ => measured >= factor / tolerance && measured <= factor * tolerance,
            };
            let lo = fs.iter().copied().fold(f64::MAX, f64::min);
            let hi = fs.iter().copied().fold(f64::MIN, f64::max);
            remarks.push(format!(
                "Measured factor {measured:.3}× ({what} of {} comparisons, range {lo:.3}–{hi:.3}×) beside the paper's {factor}×: {}.",
                fs.len(),
                if agrees {
                    format!("agrees (within a factor {tolerance})")
                } else {
                    format!("differs by more than a factor {tolerance}")
                }
            ));
            // A factor that does not agree is never "holds": the direction holds, the size does not.
            if !agrees && (word == "holds" || word.starts_with("holds in part")) {
                word = if word == "holds" {
                    "holds in part; factor differs".into()
                } else {
                    format!("{word}; factor differs")
                };
            }
        }
    }
    // Underpowered: every comparison a t-test with df ≤ 2 (or no test at all).
    let dfs: Vec<Option<f64>> = comparisons.iter().map(|c| c.df).collect();
    if !dfs.is_empty() && dfs.iter().all(|d| d.is_some_and(|d| d <= 2.0)) {
        let max = dfs.iter().flatten().copied().fold(0.0, f64::max);
        let df = if max == 0.0 {
            "one value each".to_string()
        } else if dfs.iter().flatten().all(|d| *d == max) && max.fract() == 0.0 {
            format!("df = {max}")
        } else {
            format!("df ≤ {}", (max * 10.0).ceil() / 10.0)
        };
        remarks.push(format!(
            "Underpowered: every comparison's test has {} (too few replicates to decide any but large effects).",
            if max == 0.0 { "one value each side, no test possible".to_string() } else { df.clone() }
        ));
        word = if word == "within noise" {
            format!("underpowered ({df})")
        } else {
            format!("{word} (underpowered: {df})")
        };
    }
    if claim.timing
        && remarks.iter().any(|r| r.starts_with("Timings unverified"))
        && word != "not evaluated"
    {
        word = format!("{word} (timings unverified)");
    }
    ClaimVerdict {
        word,
        holds,
        reversed,
        inconclusive,
        leaning_against,
        family,
        pairs: claim.best.then_some(pair_counts),
        comparisons,
        remarks,
    }
}

/// The claims section of an experiment's report.
pub fn claims_markdown(claims: &[(&ClaimSpec, ClaimVerdict)]) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "### Claims\n\n| claim | test | verdict | holds | reversed | inconclusive |\n|---|---|---|---|---|---|"
    );
    for (c, v) in claims {
        let _ = writeln!(
            out,
            "| {} | {}{}{}{} | **{}** | {} | {} | {} of {}{} |",
            c.text,
            c.test.name(),
            c.budget
                .as_ref()
                .map_or_else(String::new, |b| format!(", at equal {}", b.at)),
            if c.items.is_some() {
                ", paired over test items"
            } else {
                ""
            },
            match (c.scale, c.best) {
                (Scale::Log, true) => ", log scale, best per context",
                (Scale::Log, false) => ", log scale",
                (Scale::Linear, true) => ", best per context",
                (Scale::Linear, false) => "",
            },
            v.word,
            v.holds,
            v.reversed,
            v.inconclusive,
            v.total(),
            if v.leaning_against > 0 {
                format!(" ({} against)", v.leaning_against)
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(out);
    for (c, v) in claims {
        let _ = writeln!(out, "- **{}** — the paper: {}", c.text, c.quote);
        let _ = writeln!(
            out,
            "  - {} (comparisons at α = {}{}{}; groups count {}).",
            v.counts(),
            c.alpha,
            if v.family > 1 {
                format!(", Holm-adjusted over {} comparisons", v.family)
            } else {
                String::new()
            },
            if c.scale == Scale::Log {
                format!(", tests on ln({})", c.metric)
            } else {
                String::new()
            },
            match c.group {
                GroupMode::All => "with every member",
                GroupMode::Any => "with their best member",
                GroupMode::Mean => "with their members' mean",
            }
        );
        for r in &v.remarks {
            let _ = writeln!(out, "  - {r}");
        }
        for cmp in v
            .comparisons
            .iter()
            .filter(|x| x.outcome == Outcome::Reversed)
            .take(5)
        {
            let what = match c.test {
                ClaimTest::Equivalent(_) => "outside the margin",
                ClaimTest::NotWorse(_) => "worse by more than the margin",
                _ => "reversed",
            };
            let _ = writeln!(
                out,
                "  - {what} at {}: {} {:.4e} vs {} {:.4e} ({})",
                cmp.context, cmp.a, cmp.means.0, cmp.b, cmp.means.1, cmp.detail
            );
        }
    }
    let _ = writeln!(
        out,
        "\nEach comparison is decided by a test over the seeds (paired where both sides have the same seeds, \
         Welch's otherwise), its p-value Holm-adjusted over the claim's comparisons: **holds** when the claimed \
         relation is significant, **reversed** when the opposite is, **inconclusive** when the gap is within \
         noise — *against* the claim when its means point the other way. A claim **holds** when every comparison \
         holds, **holds in part** when the holds outnumber the reversed and the inconclusive-against ones \
         together, **does not hold** when the reversed outnumber the holds and the other inconclusive ones \
         together (or, none holding, the reversed and inconclusive-against ones outnumber the rest), is **within noise** when none is decided and **mixed** otherwise; a ratio claim whose factor \
         differs from the paper's is at most **holds in part**, and a claim whose tests all have df ≤ 2 is marked \
         **underpowered**. Claims and their tests: README, \"Writing an experiment\".\n"
    );
    if claims.iter().any(|(c, _)| c.best) {
        let _ = writeln!(
            out,
            "Claims judged *best per context* count each context (and each member claimed best) once: **best** \
             (holds) where it beats every other member significantly, **beaten** (reversed) where one beats it \
             significantly, inconclusive otherwise — against the claim where another member has the better \
             mean; the pair-by-pair counts are given beside.\n"
        );
    }
    if claims.iter().any(|(c, _)| c.items.is_some()) {
        let _ = writeln!(
            out,
            "Claims tested *paired over test items* compare two classifiers image by image: each \
             side's per-image outcomes are averaged over its seeds, and the difference of the accuracies is \
             tested with the variance of the per-image differences plus the spread over the seeds (McNemar's \
             test in its large-sample form for one seed each).\n"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claim(order: &[&[&str]], test: ClaimTest) -> ClaimSpec {
        ClaimSpec {
            text: "t".into(),
            quote: "q".into(),
            metric: "err".into(),
            better: Better::Lower,
            by: "method".into(),
            order: order
                .iter()
                .map(|g| g.iter().map(|s| s.to_string()).collect())
                .collect(),
            filter: Vec::new(),
            group: GroupMode::All,
            test,
            alpha: 0.05,
            exact: false,
            binomial_n: None,
            items: None,
            replicate: "seed".into(),
            budget: None,
            timing: false,
            scale: Scale::Linear,
            best: false,
        }
    }

    fn pt(method: &str, seed: i64, value: f64) -> Point {
        Point {
            params: vec![
                ("method".into(), Value::Str(method.into())),
                ("seed".into(), Value::Int(seed)),
            ],
            value,
            at: f64::NAN,
            quiet: None,
            machine: String::new(),
            items: Vec::new(),
        }
    }

    /// Seed-to-seed noise shared by the methods (what pairing removes) plus small own noise.
    fn noisy(method: &str, base: f64, own: f64) -> Vec<Point> {
        let shared = [0.3, -0.5, 0.1, 0.4, -0.2, 0.6, -0.4, -0.3];
        let jitter = [0.01, -0.02, 0.015, -0.005, 0.02, -0.01, 0.0, 0.005];
        (0..8)
            .map(|s| {
                pt(
                    method,
                    s,
                    base + shared[s as usize] + own * jitter[s as usize],
                )
            })
            .collect()
    }

    fn run(c: &ClaimSpec, pts: Vec<Point>) -> ClaimVerdict {
        evaluate(c, &pts)
    }

    #[test]
    fn student_t_matches_tables() {
        // t_{0.975, 4} = 2.776 (standard tables), so |t| = 2.776 gives p = 0.05.
        assert!((t_quantile(0.975, 4.0) - 2.776_445).abs() < 1e-5);
        let p = p_two_sided(DiffStat {
            mean: 2.776_445,
            se: 1.0,
            df: 4.0,
        });
        assert!((p - 0.05).abs() < 1e-5, "{p}");
        // Large df: the normal, z_{0.975} = 1.959964.
        assert!((t_quantile(0.975, 1e9) - 1.959_964).abs() < 1e-6);
        assert!((t_quantile(0.975, 1e5 - 1.0) - 1.959_964).abs() < 1e-4);
    }

    #[test]
    fn order_holds_reverses_and_is_inconclusive() {
        let c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        // A gap of 0.1 with shared noise of ±0.5: pairing resolves it.
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 1.1, 1.0));
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.holds, v.reversed), ("holds", 1, 0));
        let mut p = noisy("a", 1.1, 1.0);
        p.extend(noisy("b", 1.0, 1.0));
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.reversed), ("does not hold", 1));
        // A gap of 0.001 beside own noise of ±0.02: within noise.
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 1.001, -1.0));
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.inconclusive), ("within noise", 1));
    }

    #[test]
    fn welch_when_seeds_differ() {
        let c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        // Unpaired, the shared seed noise (sd ≈ 0.4) hides a gap of 0.1 ...
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 1.1, 1.0).into_iter().map(|mut x| {
            x.params[1].1 = Value::Int(x.params[1].1.as_int().unwrap_or(0) + 100);
            x
        }));
        let v = run(&c, p);
        assert_eq!(v.inconclusive, 1);
        assert!(v.comparisons[0].detail.starts_with("Welch"));
        // ... but not a gap of 2.
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 3.0, 1.0).into_iter().map(|mut x| {
            x.params[1].1 = Value::Int(x.params[1].1.as_int().unwrap_or(0) + 100);
            x
        }));
        assert_eq!(run(&c, p).holds, 1);
    }

    #[test]
    fn a_group_counts_with_every_member_by_default() {
        // "a and n beat x": n does, a does not.
        let mut p = noisy("a", 1.5, 1.0);
        p.extend(noisy("n", 1.0, 1.0));
        p.extend(noisy("x", 1.2, 1.0));
        let mut c = claim(&[&["a", "n"], &["x"]], ClaimTest::Order);
        let v = run(&c, p.clone());
        assert_eq!((v.word.as_str(), v.holds, v.reversed), ("mixed", 1, 1));
        c.group = GroupMode::Any;
        let v = run(&c, p.clone());
        assert_eq!((v.word.as_str(), v.holds, v.total()), ("holds", 1, 1));
        assert_eq!(v.comparisons[0].a, "n");
        // The group's mean (1.25) is worse than x (1.2).
        c.group = GroupMode::Mean;
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.reversed), ("does not hold", 1));
        assert_eq!(v.comparisons[0].a, "mean(a, n)");
    }

    #[test]
    fn equivalence_needs_the_interval_inside_the_margin() {
        // Paired differences -0.005 ± 0.026 (8 seeds): the 90 % interval is about ±0.017 wide.
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 1.005, -1.0));
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::Equivalent(Margin::Abs(0.05))),
            p.clone(),
        );
        assert_eq!(v.word, "holds");
        // A margin smaller than the noise cannot be shown.
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::Equivalent(Margin::Abs(0.006))),
            p,
        );
        assert_eq!(v.word, "within noise");
        // A difference of 0.2 is outside a 5 % margin.
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 1.2, 1.0));
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::Equivalent(Margin::Rel(0.05))),
            p,
        );
        assert_eq!(v.word, "does not hold");
    }

    /// A cell of a classifier with the given per-item outcomes (its accuracy the items' mean).
    fn classifier(method: &str, seed: i64, correct: Vec<bool>) -> Point {
        let acc = correct.iter().filter(|&&c| c).count() as f64 / correct.len() as f64;
        Point {
            items: correct,
            ..pt(method, seed, acc)
        }
    }

    /// Outcomes on `n` items: both right on the first `both`, only `a` right on the next `only_a`, only `b`
    /// right on the next `only_b`, both wrong on the rest.
    fn discordant(n: usize, both: usize, only_a: usize, only_b: usize) -> (Vec<bool>, Vec<bool>) {
        let a = (0..n).map(|i| i < both + only_a).collect();
        let b = (0..n)
            .map(|i| i < both || (both + only_a..both + only_a + only_b).contains(&i))
            .collect();
        (a, b)
    }

    fn accuracy_claim(test: ClaimTest) -> ClaimSpec {
        ClaimSpec {
            better: Better::Higher,
            metric: "accuracy".into(),
            items: Some("correct".into()),
            ..claim(&[&["a"], &["b"]], test)
        }
    }

    #[test]
    fn paired_items_equal_mcnemars_statistic() {
        // One cell each on N = 1000 items: a right alone on 40, b right alone on 10. The paired z is
        // (n10 - n01)/N over sqrt(((n10 + n01) - (n10 - n01)^2/N) / ((N - 1) N)), McNemar's large-sample
        // statistic up to the (n10 - n01)^2/N and N - 1 terms.
        let (n, n10, n01) = (1000.0_f64, 40.0_f64, 10.0_f64);
        let (a, b) = discordant(1000, 700, 40, 10);
        let c = accuracy_claim(ClaimTest::Order);
        let v = run(&c, vec![classifier("a", 0, a), classifier("b", 0, b)]);
        assert_eq!(v.word, "holds");
        let z =
            (n10 - n01) / n / (((n10 + n01) - (n10 - n01).powi(2) / n) / ((n - 1.0) * n)).sqrt();
        let p = 2.0 * (1.0 - standard_normal().cdf(z));
        let detail = &v.comparisons[0].detail;
        assert!(detail.contains("paired over 1000 test items"), "{detail}");
        let shown: f64 = detail.rsplit("p = ").next().unwrap().parse().unwrap();
        assert!((shown - p).abs() <= 0.005 * p, "{shown} vs {p}");
        // McNemar (no continuity correction): z = 30 / sqrt(50) = 4.24; ours within 1 % of it.
        assert!((z - 30.0 / 50.0_f64.sqrt()).abs() < 0.01 * z);
    }

    #[test]
    fn pairing_over_items_resolves_what_the_binomial_spread_cannot() {
        // 1.5 points apart on 1,000 items, disagreeing on 25 of them: the unpaired binomial spread
        // (sd of the difference about 0.02) cannot tell them apart, the paired test can.
        let (a, b) = discordant(1000, 720, 20, 5);
        let pts = vec![classifier("a", 0, a), classifier("b", 0, b)];
        assert_eq!(
            run(&accuracy_claim(ClaimTest::Order), pts.clone()).word,
            "holds"
        );
        let unpaired = ClaimSpec {
            items: None,
            binomial_n: Some(1000),
            ..accuracy_claim(ClaimTest::Order)
        };
        assert_eq!(run(&unpaired, pts.clone()).word, "within noise");
        // The same gap the other way is reversed; a gap of 2 items in 40 disagreements is within noise.
        let flipped: Vec<Point> = pts
            .into_iter()
            .map(|p| {
                let m = if p.get("method") == Some(&Value::Str("a".into())) {
                    "b"
                } else {
                    "a"
                };
                Point {
                    params: vec![
                        ("method".into(), Value::Str(m.into())),
                        ("seed".into(), Value::Int(0)),
                    ],
                    ..p
                }
            })
            .collect();
        assert_eq!(
            run(&accuracy_claim(ClaimTest::Order), flipped).word,
            "does not hold"
        );
        let (a, b) = discordant(1000, 720, 21, 19);
        let pts = vec![classifier("a", 0, a), classifier("b", 0, b)];
        assert_eq!(
            run(&accuracy_claim(ClaimTest::Order), pts).word,
            "within noise"
        );
    }

    #[test]
    fn paired_items_add_the_seed_spread_and_decide_non_inferiority() {
        // a: three seeds, right on 27, 28, 29 items where b (deterministic: one cell per seed, the same) is
        // wrong, b right alone on 35, 34, 33: a is 0.7 points below b on average, with about 62 discordant
        // items (paired sd of the difference 0.008). Not worse within a 3-point margin (upper bound 0.020),
        // inconclusive for a 0.1-point one (the bounds straddle it).
        let mut pts = Vec::new();
        let (_, b) = discordant(1000, 700, 27, 35);
        for seed in 0..3 {
            let shift = seed as usize;
            let a: Vec<bool> = (0..1000).map(|i| i < 727 + shift).collect();
            pts.push(classifier("a", seed, a));
            pts.push(classifier("b", seed, b.clone()));
        }
        let v = run(
            &accuracy_claim(ClaimTest::NotWorse(Margin::Abs(0.03))),
            pts.clone(),
        );
        assert_eq!(v.word, "holds", "{:?}", v.comparisons);
        assert!(v.comparisons[0].detail.contains("+ seed spread"));
        let v = run(
            &accuracy_claim(ClaimTest::NotWorse(Margin::Abs(0.001))),
            pts,
        );
        assert_eq!(v.word, "within noise", "{:?}", v.comparisons);
    }

    #[test]
    fn not_worse_is_one_sided() {
        // a is better than b by 0.2: not worse, whatever the margin.
        let mut p = noisy("a", 1.0, 1.0);
        p.extend(noisy("b", 1.2, 1.0));
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::NotWorse(Margin::Abs(0.01))),
            p,
        );
        assert_eq!(v.word, "holds");
        // a is worse by 0.2: more than a 0.05 margin.
        let mut p = noisy("a", 1.2, 1.0);
        p.extend(noisy("b", 1.0, 1.0));
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::NotWorse(Margin::Abs(0.05))),
            p.clone(),
        );
        assert_eq!(v.word, "does not hold");
        // ... but within a 0.5 margin.
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::NotWorse(Margin::Abs(0.5))),
            p,
        );
        assert_eq!(v.word, "holds");
    }

    #[test]
    fn ratio_prints_and_checks_the_factor() {
        let ratio = |factor, reading| ClaimTest::Ratio {
            factor,
            reading,
            tolerance: 2.0,
        };
        // b takes 25× as long as a.
        let mut p: Vec<Point> = (0..4).map(|s| pt("a", s, 1.0 + 0.01 * s as f64)).collect();
        p.extend((0..4).map(|s| pt("b", s, 25.0 + 0.1 * s as f64)));
        let v = run(
            &claim(&[&["a"], &["b"]], ratio(29.0, FactorReading::UpTo)),
            p.clone(),
        );
        assert_eq!(v.word, "holds");
        let f = v.comparisons[0].factor.unwrap_or(0.0);
        assert!((f - 25.15 / 1.015).abs() < 1e-9, "{f}");
        assert!(v.remarks[0].contains("agrees"));
        let v = run(
            &claim(&[&["a"], &["b"]], ratio(150.0, FactorReading::AtLeast)),
            p,
        );
        // A factor that does not agree is never "holds": the direction holds, the size does not.
        assert_eq!(v.word, "holds in part; factor differs");
        assert_eq!((v.holds, v.total()), (1, 1));
    }

    /// A cell in a context `ds` (a second sweep parameter, so that one claim has several comparisons).
    fn ptc(method: &str, ds: &str, seed: i64, value: f64) -> Point {
        let mut p = pt(method, seed, value);
        p.params.insert(1, ("ds".into(), Value::Str(ds.into())));
        p
    }

    /// `a` and `b` in context `ds` over 8 seeds: b − a is `gap` on average beside shared seed noise (what
    /// pairing removes) and own noise of zero mean (sd of the paired difference 0.029, se 0.010): a gap of 0.1
    /// is decided (t = 9.7 on 7 df, p ≈ 3e-5), one of ±0.002 or ±0.006 is not.
    fn pair_in(ds: &str, gap: f64) -> Vec<Point> {
        let shared = [0.3, -0.5, 0.1, 0.4, -0.2, 0.6, -0.4, -0.3];
        let own = [0.01, -0.01, 0.02, -0.02, 0.005, -0.005, 0.015, -0.015];
        let mut p = Vec::new();
        for s in 0..8 {
            p.push(ptc("a", ds, s as i64, 1.0 + shared[s] + own[s]));
            p.push(ptc("b", ds, s as i64, 1.0 + gap + shared[s] - own[s]));
        }
        p
    }

    #[test]
    fn inconclusive_comparisons_count_by_the_direction_of_their_means() {
        let c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        let outcomes = |v: &ClaimVerdict| (v.holds, v.reversed, v.inconclusive, v.leaning_against);
        // One significant hold beside one inconclusive comparison whose means lean for the claim: holds in part.
        let mut p = pair_in("x", 0.1);
        p.extend(pair_in("y", 0.002));
        let v = run(&c, p);
        assert_eq!(outcomes(&v), (1, 0, 1, 0), "{:?}", v.comparisons);
        assert_eq!(v.word, "holds in part");
        // The same hold beside one leaning against: the hold does not outweigh it.
        let mut p = pair_in("x", 0.1);
        p.extend(pair_in("y", -0.002));
        let v = run(&c, p);
        assert_eq!(outcomes(&v), (1, 0, 1, 1), "{:?}", v.comparisons);
        assert_eq!(v.word, "mixed");
        assert!(v
            .counts()
            .ends_with("(1 of them leaning against the claim)"));
        // Two holds outweigh one leaning against, and the word says how many lean against.
        let mut p = pair_in("x", 0.1);
        p.extend(pair_in("y", 0.1));
        p.extend(pair_in("z", -0.002));
        let v = run(&c, p);
        assert_eq!(outcomes(&v), (2, 0, 1, 1), "{:?}", v.comparisons);
        assert_eq!(v.word, "holds in part; leaning against in 1");
        // Symmetrically, one reversal beside one inconclusive comparison leaning for the claim is mixed, and
        // beside one leaning against does not hold.
        let mut p = pair_in("x", -0.1);
        p.extend(pair_in("y", 0.002));
        let v = run(&c, p);
        assert_eq!(outcomes(&v), (0, 1, 1, 0), "{:?}", v.comparisons);
        assert_eq!(v.word, "mixed");
        let mut p = pair_in("x", -0.1);
        p.extend(pair_in("y", -0.002));
        let v = run(&c, p);
        assert_eq!(outcomes(&v), (0, 1, 1, 1), "{:?}", v.comparisons);
        assert_eq!(v.word, "does not hold");
        // With nothing holding, one reversal and one leaning against outweigh one leaning for; beside two
        // leaning for they do not.
        let mut p = pair_in("x", -0.1);
        p.extend(pair_in("y", -0.002));
        p.extend(pair_in("z", 0.002));
        let v = run(&c, p.clone());
        assert_eq!(
            (outcomes(&v), v.word.as_str()),
            ((0, 1, 2, 1), "does not hold")
        );
        p.extend(pair_in("w", 0.002));
        let v = run(&c, p);
        assert_eq!((outcomes(&v), v.word.as_str()), ((0, 1, 3, 1), "mixed"));
        // A hold and a reversal, the third leaning for: neither outweighs the other.
        let mut p = pair_in("x", 0.1);
        p.extend(pair_in("y", -0.1));
        p.extend(pair_in("z", 0.002));
        let v = run(&c, p);
        assert_eq!((outcomes(&v), v.word.as_str()), ((1, 1, 1, 0), "mixed"));
    }

    #[test]
    fn equivalence_and_non_inferiority_lean_by_the_margin() {
        // The difference 0.006 beside a margin of 0.005 is past the margin (leaning against), beside 0.007
        // inside it (leaning for); neither is decided with own noise of ±0.02.
        let mut p = pair_in("x", 0.006);
        p.extend(pair_in("y", 0.006));
        for (test, against) in [
            (ClaimTest::Equivalent(Margin::Abs(0.005)), 2),
            (ClaimTest::Equivalent(Margin::Abs(0.007)), 0),
            (ClaimTest::NotWorse(Margin::Abs(0.001)), 0),
        ] {
            let v = run(&claim(&[&["a"], &["b"]], test.clone()), p.clone());
            assert_eq!(
                (v.inconclusive, v.leaning_against),
                (2, against),
                "{test:?}: {:?}",
                v.comparisons
            );
        }
        // b better than a by 0.006: a's loss 0.006 is past a 0.005 non-inferiority margin.
        let mut p = pair_in("x", -0.006);
        p.extend(pair_in("y", -0.006));
        let v = run(
            &claim(&[&["a"], &["b"]], ClaimTest::NotWorse(Margin::Abs(0.005))),
            p,
        );
        assert_eq!((v.inconclusive, v.leaning_against), (2, 2));
    }

    /// 4 seeds whose paired differences b − a are 0.5, 1.5, 0.5, 1.5 times `scale`: t = 3.46 on 3 df, p ≈ 0.04.
    fn borderline(ds: &str, scale: f64) -> Vec<Point> {
        let mut p = Vec::new();
        for (s, d) in [0.5, 1.5, 0.5, 1.5].into_iter().enumerate() {
            let base = 10.0 + s as f64;
            p.push(ptc("a", ds, s as i64, base));
            p.push(ptc("b", ds, s as i64, base + d * scale));
        }
        p
    }

    #[test]
    fn holm_adjusts_the_p_values_of_one_claim_together() {
        let c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        let p_one = p_two_sided(DiffStat {
            mean: -1.0,
            se: (1.0_f64 / 3.0).sqrt() / 2.0,
            df: 3.0,
        });
        assert!((0.03..0.05).contains(&p_one), "{p_one}");
        // Alone, the comparison holds at α = 0.05 ...
        let v = run(&c, borderline("x", 1.0));
        assert_eq!((v.word.as_str(), v.family), ("holds", 1));
        assert!(!v.comparisons[0].detail.contains("Holm"));
        // ... two such comparisons in one claim do not: Holm's smallest adjusted p-value is 2p > 0.05.
        let mut p = borderline("x", 1.0);
        p.extend(borderline("y", 1.0));
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.holds, v.family), ("within noise", 0, 2));
        let shown = &v.comparisons[0].detail;
        assert!(
            shown.contains(&format!("Holm-adjusted p = {:.2e}", 2.0 * p_one)),
            "{shown}"
        );
        // A strong comparison survives the adjustment and takes the step-down's larger share off the other:
        // 2·p_strong and then 1·p_one < 0.05.
        let mut p = borderline("x", 1.0);
        p.extend(pair_in("y", 0.1));
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.holds), ("holds", 2));
        let md = claims_markdown(&[(&c, v)]);
        assert!(md.contains("Holm-adjusted over 2 comparisons"), "{md}");
        // The interval tests are adjusted too: a borderline non-inferiority comparison (one-sided p ≈ 0.02)
        // holds alone, and three of them (3p > 0.05) do not.
        let ni = claim(&[&["a"], &["b"]], ClaimTest::NotWorse(Margin::Abs(0.0)));
        assert_eq!(run(&ni, borderline("x", 1.0)).word, "holds");
        let mut p = borderline("x", 1.0);
        p.extend(borderline("y", 1.0));
        p.extend(borderline("z", 1.0));
        let v = run(&ni, p);
        assert_eq!((v.word.as_str(), v.family), ("within noise", 3));
    }

    #[test]
    fn log_scale_tests_ratios() {
        // b is 50× a at every seed (up to ±10 %), the seeds spanning three orders of magnitude: on the raw
        // scale the differences' spread hides it, on the log scale it is plain.
        let mut p = Vec::new();
        for (s, base) in [1.0, 100.0, 10.0, 1000.0, 3.0, 30.0]
            .into_iter()
            .enumerate()
        {
            let wobble = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0][s];
            p.push(pt("a", s as i64, base * wobble));
            p.push(pt("b", s as i64, 50.0 * base));
        }
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        let v = run(&c, p.clone());
        assert_eq!(v.word, "within noise", "{:?}", v.comparisons);
        c.scale = Scale::Log;
        let v = run(&c, p.clone());
        assert_eq!(v.word, "holds", "{:?}", v.comparisons);
        assert!(v.comparisons[0].detail.starts_with("paired t on ln(err)"));
        // The means shown are geometric means, and a ratio claim's factor is their ratio.
        let geo = |xs: &[f64]| (xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp();
        let a: Vec<f64> = p.iter().step_by(2).map(|x| x.value).collect();
        let b: Vec<f64> = p.iter().skip(1).step_by(2).map(|x| x.value).collect();
        assert!((v.comparisons[0].means.0 - geo(&a)).abs() < 1e-9 * geo(&a));
        c.test = ClaimTest::Ratio {
            factor: 50.0,
            reading: FactorReading::About,
            tolerance: 2.0,
        };
        let v = run(&c, p.clone());
        let f = v.comparisons[0].factor.unwrap_or(0.0);
        assert!((f - geo(&b) / geo(&a)).abs() < 1e-9 * f, "{f}");
        assert_eq!(v.word, "holds");
        // A value ≤ 0 cannot be logged: the claim is not evaluated and says why.
        p[0].value = 0.0;
        let v = run(&c, p);
        assert_eq!((v.word.as_str(), v.total()), ("not evaluated", 0));
        assert!(
            v.remarks[0].starts_with("scale = \"log\" needs positive values of err: 1 of 12 cells"),
            "{}",
            v.remarks[0]
        );
    }

    #[test]
    fn tests_with_two_or_fewer_degrees_of_freedom_are_underpowered() {
        let c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        // 2 seeds (df = 1), a gap of 0.1 with own noise ±0.02: not decided, and said to be underpowered.
        let two: Vec<Point> = pair_in("x", 0.1)
            .into_iter()
            .filter(|p| p.get("seed").and_then(Value::as_int).unwrap_or(9) < 2)
            .collect();
        let v = run(&c, two);
        assert_eq!(v.total(), 1);
        assert_eq!(v.word, "underpowered (df = 1)");
        assert!(v.remarks.iter().any(|r| r.starts_with("Underpowered")));
        // The same gap over 8 seeds is decided and not underpowered.
        let v = run(&c, pair_in("x", 0.1));
        assert_eq!(v.word, "holds");
        assert!(!v.remarks.iter().any(|r| r.starts_with("Underpowered")));
        // A gap decided even on 2 seeds keeps its word, qualified.
        let mut p = vec![pt("a", 0, 1.0), pt("a", 1, 2.0)];
        p.extend([pt("b", 0, 11.0), pt("b", 1, 12.001)]);
        let v = run(&c, p);
        assert_eq!(v.word, "holds (underpowered: df = 1)");
        // The verdict summary counts the qualified word under its base.
        assert!(v.word.split(" (").next() == Some("holds"));
    }

    /// Member `m` in context `ds`: `offset` above a at every seed, with the shared seed noise and the own
    /// noise of [`pair_in`] (b's sign), so that a against it is as a against b there.
    fn member_in(m: &str, ds: &str, offset: f64) -> Vec<Point> {
        pair_in(ds, offset)
            .into_iter()
            .filter(|p| p.get("method") == Some(&Value::Str("b".into())))
            .map(|mut p| {
                p.params[0].1 = Value::Str(m.into());
                p
            })
            .collect()
    }

    #[test]
    fn best_claims_count_contexts_not_pairs() {
        // "a is best" against b and c in four contexts: best at x; at y and z a beats b but not c (c's mean
        // 0.002 below a's at y, above at z); at w c beats a.
        let mut p = Vec::new();
        for (ds, gap_c) in [("x", 0.1), ("y", -0.002), ("z", 0.002), ("w", -0.1)] {
            p.extend(pair_in(ds, 0.1));
            p.extend(member_in("c", ds, gap_c));
        }
        let mut c = claim(&[&["a"], &["b", "c"]], ClaimTest::Order);
        // Pair by pair: 5 of 8 hold, 1 reversed, 1 leaning against: holds in part.
        let v = run(&c, p.clone());
        assert_eq!(
            (v.holds, v.reversed, v.inconclusive, v.leaning_against),
            (5, 1, 2, 1),
            "{:?}",
            v.comparisons
        );
        assert_eq!(v.word, "holds in part; leaning against in 1");
        // Per context: best at x, beaten at w, inconclusive at y (against) and z (for): mixed.
        c.best = true;
        let v = run(&c, p.clone());
        assert_eq!(
            (v.holds, v.reversed, v.inconclusive, v.leaning_against),
            (1, 1, 2, 1)
        );
        assert_eq!(v.word, "mixed");
        assert!(
            v.counts().starts_with(
                "best in 1, beaten in 1, inconclusive in 2 of 4 contexts (1 of them leaning against the claim); \
                 pair by pair: holds in 5, reversed in 1, inconclusive in 2 of 8"
            ),
            "{}",
            v.counts()
        );
        // Without w and y: best at x, inconclusive but ahead by mean at z: holds in part.
        let p: Vec<Point> = p
            .into_iter()
            .filter(|x| !matches!(x.get("ds"), Some(Value::Str(d)) if d == "w" || d == "y"))
            .collect();
        assert_eq!(run(&c, p).word, "holds in part");
    }

    #[test]
    fn log_log_interpolation_is_exact_for_power_laws() {
        let curve: Vec<(f64, f64)> = [1.0, 2.0, 8.0]
            .iter()
            .map(|&x: &f64| (x, 3.0 * x.powf(-1.5)))
            .collect();
        for x in [1.0, 1.3, 2.0, 5.0, 8.0] {
            let y = interpolate(&curve, x).unwrap_or(f64::NAN);
            assert!((y - 3.0 * f64::powf(x, -1.5)).abs() < 1e-12, "{x}: {y}");
        }
        assert_eq!(interpolate(&curve, 0.5), None);
        assert_eq!(interpolate(&curve, 9.0), None);
    }

    #[test]
    fn equal_budget_compares_inside_the_common_range_only() {
        // Memory bits = m·b: a uses 1 bit per feature, b uses 8; error = 1/√m for both plus seed noise.
        // At equal memory a has 8× the features: lower error; at equal m they tie.
        let mut pts = Vec::new();
        for (method, bits) in [("a", 1.0), ("b", 8.0)] {
            for m in [64.0, 128.0, 256.0, 512.0, 1024.0] {
                for s in 0..4 {
                    let noise = 1.0 + 0.01 * [1.0, -1.0, 0.5, -0.5][s as usize];
                    pts.push(Point {
                        params: vec![
                            ("method".into(), Value::Str(method.into())),
                            ("m".into(), Value::Float(m)),
                            ("seed".into(), Value::Int(s)),
                        ],
                        value: noise / f64::sqrt(m),
                        at: m * bits,
                        quiet: None,
                        machine: String::new(),
                        items: Vec::new(),
                    });
                }
            }
        }
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        // At equal m: identical errors (same noise), so within noise.
        assert_eq!(run(&c, pts.clone()).word, "within noise");
        c.budget = Some(EqualBudget {
            at: "bits".into(),
            along: "m".into(),
        });
        let v = run(&c, pts);
        // Common range of bits: [512, 1024]: a's points 512 and 1024, b's 512 and 1024.
        assert_eq!((v.word.as_str(), v.holds), ("holds", 2));
        assert!(
            v.remarks[0].contains("[5.1200e2, 1.0240e3]"),
            "{}",
            v.remarks[0]
        );
        assert!(v.comparisons.iter().all(|x| x.context.contains("bits=")));
    }

    #[test]
    fn single_values_need_exact_metrics() {
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        let p = vec![pt("a", 0, 1.0), pt("b", 0, 2.0)];
        assert_eq!(run(&c, p.clone()).word, "underpowered (one value each)");
        c.exact = true;
        assert_eq!(run(&c, p).word, "holds");
    }

    #[test]
    fn replicates_can_be_data_sets() {
        // Per data set a beats b by 0.01 with seed noise ±0.05 (3 seeds: inconclusive per data set); over
        // 6 data sets, each averaged over its seeds, the gap is consistent.
        let mut pts = Vec::new();
        for d in 0..6 {
            for s in 0..3 {
                for (m, base) in [("a", 0.80), ("b", 0.81)] {
                    let noise =
                        0.05 * [1.0, -1.0, 0.0][s as usize] * if m == "a" { 1.0 } else { -1.0 };
                    pts.push(Point {
                        params: vec![
                            ("dataset".into(), Value::Int(d)),
                            ("method".into(), Value::Str(m.into())),
                            ("seed".into(), Value::Int(s)),
                        ],
                        value: base + 0.1 * d as f64 + noise,
                        at: f64::NAN,
                        quiet: None,
                        machine: String::new(),
                        items: Vec::new(),
                    });
                }
            }
        }
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        let v = run(&c, pts.clone());
        // (3 seeds: df = 2 per data set)
        assert_eq!((v.word.as_str(), v.total()), ("underpowered (df = 2)", 6));
        c.replicate = "dataset".into();
        let v = run(&c, pts);
        assert_eq!((v.word.as_str(), v.total()), ("holds", 1));
        assert!(v.comparisons[0].detail.starts_with("paired t"));
    }

    #[test]
    fn single_accuracies_use_the_binomial_spread() {
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        c.better = Better::Higher;
        // 0.72 vs 0.70: se = sqrt((0.72·0.28 + 0.70·0.30)/N); z = 0.02/se.
        let p = vec![pt("a", 0, 0.72), pt("b", 0, 0.70)];
        c.binomial_n = Some(200);
        // N = 200: z ≈ 0.44, within noise.
        assert_eq!(run(&c, p.clone()).word, "within noise");
        // N = 20,000: z ≈ 4.4.
        c.binomial_n = Some(20_000);
        let v = run(&c, p);
        assert_eq!(v.word, "holds");
        assert!(v.comparisons[0].detail.starts_with("two-proportion z"));
    }

    #[test]
    fn timing_claims_drop_busy_cells_and_flag_unrecorded_load() {
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        c.timing = true;
        let mut p: Vec<Point> = (0..3).map(|s| pt("a", s, 1.0 + 0.01 * s as f64)).collect();
        p.extend((0..3).map(|s| pt("b", s, 5.0 + 0.02 * s as f64)));
        let v = run(&c, p.clone());
        assert_eq!(v.word, "holds (underpowered: df = 2) (timings unverified)");
        for x in &mut p {
            x.quiet = Some(true);
        }
        p[0].quiet = Some(false);
        let v = run(&c, p);
        assert_eq!(v.word, "holds");
        assert!(v.remarks[0].starts_with("1 of 6 cells"));
        // a now has seeds 1, 2 and b 0, 1, 2: Welch.
        assert!(v.comparisons[0].detail.starts_with("Welch"));
    }

    #[test]
    fn timing_claims_compare_one_machine_kind_only() {
        // b's seeds 0..3 on an AVX-512 machine hold the claim a < b; two more cells of a timed on a slower
        // AVX2 machine (3x the time) would reverse it if the kinds were mixed: they are left out.
        let mut c = claim(&[&["a"], &["b"]], ClaimTest::Order);
        c.timing = true;
        let mut p: Vec<Point> = (0..3).map(|s| pt("a", s, 1.0 + 0.01 * s as f64)).collect();
        p.extend((0..3).map(|s| pt("b", s, 2.0 + 0.02 * s as f64)));
        p.extend((3..5).map(|s| pt("a", s, 6.0 + 0.01 * s as f64)));
        for (i, x) in p.iter_mut().enumerate() {
            x.quiet = Some(true);
            x.machine = if i < 6 { "AVX-512" } else { "AVX2" }.into();
        }
        let v = run(&c, p.clone());
        assert_eq!(
            (v.word.as_str(), v.total()),
            ("holds (underpowered: df = 2)", 1)
        );
        assert!(
            v.remarks
                .iter()
                .any(|r| r.starts_with("Times of one machine kind only: 6 of 8 cells, on AVX-512")),
            "{:?}",
            v.remarks
        );
        // one kind: nothing left out, no remark
        for x in &mut p {
            x.machine = "AVX2".into();
        }
        let v = run(&c, p);
        assert!(!v.remarks.iter().any(|r| r.contains("machine kind")));
    }
}
