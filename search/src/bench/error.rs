//! Why a benchmark program cannot be written; each `Display` is the
//! message `copper bench` prints.

use copper::launch::ShapeError;
use copper::sim::params::ArgLengthError;
use copper::sim::InputError;

use crate::launch::LaunchError;

/// Why `--sweep` is refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum SweepError {
    /// Not `NAME=V1,V2,…`.
    #[error("`{0}` is not NAME=V1,V2,… (e.g. h=256,512,1024)")]
    Syntax(String),
    /// The name is not an identifier.
    #[error("`{0}` is not an argument name")]
    Name(String),
    /// A value that is not a positive integer.
    #[error("`{0}` is not a positive integer size")]
    Value(String),
    /// No value.
    #[error("give at least one value for `{0}` (e.g. {0}=256,512)")]
    NoValues(String),
    /// The launch has no such scalar argument.
    #[error("`{0}` is not one of its scalar arguments")]
    NotAnArgument(String),
    /// An array length written as an expression fails at a value.
    #[error("at {name}={value}: {source}")]
    Length {
        /// The argument swept.
        name: String,
        /// The value.
        value: u64,
        /// The length that fails.
        source: Box<ArgLengthError>,
    },
}

/// Why the benchmark program cannot be written.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BenchError {
    /// copper cannot read the kernel.
    #[error("copper cannot read kernel `{0}`")]
    Unreadable(String),
    /// The kernel does not lower (the diagnostic's message).
    #[error("{0}")]
    NotLowered(String),
    /// No launch of the kernel was given.
    #[error("no launch of `{0}` to time")]
    NoLaunch(String),
    /// The parameter file does not describe one of its arrays.
    #[error("the parameter file describes no array `{array}` for `{kernel}` (add [kernel.{kernel}.arrays.{array}] with `len`)")]
    NoArray {
        /// The kernel.
        kernel: String,
        /// The array.
        array: String,
    },
    /// A parameter declared as an array (`float a[]`).
    #[error("parameter `{param}` of `{kernel}` is an array parameter; copper bench needs plain pointers")]
    ArrayParameter {
        /// The kernel.
        kernel: String,
        /// The parameter.
        param: String,
    },
    /// A parameter the program cannot pass.
    #[error("copper bench cannot pass parameter `{param}` of `{kernel}`")]
    Parameter {
        /// The kernel.
        kernel: String,
        /// The parameter.
        param: String,
    },
    /// A launch the simulator would refuse.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// A launch shape CUDA refuses.
    #[error(transparent)]
    Shape(#[from] ShapeError),
    /// Two launches of a sweep fill an array differently.
    #[error("array `{array}` of `{kernel}` is filled differently in two launches (only lengths may change)")]
    FillChanged {
        /// The kernel.
        kernel: String,
        /// The array.
        array: String,
    },
    /// An array cannot be filled as its entry says.
    #[error("array `{array}` of `{kernel}`: {source}")]
    Fill {
        /// The kernel.
        kernel: String,
        /// The array.
        array: String,
        /// Why (the simulator's reason for refusing it).
        source: InputError,
    },
    /// A launch without one of the kernel's arrays.
    #[error("a launch of `{kernel}` gives no array `{array}`")]
    LaunchArray {
        /// The kernel.
        kernel: String,
        /// The array.
        array: String,
    },
    /// A rewrite of a kernel the file does not have.
    #[error("no kernel named `{0}` in the file")]
    NoKernel(String),
}
