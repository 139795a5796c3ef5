//! `scalebench cluster`: bring local clusters up and down, scale them, show their state.

use std::process::ExitCode;

use scalebench_deploy::{Cluster, Deployment};
use scalebench_measure::Space;
use scalebench_session::cluster::open_as_recorded;
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

pub fn cluster_command(action: &ClusterAction) -> Result<ExitCode, SessionError> {
    match action {
        ClusterAction::Up(t) => {
            let d = read_deployment(t)?;
            Cluster::check_machine(&d)?;
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
            let mut c = open_target(target)?;
            let (name, dir) = (c.name().to_string(), c.state.dir.clone());
            if *purge {
                c.purge()?;
                crate::note!(
                    "cluster {name} stopped; {} and its nodes' data deleted",
                    dir.display()
                );
            } else {
                c.down();
                crate::note!(
                    "cluster {name} stopped; data and logs kept in {}",
                    dir.display()
                );
            }
        }
        ClusterAction::Status { target, json } => {
            let c = open_target(target)?;
            print_status(&c, *json)?;
        }
        ClusterAction::AddNode(t) => {
            let mut c = open_target(t)?;
            let id = c.add_node()?;
            crate::note!("added {id}");
            print_status(&c, false)?;
        }
        ClusterAction::RemoveNode { target, node } => {
            let mut c = open_target(target)?;
            let id = c.remove_node(node.as_deref())?;
            crate::note!("removed {id}");
            print_status(&c, false)?;
        }
        ClusterAction::StopNode {
            target,
            node,
            crash,
        } => {
            let mut c = open_target(target)?;
            c.stop_node(node, *crash)?;
            crate::note!("{} {node}", if *crash { "killed" } else { "stopped" });
        }
        ClusterAction::StartNode { target, node } => {
            let mut c = open_target(target)?;
            c.start_node(node)?;
            crate::note!("started {node}");
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
                emit(&space_table(&space));
            }
        }
        ClusterAction::Snapshot { target, name } => {
            let mut c = open_target(target)?;
            for done in c.snapshot(name)? {
                crate::note!("  {done}");
            }
            crate::note!("snapshot {name} of {} taken", c.name());
        }
        ClusterAction::Restore { target, name } => {
            let mut c = open_target(target)?;
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
    let mut out = format!("cluster {} ({}), URL {}\n", s.name, s.database, s.url);
    if let Some(m) = s.memory {
        out.push_str(&format!(
            "memory limit {m} per node (page cache included)\n"
        ));
    }
    // With a memory limit, each running node's use of it.
    let memory_column = |used: Option<u64>| match (s.memory, used) {
        (None, _) => String::new(),
        (Some(_), Some(b)) => format!(" {:>10.1}", b as f64 / (1024.0 * 1024.0)),
        (Some(_), None) => format!(" {:>10}", "-"),
    };
    out.push_str(&format!(
        "{:<8} {:<8} {:<22} {:>8}{}  state\n",
        "node",
        "role",
        "endpoint",
        "pid",
        if s.memory.is_some() {
            format!(" {:>10}", "used MiB")
        } else {
            String::new()
        }
    ));
    for n in &s.nodes {
        out.push_str(&format!(
            "{:<8} {:<8} {:<22} {:>8}{}  {}{}\n",
            n.id,
            n.role,
            n.endpoint,
            n.pid.map_or("-".into(), |p| p.to_string()),
            memory_column(n.memory_used_bytes),
            match (n.running, n.stopped_by_signal, n.pid) {
                (true, true, Some(pid)) =>
                    format!("paused by SIGSTOP: answers nothing until `kill -CONT {pid}`"),
                (true, _, _) => "running".into(),
                _ => "stopped".into(),
            },
            match n.oom_kills {
                Some(k) if k > 0 => format!(
                    " ({k} process{} killed at the memory limit)",
                    if k == 1 { "" } else { "es" }
                ),
                _ => String::new(),
            }
        ));
    }
    if !s.not_ready.is_empty() {
        out.push_str(&format!("not ready: {}\n", s.not_ready.join("; ")));
    } else if !s.busy.is_empty() {
        out.push_str(&format!("busy: {}\n", s.busy.join("; ")));
    } else {
        out.push_str("ready and idle\n");
    }
    emit(&out);
    Ok(())
}

pub fn space_table(space: &Space) -> String {
    let mb = |b: u64| format!("{:.1}", b as f64 / 1e6);
    let mut out = String::new();
    let kinds: Vec<&String> = space.parts.keys().collect();
    out.push_str(&format!("{:<8} {:>10}", "node", "total MB"));
    for k in &kinds {
        out.push_str(&format!(" {:>10}", format!("{k} MB")));
    }
    out.push('\n');
    for n in &space.nodes {
        out.push_str(&format!("{:<8} {:>10}", n.node, mb(n.bytes)));
        for k in &kinds {
            out.push_str(&format!(
                " {:>10}",
                mb(n.parts.get(*k).copied().unwrap_or(0))
            ));
        }
        out.push('\n');
    }
    out.push_str(&format!("{:<8} {:>10}", "all", mb(space.total_bytes)));
    for k in &kinds {
        out.push_str(&format!(" {:>10}", mb(space.parts[*k])));
    }
    out.push('\n');
    if let Some(b) = space.bytes_per_record {
        out.push_str(&format!(
            "{b:.1} bytes per record ({} records)\n",
            space.records
        ));
    }
    out
}
