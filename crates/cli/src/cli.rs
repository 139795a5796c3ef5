//! Entry point: parse, dispatch, print the one-line error, choose the exit code.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use scalebench_binding::registry;
use scalebench_exec::Phase;

use scalebench_session::error::SessionError;

use crate::args::{Cli, Command, MergeArgs, WorkloadCommand};
use crate::commands::run::{print_summary, run_command};
use crate::commands::{cluster, elastic, experiment, report, saturate};

pub fn main(argv: Vec<OsString>) -> ExitCode {
    let argv = match scalebench_session::ycsb_flags::translate(argv) {
        Ok(argv) => argv,
        Err(line) => {
            crate::note!("error: {line}");
            return ExitCode::from(2);
        }
    };
    let mut cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            // Clap's whole message: help and version on stdout; an error on stderr with the bad
            // value on its first line, then what it lacks (the missing argument, the valid values,
            // "did you mean") and the usage.
            let _ = e.print();
            return match e.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitCode::SUCCESS,
                _ => ExitCode::from(2),
            };
        }
    };
    if let Err(e) = scalebench_session::logging::init(cli.verbose, &argv) {
        crate::note!("error: {e}");
        return e.exit_code();
    }
    if let Err(e) = database_url(&mut cli.command) {
        crate::note!("error: {}", e.line());
        return e.exit_code();
    }
    let outcome = match cli.command {
        Command::Load(load) if load.schema_only => {
            crate::commands::run::schema_command(&load.phase, &argv)
        }
        Command::Load(load) => run_command(
            &load.phase,
            (&load.clients, &load.thresholds),
            (None, None),
            &[Phase::Load],
            &argv,
        ),
        Command::Run(run) => {
            let phases: &[Phase] = if run.load {
                &[Phase::Load, Phase::Run]
            } else {
                &[Phase::Run]
            };
            run_command(
                &run.phase,
                (&run.clients, &run.thresholds),
                (Some(&run.consistency), None),
                phases,
                &argv,
            )
        }
        Command::Replay(r) => crate::commands::replay::replay_command(&r, &argv),
        Command::ClientProcess => crate::commands::run::client_process(),
        Command::SshClient => crate::commands::run::ssh_client(),
        Command::Gather(g) => crate::commands::run::gather_command(&g),
        Command::Kubernetes(k) => crate::commands::run::kubernetes_command(&k),
        Command::Merge(args) => merge(&args).map(|()| ExitCode::SUCCESS),
        Command::MergeLogs(args) => merge_logs(&args).map(|()| ExitCode::SUCCESS),
        Command::Compare(args) => report::compare_command(&args),
        Command::Report(args) => report::report_command(&args),
        Command::Cluster(c) => cluster::cluster_command(&c.action),
        Command::Experiment(e) => experiment::experiment_command(&e, &argv),
        Command::Saturate(s) => saturate::saturate_command(&s, &argv),
        Command::Elastic(e) => elastic::elastic_command(&e, &argv),
        Command::Monitor(m) => crate::commands::run::monitor_command(&m),
        Command::Results { action } => experiment::results_command(&action),
        Command::Bindings { name } => bindings(name.as_deref()).map(|()| ExitCode::SUCCESS),
        Command::Workload { action } => workload(action).map(|()| ExitCode::SUCCESS),
        Command::Properties { markdown } => Ok(properties(markdown)),
    };
    match outcome {
        Ok(code) => code,
        Err(e) => {
            crate::note!("error: {}", e.line());
            e.exit_code()
        }
    }
}

/// `--db` from `--db-file` or `SCALEBENCH_DB`, where the command takes a database. The variable
/// never overrides a deployment's database (`--deployment`, elastic's cluster).
fn database_url(command: &mut Command) -> Result<(), SessionError> {
    let (phase, deployed) = match command {
        Command::Load(a) => (&mut a.phase, false),
        Command::Run(a) => (&mut a.phase, false),
        Command::Replay(a) => (&mut a.phase, false),
        Command::Saturate(a) => (&mut a.phase, false),
        Command::Elastic(a) => (&mut a.phase, true),
        _ => return Ok(()),
    };
    let environment = !deployed && phase.deployment.is_none();
    phase.db = scalebench_session::db_source::database_url(
        phase.db.as_deref(),
        phase.db_file.as_deref(),
        environment,
    )?;
    // A URL read from a file is in no argv and no variable the log hides: its password is hidden too.
    if let Some(url) = &phase.db {
        scalebench_session::logging::hide_url_password(url);
    }
    Ok(())
}

/// `scalebench merge-logs`: the clients' interval logs of one operation as one.
fn merge_logs(args: &crate::args::MergeLogsArgs) -> Result<(), SessionError> {
    let said = scalebench_session::merge_files::merge_logs_said(&args.files, &args.output)?;
    crate::note!("{said}");
    Ok(())
}

fn merge(args: &MergeArgs) -> Result<(), SessionError> {
    let (merged, warnings, percentiles) = scalebench_session::merge_files::merge_files_into(
        &args.files,
        &args.output,
        args.summary.ycsb_load.as_deref(),
    )?;
    for warning in warnings {
        crate::note!("warning: {warning}");
    }
    print_summary(&merged, &args.summary, &percentiles)
}

/// `scalebench properties`: every declared property.
fn properties(markdown: bool) -> ExitCode {
    use scalebench_workload::declared::{listing, markdown_table};
    let out = if markdown {
        markdown_table()
    } else {
        listing()
    };
    let _ = std::io::stdout().write_all(out.as_bytes());
    ExitCode::SUCCESS
}

/// `scalebench workload check FILE [--db URL]`: the file checked, then what it declares;
/// `workload schema`: the file's JSON Schema.
fn workload(action: WorkloadCommand) -> Result<(), SessionError> {
    let WorkloadCommand::Check {
        file,
        db,
        allow_files,
    } = action
    else {
        let schema = scalebench_workload::file::json_schema();
        let _ = std::io::stdout().write_all(schema.as_bytes());
        return Ok(());
    };
    let checked = scalebench_session::workload_check::check_workload_file(
        &file,
        db.as_deref(),
        &allow_files,
    )?;
    for warning in &checked.warnings {
        crate::note!("warning: {warning}");
    }
    for line in &checked.alternatives {
        crate::note!("note: {line}");
    }
    let out = checked.summary(&file);
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(())
}

/// `scalebench bindings [NAME]`: the bindings of this build, or one binding's options.
fn bindings(name: Option<&str>) -> Result<(), SessionError> {
    let out = registry::listing(name).map_err(|e| SessionError::Usage(e.to_string()))?;
    let _ = std::io::stdout().write_all(out.as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    /// Issue 39: a name echoed in an error line cannot move the cursor or retitle the terminal.
    #[test]
    fn error_lines_escape_control_characters() {
        let line = scalebench_session::printable("unknown binding \u{1b}]0;owned\u{7}x\ttab\nnext");
        assert!(
            !line.chars().any(|c| c.is_control() && c != '\n'),
            "{line:?}"
        );
        assert!(
            line.contains("\\u{1b}]0;owned\\u{7}x\\ttab\nnext"),
            "{line:?}"
        );
    }
}
