//! `scalebench load`, `run` and `monitor`: a typed request from the arguments, the session's phases,
//! then the result file and the summary.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use scalebench_distributed as distributed;
use scalebench_exec::Phase;
use scalebench_measure::RunResult;
use scalebench_session::ending::Ending;
use scalebench_session::error::SessionError;
use scalebench_session::execute::execute;
use scalebench_session::known_load;
use scalebench_session::phase::ExecutedPhases;
use scalebench_session::replay::ReplayRequest;
use scalebench_session::request::{Processes, RunRequest};
use scalebench_session::wiring::{ClientOutputs, RunWiring};

use scalebench_session::outputs::{check_ycsb_load, CommandFiles};

use crate::args::{ClientsArgs, ConsistencyArgs, PhaseArgs, SummaryArgs};
pub use crate::commands::files::phase_files;
use crate::output::end_with;
use crate::thresholds::ThresholdArgs;

pub fn run_command(
    args: &PhaseArgs,
    (clients, thresholds): (&ClientsArgs, &ThresholdArgs),
    (consistency, replay): (Option<&ConsistencyArgs>, Option<ReplayRequest>),
    phases: &[Phase],
    argv: &[OsString],
) -> Result<ExitCode, SessionError> {
    let mut request = phase_request(args, consistency, argv);
    request.replay = replay;
    let loads = phases.contains(&Phase::Load) || request.uses_default_db();
    check_ycsb_load(args.summary.ycsb_load.as_deref(), loads)?;
    let distributed = clients.local.clients.is_some_and(|n| n > 1)
        || clients.rendezvous.is_some()
        || !clients.local.client_cpus.is_empty();
    let history = request
        .consistency_probe
        .as_ref()
        .and_then(|p| p.history.clone());
    let files = phase_files(args).output("--history", history.as_deref());
    // Checked after the request and its files (what is wrong with the command line is said
    // first); a rendezvous client's machine has its own state directory, and the clients must
    // agree.
    let known_load = |request: &mut RunRequest| {
        if clients.rendezvous.is_none() || !clients.ssh.is_empty() {
            known_load::before_run(request, phases)
        } else {
            Ok(None)
        }
    };
    if distributed {
        // Processes on this machine hear the probe's writer through their launcher.
        request.check(Processes::clients(clients.rendezvous.is_none()), phases)?;
        files.check()?;
        let known = known_load(&mut request)?;
        return run_clients(request, args, (clients, thresholds), phases, known);
    }
    // Without -o the result is kept in the state directory: checked as -o is.
    files.kept_results(args.output.is_none())?.check()?;
    request.check(Processes::One, phases)?;
    let known_load = known_load(&mut request)?;
    let (_metrics, wiring) = scalebench_session::wiring::serve_metrics(args.metrics_listen)?;
    let executed = execute(&request, &wiring, phases)?;
    finish_run(executed, args, thresholds, phases, known_load)
}

/// What `run`, `load` and `replay` do with the phases they measured: HDR logs, the result file,
/// the summary, the page, the exit code.
pub fn finish_run(
    mut executed: ExecutedPhases,
    args: &PhaseArgs,
    thresholds: &ThresholdArgs,
    phases: &[Phase],
    known_load: Option<known_load::RunOnKnownLoad>,
) -> Result<ExitCode, SessionError> {
    if let Some(dir) = &args.hdr_log {
        executed.write_hdr_logs(dir)?;
    }
    let ExecutedPhases {
        mut result,
        percentiles,
        after_phase_failed,
        mut unwritten,
        ..
    } = executed;
    if let Some(k) = &known_load {
        k.apply(&mut result);
    }
    thresholds.judge(&mut result);
    if args.output.is_some() {
        keep_result(&result, args.output.as_deref(), phases)?;
    }
    print_summary(&result, &args.summary, &percentiles)?;
    // Said after the summary, where it is seen.
    if args.output.is_none() {
        if let Err(e) = keep_result(&result, None, phases) {
            unwritten.push(e.to_string());
        }
    }
    write_report(&result, args.report.as_deref())?;
    let failed = after_phase_failed.as_deref();
    end_with(Ending::of_run(&result, failed, &unwritten))
}

/// Writes the result to `--output`; without one, keeps it in the state directory (checked before
/// the run) and says where.
fn keep_result(
    result: &RunResult,
    output: Option<&std::path::Path>,
    phases: &[Phase],
) -> Result<(), SessionError> {
    let command = phases.last().map_or("run", |p| p.name());
    if let Some(path) = scalebench_session::files::keep_result(result, output, command)? {
        // The path on a line of its own, within 100 columns and easy to copy.
        crate::note!(
            "result kept (`scalebench report FILE -o report.html` draws it; -o FILE puts it elsewhere):\n  {}",
            path.display()
        );
    }
    Ok(())
}

/// `--report`: the run's HTML page, from its result.
fn write_report(result: &RunResult, report: Option<&std::path::Path>) -> Result<(), SessionError> {
    if let Some(path) = report {
        let charts = scalebench_study::pages::write_run_page(result, path)?;
        crate::note!("report written to {} ({charts} charts)", path.display());
    }
    Ok(())
}

/// `load --schema-only`: the schema phase alone; prints what is in place.
pub fn schema_command(args: &PhaseArgs, argv: &[OsString]) -> Result<ExitCode, SessionError> {
    let made = scalebench_session::phase::create_schema(&args.request(argv))?;
    println!("{made}");
    Ok(ExitCode::SUCCESS)
}

/// The typed request of a `load` or `run` command line, its probe and faults included: built once.
fn phase_request(
    args: &PhaseArgs,
    consistency: Option<&ConsistencyArgs>,
    argv: &[OsString],
) -> RunRequest {
    let mut request = args.request(argv);
    request.consistency_probe = consistency.and_then(ConsistencyArgs::request);
    request.faults = consistency.map(|c| c.fault.clone()).unwrap_or_default();
    request
}

/// `--clients N` alone: N client processes of this binary on this machine; with `--rendezvous` and
/// `--ssh`: clients started over ssh; with `--rendezvous` alone: this process is one client of a
/// run whose clients meet in etcd.
fn run_clients(
    request: RunRequest,
    args: &PhaseArgs,
    (clients, thresholds): (&ClientsArgs, &ThresholdArgs),
    phases: &[Phase],
    known_load: Option<known_load::RunOnKnownLoad>,
) -> Result<ExitCode, SessionError> {
    let [phase] = phases else {
        unreachable!("checked: a distributed run runs one phase at a time");
    };
    distributed::check_client_metrics(args.metrics_listen, clients.local.clients)?;
    // Each client's /metrics at the port + I, its logs under DIR/client-I, the merged ones in DIR.
    let outputs = ClientOutputs {
        metrics_listen: args.metrics_listen,
        hdr_log: args.hdr_log.clone(),
    };
    let choice = clients.choice();
    let Some(launcher) = choice.launcher()? else {
        // This process is one client of a run whose clients meet in etcd.
        let (url, share) = choice
            .rendezvous_client()?
            .expect("distributed: --clients or --rendezvous");
        return rendezvous_client(
            &request,
            *phase,
            &url,
            share,
            clients.local.start_timeout,
            (
                args.output.as_deref(),
                args.report.as_deref(),
                &args.summary,
            ),
            &outputs,
        );
    };
    distributed::check_outputs(args.output.as_deref(), launcher.clients())?;
    let wiring = RunWiring {
        client_outputs: outputs,
        ..Default::default()
    };
    let mut outcome = launcher.launch(&request, &wiring, *phase)?;
    if let Some(k) = &known_load {
        k.apply(&mut outcome.merged);
    }
    thresholds.judge(&mut outcome.merged);
    finish_distributed(
        (
            args.output.as_deref(),
            args.hdr_log.as_deref(),
            args.report.as_deref(),
        ),
        &args.summary,
        &outcome,
    )
}

/// The hidden `ssh-client` command: one client of an `--ssh` run, its order read from stdin.
pub fn ssh_client() -> Result<ExitCode, SessionError> {
    let order = scalebench_distributed::ssh::SshClientOrder::read()?;
    // The URL came on stdin, not in argv: its password is hidden from this client's log lines too.
    if let Some(db) = &order.request.db {
        scalebench_session::logging::hide_url_password(db);
    }
    rendezvous_client(
        &order.request,
        order.phase,
        &order.rendezvous,
        order.share()?,
        order.start_timeout,
        (None, None, &SummaryArgs::table()),
        &order.outputs,
    )
}

/// One client of a run whose clients meet in etcd (`run --rendezvous URL` without `--ssh`, or a
/// client an `--ssh` launch started); client 0 writes the merged result to `output` if given.
fn rendezvous_client(
    request: &RunRequest,
    phase: Phase,
    url: &scalebench_distributed::etcd::RendezvousUrl,
    share: scalebench_session::clients::ClientShare,
    start_timeout: std::time::Duration,
    (output, report, summary): (
        Option<&std::path::Path>,
        Option<&std::path::Path>,
        &SummaryArgs,
    ),
    outputs: &ClientOutputs,
) -> Result<ExitCode, SessionError> {
    use scalebench_distributed::client;
    match client::run_as_client(request, phase, url, share, start_timeout, (output, outputs))? {
        // Client 0's own file is written with the merged result, from the same result.
        client::ClientEnd::Merged(outcome) => finish_distributed(
            (output, outputs.hdr_log.as_deref(), report),
            summary,
            &outcome,
        ),
        other => Ok(ExitCode::from(other.exit_code())),
    }
}

/// `scalebench gather`: the clients' results of a rendezvous run, from etcd and from files the
/// clients kept, merged, written where this runs.
pub fn gather_command(args: &crate::args::GatherArgs) -> Result<ExitCode, SessionError> {
    let request = distributed::GatherRequest {
        rendezvous: args.rendezvous.clone(),
        files: args.files.clone(),
        phase: args.phase.map(|p| p.phase()),
        timeout: args.timeout,
    };
    let outcome = distributed::gather_merged(&request, &args.output)?;
    finish_distributed(
        (Some(&args.output), None, None),
        &SummaryArgs::table(),
        &outcome,
    )
}

/// `scalebench kubernetes`: the manifests of a distributed run, its client command checked first.
pub fn kubernetes_command(args: &crate::args::KubernetesArgs) -> Result<ExitCode, SessionError> {
    use scalebench_distributed::kubernetes;
    CommandFiles::new()
        .output("-o", args.output.as_deref())
        .check()?;
    kubernetes::check_clients_verb(&args.command)?;
    let argv: Vec<OsString> = std::iter::once("scalebench".into())
        .chain(args.command.iter().map(OsString::from))
        .collect();
    let client = <crate::args::Cli as clap::Parser>::try_parse_from(&argv).map_err(|e| {
        let text = e.render().to_string();
        let first = text
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ")
            .to_string();
        SessionError::Usage(format!("the clients' command after --: {first}"))
    })?;
    let (phase, clients, consistency, phases) = match &client.command {
        crate::args::Command::Load(l) => (&l.phase, &l.clients, None, vec![Phase::Load]),
        crate::args::Command::Run(r) => {
            let phases = if r.load {
                vec![Phase::Load, Phase::Run]
            } else {
                vec![Phase::Run]
            };
            (&r.phase, &r.clients, Some(&r.consistency), phases)
        }
        // Each pod is one client of the search; client 0 leads it.
        crate::args::Command::Saturate(s) => (&s.phase, &s.clients, None, vec![Phase::Run]),
        crate::args::Command::Replay(r) => (&r.phase, &r.clients, None, vec![Phase::Run]),
        _ => unreachable!("the first word was checked: load, run, saturate or replay"),
    };
    let given_clients = clients.local.clients.is_some()
        || clients.rendezvous.is_some()
        || clients.client_index.is_some();
    kubernetes::check_clients_command(
        &phase_request(phase, consistency, &argv),
        &phases,
        given_clients,
        args.rendezvous.as_deref(),
    )?;
    let m = kubernetes::manifests(&kubernetes::KubernetesJob {
        name: args.name.clone(),
        image: args.image.clone(),
        clients: args.clients,
        command: args.command.clone(),
        rendezvous: args.rendezvous.clone(),
        etcd_image: args.etcd_image.clone(),
        start_timeout: format!("{}s", args.start_timeout.as_secs_f64()),
    })?;
    m.write(args.output.as_deref())?;
    if let Some(note) = m.secret_note() {
        crate::note!("{note}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the merged result and each client's beside it, prints the summary, names what is
/// missing or doubtful, and chooses the exit code.
fn finish_distributed(
    (output, hdr_log, report): (
        Option<&std::path::Path>,
        Option<&std::path::Path>,
        Option<&std::path::Path>,
    ),
    summary: &SummaryArgs,
    outcome: &scalebench_distributed::DistributedOutcome,
) -> Result<ExitCode, SessionError> {
    if let Some(path) = output {
        outcome.write(path)?;
    }
    write_report(&outcome.merged, report)?;
    if let Some(dir) = hdr_log {
        outcome.write_hdr_logs(dir)?;
    }
    let merged = &outcome.merged;
    print_summary(merged, summary, &outcome.percentiles)?;
    for line in outcome.notes() {
        crate::note!("{line}");
    }
    end_with(Ending::of_merged(
        merged,
        outcome.exit_code(),
        distributed::EXIT_INCOMPLETE,
    ))
}

/// The hidden `client-process` command: one client of a `--clients N` run.
pub fn client_process() -> Result<ExitCode, SessionError> {
    let result = scalebench_distributed::client_process::serve_client()?;
    Ok(if result.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// A command whose result is one JSON document (saturate, elastic): [`scalebench_study::pages::with_json_output`].
pub fn with_json_output<Q, T: serde::Serialize>(
    args: &PhaseArgs,
    files: CommandFiles,
    request: Q,
    work: impl FnOnce(&Q, &RunWiring) -> Result<T, SessionError>,
    page: &dyn Fn(&T) -> scalebench_report::html::Page,
) -> Result<T, SessionError> {
    let outputs = scalebench_study::pages::JsonOutputs {
        output: args.output.as_deref(),
        report: args.report.as_deref(),
        metrics_listen: args.metrics_listen,
        ycsb_load: args.summary.ycsb_load.as_deref(),
    };
    let (result, said) =
        scalebench_study::pages::with_json_output(outputs, files, request, work, page)?;
    said.iter().for_each(|s| crate::note!("{s}"));
    Ok(result)
}

/// `scalebench monitor`: samples until the duration passes or Ctrl-C, then writes the series.
pub fn monitor_command(args: &crate::args::MonitorArgs) -> Result<ExitCode, SessionError> {
    let request = scalebench_session::watch::WatchRequest {
        processes: args.processes.clone(),
        interval: args.interval,
        duration: args.duration,
        link_bytes_s: args.link_mbit.map(|m| m * 1e6 / 8.0),
        stream: args.stream,
    };
    if let Some(line) = scalebench_session::watch::watch_into(&request, args.output.as_deref())? {
        crate::note!("{line}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Prints the summary (warnings on standard error) and writes `--ycsb-load`'s file.
pub fn print_summary(
    result: &RunResult,
    summary: &SummaryArgs,
    percentiles: &[f64],
) -> Result<(), SessionError> {
    use scalebench_report::summary;
    if let Some(path) = &summary.ycsb_load {
        summary::write_ycsb_load(result, path, percentiles).map_err(SessionError::Usage)?;
    }
    let rendered = summary::render(result, summary.format.into(), percentiles);
    {
        let mut out = std::io::stdout().lock();
        // A closed pipe (e.g. `| head`) is not an error of the benchmark.
        let _ = out.write_all(rendered.stdout.as_bytes());
        let _ = out.flush();
    }
    for line in rendered.warnings {
        crate::note!("{line}");
    }
    if let (Some(note), None) = (rendered.left_out, &summary.ycsb_load) {
        crate::note!("{note}");
    }
    Ok(())
}
