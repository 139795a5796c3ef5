//! Questions asked of a database over many runs, on top of the run core (`scalebench-session`)
//! and its many-client layer (`scalebench-distributed`): the experiment runner with its results
//! database ([`experiment`]), the saturation search ([`saturate`]), Dory's elasticity benchmark
//! ([`elastic`]) and the pages drawn from stored results ([`pages`]). The `scalebench` binary parses
//! arguments into their requests and prints.

pub mod elastic;
pub mod ending;
pub mod experiment;
pub mod pages;
pub mod saturate;
