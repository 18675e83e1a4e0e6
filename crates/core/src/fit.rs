//! Fitting: one trait for every feature map's parameters, beside [`FeatureMap`].
//!
//! A random-feature map is drawn once — its frequencies $W$, hash functions or landmarks — and then applied
//! to any number of rows. Data-oblivious maps (random Fourier features, sketches, Gegenbauer features) need
//! only the input dimension $d$; data-dependent ones (Nyström landmarks, ternary thresholds estimated from
//! the data) need rows. [`Fit::fit_map`] takes either as a [`FitData`] and every random draw from the
//! caller's stream, so the fitted map is a function of (parameters, data, stream) alone.
//!
//! Parameters are checked when the map is fitted: a builder with an impossible setting returns an
//! [`RfxError::InvalidParameter`](crate::RfxError) naming the setting and the allowed values.

use ndarray::ArrayView2;

use crate::{FeatureMap, Result, RfxError, RfxRng};

/// What a feature map is fitted on.
#[derive(Debug, Clone, Copy)]
pub enum FitData<'a> {
    /// The input dimension $d$ alone (enough for data-oblivious maps).
    Dim(usize),
    /// Fitting rows $X \in \mathbb R^{n \times d}$; data-oblivious maps use only $d$ = its column count.
    Rows(ArrayView2<'a, f64>),
}

impl<'a> FitData<'a> {
    /// The input dimension $d$.
    pub fn dim(&self) -> usize {
        match self {
            FitData::Dim(d) => *d,
            FitData::Rows(x) => x.ncols(),
        }
    }

    /// The fitting rows, or an error saying that `what` needs rows to be fitted on.
    pub fn rows(&self, what: &str) -> Result<ArrayView2<'a, f64>> {
        match self {
            FitData::Rows(x) if x.nrows() > 0 => Ok(*x),
            FitData::Rows(_) => Err(RfxError::invalid(
                "fit data",
                "0 rows",
                format!("at least one row to fit {what} on"),
            )),
            FitData::Dim(_) => Err(RfxError::invalid(
                "fit data",
                "none",
                format!("rows to fit {what} on (it is data-dependent)"),
            )),
        }
    }
}

/// The parameters of a feature map, which fit (draw) the map.
///
/// # Example
///
/// ```
/// use ndarray::{array, Array2, ArrayView2};
/// use rfx_core::{rng_stream, FeatureMap, Fit, FitData, Result, RfxRng};
///
/// /// The identity map $z(x) = x$: $\langle z(x), z(y) \rangle$ is the linear kernel, exactly.
/// struct Identity(usize);
/// impl FeatureMap for Identity {
///     fn input_dim(&self) -> usize { self.0 }
///     fn dim(&self) -> usize { self.0 }
///     fn transform(&self, x: ArrayView2<'_, f64>) -> Result<Array2<f64>> {
///         self.check_input(x)?;
///         Ok(x.to_owned())
///     }
/// }
/// struct IdentityParams;
/// impl Fit for IdentityParams {
///     type Map = Identity;
///     fn fit_map(&self, data: FitData<'_>, _rng: &mut RfxRng) -> Result<Identity> {
///         Ok(Identity(data.dim()))
///     }
/// }
///
/// let x = array![[1.0, 2.0], [3.0, 4.0]];
/// let mut rng = rng_stream(7, "example");
/// let z = IdentityParams.fit_map(FitData::Rows(x.view()), &mut rng)?;
/// assert_eq!(z.transform(x.view())?, x);
/// // boxed, as a registry returns it
/// let boxed = IdentityParams.fit_boxed(FitData::Dim(2), &mut rng)?;
/// assert_eq!(boxed.dim(), 2);
/// # Ok::<(), rfx_core::RfxError>(())
/// ```
pub trait Fit {
    /// The fitted map.
    type Map: FeatureMap + 'static;

    /// Draws the map for the inputs described by `data`, every random draw from `rng`.
    fn fit_map(&self, data: FitData<'_>, rng: &mut RfxRng) -> Result<Self::Map>;

    /// [`Fit::fit_map`], boxed.
    fn fit_boxed(&self, data: FitData<'_>, rng: &mut RfxRng) -> Result<Box<dyn FeatureMap>> {
        Ok(Box::new(self.fit_map(data, rng)?))
    }
}

/// Implements [`Fit`] for parameter builders of data-oblivious maps that have an inherent
/// `fit(&self, d: usize, rng: &mut RfxRng) -> Result<Map>`: `impl_fit_on_dim!(RandomMaclaurinParams => RandomMaclaurin);`
#[macro_export]
macro_rules! impl_fit_on_dim {
    ($($params:ty => $map:ty),+ $(,)?) => {$(
        impl $crate::Fit for $params {
            type Map = $map;
            fn fit_map(
                &self,
                data: $crate::FitData<'_>,
                rng: &mut $crate::RfxRng,
            ) -> $crate::Result<$map> {
                self.fit(data.dim(), rng)
            }
        }
    )+};
}
