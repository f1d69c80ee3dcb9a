//! Summaries of measured samples for the benchmarks. Included by path
//! (`#[path = "common/stats.rs"] mod stats;`), as `proc.rs` is.

/// The `p` quantile (0..=1) of `v` by the nearest index of the sorted samples; NaN when
/// empty. Sorts `v` in place.
pub fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    v[((v.len() - 1) as f64 * p).round() as usize]
}
