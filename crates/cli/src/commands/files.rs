//! The files each command reads and writes, listed once for the check before any work
//! ([`scalebench_session::outputs::CommandFiles`]).

use std::path::{Path, PathBuf};

use scalebench_session::outputs::CommandFiles;

use crate::args::PhaseArgs;

/// What a `load`, `run`, `saturate` or `elastic` command line reads (the workload when it names a
/// file, the property files, the deployment file) and writes (`-o`, `--report`, `--hdr-log`,
/// `--ycsb-load`).
pub fn phase_files(args: &PhaseArgs) -> CommandFiles {
    let workload = Path::new(&args.workload);
    CommandFiles::new()
        .output("-o", args.output.as_deref())
        .output("--report", args.report.as_deref())
        .output("--ycsb-load", args.summary.ycsb_load.as_deref())
        .output_dir("--hdr-log", args.hdr_log.as_deref())
        .input("the workload file", workload.is_file().then_some(workload))
        .inputs("-P", &args.property_files)
        .input("--deployment", args.deployment.as_deref())
}

/// The files an experiment's file names, relative to its directory: deployment files, workload
/// and property files, the service level.
pub fn experiment_inputs(
    experiment: &scalebench_study::experiment::spec::Experiment,
    base: &Path,
) -> Vec<PathBuf> {
    let deployments = experiment
        .databases
        .iter()
        .filter_map(|d| d.deployment.as_ref());
    let workloads = experiment
        .workloads
        .iter()
        .map(|w| Path::new(&w.workload))
        .filter(|w| w.components().count() > 1 || w.extension().is_some());
    let service_level = experiment.procedure.elastic.service_level.as_deref();
    deployments
        .map(PathBuf::as_path)
        .chain(workloads)
        .chain(service_level)
        .map(|p| base.join(p))
        .filter(|p| p.is_file())
        .collect()
}
