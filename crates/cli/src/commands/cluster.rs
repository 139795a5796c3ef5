//! `scalebench cluster`: bring local clusters up and down, scale them, show their state.

use std::process::ExitCode;

use scalebench_deploy::cluster::{not_stopped, StateLock};
use scalebench_deploy::{Cluster, Deployment};
use scalebench_session::cluster::{open_as_recorded, open_as_recorded_to_change};
use scalebench_session::error::SessionError;

use crate::args::{ClusterAction, ClusterTarget};
use crate::output::emit;

/// Reads the deployment file (exit 2 when it is bad).
pub fn read_deployment(target: &ClusterTarget) -> Result<Deployment, SessionError> {
    Ok(Deployment::from_file(&target.deployment)?)
}

fn open_target(target: &ClusterTarget) -> Result<Cluster, SessionError> {
    open_as_recorded(&target.deployment, &target.clusters.clusters_dir)
}

/// The cluster, its lock held until the command ends (a command that changes it).
fn open_to_change(target: &ClusterTarget) -> Result<Cluster, SessionError> {
    open_as_recorded_to_change(&target.deployment, &target.clusters.clusters_dir)
}

pub fn cluster_command(action: &ClusterAction) -> Result<ExitCode, SessionError> {
    match action {
        ClusterAction::Up(t) => {
            let d = read_deployment(t)?;
            Cluster::check_machine(&d)?;
            // Taken before anything is said or started (`up` holds it again, within this process).
            let _lock = StateLock::take(&Cluster::dir_for(&t.clusters.clusters_dir, &d))?;
            crate::note!(
                "starting {} ({} x {}) in {}",
                d.name,
                d.nodes,
                d.database.name(),
                Cluster::dir_for(&t.clusters.clusters_dir, &d).display()
            );
            let c = Cluster::up(d, &t.deployment, &t.clusters.clusters_dir, false)?;
            print_status(&c, false)?;
        }
        ClusterAction::Down { target, purge } => {
            let mut c = open_to_change(target)?;
            let (name, dir) = (c.name().to_string(), c.state.dir.clone());
            let stops = if *purge { c.purge()? } else { c.down() };
            for stop in &stops {
                crate::note!("  {}", stop.describe());
            }
            // Only reached when every recorded process is gone (else `not_stopped` fails, exit 1).
            not_stopped(&name, &stops)?;
            let (dir, what) = (dir.display(), if *purge { "deleted" } else { "kept" });
            crate::note!("cluster {name} is down; its data and logs in {dir} {what}");
        }
        ClusterAction::Status { target, json } => {
            let c = open_target(target)?;
            print_status(&c, *json)?;
        }
        ClusterAction::AddNode(t) => {
            let mut c = open_to_change(t)?;
            let id = c.add_node()?;
            crate::note!("added {id}");
            print_status(&c, false)?;
        }
        ClusterAction::RemoveNode { target, node } => {
            let mut c = open_to_change(target)?;
            let id = c.remove_node(node.as_deref())?;
            crate::note!("removed {id}");
            print_status(&c, false)?;
        }
        ClusterAction::StopNode {
            target,
            node,
            crash,
        } => {
            let mut c = open_to_change(target)?;
            c.stop_node(node, *crash)?;
            crate::note!("{} {node}", if *crash { "killed" } else { "stopped" });
        }
        ClusterAction::StartNode { target, node } => {
            let mut c = open_to_change(target)?;
            c.start_node(node)?;
            crate::note!("started {node}");
        }
        ClusterAction::Apply { target, operation } => {
            let mut c = open_to_change(target)?;
            c.check(*operation)?;
            let done = c.apply(*operation)?;
            if let Some(said) = &done.said {
                crate::note!("{said}");
            }
            crate::note!("{operation}: {}", done.changed.join(", "));
            print_status(&c, false)?;
        }
        ClusterAction::Wait(t) => {
            let c = open_target(t)?;
            c.wait_idle()?;
            crate::note!("cluster {} is ready and idle", c.name());
        }
        ClusterAction::Flush(t) => {
            let c = open_target(t)?;
            emit(&(c.flush()?.join("\n") + "\n"));
        }
        ClusterAction::Compact(t) => {
            let c = open_target(t)?;
            emit(&(c.compact()?.join("\n") + "\n"));
        }
        ClusterAction::Space {
            target,
            records,
            table,
            json,
        } => {
            let c = open_target(target)?;
            if !c.measures_space() {
                return Err(SessionError::Usage(format!(
                    "{} is an external cluster whose deployment names no data directories: \
                     list them in [external] data_dirs to measure its space on disk",
                    c.name()
                )));
            }
            let default_table = match scalebench_workload::declared::TABLE.default {
                scalebench_workload::declared::Unset::Value(t) => t,
                _ => "",
            };
            let space = c.space("now", *records, table.as_deref().unwrap_or(default_table));
            if *json {
                emit(
                    &(serde_json::to_string_pretty(&space)
                        .map_err(|e| SessionError::Failed(e.to_string()))?
                        + "\n"),
                );
            } else {
                emit(&scalebench_report::table::space_table(&space));
            }
        }
        ClusterAction::Snapshot { target, name } => {
            let mut c = open_to_change(target)?;
            for done in c.snapshot(name)? {
                crate::note!("  {done}");
            }
            crate::note!("snapshot {name} of {} taken", c.name());
        }
        ClusterAction::Restore { target, name } => {
            let mut c = open_to_change(target)?;
            for done in c.restore(name)? {
                crate::note!("  {done}");
            }
            crate::note!("{} restored from snapshot {name}", c.name());
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_status(c: &Cluster, json: bool) -> Result<(), SessionError> {
    let mut s = c.status();
    // Passwords never reach the output.
    s.url = scalebench_binding::DbUrl::parse(&s.url)
        .map(|u| u.redacted())
        .unwrap_or_else(|_| "(unparsable URL)".into());
    if json {
        emit(
            &(serde_json::to_string_pretty(&s).map_err(|e| SessionError::Failed(e.to_string()))?
                + "\n"),
        );
        return Ok(());
    }
    emit(&scalebench_report::text::cluster_status(&s));
    Ok(())
}
