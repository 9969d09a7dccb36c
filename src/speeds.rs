//! Walking-speed distributions of a group: uniform in a range, a normal distribution truncated
//! to a range, or a RiMEA population (walking speed by age group), and their seeded sampling.
//!
//! The RiMEA table is the walking speed on level ground by age that RiMEA's test 7
//! ("allocation of demographic parameters", Guideline 4.1.1, Annex 1) asks a model to
//! reproduce, read off Weidmann's curve (Weidmann 1993, speed against age); the ranges below
//! are the per-decade values of that figure as transcribed by JuPedSim's RiMEA test suite.

use rand::Rng;

/// How a group's preferred walking speeds are distributed. The range `[speed_min, speed_max]`
/// of [`crate::scene::Group`] bounds every distribution.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum SpeedDistribution {
    /// Uniform in the group's `[speed_min, speed_max]` (the default).
    #[default]
    Uniform,
    /// Normal with this mean and standard deviation, m/s, truncated to the group's range:
    /// a draw outside it is drawn again.
    Normal {
        /// Mean, m/s.
        mean: f64,
        /// Standard deviation, m/s.
        sd: f64,
    },
    /// A RiMEA population: each walker belongs to an age group in the population's shares and
    /// walks at a speed uniform in that group's range.
    Rimea(RimeaPopulation),
}

/// One age group of the RiMEA table: its ages and its walking speeds on level ground.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AgeGroup {
    /// The group's name in a map (`"30-39"`).
    pub name: &'static str,
    /// Slowest walking speed, m/s.
    pub min: f64,
    /// Fastest walking speed, m/s.
    pub max: f64,
}

/// The RiMEA table of walking speeds by age, one row per decade (see the module comment).
pub const RIMEA_AGE_GROUPS: [AgeGroup; 6] = [
    AgeGroup {
        name: "20-29",
        min: 1.60,
        max: 1.64,
    },
    AgeGroup {
        name: "30-39",
        min: 1.52,
        max: 1.56,
    },
    AgeGroup {
        name: "40-49",
        min: 1.46,
        max: 1.50,
    },
    AgeGroup {
        name: "50-59",
        min: 1.39,
        max: 1.43,
    },
    AgeGroup {
        name: "60-69",
        min: 1.27,
        max: 1.27,
    },
    AgeGroup {
        name: "70-79",
        min: 1.07,
        max: 1.07,
    },
];

/// The shares of the age groups of [`RIMEA_AGE_GROUPS`] in RiMEA test 7's population of 50
/// adults: 10 each in their twenties to fifties, 5 each in their sixties and seventies.
pub const RIMEA_ADULT_SHARES: [f64; 6] = [0.2, 0.2, 0.2, 0.2, 0.1, 0.1];

/// A population named in a map's `speed.rimea`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RimeaPopulation {
    /// RiMEA test 7's adults: the age groups in [`RIMEA_ADULT_SHARES`].
    Adults,
    /// One age group (an index into [`RIMEA_AGE_GROUPS`]).
    AgeGroup(usize),
}

impl SpeedDistribution {
    /// The distribution as the keys of a map's `speed` beside `min` and `max`:
    /// `(mean, sd, rimea)`.
    pub fn to_spec(&self) -> (Option<f64>, Option<f64>, Option<String>) {
        match self {
            Self::Uniform => (None, None, None),
            Self::Normal { mean, sd } => (Some(*mean), Some(*sd), None),
            Self::Rimea(p) => (None, None, Some(p.name().to_string())),
        }
    }
}

impl RimeaPopulation {
    /// The population of a map's name for it: `"adults"` or an age group (`"30-39"`).
    pub fn from_name(name: &str) -> Option<Self> {
        if name == "adults" {
            return Some(Self::Adults);
        }
        RIMEA_AGE_GROUPS
            .iter()
            .position(|g| g.name == name)
            .map(Self::AgeGroup)
    }

    /// The population's name in a map.
    pub fn name(self) -> &'static str {
        match self {
            Self::Adults => "adults",
            Self::AgeGroup(i) => RIMEA_AGE_GROUPS[i].name,
        }
    }

    /// Every name [`RimeaPopulation::from_name`] accepts, for messages and documents.
    pub fn names() -> Vec<&'static str> {
        std::iter::once("adults")
            .chain(RIMEA_AGE_GROUPS.iter().map(|g| g.name))
            .collect()
    }

    /// The share of each age group of [`RIMEA_AGE_GROUPS`] in the population.
    pub fn shares(self) -> [f64; 6] {
        match self {
            Self::Adults => RIMEA_ADULT_SHARES,
            Self::AgeGroup(i) => {
                let mut s = [0.0; 6];
                s[i] = 1.0;
                s
            }
        }
    }

    /// The slowest and fastest speed of the population, m/s.
    pub fn range(self) -> (f64, f64) {
        let shares = self.shares();
        RIMEA_AGE_GROUPS
            .iter()
            .zip(shares)
            .filter(|(_, s)| *s > 0.0)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (g, _)| {
                (lo.min(g.min), hi.max(g.max))
            })
    }

    /// The age group of walker `i` of `n` in one spawn area: the groups are dealt out in their
    /// shares by quantile, `(i + 0.5) / n`, so an area of 50 adults holds exactly 10, 10, 10,
    /// 10, 5 and 5 (the placement is shuffled already, so who is which age is random).
    pub fn age_group_of(self, i: usize, n: usize) -> usize {
        let q = (i as f64 + 0.5) / n.max(1) as f64;
        let mut acc = 0.0;
        let shares = self.shares();
        for (k, s) in shares.iter().enumerate() {
            acc += s;
            if q < acc {
                return k;
            }
        }
        shares.iter().rposition(|s| *s > 0.0).unwrap_or(0)
    }
}

/// Draws of a normal distribution tried before the walker gets the mean clamped into the range
/// instead: a range far out in a tail would otherwise loop for long. A range that holds 5 % of
/// the mass fails 200 draws in a row with a probability of 0.95^200, about 4e-5.
const NORMAL_REDRAWS: usize = 200;

/// Walker `i` of `n` in a spawn area: a preferred speed from `dist` bounded by `[min, max]`.
pub fn sample_speed(
    dist: &SpeedDistribution,
    min: f64,
    max: f64,
    i: usize,
    n: usize,
    rng: &mut impl Rng,
) -> f64 {
    match dist {
        SpeedDistribution::Uniform => uniform(min, max, rng),
        SpeedDistribution::Normal { mean, sd } => {
            for _ in 0..NORMAL_REDRAWS {
                let v = mean + sd * standard_normal(rng);
                if (min..=max).contains(&v) {
                    return v;
                }
            }
            mean.clamp(min, max)
        }
        SpeedDistribution::Rimea(population) => {
            let g = RIMEA_AGE_GROUPS[population.age_group_of(i, n)];
            uniform(g.min, g.max, rng)
        }
    }
}

/// Uniform in `[min, max]` (`min` when the range is a point).
fn uniform(min: f64, max: f64, rng: &mut impl Rng) -> f64 {
    if max > min {
        rng.random_range(min..=max)
    } else {
        min
    }
}

/// A standard normal draw (Box–Muller, the cosine half).
fn standard_normal(rng: &mut impl Rng) -> f64 {
    // 1 - u lies in (0, 1], so its logarithm is finite.
    let u: f64 = 1.0 - rng.random::<f64>();
    let v: f64 = rng.random::<f64>();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn mean_sd(v: &[f64]) -> (f64, f64) {
        let n = v.len() as f64;
        let m = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
        (m, var.sqrt())
    }

    #[test]
    fn uniform_draws_have_the_uniform_mean_and_spread() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let n = 20_000;
        let v: Vec<f64> = (0..n)
            .map(|i| sample_speed(&SpeedDistribution::Uniform, 1.0, 1.6, i, n, &mut rng))
            .collect();
        let (m, sd) = mean_sd(&v);
        // Mean 1.3, sd 0.6 / sqrt(12) = 0.1732; the mean's standard error is 0.0012.
        assert!((m - 1.3).abs() < 0.005, "{m}");
        assert!((sd - 0.6 / 12f64.sqrt()).abs() < 0.003, "{sd}");
        assert!(v.iter().all(|x| (1.0..=1.6).contains(x)));
    }

    #[test]
    fn normal_draws_match_mean_and_sd_inside_a_wide_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let n = 20_000;
        let d = SpeedDistribution::Normal { mean: 1.34, sd: 0.26 };
        // A range of +-4 sd holds all but 6e-5 of the mass: mean and sd are the normal's.
        let v: Vec<f64> = (0..n)
            .map(|i| sample_speed(&d, 0.3, 2.38, i, n, &mut rng))
            .collect();
        let (m, sd) = mean_sd(&v);
        assert!((m - 1.34).abs() < 0.006, "{m}");
        assert!((sd - 0.26).abs() < 0.006, "{sd}");
    }

    #[test]
    fn normal_draws_stay_inside_a_narrow_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let d = SpeedDistribution::Normal { mean: 1.34, sd: 0.26 };
        let v: Vec<f64> = (0..5000)
            .map(|i| sample_speed(&d, 1.2, 1.4, i, 5000, &mut rng))
            .collect();
        assert!(v.iter().all(|x| (1.2..=1.4).contains(x)));
        // Truncated on both sides, nearer the upper bound: the mean moves below 1.34 slightly
        // and the draws spread over the whole range.
        let (m, _) = mean_sd(&v);
        assert!(m > 1.28 && m < 1.34, "{m}");
    }

    #[test]
    fn the_adult_population_deals_the_age_groups_out_in_rimea_shares() {
        let counts = (0..50).fold([0usize; 6], |mut c, i| {
            c[RimeaPopulation::Adults.age_group_of(i, 50)] += 1;
            c
        });
        assert_eq!(counts, [10, 10, 10, 10, 5, 5]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for i in 0..50 {
            let v = sample_speed(
                &SpeedDistribution::Rimea(RimeaPopulation::Adults),
                0.0,
                9.0,
                i,
                50,
                &mut rng,
            );
            let g = RIMEA_AGE_GROUPS[RimeaPopulation::Adults.age_group_of(i, 50)];
            assert!((g.min..=g.max).contains(&v));
        }
        assert_eq!(RimeaPopulation::Adults.range(), (1.07, 1.64));
        assert_eq!(
            RimeaPopulation::from_name("30-39"),
            Some(RimeaPopulation::AgeGroup(1))
        );
        assert_eq!(RimeaPopulation::from_name("kids"), None);
    }

    #[test]
    fn the_same_seed_gives_the_same_speeds() {
        let d = SpeedDistribution::Normal { mean: 1.3, sd: 0.2 };
        let draw = || {
            let mut rng = ChaCha8Rng::seed_from_u64(11);
            (0..100)
                .map(|i| sample_speed(&d, 0.8, 1.8, i, 100, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draw(), draw());
    }
}
