//! The kinds of the NTK papers: NTK random features (Han et al. 2021: arc-cosine condition numbers, Gram
//! MSE against the dimension, Table 1's small classification sets, Fig. 3's active learning) and NTK sketching (Zandieh et al. 2021:
//! MNIST accuracy, the CNTK, the ReLU NTK function and its polynomial fit).

pub mod active;
pub mod arccos_condition;
pub mod cntk;
pub mod ntk_function;
pub mod ntk_mse;
pub mod ridge_classify;
