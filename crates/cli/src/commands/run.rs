//! `scalebench load`, `run` and `monitor`: a typed request from the arguments, the session's phases,
//! then the result file and the summary.

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use scalebench_exec::{Phase, StopSignal};
use scalebench_measure::{ycsb_text, RunResult};
use scalebench_session::distributed;
use scalebench_session::error::SessionError;
use scalebench_session::interrupt;
use scalebench_session::phase::{execute_phases, ExecutedPhases};
use scalebench_session::request::RunRequest;

use crate::args::{ClientsArgs, Format, PhaseArgs};
use crate::output::table;

pub fn run_command(
    args: &PhaseArgs,
    clients: &ClientsArgs,
    phases: &[Phase],
    argv: &[OsString],
) -> Result<ExitCode, SessionError> {
    if clients.clients.is_some_and(|n| n > 1) || clients.rendezvous.is_some() {
        return run_clients(args, clients, phases, argv);
    }
    scalebench_session::files::check_outputs(args.output.as_deref(), args.hdr_log.as_deref())?;
    let mut request = args.request(argv);
    let _metrics = serve_metrics(args, &mut request)?;
    let mut executed = execute_phases(&request, phases)?;
    if let Some(dir) = &args.hdr_log {
        executed.write_hdr_logs(dir)?;
    }
    let ExecutedPhases {
        result,
        percentiles,
        ..
    } = executed;
    if let Some(path) = &args.output {
        result
            .write_atomically(path)
            .map_err(|e| SessionError::Failed(e.to_string()))?;
    }
    print_summary(&result, args.format, &percentiles)?;
    Ok(if result.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--clients N` alone: N client processes of this binary on this machine; with `--rendezvous`:
/// this process is one client of a run whose clients meet in etcd.
fn run_clients(
    args: &PhaseArgs,
    clients: &ClientsArgs,
    phases: &[Phase],
    argv: &[OsString],
) -> Result<ExitCode, SessionError> {
    use scalebench_session::distributed::{etcd, local};
    let [phase] = phases else {
        return Err(SessionError::Usage(
            "--clients runs one phase at a time: `scalebench load --clients N`, then `scalebench run --clients N` (not --load)".into(),
        ));
    };
    for (given, flag) in [
        (args.hdr_log.is_some(), "--hdr-log"),
        (args.metrics_listen.is_some(), "--metrics-listen"),
    ] {
        if given {
            return Err(SessionError::Usage(format!(
                "{flag} is not supported with --clients or --rendezvous yet: each client's result is kept beside --output"
            )));
        }
    }
    let request = args.request(argv);
    let Some(url) = &clients.rendezvous else {
        let n = clients.clients.unwrap_or(1);
        check_distributed_outputs(args.output.as_deref(), n)?;
        let launch = local::LocalLaunch {
            program: client_program()?,
            clients: n,
            start_timeout: clients.start_timeout,
        };
        let outcome = local::launch(&launch, &request, *phase)?;
        return finish_distributed(args.output.as_deref(), args.format, &outcome);
    };
    let url = etcd::RendezvousUrl::parse(url)?;
    if !clients.ssh.is_empty() {
        let n = clients.clients.unwrap_or(clients.ssh.len() as u32);
        scalebench_session::distributed::check(&request, n, *phase)?;
        check_distributed_outputs(args.output.as_deref(), n)?;
        let launch = scalebench_session::distributed::ssh::SshLaunch {
            hosts: clients.ssh.clone(),
            clients: n,
            ssh_command: clients.ssh_command.clone(),
            remote_program: clients.remote_program.clone(),
            client_args: crate::args::client_arguments(argv),
            rendezvous: url,
            start_timeout: clients.start_timeout,
        };
        let outcome = scalebench_session::distributed::ssh::launch(&launch, &request, *phase)?;
        return finish_distributed(args.output.as_deref(), args.format, &outcome);
    }
    let share = scalebench_session::clients::ClientShare::from_launcher(
        clients.client_index,
        clients.clients,
        |name| std::env::var(name).ok(),
    )?;
    scalebench_session::distributed::check(&request, share.clients, *phase)?;
    // Each client keeps its own result on its disk before handing it back: beside --output, or in
    // the state directory.
    let keep_at = match &args.output {
        Some(o) => Some(distributed::client_output(o, share.index)),
        None => etcd::default_keep_path(&url, *phase, share.index),
    };
    if share.index == 0 {
        check_distributed_outputs(args.output.as_deref(), share.clients)?;
    } else if let Some(o) = &args.output {
        scalebench_session::files::check_outputs(
            [distributed::client_output(o, share.index).as_path()],
            None,
        )?;
    }
    let kept_note = |kept: &Option<std::path::PathBuf>, error: &Option<String>| match (kept, error)
    {
        (Some(path), _) => crate::note!(
            "client {} of {}: result kept at {}",
            share.index,
            share.clients,
            path.display()
        ),
        (None, Some(e)) => crate::note!(
            "warning: client {} of {}: its result could not be kept on this machine: {e}",
            share.index,
            share.clients
        ),
        (None, None) => {}
    };
    match etcd::run_client(
        &request,
        *phase,
        &url,
        share,
        clients.start_timeout,
        keep_at,
    )? {
        etcd::ClientRun::Merged {
            outcome,
            kept,
            kept_error,
        } => {
            kept_note(&kept, &kept_error);
            // Client 0's own file is written with the merged result (below), from the same result.
            finish_distributed(args.output.as_deref(), args.format, &outcome)
        }
        etcd::ClientRun::Own {
            result,
            kept,
            kept_error,
            hand_back_error,
        } => {
            kept_note(&kept, &kept_error);
            if let Some(e) = hand_back_error {
                let files = kept
                    .as_ref()
                    .map_or_else(|| "their result files".into(), |k| k.display().to_string());
                crate::note!(
                    "INCOMPLETE: client {} of {} could not hand its result to {} ({e}); merge it with the others' \
                     with `scalebench gather --rendezvous {} {files} ...` or `scalebench gather FILES...`",
                    share.index,
                    share.clients,
                    url.display(),
                    url.display()
                );
                return Ok(ExitCode::from(if result.interrupted {
                    130
                } else {
                    distributed::EXIT_INCOMPLETE
                }));
            }
            crate::note!(
                "client {} of {}: result handed to {} (client 0 merges it)",
                share.index,
                share.clients,
                url.display()
            );
            Ok(if result.interrupted {
                ExitCode::from(130)
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// `scalebench gather`: the clients' results of a rendezvous run, from etcd and from files the
/// clients kept, merged, written where this runs.
pub fn gather_command(args: &crate::args::GatherArgs) -> Result<ExitCode, SessionError> {
    use scalebench_session::distributed::etcd;
    let url = args
        .rendezvous
        .as_deref()
        .map(etcd::RendezvousUrl::parse)
        .transpose()?;
    let from_files = if args.files.is_empty() {
        None
    } else {
        Some(distributed::results_from_files(&args.files)?)
    };
    let phase = match (&from_files, args.phase) {
        (Some((p, _, _)), Some(asked)) if *p != asked.phase() => {
            return Err(SessionError::Usage(format!(
                "invalid value '{}' for '--phase': the files hold a {} phase",
                asked.phase().name(),
                p.name()
            )))
        }
        (Some((p, _, _)), _) => *p,
        (None, asked) => asked.map_or(Phase::Run, |a| a.phase()),
    };
    let from_etcd = match &url {
        Some(url) => match etcd::gather(url, phase, args.timeout) {
            Ok(r) => Some(r),
            // The files are what the clients kept for this case: the rendezvous is gone.
            Err(SessionError::Failed(e)) if from_files.is_some() => {
                crate::note!("warning: {e}: merging the files alone");
                None
            }
            Err(e) => return Err(e),
        },
        None => None,
    };
    let results: Vec<Result<RunResult, String>> = match (from_files, from_etcd) {
        (None, Some(r)) => r,
        (Some((_, n, mut files)), etcd) => {
            if let Some(e) = etcd.as_ref().filter(|e| e.len() as u32 != n) {
                return Err(SessionError::Usage(format!(
                    "the files hold clients of a run of {n}, the rendezvous one of {}",
                    e.len()
                )));
            }
            let mut etcd = etcd.map(|r| r.into_iter().map(Some).collect::<Vec<_>>());
            (0..n)
                .map(|i| match files.remove(&i) {
                    Some(r) => Ok(r),
                    None => etcd
                        .as_mut()
                        .and_then(|e| e[i as usize].take())
                        .unwrap_or_else(|| Err("no result: no file of it was given".into())),
                })
                .collect()
        }
        (None, None) => {
            return Err(SessionError::Usage(
                "give the run's --rendezvous, the result files its clients kept, or both".into(),
            ))
        }
    };
    check_distributed_outputs(Some(&args.output), results.len() as u32)?;
    let outcome = distributed::merge_clients(None, phase, "etcd", results)?;
    finish_distributed(Some(&args.output), Format::Table, &outcome)
}

/// `scalebench kubernetes`: the manifests of a distributed run, its client command checked first.
pub fn kubernetes_command(args: &crate::args::KubernetesArgs) -> Result<ExitCode, SessionError> {
    use scalebench_session::distributed::{etcd, kubernetes};
    scalebench_session::files::check_outputs(args.output.as_deref(), None)?;
    if !matches!(
        args.command.first().map(String::as_str),
        Some("load" | "run")
    ) {
        return Err(SessionError::Usage(
            "the clients' command after -- must be `load ...` or `run ...`".into(),
        ));
    }
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
    let (phase, clients) = match &client.command {
        crate::args::Command::Load(l) => (&l.phase, &l.clients),
        crate::args::Command::Run(r) => (&r.phase, &r.clients),
        _ => unreachable!("the first word was checked: load or run"),
    };
    if clients.clients.is_some() || clients.rendezvous.is_some() || clients.client_index.is_some() {
        return Err(SessionError::Usage(
            "the clients' command after -- takes no --clients, --client-index or --rendezvous: the manifests add them".into(),
        ));
    }
    let Some(db) = &phase.db else {
        return Err(SessionError::Usage(
            "the clients' command after -- needs --db: the clients share the database".into(),
        ));
    };
    // As `run` checks it (one line, the password hidden); property files are the image's, not
    // this machine's, so the rest of the command is checked by the clients.
    let url = scalebench_binding::DbUrl::parse(db)?;
    if scalebench_binding::registry::for_scheme(url.scheme()).is_none() {
        return Err(SessionError::Usage(format!(
            "{} ('{}')",
            scalebench_binding::registry::no_binding(url.scheme()),
            url.redacted()
        )));
    }
    if let Some(url) = &args.rendezvous {
        etcd::RendezvousUrl::parse(url)?;
    }
    let m = kubernetes::manifests(&kubernetes::KubernetesJob {
        name: args.name.clone(),
        image: args.image.clone(),
        clients: args.clients,
        command: args.command.clone(),
        rendezvous: args.rendezvous.clone(),
        etcd_image: args.etcd_image.clone(),
        start_timeout: format!("{}s", args.start_timeout.as_secs_f64()),
    })?;
    match &args.output {
        Some(path) => scalebench_session::files::write_atomically(path, &m.yaml)?,
        None => scalebench_session::outln!("{}", m.yaml.trim_end()),
    }
    if let Some((name, keys)) = &m.secret {
        let literals: Vec<String> = keys
            .iter()
            .map(|k| format!("--from-literal={k}='...'"))
            .collect();
        crate::note!(
            "arguments with a password come from the Secret {name}; create it first with their values \
             (arg-K is the K-th argument after --, counted from 0): kubectl create secret generic {name} {}",
            literals.join(" ")
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn check_distributed_outputs(
    output: Option<&std::path::Path>,
    clients: u32,
) -> Result<(), SessionError> {
    let client_outputs: Vec<std::path::PathBuf> = output
        .map(|path| {
            (0..clients)
                .map(|i| distributed::client_output(path, i))
                .collect()
        })
        .unwrap_or_default();
    scalebench_session::files::check_outputs(
        output
            .into_iter()
            .chain(client_outputs.iter().map(|p| p.as_path())),
        None,
    )
}

/// Writes the merged result and each client's beside it, prints the summary, names what is
/// missing or doubtful, and chooses the exit code.
fn finish_distributed(
    output: Option<&std::path::Path>,
    format: Format,
    outcome: &scalebench_session::distributed::DistributedOutcome,
) -> Result<ExitCode, SessionError> {
    let write = |r: &RunResult, path: &std::path::Path| {
        r.write_atomically(path)
            .map_err(|e| SessionError::Failed(e.to_string()))
    };
    if let Some(path) = output {
        for (i, result) in outcome.clients.iter().enumerate() {
            if let Some(r) = result {
                write(r, &distributed::client_output(path, i as u32))?;
            }
        }
        write(&outcome.merged, path)?;
    }
    let merged = &outcome.merged;
    print_summary(merged, format, &outcome.percentiles)?;
    if let Some(d) = &merged.distributed {
        for w in &d.warnings {
            crate::note!("warning: {w}");
        }
        for m in &d.missing {
            crate::note!(
                "INCOMPLETE: client {} of {} left no result ({}); its share is not in the figures: {}",
                m.index,
                d.clients,
                m.reason,
                m.share
            );
        }
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// This binary as the client processes of a `--clients N` run (its hidden `client-process`).
pub fn client_program(
) -> Result<scalebench_session::distributed::local::ClientProgram, SessionError> {
    Ok(scalebench_session::distributed::local::ClientProgram {
        program: std::env::current_exe().map_err(|e| {
            SessionError::Failed(format!(
                "cannot find this program to start its clients: {e}"
            ))
        })?,
        args: vec!["client-process".into()],
    })
}

/// The hidden `client-process` command: one client of a `--clients N` run.
pub fn client_process() -> Result<ExitCode, SessionError> {
    let result = scalebench_session::distributed::local::serve_client()?;
    Ok(if result.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// Serves `--metrics-listen` (if given) for as long as the returned guard lives, and makes the
/// request's phases publish there.
pub fn serve_metrics(
    args: &PhaseArgs,
    request: &mut RunRequest,
) -> Result<Option<scalebench_session::metrics::MetricsGuard>, SessionError> {
    let guard = args
        .metrics_listen
        .map(scalebench_session::metrics::serve_while)
        .transpose()?;
    request.metrics = guard.as_ref().map(|m| m.publisher());
    Ok(guard)
}

/// A command whose result is one JSON document (saturate, elastic): the output paths checked
/// first, `--metrics-listen` served while `work` runs `request`, the result written to `--output`.
pub fn with_json_output<Q, T: serde::Serialize>(
    args: &PhaseArgs,
    mut request: Q,
    run_of: impl Fn(&mut Q) -> &mut RunRequest,
    work: impl FnOnce(&Q) -> Result<T, SessionError>,
) -> Result<T, SessionError> {
    scalebench_session::files::check_outputs(args.output.as_deref(), args.hdr_log.as_deref())?;
    let _metrics = serve_metrics(args, run_of(&mut request))?;
    let result = work(&request)?;
    if let Some(path) = &args.output {
        scalebench_session::files::write_json(path, &result)?;
    }
    Ok(result)
}

/// `scalebench monitor`: samples until the duration passes or Ctrl-C, then writes the series.
pub fn monitor_command(args: &crate::args::MonitorArgs) -> Result<ExitCode, SessionError> {
    scalebench_session::files::check_outputs(args.output.as_deref(), None)?;
    for (name, pid) in &args.processes {
        if !std::path::Path::new(&format!("/proc/{pid}")).exists() {
            return Err(SessionError::Usage(format!(
                "no process {pid} (for '{name}') on this host"
            )));
        }
    }
    interrupt::install_handler();
    let stop = StopSignal::new();
    interrupt::register_stop(&stop);
    let targets = args
        .processes
        .iter()
        .map(|(name, pid)| scalebench_monitor::Target {
            name: name.clone(),
            pid: *pid,
            parallelism: None,
        })
        .collect();
    // A closed stream (the collecting side hung up) ends the command like Ctrl-C.
    let hung_up = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sink: Option<scalebench_monitor::SampleSink> = args.stream.then(|| {
        let hung_up = hung_up.clone();
        let mut header_sent = false;
        Box::new(
            move |series: &scalebench_monitor::ResourceSeries,
                  sample: &scalebench_monitor::Sample| {
                let mut out = std::io::stdout().lock();
                let mut text = String::new();
                if !std::mem::replace(&mut header_sent, true) {
                    text = scalebench_monitor::stream::header_line(series) + "\n";
                }
                text += &(scalebench_monitor::stream::sample_line(sample) + "\n");
                let ok = out
                    .write_all(text.as_bytes())
                    .and_then(|_| out.flush())
                    .is_ok();
                if !ok {
                    hung_up.store(true, std::sync::atomic::Ordering::Relaxed);
                }
                ok
            },
        ) as scalebench_monitor::SampleSink
    });
    let link = args.link_mbit.map(|m| m * 1e6 / 8.0);
    let monitor = scalebench_monitor::Monitor::start_with(targets, args.interval, sink, link);
    let started = std::time::Instant::now();
    while !stop.is_requested()
        && !hung_up.load(std::sync::atomic::Ordering::Relaxed)
        && args.duration.is_none_or(|d| started.elapsed() < d)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let series = monitor.finish();
    let Some(output) = &args.output else {
        return Ok(ExitCode::SUCCESS);
    };
    scalebench_session::files::write_json(output, &series)?;
    let v = scalebench_monitor::verdict(&series, "client", None);
    crate::note!(
        "{} samples written to {}; bounded by: {} ({})",
        series.samples.len(),
        output.display(),
        v.bounded_by,
        v.evidence
    );
    Ok(ExitCode::SUCCESS)
}

pub fn print_summary(
    result: &RunResult,
    format: Format,
    percentiles: &[f64],
) -> Result<(), SessionError> {
    let text = match format {
        Format::Table => table::render(result),
        Format::Json => {
            serde_json::to_string_pretty(result).map_err(|e| SessionError::Failed(e.to_string()))?
                + "\n"
        }
        Format::Ycsb => result
            .phases
            .iter()
            .map(|p| ycsb_text::render(p, percentiles))
            .collect::<Vec<_>>()
            .join(""),
    };
    let mut out = std::io::stdout().lock();
    // A closed pipe (e.g. `| head`) is not an error of the benchmark.
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    Ok(())
}
