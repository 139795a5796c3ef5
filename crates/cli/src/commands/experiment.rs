//! `scalebench experiment FILE.toml` (the plan, or the runs through the session's runner) and
//! `scalebench results` (lists, summarises and exports what the results database holds).

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use scalebench_session::error::SessionError;
use scalebench_study::experiment::spec::{Experiment, LoadMode, Measure, PlannedRun};
use scalebench_study::experiment::store::Store;
use scalebench_study::experiment::{
    check_experiment, discard_first_of, export, run_experiment, show, ExperimentRequest,
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
        client_program: Some(crate::commands::run::client_program()?),
    };
    if args.dry_run {
        let plan = check_experiment(&request)?;
        print_plan(&request.experiment, &plan);
        return Ok(ExitCode::SUCCESS);
    }
    let outcome = run_experiment(&request)?;
    let exp = &request.experiment;
    crate::note!(
        "experiment {}: {} runs done, {} failed, {} already recorded (results in {})",
        exp.name,
        outcome.done,
        outcome.failed,
        outcome.skipped,
        args.results.display()
    );
    if outcome.interrupted {
        crate::note!("interrupted: run the same command again to resume");
        return Ok(ExitCode::from(130));
    }
    let store = Store::open(&args.results).map_err(SessionError::Failed)?;
    emit(&show(&store, &exp.name, exp.discard_first)?);
    if outcome.failed > 0 {
        // The others are recorded; a rerun of the same command retries only the failed ones.
        crate::note!(
            "error: {} runs failed (their errors are in the runs table: scalebench results show)",
            outcome.failed
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

fn print_plan(exp: &Experiment, plan: &[PlannedRun]) {
    let e = &exp.procedure.elastic;
    let timing = if exp.procedure.measure == Measure::Load {
        "until every record is written".to_string()
    } else if exp.procedure.measure == Measure::Elastic {
        format!(
            "warm-up {}, {} after a {} baseline, stable within {}, then {} more",
            exp.procedure.warmup, e.action, e.baseline, e.stable_timeout, e.after
        )
    } else {
        format!(
            "warm-up {}, duration {}",
            exp.procedure.warmup, exp.procedure.duration
        )
    };
    let mut out = format!(
        "experiment {}: {} runs ({} cells x {} repetitions), measure {}, load {}, {timing}\n",
        exp.name,
        plan.len(),
        plan.len() / exp.repetitions as usize,
        exp.repetitions,
        exp.procedure.measure,
        exp.procedure.load,
    );
    let mut loaded: Option<&str> = None;
    for (i, r) in plan.iter().enumerate() {
        let load = match exp.procedure.load {
            _ if exp.procedure.measure == Measure::Load => "measured load",
            LoadMode::EachRun => "load",
            _ if loaded != Some(r.data_key.as_str()) => "load",
            LoadMode::Restore => "restore if earlier runs inserted",
            LoadMode::RestoreEach => "restore if earlier runs wrote",
            LoadMode::Once => "",
        };
        loaded = Some(&r.data_key);
        out.push_str(&format!(
            "{:>5}  {:<60} #{:<3} {load}\n",
            i + 1,
            r.cell,
            r.repetition
        ));
    }
    emit(&out);
}

pub fn results_command(action: &ResultsAction) -> Result<ExitCode, SessionError> {
    match action {
        ResultsAction::List { results } => {
            let store = Store::open_read_only(&results.results).map_err(SessionError::Usage)?;
            let mut out = format!(
                "{:<40} {:>6} {:>9} {:>7} {:>12}\n",
                "experiment", "ok", "failures", "failed", "interrupted"
            );
            for (name, [ok, failures, failed, interrupted]) in
                store.experiments().map_err(SessionError::Failed)?
            {
                out.push_str(&format!(
                    "{name:<40} {ok:>6} {failures:>9} {failed:>7} {interrupted:>12}\n"
                ));
            }
            emit(&out);
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
