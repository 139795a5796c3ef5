//! `scalebench experiment FILE.toml` (the plan, or the runs through the session's runner) and
//! `scalebench results` (lists, summarises and exports what the results database holds).

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use scalebench_session::error::SessionError;
use scalebench_session::outputs::CommandFiles;
use scalebench_study::experiment::spec::Experiment;
use scalebench_study::experiment::store::Store;
use scalebench_study::experiment::{
    check_experiment, discard_first_of, experiments_text, export, plan_text, run_experiment, show,
    ExperimentRequest,
};

use crate::args::{ExperimentArgs, ResultsAction};
use crate::output::emit;

pub fn experiment_command(
    args: &ExperimentArgs,
    argv: &[OsString],
) -> Result<ExitCode, SessionError> {
    let mut experiment = Experiment::from_file(&args.file).map_err(SessionError::Usage)?;
    if args.miniature {
        experiment.miniature();
    }
    let request = ExperimentRequest {
        experiment,
        cells: args.cells,
        only_databases: args.databases.clone(),
        only_configurations: args.configurations.clone(),
        only_swept: args.sweep.clone(),
        base: args
            .file
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
        source: args.file.display().to_string(),
        results: args.results.clone(),
        clusters_dir: args.clusters.clusters_dir.clone(),
        metrics_listen: args.metrics_listen,
        command: scalebench_session::environment::redacted_command(argv),
        client_program: Some(scalebench_distributed::choice::client_program()?),
        thresholds: args.thresholds.for_cells(),
    };
    if args.dry_run {
        let plan = check_experiment(&request)?;
        emit(&plan_text(&request.experiment, &plan));
        return Ok(ExitCode::SUCCESS);
    }
    // The results database is written in place and the page replaced whole: never one another,
    // nor a file the experiment reads.
    CommandFiles::new()
        .output("--results", Some(&args.results))
        .output("--report", args.report.as_deref())
        .input("the experiment file", Some(&args.file))
        .inputs(
            "file the experiment names",
            crate::commands::files::experiment_inputs(&request.experiment, &request.base),
        )
        .check()?;
    let outcome = run_experiment(&request)?;
    let exp = &request.experiment;
    if let Some(path) = &args.report {
        let page = scalebench_study::pages::page_of(&args.results, Some(&exp.name))?;
        let charts = scalebench_study::pages::write_page(&page, path, None)?;
        crate::note!("report written to {} ({charts} charts)", path.display());
    }
    for line in outcome.lines_before_table(exp, &args.results) {
        crate::note!("{line}");
    }
    let (code, why) = outcome.exit(exp);
    if !outcome.interrupted {
        let store = Store::open(&args.results).map_err(SessionError::Failed)?;
        emit(&show(&store, &exp.name, exp.discard_first)?);
    }
    if let Some(line) = why {
        crate::note!("{line}");
    }
    Ok(ExitCode::from(code))
}

pub fn results_command(action: &ResultsAction) -> Result<ExitCode, SessionError> {
    match action {
        ResultsAction::List { results } => {
            let store = Store::open_read_only(&results.results).map_err(SessionError::Usage)?;
            emit(&experiments_text(&store)?);
        }
        ResultsAction::Show {
            results,
            name,
            discard_first,
        } => {
            let store = Store::open_read_only(&results.results).map_err(SessionError::Usage)?;
            let discard = discard_first.unwrap_or_else(|| discard_first_of(&store, name));
            emit(&show(&store, name, discard)?);
        }
        ResultsAction::Export {
            results,
            name,
            csv,
            discard_first,
        } => {
            let store = Store::open_read_only(&results.results).map_err(SessionError::Usage)?;
            let discard = discard_first.unwrap_or_else(|| discard_first_of(&store, name));
            emit(&if *csv {
                export::export_csv(&store, name, discard)?
            } else {
                export::export_json(&store, name, discard)?
            });
        }
    }
    Ok(ExitCode::SUCCESS)
}
