//! Statistics of figures over a corpus, as the reports compare strategies with them: the
//! shifted geometric mean (spill counts are often 0), a mean with its 95 % confidence interval,
//! the paired Wilcoxon signed-rank test, and rank and linear correlation.

/// `exp(mean(ln(x + 1))) - 1`; 0 for no values.
pub fn geomean(values: &[usize]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mean = values.iter().map(|&v| (v as f64 + 1.0).ln()).sum::<f64>() / values.len() as f64;
    mean.exp() - 1.0
}

/// `x` rounded to four decimals (ratios in reports).
pub fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// `x` rounded to two decimals (geometric means in reports).
pub fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// Mean of `xs` with its 95 % confidence interval (normal approximation); `None` when empty.
pub fn mean_with_ci(xs: &[f64]) -> Option<(f64, f64, f64)> {
    if xs.is_empty() {
        return None;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return Some((mean, mean, mean));
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    let half = 1.96 * (var / n).sqrt();
    Some((mean, mean - half, mean + half))
}

/// The two-sided p-value of the Wilcoxon signed-rank test of `diffs` against 0: zero
/// differences dropped, average ranks for ties, the normal approximation with the tie
/// correction of the variance. `None` when no difference is non-zero.
pub fn wilcoxon_signed_rank(diffs: &[f64]) -> Option<f64> {
    let mut nonzero: Vec<f64> = diffs.iter().copied().filter(|d| *d != 0.0).collect();
    if nonzero.is_empty() {
        return None;
    }
    nonzero.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    let n = nonzero.len();
    let (mut w_plus, mut tie_term) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && nonzero[j + 1].abs() == nonzero[i].abs() {
            j += 1;
        }
        // Ranks i+1 ..= j+1 share their average.
        let rank = (i + j + 2) as f64 / 2.0;
        let t = (j - i + 1) as f64;
        tie_term += t * t * t - t;
        w_plus += nonzero[i..=j].iter().filter(|d| **d > 0.0).count() as f64 * rank;
        i = j + 1;
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - tie_term / 48.0;
    if var <= 0.0 {
        return Some(1.0);
    }
    let z = (w_plus - mean).abs() / var.sqrt();
    Some((2.0 * normal_upper_tail(z)).min(1.0))
}

/// Ranks of `values` (1-based, ties get their average rank): with [`pearson`], Spearman's ρ.
pub fn ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        let average = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            ranks[k] = average;
        }
        i = j + 1;
    }
    ranks
}

/// Pearson's correlation of two equally long series; `None` if either is constant.
pub fn pearson(xs: &[f64], ys: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let vx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let vy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    (vx > 0.0 && vy > 0.0).then(|| cov / (vx * vy).sqrt())
}

/// P(Z > z) for a standard normal Z (Abramowitz & Stegun 7.1.26 for erfc, |error| < 1.5e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let poly = t
        * (0.254_829_592
            + t * (-0.284_496_736
                + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erfc = poly * (-x * x).exp();
    let erfc = if x >= 0.0 { erfc } else { 2.0 - erfc };
    erfc / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shifted_geomean_handles_zeros() {
        assert_eq!(geomean(&[]), 0.0);
        assert_eq!(geomean(&[0, 0]), 0.0);
        assert!((geomean(&[1, 7]) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn wilcoxon_matches_the_textbook_and_ignores_zeros() {
        // All ten differences positive: W+ = 55, mean 27.5, sd sqrt(96.25): z = 2.803.
        let p = wilcoxon_signed_rank(&(1..=10).map(f64::from).collect::<Vec<_>>());
        assert!(p.is_some_and(|p| (p - 0.00506).abs() < 1e-4), "{p:?}");
        // Symmetric differences: no evidence either way.
        let p = wilcoxon_signed_rank(&[1.0, -1.0, 2.0, -2.0, 0.0]);
        assert!(p.is_some_and(|p| (p - 1.0).abs() < 1e-9), "{p:?}");
        assert_eq!(wilcoxon_signed_rank(&[0.0, 0.0]), None);
    }

    #[test]
    fn the_normal_tail_is_accurate() {
        assert!((normal_upper_tail(0.0) - 0.5).abs() < 1e-7);
        assert!((normal_upper_tail(1.96) - 0.024_998).abs() < 1e-5);
        assert!((normal_upper_tail(-1.0) - 0.841_345).abs() < 1e-5);
    }

    #[test]
    fn ranks_average_ties_and_correlation_has_the_right_sign() {
        assert_eq!(ranks(&[10.0, 30.0, 20.0, 20.0]), vec![1.0, 4.0, 2.5, 2.5]);
        let up = pearson(&[1.0, 2.0, 3.0], &[2.0, 4.0, 6.0]);
        let down = pearson(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]);
        assert!(up.is_some_and(|r| (r - 1.0).abs() < 1e-12), "{up:?}");
        assert!(down.is_some_and(|r| (r + 1.0).abs() < 1e-12), "{down:?}");
        assert_eq!(pearson(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
    }
}
