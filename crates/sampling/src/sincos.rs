//! Sine and cosine of many arguments at once, written so that the compiler vectorises the loop (the
//! elementwise part of the Fourier feature maps, $[\cos(Wx), \sin(Wx)]$, issue 10).
//!
//! For each argument $x$ with $|x| \le$ [`REDUCTION_LIMIT`]:
//! 1. $k = \mathrm{round}(2x/\pi)$ by the "add and subtract $1.5\cdot 2^{52}$" trick (round to nearest, no
//!    branch); the low two bits of the shifted sum are the quadrant $k \bmod 4$;
//! 2. Cody–Waite reduction $r = ((x - kP_1) - kP_2) - kP_3$ with $\pi/2 = P_1 + P_2 + P_3 + O(10^{-31})$, $P_1$
//!    and $P_2$ of 33 significant bits, so $kP_1$ and $kP_2$ are exact for $|k| < 2^{20}$ and $|r| \le \pi/4$
//!    up to rounding;
//! 3. the minimax polynomials of fdlibm's `__kernel_sin` / `__kernel_cos` (FreeBSD msun `k_sin.c`,
//!    `k_cos.c`; error below one ulp on $[-\pi/4, \pi/4]$), evaluated both;
//! 4. the quadrant picks $(\sin x, \cos x)$ from $(\pm\sin r, \pm\cos r)$ by selects, not branches.
//!
//! Arguments beyond the limit, infinities and NaN take a second, scalar pass through the standard library
//! (`f64::sin_cos`), so every input gets a correct answer. Against the standard library the results agree
//! to a few units in the last place (tested: $|\Delta| \le 4 \cdot 2^{-53}$ absolute on $|x| \le 10^4$).
//! The AVX2 copy (chosen at run time) is the same code compiled for 4-wide vectors without fused
//! multiply-add, so it rounds exactly like the portable copy: values do not depend on the CPU.

// The constants below are fdlibm's published decimal values (more digits than a double holds; each rounds to
// the intended double), kept verbatim so that they can be checked against the source.
#![allow(clippy::excessive_precision)]

/// Arguments up to this magnitude are reduced in the vectorised pass ($|k| < 2^{20}$); larger ones, and
/// non-finite ones, go through `f64::sin_cos`.
pub const REDUCTION_LIMIT: f64 = 1.0e6;

const FRAC_2_PI: f64 = std::f64::consts::FRAC_2_PI;
/// $1.5 \cdot 2^{52}$: adding and subtracting it rounds a double of magnitude $< 2^{51}$ to an integer.
const SHIFT: f64 = 6_755_399_441_055_744.0;
// π/2 in three parts (fdlibm's pio2_1, pio2_2, pio2_3; the first two have 33 significant bits).
const PIO2_1: f64 = 1.570_796_326_734_125_614_17e0;
const PIO2_2: f64 = 6.077_100_506_303_965_976_60e-11;
const PIO2_3: f64 = 2.022_266_248_711_166_455_80e-21;
// fdlibm __kernel_sin coefficients
const S1: f64 = -1.666_666_666_666_663_243_48e-1;
const S2: f64 = 8.333_333_333_322_489_461_24e-3;
const S3: f64 = -1.984_126_982_985_794_931_34e-4;
const S4: f64 = 2.755_731_370_707_006_767_89e-6;
const S5: f64 = -2.505_076_025_340_686_341_95e-8;
const S6: f64 = 1.589_690_995_211_550_102_21e-10;
// fdlibm __kernel_cos coefficients
const C1: f64 = 4.166_666_666_666_660_190_37e-2;
const C2: f64 = -1.388_888_888_887_410_957_49e-3;
const C3: f64 = 2.480_158_728_947_672_941_78e-5;
const C4: f64 = -2.755_731_435_139_066_330_35e-7;
const C5: f64 = 2.087_572_321_298_174_827_90e-9;
const C6: f64 = -1.135_964_755_778_819_482_65e-11;

/// In place: `cos_io[i]` $\leftarrow c\cos(x_i)$ and `sin_out[i]` $\leftarrow c\sin(x_i)$, where $x_i$ is the
/// value of `cos_io[i]` on entry (the layout of the paired Fourier features $[\cos, \sin]/\sqrt{s}$).
/// Panics if the slices differ in length.
pub fn scaled_sin_cos_in_place(cos_io: &mut [f64], sin_out: &mut [f64], c: f64) {
    assert_eq!(
        cos_io.len(),
        sin_out.len(),
        "sin/cos slices of equal length"
    );
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of `kernel_avx2`.
        unsafe { kernel_avx2(cos_io, sin_out, c) };
        fix_up(cos_io, sin_out, c);
        return;
    }
    kernel(cos_io, sin_out, c);
    fix_up(cos_io, sin_out, c);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn kernel_avx2(cos_io: &mut [f64], sin_out: &mut [f64], c: f64) {
    kernel(cos_io, sin_out, c);
}

/// The branch-free pass (module docs). Arguments outside the reduction range are left for [`fix_up`]: they
/// are recognised there because this pass writes NaN for them.
#[inline(always)]
fn kernel(cos_io: &mut [f64], sin_out: &mut [f64], c: f64) {
    for (co, so) in cos_io.iter_mut().zip(sin_out.iter_mut()) {
        let x = *co;
        let shifted = x * FRAC_2_PI + SHIFT;
        let k = shifted - SHIFT;
        let q = shifted.to_bits() & 3;
        let r = ((x - k * PIO2_1) - k * PIO2_2) - k * PIO2_3;
        let z = r * r;
        let w = z * z;
        // sin r (k_sin.c with y = 0)
        let sr = S2 + z * (S3 + z * S4) + z * w * (S5 + z * S6);
        let s = r + z * r * (S1 + z * sr);
        // cos r (k_cos.c with y = 0)
        let cr = z * (C1 + z * (C2 + z * C3)) + w * w * (C4 + z * (C5 + z * C6));
        let hz = 0.5 * z;
        let one_hz = 1.0 - hz;
        let cs = one_hz + (((1.0 - one_hz) - hz) + z * cr);
        // quadrant: (sin, cos)(x) = (s, c), (c, −s), (−s, −c), (−c, s) for q = 0, 1, 2, 3
        let (a, b) = if q & 1 == 0 { (s, cs) } else { (cs, s) };
        let sin_x = if q & 2 == 0 { a } else { -a };
        let cos_x = if (q + 1) & 2 == 0 { b } else { -b };
        let ok = x.abs() <= REDUCTION_LIMIT;
        *co = if ok { c * cos_x } else { f64::NAN };
        *so = if ok { c * sin_x } else { x };
    }
}

/// Scalar pass for the arguments the kernel left (NaN in `cos_io`, the argument kept in `sin_out`).
fn fix_up(cos_io: &mut [f64], sin_out: &mut [f64], c: f64) {
    for (co, so) in cos_io.iter_mut().zip(sin_out.iter_mut()) {
        if co.is_nan() {
            let (s, cs) = so.sin_cos();
            *co = c * cs;
            *so = c * s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;
    use rfx_core::rng_stream;

    fn check(xs: &[f64], tol: f64) -> f64 {
        let mut co = xs.to_vec();
        let mut so = vec![0.0; xs.len()];
        scaled_sin_cos_in_place(&mut co, &mut so, 1.0);
        let mut worst = 0.0f64;
        for ((&x, &c), &s) in xs.iter().zip(&co).zip(&so) {
            let (s0, c0) = x.sin_cos();
            if s0.is_nan() {
                assert!(
                    s.is_nan() && c.is_nan(),
                    "sincos({x}) = ({s}, {c}), want NaN"
                );
                continue;
            }
            let e = (s - s0).abs().max((c - c0).abs());
            worst = worst.max(e);
            assert!(
                e <= tol,
                "sincos({x:e}): ({s:e}, {c:e}) vs std ({s0:e}, {c0:e})"
            );
        }
        worst
    }

    #[test]
    fn agrees_with_the_standard_library_to_a_few_ulp() {
        // 4 · 2⁻⁵³ absolute: the polynomials are below one ulp of values ≤ 1 and the reduction error for
        // |k| ≤ 2·10⁴ is a few ulp of π/4 at most.
        let tol = 4.0 * f64::EPSILON / 2.0;
        let mut rng = rng_stream(1, "sincos");
        let mut xs: Vec<f64> = (0..200_000).map(|_| rng.gen_range(-1.0e4..1.0e4)).collect();
        xs.extend((0..50_000).map(|_| rng.gen_range(-4.0..4.0)));
        // quadrant boundaries and their neighbours, tiny and zero arguments
        for j in -200i32..=200 {
            let b = j as f64 * std::f64::consts::FRAC_PI_4;
            xs.extend([b, b.next_up(), b.next_down()]);
        }
        xs.extend([0.0, -0.0, 1e-300, -1e-300, 1e-8, f64::MIN_POSITIVE]);
        let worst = check(&xs, tol);
        println!("max |Δ| against std: {worst:e} (tolerance {tol:e})");
    }

    #[test]
    fn large_and_non_finite_arguments_fall_back_to_the_standard_library() {
        let xs = [
            REDUCTION_LIMIT,
            -REDUCTION_LIMIT,
            REDUCTION_LIMIT.next_up(),
            1e7,
            -3.5e15,
            1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ];
        // beyond the limit the values are the standard library's exactly; at the limit the reduction error
        // grows with |k| ≈ 6.4·10⁵ (P₃'s truncation, ~|k|·10⁻³¹, and the rounding of k·P₂'s partner terms)
        check(&xs, 64.0 * f64::EPSILON);
        let mut co = xs[2..].to_vec();
        let mut so = vec![0.0; co.len()];
        scaled_sin_cos_in_place(&mut co, &mut so, 2.0);
        for ((&x, &c), &s) in xs[2..].iter().zip(&co).zip(&so) {
            let (s0, c0) = x.sin_cos();
            assert!(
                (c == 2.0 * c0 || c.is_nan() && c0.is_nan())
                    && (s == 2.0 * s0 || s.is_nan() && s0.is_nan())
            );
        }
    }
}
